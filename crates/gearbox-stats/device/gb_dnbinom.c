// gb_dnbinom.c: the negative binomial density of x failures before the
// size-th success with success probability prob (R 4.2's dnbinom; size need
// not be an integer). NaN for prob outside (0, 1] or size < 0; density 0
// for non-integer x (R also warns).
// @depends gb_dbinom_raw gb_lgamma1p
GB_FN double gb_dnbinom(double x, double size, double prob, int give_log)
{
    if (isnan(x) || isnan(size) || isnan(prob)) return x + size + prob;

    if (prob <= 0 || prob > 1 || size < 0) return GB_NAN;
    if (GB_NONINT(x)) return GB_D__0;
    if (x < 0 || !isfinite(x)) return GB_D__0;
    x = nearbyint(x);
    if (x == 0) {
        // size = 0 is the point mass at zero; else P(0) = prob^size
        if (size == 0) return GB_D__1;
        return give_log ? size * log(prob) : pow(prob, size);
    }
    if (!isfinite(size)) size = GB_DBL_MAX;

    if (x < 1e-10 * size) {
        // two terms of Abramowitz & Stegun 6.1.47 instead of dbinom_raw()
        double xx2s = // x (x-1) / (2 size), robustly
            (x < sqrt(GB_DBL_MAX)) ? ldexp(x * (x - 1), -1) / size : x * (ldexp(x, -1) / size);
        return GB_D_exp(size * log(prob) + x * (log(size) + log1p(-prob))
                        - gb_lgamma1p(x) + log1p(xx2s));
    }
    // log1p(-x/(size+x)) is more accurate than log(size/(size+x)) for x < size
    double p = give_log ? (x < size ? log1p(-x / (size + x)) : log(size / (size + x)))
                        : size / (size + x),
           ans = gb_dbinom_raw(size, x + size, prob, 1 - prob, give_log);
    return give_log ? p + ans : p * ans;
}
