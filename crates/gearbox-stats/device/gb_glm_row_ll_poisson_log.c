// gb_glm_row_ll_poisson_log.c: the poisson log-likelihood term with the
// row's constants hoisted (glm::hoisted's poisson_loglik): wt dpois(y,
// exp(eta), log = TRUE), divided by the dispersion when quasi is set; k,
// stirl, log_term, lgam as gb_glm_row_ll_poisson_log_exact takes them.
// With fast set, for whole k >= 0 and a normal exp(eta) the certified
// closed form where its bound allows, else near the mode the bd0 series;
// else the exact path.
// @depends gb_glm_row_ll_poisson_log_lambda
GB_FN double gb_glm_row_ll_poisson_log(double eta, double dispersion,
    double wt, double k, double stirl, double log_term, double lgam,
    double lgam_err, int quasi, int fast)
{
    return gb_glm_row_ll_poisson_log_lambda(eta, exp(eta), dispersion, wt, k,
        stirl, log_term, lgam, lgam_err, quasi, fast);
}
