// gb_glm_row_slope_binomial_cloglog.c: the eta-derivative of the binomial
// cloglog term for a row's counts x, n (glm::hoisted's binomial_slope):
// x t / expm1(t) - (n - x) t, t = exp(eta), divided by the dispersion when quasi is set.
// Rejected counts (x NaN or -Inf) give NaN; weight 0 (x = n = 0) gives 0.
// @depends gb_glm_cloglog_ratio
GB_FN double gb_glm_row_slope_binomial_cloglog(double eta, double dispersion,
    double x, double n, int quasi)
{
    double value = GB_NAN;
    if (x >= 0) {
        value = 0.;
        double t = exp(eta);
        if (x > 0) value += x * gb_glm_cloglog_ratio(eta, t);
        if (n - x > 0) value += (n - x) * (-t);
    }
    return quasi ? value / dispersion : value;
}
