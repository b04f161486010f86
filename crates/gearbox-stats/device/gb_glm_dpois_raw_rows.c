// gb_glm_dpois_raw_rows.c: R's dpois_raw(x, lambda, log = TRUE) for a whole
// finite x >= 0 and a normal finite lambda, from the row's hoisted
// stirlerr(x), 0.5 log(2 pi x) (log_term) and lgammafn(x + 1)
// (glm::hoisted's dpois_raw_rows): the bits of gb_dpois_raw.
// @depends gb_ebd0
GB_FN double gb_glm_dpois_raw_rows(double x, double lambda, double stirl,
    double log_term, double lgam)
{
    if (x <= lambda * GB_DBL_MIN) return -lambda;
    if (lambda < x * GB_DBL_MIN) return -lambda + x * log(lambda) - lgam;
    double yh, yl;
    gb_ebd0(x, lambda, &yh, &yl);
    yl += stirl;
    return -yl - yh - log_term;
}
