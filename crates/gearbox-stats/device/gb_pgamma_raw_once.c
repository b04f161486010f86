// gb_pgamma_raw_once.c: R's pgamma_raw without its final recomputation on
// the log scale (which gb_pgamma_raw does by calling this twice, so no
// function recurses).
// @depends gb_pgamma_smallx gb_pd_upper_series gb_dpois_wrap gb_pd_lower_cf gb_pd_lower_series gb_ppois_asymp gb_log1mexp
GB_FN double gb_pgamma_raw_once(double x, double alph, int lower_tail, int log_p)
{
    /* Here, assume that  (x,alph) are not NA  &  alph > 0 . */

    double res;

    /* R_P_bounds_01(x, 0., ML_POSINF) */
    if (x <= 0.) return GB_DT_0;
    if (x >= GB_POSINF) return GB_DT_1;

    if (x < 1) {
        res = gb_pgamma_smallx(x, alph, lower_tail, log_p);
    } else if (x <= alph - 1 && x < 0.8 * (alph + 50)) {
        /* incl. large alph compared to x */
        double sum = gb_pd_upper_series(x, alph, log_p);/* = x/alph + o(x/alph) */
        double d = gb_dpois_wrap(alph, x, log_p);
        if (!lower_tail)
            res = log_p
                ? gb_log1mexp(-(d + sum)) /* R_Log1_Exp */
                : 1 - d * sum;
        else
            res = log_p ? sum + d : sum * d;
    } else if (alph - 1 < x && alph < 0.8 * (x + 50)) {
        /* incl. large x compared to alph */
        double sum;
        double d = gb_dpois_wrap(alph, x, log_p);
        if (alph < 1) {
            if (x * GB_DBL_EPSILON > 1 - alph)
                sum = GB_PD__1;
            else {
                double f = gb_pd_lower_cf(alph, x - (alph - 1)) * x / alph;
                /* = [alph/(x - alph+1) + o(alph/(x-alph+1))] * x/alph = 1 + o(1) */
                sum = log_p ? log(f) : f;
            }
        } else {
            sum = gb_pd_lower_series(x, alph - 1);/* = (alph-1)/x + o((alph-1)/x) */
            sum = log_p ? log1p(sum) : 1 + sum;
        }
        if (!lower_tail)
            res = log_p ? sum + d : sum * d;
        else
            res = log_p
                ? gb_log1mexp(-(d + sum)) /* R_Log1_Exp */
                : 1 - d * sum;
    } else { /* x >= 1 and x fairly near alph. */
        res = gb_ppois_asymp(alph - 1, x, !lower_tail, log_p);
    }
    return res;
}
