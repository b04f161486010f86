// gb_glm_ll_gaussian_identity.c: one observation's gaussian log-likelihood
// term under the identity link (glm::family's loglik_term):
// dnorm(y, eta, sqrt(dispersion / wt), log = TRUE). Weight 0 gives 0. The
// dispersion is the variance scale itself, so the quasi flag is ignored.
// @depends gb_dnorm
GB_FN double gb_glm_ll_gaussian_identity(double y, double wt, double eta,
    double dispersion, int quasi)
{
    (void) quasi;
    if (wt == 0) return 0.;
    return gb_dnorm(y, eta, sqrt(dispersion / wt), 1);
}
