// gb_glm_row_ll_poisson_log_lambda.c: gb_glm_row_ll_poisson_log with
// lambda = exp(eta) given, for callers that share it with the slope.
// @depends gb_glm_poisson_closed_form gb_glm_poisson_near_mode gb_glm_row_ll_poisson_log_exact
GB_FN double gb_glm_row_ll_poisson_log_lambda(double eta, double lambda,
    double dispersion, double wt, double k, double stirl, double log_term,
    double lgam, double lgam_err, int quasi, int fast)
{
    if (wt == 0) return 0.;
    double density = GB_NAN;
    if (fast && k >= 0 && k != GB_POSINF && lambda >= GB_DBL_MIN && isfinite(lambda)) {
        density = gb_glm_poisson_closed_form(eta, lambda, k, lgam, lgam_err);
        if (isnan(density)) density = gb_glm_poisson_near_mode(k, lambda, stirl, log_term);
    }
    if (isnan(density))
        density = gb_glm_row_ll_poisson_log_exact(eta, lambda, k, stirl, log_term, lgam);
    double value = wt * density;
    return quasi ? value / dispersion : value;
}
