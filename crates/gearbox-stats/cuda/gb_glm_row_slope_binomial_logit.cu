// gb_glm_row_slope_binomial_logit.cu: the eta-derivative of the binomial
// logit term for a row's counts x, n (glm::hoisted's binomial_slope):
// x q - (n - x) p, p = plogis(eta), divided by the dispersion when quasi is set.
// Rejected counts (x NaN or -Inf) give NaN; weight 0 (x = n = 0) gives 0.
// @depends
__device__ double gb_glm_row_slope_binomial_logit(double eta, double dispersion,
    double x, double n, int quasi)
{
    double value = GB_NAN;
    if (x >= 0) {
        value = 0.;
        // p = plogis(eta), q = plogis(-eta) from one exp (glm::link's logit_p_q)
        double e = exp(-fabs(eta)), d = 1. / (1. + e);
        double p = (eta >= 0) ? d : e * d, q = (eta >= 0) ? e * d : d;
        if (x > 0) value += x * q;
        if (n - x > 0) value += (n - x) * (-p);
    }
    return quasi ? value / dispersion : value;
}
