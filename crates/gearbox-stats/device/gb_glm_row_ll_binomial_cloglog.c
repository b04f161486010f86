// gb_glm_row_ll_binomial_cloglog.c: the binomial cloglog log-likelihood
// term with the row's constants hoisted (glm::hoisted's binomial_loglik):
// dbinom(x, n, p, log = TRUE) at p = 1 - exp(-t), t = exp(eta), divided by
// the dispersion when quasi is set. x is the rounded successes, or the
// term R gives for rejected counts (NaN, -Inf); weight 0 has x = n = 0.
// n log q = -n t and n log p for x = 0, n; dbinom_raw from the hoisted h
// and lf, or the log-space formula where p or q underflows. exp(eta) only
// for valid counts.
// @depends gb_glm_cloglog_log_p gb_glm_dbinom_raw_rows gb_glm_lchoose_whole
GB_FN double gb_glm_row_ll_binomial_cloglog(double eta, double dispersion,
    double x, double n, double h, double lf, int quasi)
{
    double value;
    if (!(x >= 0)) {
        value = x;
    } else if (n == 0) {
        value = 0.;
    } else {
        double t = exp(eta);
        if (x == 0) {
            value = n * (-t);
        } else if (x == n) {
            value = n * gb_glm_cloglog_log_p(eta, t);
        } else {
            double p = -expm1(-t), q = exp(-t);
            value = (p >= GB_DBL_MIN && q >= GB_DBL_MIN)
                ? gb_glm_dbinom_raw_rows(x, n, h, lf, p, q)
                : gb_glm_lchoose_whole(n, x)
                    + x * gb_glm_cloglog_log_p(eta, t)
                    + (n - x) * (-t);
        }
    }
    return quasi ? value / dispersion : value;
}
