// gb_glm_row_ll_binomial_logit_e.c: gb_glm_row_ll_binomial_logit with
// e = exp(-|eta|) given, for callers that share it with the slope.
// @depends gb_glm_logit_closed_form gb_glm_row_ll_binomial_logit_exact
GB_FN double gb_glm_row_ll_binomial_logit_e(double eta, double e,
    double dispersion, double x, double n, double h, double lf, double lchoose,
    double lchoose_err, int quasi, int fast)
{
    double value = GB_NAN;
    if (fast && x >= 0 && x <= n && n > 0)
        value = gb_glm_logit_closed_form(eta, e, x, n, lchoose, lchoose_err);
    if (isnan(value)) value = gb_glm_row_ll_binomial_logit_exact(eta, x, n, h, lf);
    return quasi ? value / dispersion : value;
}
