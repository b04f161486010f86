// gb_bgrat.c: the asymptotic expansion for I_x(a,b) when a is larger than
// b (TOMS 708 bgrat): *w := *w + I_x(a,b), for a >= 15 and b <= 1; with
// log_w, *w is a log on entry and exit; *ierr = 0 or the error code 1..4.
// @depends gb_alnrel gb_gam1 gb_algdiv gb_grat_r gb_logspace_add
GB_FN void gb_bgrat(double a, double b, double x, double y, double *w,
                         double eps, int *ierr, int log_w)
{
    double c[30], d[30];
    double bm1 = b - 0.5 - 0.5,
        nu = a + bm1 * 0.5, /* nu = a + (b-1)/2 =: T, in (9.1) of
                             * Didonato & Morris(1992), p.362 */
        lnx = (y > 0.375) ? log(x) : gb_alnrel(-y),
        z = -nu * lnx; // z =: u in (9.1) of D.&M.(1992)

    if (b * z == 0.) { // should not happen, but does, e.g., for subnormal x
        /* L_Error:    THE EXPANSION CANNOT BE COMPUTED */
        *ierr = 1; return;
    }

    /*                 COMPUTATION OF THE EXPANSION */
    double
        /* r := exp(-z) * z^b / gamma(b), as log_r := log(r):
         * log(r)=log(b) + log1p(gam1(b)) + b * log(z) + (a * lnx) + (bm1 * 0.5 * lnx) */
        log_r = log(b) + log1p(gb_gam1(b)) + b * log(z) + nu * lnx,
        // u is 'factored out' from the expansion {and multiplied back, at the end}:
        log_u = log_r - (gb_algdiv(b, a) + b * log(nu)),// algdiv(b,a) = log(gamma(a)/gamma(a+b))
        u = exp(log_u);

    if (log_u == GB_NEGINF) {
        /* L_Error:    THE EXPANSION CANNOT BE COMPUTED */ *ierr = 2; return;
    }

    int u_0 = (u == 0.); // underflow --> do work with log(u) == log_u !
    double l = // := *w/u .. but with care: such that it also works when u underflows to 0:
        log_w
        ? ((*w == GB_NEGINF) ? 0. : exp(  *w    - log_u))
        : ((*w == 0.)        ? 0. : exp(log(*w) - log_u));

    double
        q_r = gb_grat_r(b, z, log_r, eps), // = q/r of former grat1(b,z, r, &p, &q)
        v = 0.25 / (nu * nu),
        t2 = lnx * 0.25 * lnx,
        j = q_r,
        sum = j,
        t = 1.0,
        cn = 1.0,
        n2 = 0.;
    for (int n = 1; n <= 30; ++n) {
        double bp2n = b + n2;
        j = (bp2n * (bp2n + 1.) * j + (z + bp2n + 1.) * t) * v;
        n2 += 2.;
        t *= t2;
        cn /= n2 * (n2 + 1.);
        int nm1 = n - 1;
        c[nm1] = cn;
        double s = 0.;
        if (n > 1) {
            double coef = b - n;
            for (int i = 1; i <= nm1; ++i) {
                s += coef * c[i - 1] * d[nm1 - i];
                coef += b;
            }
        }
        d[nm1] = bm1 * cn + s / n;
        double dj = d[nm1] * j;
        sum += dj;
        if (sum <= 0.) {
            /* L_Error:    THE EXPANSION CANNOT BE COMPUTED */ *ierr = 3; return;
        }
        if (fabs(dj) <= eps * (sum + l)) {
            *ierr = 0; break;
        } else if (n == 30) { // never? (R warns here)
            *ierr = 4;
        }
    } // for(n .. n_terms..)

    /*                    ADD THE RESULTS TO W */
    if (log_w) // *w is in log space already:
        *w = gb_logspace_add(*w, log_u + log(sum));
    else
        *w += (u_0 ? exp(log_u + log(sum)) : u * sum);
    return;
}
