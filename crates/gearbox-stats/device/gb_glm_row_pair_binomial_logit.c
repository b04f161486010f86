// gb_glm_row_pair_binomial_logit.c: the term gb_glm_row_ll_binomial_logit,
// on the first eight values and flags quasi and fast, and the slope
// gb_glm_row_slope_binomial_logit, on s_* and flag s_quasi, at one eta from
// one exp(-|eta|), for the per-point grid kernel: returns the term, writes
// the slope to *slope; both bit for bit the two functions' values. The
// slope's eta must be the term's (s_eta is not read).
// @depends gb_glm_row_ll_binomial_logit_e gb_glm_logit_slope
GB_FN double gb_glm_row_pair_binomial_logit(double eta, double dispersion,
    double x, double n, double h, double lf, double lchoose, double lchoose_err,
    double s_eta, double s_dispersion, double s_x, double s_n,
    int quasi, int fast, int s_quasi, double* slope)
{
    double e = exp(-fabs(eta));
    double s = (s_x >= 0) ? gb_glm_logit_slope(eta, e, s_x, s_n) : GB_NAN;
    *slope = s_quasi ? s / s_dispersion : s;
    return gb_glm_row_ll_binomial_logit_e(eta, e, dispersion, x, n, h, lf,
        lchoose, lchoose_err, quasi, fast);
}
