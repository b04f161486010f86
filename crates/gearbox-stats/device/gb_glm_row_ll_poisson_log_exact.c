// gb_glm_row_ll_poisson_log_exact.c: the poisson log density of a row
// without the closed form (glm::hoisted's poisson_loglik with fast off,
// before the weight and dispersion), lambda = exp(eta): k itself for a
// rejected y (NaN, -Inf); -Inf for k = +Inf; R's dpois_raw from the
// hoisted stirlerr(k), 0.5 log(2 pi k) and lgammafn(k + 1); where lambda
// is not a normal double the log-space formula k eta - lambda - lgamma.
// @depends gb_glm_dpois_raw_rows
GB_FN GB_NOINLINE double gb_glm_row_ll_poisson_log_exact(double eta, double lambda,
    double k, double stirl, double log_term, double lgam)
{
    if (!(k >= 0)) return k;
    if (lambda >= GB_DBL_MIN && isfinite(lambda)) {
        if (k == GB_POSINF) return GB_NEGINF;
        return gb_glm_dpois_raw_rows(k, lambda, stirl, log_term, lgam);
    }
    // k eta is 0 for k = 0 even where eta is -Inf.
    double k_eta = (k == 0) ? 0. : k * eta;
    return k_eta - lambda - lgam;
}
