// gb_dpois.c: the Poisson density of x with mean lambda (R's dpois). NaN
// for lambda < 0; density 0 for non-integer x (R also warns).
// @depends gb_dpois_raw
GB_FN double gb_dpois(double x, double lambda, int give_log)
{
    if (isnan(x) || isnan(lambda)) return x + lambda;

    if (lambda < 0) return GB_NAN;
    if (GB_NONINT(x)) return GB_D__0;
    if (x < 0 || !isfinite(x)) return GB_D__0;

    x = nearbyint(x);
    return gb_dpois_raw(x, lambda, give_log);
}
