// gb_glm_row_ll_poisson_log.cu: the poisson log-likelihood term with the
// row's constants hoisted (glm::hoisted's poisson_loglik): wt dpois(y,
// exp(eta), log = TRUE), divided by the dispersion when quasi is set. k is
// the rounded count, or the density R gives for a rejected y (NaN, -Inf);
// stirl, log_term and lgam are stirlerr(k), 0.5 log(2 pi k) and
// lgammafn(k + 1). With fast set, for k > 0 the certified closed form
// k eta - exp(eta) - lgamma(k + 1) where its error bound allows; else R's
// dpois_raw. Where exp(eta) is not a normal double the log-space formula.
// @depends gb_glm_poisson_closed_form gb_glm_dpois_raw_rows
__device__ double gb_glm_row_ll_poisson_log(double eta, double dispersion,
    double wt, double k, double stirl, double log_term, double lgam,
    double lgam_err, int quasi, int fast)
{
    if (wt == 0) return 0.;
    double lambda = exp(eta);
    double density;
    if (!(k >= 0)) {
        density = k;
    } else if (lambda >= GB_DBL_MIN && isfinite(lambda)) {
        if (k == GB_POSINF) {
            density = GB_NEGINF;
        } else {
            density = GB_NAN;
            if (fast && k > 0)
                density = gb_glm_poisson_closed_form(eta, lambda, k, lgam, lgam_err);
            if (isnan(density))
                density = gb_glm_dpois_raw_rows(k, lambda, stirl, log_term, lgam);
        }
    } else {
        // k eta is 0 for k = 0 even where eta is -Inf.
        double k_eta = (k == 0) ? 0. : k * eta;
        density = k_eta - lambda - lgam;
    }
    double value = wt * density;
    return quasi ? value / dispersion : value;
}
