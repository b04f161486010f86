// gb_qlogis.c: the logistic quantile function (R's qlogis).
// @depends gb_log1mexp
GB_FN double gb_qlogis(double p, double location, double scale, int lower_tail, int log_p)
{
    if (isnan(p) || isnan(location) || isnan(scale))
        return p + location + scale;
    /* R_Q_P01_boundaries(p, -Inf, Inf) */
    if (log_p) {
        if (p > 0) return GB_NAN;
        if (p == 0) return lower_tail ? GB_POSINF : GB_NEGINF;
        if (p == GB_NEGINF) return lower_tail ? GB_NEGINF : GB_POSINF;
    } else {
        if (p < 0 || p > 1) return GB_NAN;
        if (p == 0) return lower_tail ? GB_NEGINF : GB_POSINF;
        if (p == 1) return lower_tail ? GB_POSINF : GB_NEGINF;
    }

    if (scale < 0.) return GB_NAN;
    if (scale == 0.) return location;

    /* p := logit(p) = log( p / (1-p) ); R_Log1_Exp(p) == log1mexp(-p) */
    if (log_p) {
        if (lower_tail)
            p = p - gb_log1mexp(-p);
        else
            p = gb_log1mexp(-p) - p;
    }
    else
        p = log(lower_tail ? (p / (1. - p)) : ((1. - p) / p));

    return location + scale * p;
}
