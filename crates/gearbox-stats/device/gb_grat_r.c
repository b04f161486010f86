// gb_grat_r.c: Q(a,x)/r with Q(a,x) = pgamma(x, a, lower.tail=FALSE) and
// r = exp(-x) x^a / Gamma(a) = exp(log_r), for a <= 1 (TOMS 708 grat1 as
// R's grat_r, called only from bgrat).
// @depends gb_erf__ gb_erfc1 gb_gam1 gb_rexpm1
GB_FN double gb_grat_r(double a, double x, double log_r, double eps)
{
    if (a * x == 0.) { /* L130: */
        if (x <= a) {
            /* L100: */ return exp(-log_r);
        } else {
            /* L110:*/  return 0.;
        }
    }
    else if (a == 0.5) { // e.g. when called from pt()
        /* L120: */
        if (x < 0.25) {
            double p = gb_erf__(sqrt(x));
            return (0.5 - p + 0.5)*exp(-log_r);

        } else {
            double sx = sqrt(x),
                q_r = gb_erfc1(1, sx)/sx * M_SQRT_PI;
            return q_r;
        }

    } else if (x < 1.1) { /* L10:  Taylor series for  P(a,x)/x^a */

        double an = 3.,
            c = x,
            sum = x / (a + 3.),
            tol = eps * 0.1 / (a + 1.), t;
        do {
            an += 1.;
            c *= -(x / an);
            t = c / (a + an);
            sum += t;
        } while (fabs(t) > tol);

        double j = a * x * ((sum/6. - 0.5/(a + 2.)) * x + 1./(a + 1.)),
            z = a * log(x),
            h = gb_gam1(a),
            g = h + 1.;

        if ((x >= 0.25 && (a < x / 2.59)) || (z > -0.13394)) {
            // L40:
            double l = gb_rexpm1(z),
                q = ((l + 0.5 + 0.5) * j - l) * g - h;
            if (q <= 0.) {
                /* L110:*/ return 0.;
            } else {
                return q * exp(-log_r);
            }

        } else {
            double p = exp(z) * g * (0.5 - j + 0.5);
            return /* q/r = */ (0.5 - p + 0.5) * exp(-log_r);
        }

    } else {
        /* L50: ----  (x >= 1.1)  ---- Continued Fraction Expansion */

        double a2n_1 = 1.,
            a2n = 1.,
            b2n_1 = x,
            b2n = x + (1. - a),
            c = 1., am0, an0;

        do {
            a2n_1 = x * a2n + c * a2n_1;
            b2n_1 = x * b2n + c * b2n_1;
            am0 = a2n_1 / b2n_1;
            c += 1.;
            double c_a = c - a;
            a2n = a2n_1 + c_a * a2n;
            b2n = b2n_1 + c_a * b2n;
            an0 = a2n / b2n;
        } while (fabs(an0 - am0) >= eps * an0);

        return /* q/r = (r * an0)/r = */ an0;
    }
}
