// gb_glm_row_slope_binomial_logit.c: the eta-derivative of the binomial
// logit term for a row's counts x, n (glm::hoisted's binomial_slope):
// x q - (n - x) p, p = plogis(eta), divided by the dispersion when quasi is set.
// Rejected counts (x NaN or -Inf) give NaN; weight 0 (x = n = 0) gives 0.
// @depends gb_glm_logit_slope
GB_FN double gb_glm_row_slope_binomial_logit(double eta, double dispersion,
    double x, double n, int quasi)
{
    double value = (x >= 0) ? gb_glm_logit_slope(eta, exp(-fabs(eta)), x, n) : GB_NAN;
    return quasi ? value / dispersion : value;
}
