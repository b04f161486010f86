// gb_glm_row_ll_binomial_probit.c: the binomial probit log-likelihood term
// with the row's constants hoisted (glm::hoisted's binomial_loglik):
// dbinom(x, n, pnorm(eta), log = TRUE), divided by the dispersion when
// quasi is set. x is the rounded successes, or the term R gives for
// rejected counts (NaN, -Inf); weight 0 has x = n = 0. n log q, n log p
// from the link for x = 0, n; dbinom_raw from the hoisted h and lf, or
// the log-space formula where p or q underflows.
// @depends gb_pnorm gb_glm_dbinom_raw_rows gb_glm_lchoose_whole
GB_FN double gb_glm_row_ll_binomial_probit(double eta, double dispersion,
    double x, double n, double h, double lf, int quasi)
{
    double value;
    if (!(x >= 0)) {
        value = x;
    } else if (x == 0) {
        value = (n == 0) ? 0. : n * gb_pnorm(eta, 0., 1., 0, 1);
    } else if (x == n) {
        value = n * gb_pnorm(eta, 0., 1., 1, 1);
    } else {
        double p = gb_pnorm(eta, 0., 1., 1, 0), q = gb_pnorm(eta, 0., 1., 0, 0);
        value = (p >= GB_DBL_MIN && q >= GB_DBL_MIN)
            ? gb_glm_dbinom_raw_rows(x, n, h, lf, p, q)
            : gb_glm_lchoose_whole(n, x)
                + x * gb_pnorm(eta, 0., 1., 1, 1)
                + (n - x) * gb_pnorm(eta, 0., 1., 0, 1);
    }
    return quasi ? value / dispersion : value;
}
