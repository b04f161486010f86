// gb_glm_slope_poisson_log.c: the eta-derivative of gb_glm_ll_poisson_log,
// as glm::family's dloglik_deta: wt (y - exp(eta)), divided by the
// dispersion when quasi is set. Weight 0 gives 0.
// @depends gb_glm_slope_poisson_lambda
GB_FN double gb_glm_slope_poisson_log(double y, double wt, double eta,
    double dispersion, int quasi)
{
    return gb_glm_slope_poisson_lambda(y, wt, exp(eta), dispersion, quasi);
}
