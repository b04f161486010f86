// gb_glm_slope_gamma_log.c: the eta-derivative of gb_glm_ll_gamma_log,
// as glm::family's dloglik_deta: (wt / dispersion) (y exp(-eta) - 1).
// Weight 0 gives 0; the quasi flag is ignored.
// @depends
GB_FN double gb_glm_slope_gamma_log(double y, double wt, double eta,
    double dispersion, int quasi)
{
    (void) quasi;
    if (wt == 0) return 0.;
    return (wt / dispersion) * (y * exp(-eta) - 1.);
}
