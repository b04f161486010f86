// gb_glm_logit_slope.c: the eta-derivative of the binomial logit term for
// counts x >= 0, n (glm::hoisted's binomial_slope): x q - (n - x) p with
// p = plogis(eta), q = plogis(-eta) from e = exp(-|eta|) (glm::link's
// logit_p_q); a side with no count adds nothing, so infinite eta gives 0
// there rather than 0 * Inf.
// @depends
GB_FN double gb_glm_logit_slope(double eta, double e, double x, double n)
{
    double value = 0., d = 1. / (1. + e);
    double p = (eta >= 0) ? d : e * d, q = (eta >= 0) ? e * d : d;
    if (x > 0) value += x * q;
    if (n - x > 0) value += (n - x) * (-p);
    return value;
}
