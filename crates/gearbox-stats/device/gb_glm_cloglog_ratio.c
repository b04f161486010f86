// gb_glm_cloglog_ratio.c: t / expm1(t) for t = exp(eta) >= 0, the cloglog
// d log p / d eta (glm::family's cloglog_ratio): 1 - t/2 below 1e-8 and
// exp(eta - t) above 40, where expm1(t) = exp(t) to double precision.
// @depends
GB_FN double gb_glm_cloglog_ratio(double eta, double t)
{
    if (t < 1e-8) return 1. - 0.5 * t;
    if (t > 40.) return exp(eta - t);
    return t / expm1(t);
}
