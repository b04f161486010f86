// gb_glm_row_ll_poisson_log.cu: the poisson log-likelihood term with the
// row's constants hoisted (glm::hoisted's poisson_loglik): wt dpois(y,
// exp(eta), log = TRUE), divided by the dispersion when quasi is set; k,
// stirl, log_term, lgam as gb_glm_row_ll_poisson_log_exact takes them.
// With fast set, for whole k >= 0 and a normal exp(eta) the certified
// closed form where its bound allows, else near the mode the bd0 series;
// else the exact path. Short, so kernels inline it and share exp(eta).
// @depends gb_glm_poisson_closed_form gb_glm_poisson_near_mode gb_glm_row_ll_poisson_log_exact
__device__ double gb_glm_row_ll_poisson_log(double eta, double dispersion,
    double wt, double k, double stirl, double log_term, double lgam,
    double lgam_err, int quasi, int fast)
{
    if (wt == 0) return 0.;
    double lambda = exp(eta), density = GB_NAN;
    if (fast && k >= 0 && k != GB_POSINF && lambda >= GB_DBL_MIN && isfinite(lambda)) {
        density = gb_glm_poisson_closed_form(eta, lambda, k, lgam, lgam_err);
        if (isnan(density)) density = gb_glm_poisson_near_mode(k, lambda, stirl, log_term);
    }
    if (isnan(density))
        density = gb_glm_row_ll_poisson_log_exact(eta, lambda, k, stirl, log_term, lgam);
    double value = wt * density;
    return quasi ? value / dispersion : value;
}
