// gb_glm_slope_poisson_lambda.c: gb_glm_slope_poisson_log with lambda =
// exp(eta) given: wt (y - lambda), over the dispersion when quasi is set;
// weight 0 gives 0.
// @depends
GB_FN double gb_glm_slope_poisson_lambda(double y, double wt, double lambda,
    double dispersion, int quasi)
{
    if (wt == 0) return 0.;
    double value = wt * (y - lambda);
    return quasi ? value / dispersion : value;
}
