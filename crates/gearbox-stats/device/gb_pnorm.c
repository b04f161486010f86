// gb_pnorm.c: the normal distribution function (R's pnorm).
// @depends gb_pnorm_both
GB_FN double gb_pnorm(double x, double mu, double sigma, int lower_tail, int log_p)
{
    double p;
    if (isnan(x) || isnan(mu) || isnan(sigma))
        return x + mu + sigma;
    if (!isfinite(x) && mu == x) return GB_NAN; /* x-mu is NaN */
    if (sigma <= 0) {
        if (sigma < 0) return GB_NAN;
        /* sigma = 0 : */
        return (x < mu) ? GB_DT_0 : GB_DT_1;
    }
    p = (x - mu) / sigma;
    if (!isfinite(p))
        return (x < mu) ? GB_DT_0 : GB_DT_1;
    return gb_pnorm_both(p, lower_tail ? 0 : 1, log_p);
}
