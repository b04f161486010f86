// gb_plogis.c: the logistic distribution function (R's plogis).
// @depends gb_log1pexp
GB_FN double gb_plogis(double x, double location, double scale, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(location) || isnan(scale))
        return x + location + scale;
    if (scale <= 0.0) return GB_NAN;

    x = (x - location) / scale;
    if (isnan(x)) return GB_NAN;
    /* R_P_bounds_Inf_01(x) */
    if (!isfinite(x)) {
        if (x > 0) return GB_DT_1;
        return GB_DT_0;
    }

    if (log_p) {
        // log(1 / (1 + exp( +- x ))) = -log(1 + exp( +- x))
        return -gb_log1pexp(lower_tail ? -x : x);
    } else {
        return 1 / (1 + exp(lower_tail ? -x : x));
    }
}
