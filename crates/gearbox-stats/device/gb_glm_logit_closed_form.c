// gb_glm_logit_closed_form.c: the binomial logit log density of whole
// 0 < x < n as its closed form lchoose - n log1p(e) + t, e = exp(-|eta|)
// (passed in, so a caller that also wants the slope computes it once),
// t = x eta for eta <= 0 and (x - n) eta above, when its error bound
// lchoose_err + u (2 |lchoose| + 7 n L + 2 |t| + 3 |value|) is at most
// 2^-47 |value| (certified within 2^-46 of the exact value); NaN otherwise
// (glm::hoisted's logit_closed_form); log1p(e) by gb_log1p_unit.
// @depends gb_log1p_unit
GB_FN double gb_glm_logit_closed_form(double eta, double e, double x,
    double n, double lchoose, double lchoose_err)
{
    double l = gb_log1p_unit(e);
    double t = (eta <= 0) ? x * eta : (x - n) * eta;
    double nl = n * l;
    double value = lchoose - nl + t;
    double bound = lchoose_err + GB_UNIT_ROUNDOFF
        * (2. * fabs(lchoose) + 7. * nl + 2. * fabs(t) + 3. * fabs(value));
    return (isfinite(value) && bound <= GB_GLM_CERTIFIED * fabs(value)) ? value : GB_NAN;
}
