// gb_glm_ll_binomial_logit.c: one observation's binomial log-likelihood
// term under the logit link (glm::family's loglik_term):
// dbinom(x, n, p, log = TRUE) for x = y * wt successes out of n = wt
// trials at p = plogis(eta), divided by the dispersion when quasi is set
// (quasibinomial). Weight 0 gives 0; counts that are not whole give what
// R's dbinom gives. For x = 0 and x = n the term is n log q and n log p
// with the logarithms from the link; where p or q underflows it is the
// log-space formula lchoose(n, x) + x log p + (n - x) log q.
// @depends gb_glm_binomial_counts gb_plogis gb_dbinom_raw gb_glm_lchoose_whole
GB_FN double gb_glm_ll_binomial_logit(double y, double wt, double eta,
    double dispersion, int quasi)
{
    if (wt == 0) return 0.;
    double value = gb_glm_binomial_counts(y, wt);
    if (value == 0) {
        double x = nearbyint(y * wt), n = nearbyint(wt);
        if (x == 0) {
            value = (n == 0) ? 0. : n * gb_plogis(eta, 0., 1., 0, 1);
        } else if (x == n) {
            value = n * gb_plogis(eta, 0., 1., 1, 1);
        } else {
            double p = gb_plogis(eta, 0., 1., 1, 0), q = gb_plogis(eta, 0., 1., 0, 0);
            value = (p >= GB_DBL_MIN && q >= GB_DBL_MIN)
                ? gb_dbinom_raw(x, n, p, q, 1)
                : gb_glm_lchoose_whole(n, x)
                    + x * gb_plogis(eta, 0., 1., 1, 1)
                    + (n - x) * gb_plogis(eta, 0., 1., 0, 1);
        }
    }
    return quasi ? value / dispersion : value;
}
