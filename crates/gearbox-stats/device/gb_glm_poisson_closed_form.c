// gb_glm_poisson_closed_form.c: the poisson log density of count k at
// eta, lambda = exp(eta), as its closed form k eta - lambda - lgamma, when
// its error bound lgamma_err + u (3 |k eta| + 4 lambda + 4 |value|) is at
// most 2^-47 |value| (certified within 2^-46 of the exact value); NaN
// otherwise (glm::hoisted's poisson_closed_form).
// @depends
GB_FN double gb_glm_poisson_closed_form(double eta, double lambda, double k,
    double lgam, double lgam_err)
{
    double k_eta = k * eta;
    double value = k_eta - lambda - lgam;
    double bound = lgam_err + GB_UNIT_ROUNDOFF
        * (3. * fabs(k_eta) + 4. * lambda + 4. * fabs(value));
    return (isfinite(value) && bound <= GB_GLM_CERTIFIED * fabs(value)) ? value : GB_NAN;
}
