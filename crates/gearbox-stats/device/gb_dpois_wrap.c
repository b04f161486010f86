// gb_dpois_wrap.c: dpois(x_plus_1 - 1, lambda), also for x_plus_1 <= 1
// (R's dpois_wrap in pgamma.c); a log with give_log.
// @depends gb_dpois_raw gb_lgamma
GB_FN double gb_dpois_wrap(double x_plus_1, double lambda, int give_log)
{
    /* M_cutoff = M_LN2 * DBL_MAX_EXP / DBL_EPSILON: if |x| > |k| * M_cutoff,
     * then log[ exp(-x) * k^x ] =~= -x */
    const double M_cutoff = M_LN2 * 1024 / GB_DBL_EPSILON;

    if (!isfinite(lambda))
        return give_log ? GB_NEGINF : 0.;
    if (x_plus_1 > 1)
        return gb_dpois_raw(x_plus_1 - 1, lambda, give_log);
    if (lambda > fabs(x_plus_1 - 1) * M_cutoff) {
        double v = -lambda - gb_lgamma(x_plus_1);
        return give_log ? v : exp(v);
    }
    else {
        double d = gb_dpois_raw(x_plus_1, lambda, give_log);
        return give_log
            ? d + log(x_plus_1 / lambda)
            : d * (x_plus_1 / lambda);
    }
}
