// gb_glm_slope_binomial_logit.c: the eta-derivative of
// gb_glm_ll_binomial_logit, as glm::family's dloglik_deta: x q - (n - x) p,
// p = plogis(eta), q = 1 - p, for x = y * wt and n = wt rounded, divided
// by the dispersion when quasi is set. Weight 0 gives 0; counts that are
// not whole give NaN.
// @depends gb_glm_binomial_counts
GB_FN double gb_glm_slope_binomial_logit(double y, double wt, double eta,
    double dispersion, int quasi)
{
    if (wt == 0) return 0.;
    double value = gb_glm_binomial_counts(y, wt);
    if (value == 0) {
        double x = nearbyint(y * wt), n = nearbyint(wt);
        // p = plogis(eta), q = plogis(-eta) from one exp (glm::link's logit_p_q)
        double e = exp(-fabs(eta)), d = 1. / (1. + e);
        double p = (eta >= 0) ? d : e * d, q = (eta >= 0) ? e * d : d;
        if (x > 0) value += x * q;
        if (n - x > 0) value += (n - x) * (-p);
    } else {
        value = GB_NAN;
    }
    return quasi ? value / dispersion : value;
}
