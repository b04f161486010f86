// gb_glm_row_ll_binomial_logit.c: the binomial logit log-likelihood term
// with the row's constants hoisted (glm::hoisted's binomial_loglik):
// dbinom(x, n, plogis(eta), log = TRUE), divided by the dispersion when
// quasi is set. With fast set, the certified closed form where its bound
// allows (whole 0 <= x <= n, n > 0); else the exact path.
// @depends gb_glm_row_ll_binomial_logit_e
GB_FN double gb_glm_row_ll_binomial_logit(double eta, double dispersion,
    double x, double n, double h, double lf, double lchoose, double lchoose_err,
    int quasi, int fast)
{
    return gb_glm_row_ll_binomial_logit_e(eta, exp(-fabs(eta)), dispersion, x, n,
        h, lf, lchoose, lchoose_err, quasi, fast);
}
