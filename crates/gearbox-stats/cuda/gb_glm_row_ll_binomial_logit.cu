// gb_glm_row_ll_binomial_logit.cu: the binomial logit log-likelihood term
// with the row's constants hoisted (glm::hoisted's binomial_loglik):
// dbinom(x, n, plogis(eta), log = TRUE), divided by the dispersion when
// quasi is set. With fast set, the certified closed form where its bound
// allows (whole 0 <= x <= n, n > 0); else the exact path. Short, so
// kernels inline it and share exp(-|eta|) with the slope.
// @depends gb_glm_logit_closed_form gb_glm_row_ll_binomial_logit_exact
__device__ double gb_glm_row_ll_binomial_logit(double eta, double dispersion,
    double x, double n, double h, double lf, double lchoose, double lchoose_err,
    int quasi, int fast)
{
    double value = GB_NAN;
    if (fast && x >= 0 && x <= n && n > 0)
        value = gb_glm_logit_closed_form(eta, x, n, lchoose, lchoose_err);
    if (isnan(value)) value = gb_glm_row_ll_binomial_logit_exact(eta, x, n, h, lf);
    return quasi ? value / dispersion : value;
}
