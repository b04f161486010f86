// gb_glm_ll_poisson_log.c: one observation's poisson log-likelihood term
// under the log link (glm::family's loglik_term): wt dpois(y, exp(eta),
// log = TRUE), divided by the dispersion when quasi is set (quasipoisson).
// Weight 0 gives 0. Where exp(eta) is not a normal double the density is
// its log-space formula y eta - exp(eta) - lgamma(y + 1), finite where
// dpois of the under- or overflowed mean is not.
// @depends gb_dpois gb_lgamma
GB_FN double gb_glm_ll_poisson_log(double y, double wt, double eta,
    double dispersion, int quasi)
{
    if (wt == 0) return 0.;
    double lambda = exp(eta);
    double density;
    if (lambda >= GB_DBL_MIN && isfinite(lambda)) {
        density = gb_dpois(y, lambda, 1);
    } else if (GB_NONINT(y) || y < 0) {
        density = GB_NEGINF;
    } else {
        double k = nearbyint(y);
        // k eta is 0 for k = 0 even where eta is -Inf.
        double k_eta = (k == 0) ? 0. : k * eta;
        density = k_eta - lambda - gb_lgamma(k + 1.);
    }
    double value = wt * density;
    return quasi ? value / dispersion : value;
}
