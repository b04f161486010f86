// gb_glm_row_slope_binomial_probit.c: the eta-derivative of the binomial
// probit term for a row's counts x, n (glm::hoisted's binomial_slope):
// x dnorm/pnorm(eta) - (n - x) dnorm/pnorm(-eta), divided by the dispersion when quasi is set.
// Rejected counts (x NaN or -Inf) give NaN; weight 0 (x = n = 0) gives 0.
// @depends gb_glm_probit_ratio
GB_FN double gb_glm_row_slope_binomial_probit(double eta, double dispersion,
    double x, double n, int quasi)
{
    double value = GB_NAN;
    if (x >= 0) {
        value = 0.;
        if (x > 0) value += x * gb_glm_probit_ratio(eta);
        if (n - x > 0) value += (n - x) * (-gb_glm_probit_ratio(-eta));
    }
    return quasi ? value / dispersion : value;
}
