// gb_glm_slope_gaussian_identity.c: the eta-derivative of
// gb_glm_ll_gaussian_identity, as glm::family's dloglik_deta:
// wt (y - eta) / dispersion. Weight 0 gives 0; the quasi flag is ignored.
// @depends
GB_FN double gb_glm_slope_gaussian_identity(double y, double wt, double eta,
    double dispersion, int quasi)
{
    (void) quasi;
    if (wt == 0) return 0.;
    return wt * (y - eta) / dispersion;
}
