// gb_glm_ll_gamma_log.c: one observation's Gamma log-likelihood term under
// the log link (glm::family's loglik_term): dgamma(y, shape = wt /
// dispersion, scale = exp(eta) / shape, log = TRUE). Weight 0 gives 0; the
// quasi flag is ignored. Where the scale is not a normal double the density
// is its log-space formula with log(scale) = eta - log(shape).
// @depends gb_dgamma gb_lgamma
GB_FN double gb_glm_ll_gamma_log(double y, double wt, double eta,
    double dispersion, int quasi)
{
    (void) quasi;
    if (wt == 0) return 0.;
    double shape = wt / dispersion;
    double scale = exp(eta) / shape;
    if (scale >= GB_DBL_MIN && isfinite(scale)) return gb_dgamma(y, shape, scale, 1);
    double log_scale = eta - log(shape);
    return -gb_lgamma(shape) - shape * log_scale + (shape - 1.) * log(y)
        - y * (shape * exp(-eta));
}
