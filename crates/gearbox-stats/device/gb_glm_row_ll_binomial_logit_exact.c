// gb_glm_row_ll_binomial_logit_exact.c: the binomial logit log density
// of a row without the closed form (glm::hoisted's binomial_loglik with
// fast off, before the dispersion): x itself for rejected counts (NaN,
// -Inf); n log q and n log p from the link for x = 0 and x = n (0 for
// weight 0, x = n = 0); dbinom_raw from the hoisted h and lf, or the
// log-space formula where p or q underflows.
// @depends gb_plogis gb_glm_dbinom_raw_rows gb_glm_lchoose_whole
GB_FN GB_NOINLINE double gb_glm_row_ll_binomial_logit_exact(double eta, double x, double n,
    double h, double lf)
{
    if (!(x >= 0)) return x;
    if (x == 0) return (n == 0) ? 0. : n * gb_plogis(eta, 0., 1., 0, 1);
    if (x == n) return n * gb_plogis(eta, 0., 1., 1, 1);
    double p = gb_plogis(eta, 0., 1., 1, 0), q = gb_plogis(eta, 0., 1., 0, 0);
    return (p >= GB_DBL_MIN && q >= GB_DBL_MIN)
        ? gb_glm_dbinom_raw_rows(x, n, h, lf, p, q)
        : gb_glm_lchoose_whole(n, x)
            + x * gb_plogis(eta, 0., 1., 1, 1)
            + (n - x) * gb_plogis(eta, 0., 1., 0, 1);
}
