// gb_glm_poisson_near_mode.c: the poisson log density of whole k >= 1
// near its mode, -(stirlerr(k) + bd0(k, lambda)) - 0.5 log(2 pi k) with
// the two constants hoisted and bd0 by its series (|k - lambda| < 0.1 (k +
// lambda)); NaN outside that range (glm::hoisted's poisson_near_mode).
// @depends gb_bd0
GB_FN GB_NOINLINE double gb_glm_poisson_near_mode(double k, double lambda, double stirl,
    double log_term)
{
    if (k >= 1 && fabs(k - lambda) < 0.1 * (k + lambda))
        return -(stirl + gb_bd0(k, lambda)) - log_term;
    return GB_NAN;
}
