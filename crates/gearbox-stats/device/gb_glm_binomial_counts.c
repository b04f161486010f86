// gb_glm_binomial_counts.c: the check of a binomial GLM observation's
// counts, x = y * wt successes out of n = wt trials (glm::family's
// binomial_counts): 0 when both are whole numbers within R's tolerance with
// 0 <= x <= n (the caller then rounds them with nearbyint), else the term
// R's dbinom gives: NaN for bad trials, -Inf for bad successes.
// @depends
GB_FN double gb_glm_binomial_counts(double y, double wt)
{
    double x = y * wt;
    if (isnan(wt) || isnan(x) || wt < 0 || GB_NONINT(wt)) return GB_NAN;
    if (GB_NONINT(x) || x < 0 || !isfinite(x)) return GB_NEGINF;
    if (nearbyint(x) > nearbyint(wt)) return GB_NEGINF;
    return 0.;
}
