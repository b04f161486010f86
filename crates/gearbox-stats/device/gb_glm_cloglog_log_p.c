// gb_glm_cloglog_log_p.c: log p = log(1 - exp(-t)), t = exp(eta), for the
// cloglog link (glm::family's cloglog_log_p): for t < 1e-5 the series
// eta - t/2 + t^2/24, finite where t underflows to 0.
// @depends gb_log1mexp
GB_FN double gb_glm_cloglog_log_p(double eta, double t)
{
    if (t < 1e-5) return eta - 0.5 * t + t * t / 24.;
    return gb_log1mexp(t);
}
