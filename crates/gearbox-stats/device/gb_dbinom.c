// gb_dbinom.c: the binomial density of x successes in n trials with
// success probability p (R's dbinom). NaN for p outside [0, 1] or n
// negative or not an integer; density 0 for non-integer x (R also warns).
// @depends gb_dbinom_raw
GB_FN double gb_dbinom(double x, double n, double p, int give_log)
{
    if (isnan(x) || isnan(n) || isnan(p)) return x + n + p;

    if (p < 0 || p > 1 || n < 0 || GB_NONINT(n)) return GB_NAN;
    if (GB_NONINT(x)) return GB_D__0;
    if (x < 0 || !isfinite(x)) return GB_D__0;

    n = nearbyint(n);
    x = nearbyint(x);
    return gb_dbinom_raw(x, n, p, 1 - p, give_log);
}
