// gb_glm_ll_binomial_cloglog.c: one observation's binomial log-likelihood
// term under the cloglog link (glm::family's loglik_term):
// dbinom(x, n, p, log = TRUE) for x = y * wt successes out of n = wt
// trials at p = 1 - exp(-t), t = exp(eta), divided by the dispersion when
// quasi is set (quasibinomial). Weight 0 gives 0; counts that are not
// whole give what R's dbinom gives. For x = 0 and x = n the term is
// n log q = -n t and n log p; where p or q underflows it is the log-space
// formula lchoose(n, x) + x log p + (n - x) log q.
// @depends gb_glm_binomial_counts gb_glm_cloglog_log_p gb_dbinom_raw gb_glm_lchoose_whole
GB_FN double gb_glm_ll_binomial_cloglog(double y, double wt, double eta,
    double dispersion, int quasi)
{
    if (wt == 0) return 0.;
    double value = gb_glm_binomial_counts(y, wt);
    if (value == 0) {
        // exp(eta) only once the counts are valid.
        double t = exp(eta);
        double x = nearbyint(y * wt), n = nearbyint(wt);
        if (x == 0) {
            value = (n == 0) ? 0. : n * (-t);
        } else if (x == n) {
            value = n * gb_glm_cloglog_log_p(eta, t);
        } else {
            double p = -expm1(-t), q = exp(-t);
            value = (p >= GB_DBL_MIN && q >= GB_DBL_MIN)
                ? gb_dbinom_raw(x, n, p, q, 1)
                : gb_glm_lchoose_whole(n, x)
                    + x * gb_glm_cloglog_log_p(eta, t)
                    + (n - x) * (-t);
        }
    }
    return quasi ? value / dispersion : value;
}
