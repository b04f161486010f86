// gb_pgamma_smallx.c: pgamma for x < 1 by Abramowitz and Stegun 6.5.29
// (R's pgamma_smallx).
// @depends gb_dpois_raw gb_lgamma1p gb_log1mexp
GB_FN double gb_pgamma_smallx(double x, double alph, int lower_tail, int log_p)
{
    double sum = 0, c = alph, n = 0, term;

    /*
     * Relative to 6.5.29 all terms have been multiplied by alph
     * and the first, thus being 1, is omitted.
     */
    do {
        n++;
        c *= -x / n;
        term = c / (alph + n);
        sum += term;
    } while (fabs(term) > GB_DBL_EPSILON * fabs(sum));

    if (lower_tail) {
        double f1 = log_p ? log1p(sum) : 1 + sum;
        double f2;
        if (alph > 1) {
            f2 = gb_dpois_raw(alph, x, log_p);
            f2 = log_p ? f2 + x : f2 * exp(x);
        } else if (log_p)
            f2 = alph * log(x) - gb_lgamma1p(alph);
        else
            f2 = pow(x, alph) / exp(gb_lgamma1p(alph));
        return log_p ? f1 + f2 : f1 * f2;
    } else {
        double lf2 = alph * log(x) - gb_lgamma1p(alph);
        if (log_p)
            return gb_log1mexp(-(log1p(sum) + lf2)); /* R_Log1_Exp */
        else {
            double f1m1 = sum;
            double f2m1 = expm1(lf2);
            return -(f1m1 + f2m1 + f1m1 * f2m1);
        }
    }
}
