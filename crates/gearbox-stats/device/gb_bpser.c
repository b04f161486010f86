// gb_bpser.c: the power series for I_x(a,b) when b <= 1 or b*x <= 0.7
// (TOMS 708 bpser; with log_p also for b < 40 and lambda > 650).
// @depends gb_betaln gb_gam1 gb_gamln1 gb_algdiv
GB_FN double gb_bpser(double a, double b, double x, double eps, int log_p)
{
    int i, m;
    double ans, c, t, u, z, a0, b0, apb;

    if (x == 0.) {
        return GB_PD__0;
    }
    /* compute the factor  x^a/(a*Beta(a,b)) */
    a0 = (a < b) ? a : b;
    if (a0 >= 1.) { /*  1 <= a0 <= b0  */
        z = a * log(x) - gb_betaln(a, b);
        ans = log_p ? z - log(a) : exp(z) / a;
    }
    else {
        b0 = (a > b) ? a : b;

        if (b0 < 8.) {

            if (b0 <= 1.) { /* a0 < 1  and  b0 <= 1 */

                if (log_p) {
                    ans = a * log(x);
                } else {
                    ans = pow(x, a);
                    if (ans == 0.) /* once underflow, always underflow .. */
                        return ans;
                }
                apb = a + b;
                if (apb > 1.) {
                    u = a + b - 1.;
                    z = (gb_gam1(u) + 1.) / apb;
                } else {
                    z = gb_gam1(apb) + 1.;
                }
                c = (gb_gam1(a) + 1.) * (gb_gam1(b) + 1.) / z;

                if (log_p)
                    ans += log(c * (b / apb));
                else
                    ans *=  c * (b / apb);

            } else { /* a0 < 1 < b0 < 8 */

                u = gb_gamln1(a0);
                m = (int)(b0 - 1.);
                if (m >= 1) {
                    c = 1.;
                    for (i = 1; i <= m; ++i) {
                        b0 += -1.;
                        c *= b0 / (a0 + b0);
                    }
                    u += log(c);
                }

                z = a * log(x) - u;
                b0 += -1.; // => b0 in (0, 7)
                apb = a0 + b0;
                if (apb > 1.) {
                    u = a0 + b0 - 1.;
                    t = (gb_gam1(u) + 1.) / apb;
                } else {
                    t = gb_gam1(apb) + 1.;
                }

                if (log_p)
                    ans = z + log(a0 / a) + log1p(gb_gam1(b0)) - log(t);
                else
                    ans = exp(z) * (a0 / a) * (gb_gam1(b0) + 1.) / t;
            }

        } else { /* a0 < 1 < 8 <= b0 */

            u = gb_gamln1(a0) + gb_algdiv(a0, b0);
            z = a * log(x) - u;

            if (log_p)
                ans = z + log(a0 / a);
            else
                ans = a0 / a * exp(z);
        }
    }
    if (ans == GB_PD__0 || (!log_p && a <= eps * 0.1)) {
        return ans;
    }

    /* COMPUTE THE SERIES */
    double tol = eps / a, n = 0., sum = 0., w;
    c = 1.;
    do { // sum is alternating as long as n < b (<==> 1 - b/n < 0)
        n += 1.;
        c *= (0.5 - b / n + 0.5) * x;
        w = c / (a + n);
        sum += w;
    } while (n < 1e7 && fabs(w) > tol);
    // (R warns here when the series did not converge.)
    if (log_p) {
        if (a*sum > -1.) ans += log1p(a * sum);
        else ans = GB_NEGINF;
    } else if (a*sum > -1.)
        ans *= (a * sum + 1.);
    else // underflow to
        ans = 0.;
    return ans;
}
