// gb_brcomp.c: x^a * y^b / Beta(a,b) (TOMS 708 brcomp), a log with log_p.
// @depends gb_alnrel gb_betaln gb_gamln1 gb_algdiv gb_gam1 gb_rlog1 gb_bcorr
GB_FN double gb_brcomp(double a, double b, double x, double y, int log_p)
{
    const double const__ = .398942280401433; /* == 1/sqrt(2*pi); */
    int i, n;
    double c, e, u, v, z, a0, b0, apb;

    if (x == 0. || y == 0.) {
        return GB_PD__0;
    }
    a0 = (a < b) ? a : b;
    if (a0 < 8.) {
        double lnx, lny;
        if (x <= .375) {
            lnx = log(x);
            lny = gb_alnrel(-x);
        }
        else {
            if (y > .375) {
                lnx = log(x);
                lny = log(y);
            } else {
                lnx = gb_alnrel(-y);
                lny = log(y);
            }
        }

        z = a * lnx + b * lny;
        if (a0 >= 1.) {
            z -= gb_betaln(a, b);
            return GB_PD_exp(z);
        }

        /* PROCEDURE FOR a < 1 OR b < 1 */
        b0 = (a > b) ? a : b;
        if (b0 >= 8.) { /* L80: */
            u = gb_gamln1(a0) + gb_algdiv(a0, b0);

            return (log_p ? log(a0) + (z - u) : a0 * exp(z - u));
        }
        /* else : */

        if (b0 <= 1.) { /* algorithm for max(a,b) = b0 <= 1 */

            double e_z = GB_PD_exp(z);

            if (!log_p && e_z == 0.) /* exp() underflow */
                return 0.;

            apb = a + b;
            if (apb > 1.) {
                u = a + b - 1.;
                z = (gb_gam1(u) + 1.) / apb;
            } else {
                z = gb_gam1(apb) + 1.;
            }

            c = (gb_gam1(a) + 1.) * (gb_gam1(b) + 1.) / z;
            return (log_p
                    ? e_z + log(a0 * c) - log1p(a0/b0)
                    : e_z * (a0 * c) / (a0 / b0 + 1.));
        }

        /* else : ALGORITHM FOR 1 < b0 < 8 */

        u = gb_gamln1(a0);
        n = (int)(b0 - 1.);
        if (n >= 1) {
            c = 1.;
            for (i = 1; i <= n; ++i) {
                b0 += -1.;
                c *= b0 / (a0 + b0);
            }
            u = log(c) + u;
        }
        z -= u;
        b0 += -1.;
        apb = a0 + b0;
        double t;
        if (apb > 1.) {
            u = a0 + b0 - 1.;
            t = (gb_gam1(u) + 1.) / apb;
        } else {
            t = gb_gam1(apb) + 1.;
        }

        return (log_p
                ? log(a0) + z + log1p(gb_gam1(b0))  - log(t)
                : a0 * exp(z) * (gb_gam1(b0) + 1.) / t);

    } else {
        /* PROCEDURE FOR A >= 8 AND B >= 8 */
        double h, x0, y0, lambda;
        if (a <= b) {
            h = a / b;
            x0 = h / (h + 1.);
            y0 = 1. / (h + 1.);
            lambda = a - (a + b) * x;
        } else {
            h = b / a;
            x0 = 1. / (h + 1.);
            y0 = h / (h + 1.);
            lambda = (a + b) * y - b;
        }

        e = -lambda / a;
        if (fabs(e) > .6)
            u = e - log(x / x0);
        else
            u = gb_rlog1(e);

        e = lambda / b;
        if (fabs(e) <= .6)
            v = gb_rlog1(e);
        else
            v = e - log(y / y0);

        z = log_p ? -(a * u + b * v) : exp(-(a * u + b * v));

        return(log_p
               ? -M_LN_SQRT_2PI + .5*log(b * x0) + z - gb_bcorr(a,b)
               : const__ * sqrt(b * x0) * z * exp(-gb_bcorr(a, b)));
    }
}
