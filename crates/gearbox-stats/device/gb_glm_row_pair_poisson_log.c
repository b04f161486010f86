// gb_glm_row_pair_poisson_log.c: the term gb_glm_row_ll_poisson_log, on
// the first eight values and flags quasi and fast, and the slope
// gb_glm_slope_poisson_log, on s_y, s_wt, s_eta, s_dispersion and flag
// s_quasi, at one eta from one exp(eta), for the per-point grid kernel: returns the term, writes the slope to *slope;
// both bit for bit the two functions' values. The slope's eta must be the
// term's (s_eta is not read).
// @depends gb_glm_row_ll_poisson_log_lambda gb_glm_slope_poisson_lambda
GB_FN double gb_glm_row_pair_poisson_log(double eta, double dispersion,
    double wt, double k, double stirl, double log_term, double lgam,
    double lgam_err, double s_y, double s_wt, double s_eta, double s_dispersion,
    int quasi, int fast, int s_quasi, double* slope)
{
    double lambda = exp(eta);
    *slope = gb_glm_slope_poisson_lambda(s_y, s_wt, lambda, s_dispersion, s_quasi);
    return gb_glm_row_ll_poisson_log_lambda(eta, lambda, dispersion, wt, k, stirl,
        log_term, lgam, lgam_err, quasi, fast);
}
