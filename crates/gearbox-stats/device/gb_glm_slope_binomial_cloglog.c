// gb_glm_slope_binomial_cloglog.c: the eta-derivative of
// gb_glm_ll_binomial_cloglog, as glm::family's dloglik_deta:
// x t / expm1(t) - (n - x) t, t = exp(eta), for x = y * wt and n = wt
// rounded, divided by the dispersion when quasi is set. Weight 0 gives 0;
// counts that are not whole give NaN.
// @depends gb_glm_binomial_counts gb_glm_cloglog_ratio
GB_FN double gb_glm_slope_binomial_cloglog(double y, double wt, double eta,
    double dispersion, int quasi)
{
    if (wt == 0) return 0.;
    double value = gb_glm_binomial_counts(y, wt);
    if (value == 0) {
        double x = nearbyint(y * wt), n = nearbyint(wt);
        double t = exp(eta);
        if (x > 0) value += x * gb_glm_cloglog_ratio(eta, t);
        if (n - x > 0) value += (n - x) * (-t);
    } else {
        value = GB_NAN;
    }
    return quasi ? value / dispersion : value;
}
