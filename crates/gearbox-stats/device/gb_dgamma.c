// gb_dgamma.c: the gamma density with shape and scale (R's dgamma; the
// scale, not the rate). NaN for shape < 0 or scale <= 0; shape == 0 is the
// point mass at 0.
// @depends gb_dpois_raw
GB_FN double gb_dgamma(double x, double shape, double scale, int give_log)
{
    double pr;

    if (isnan(x) || isnan(shape) || isnan(scale)) return x + shape + scale;
    if (shape < 0 || scale <= 0) return GB_NAN;
    if (x < 0) return GB_D__0;
    if (shape == 0) return (x == 0) ? GB_POSINF : GB_D__0; // point mass at 0
    if (x == 0) {
        if (shape < 1) return GB_POSINF;
        if (shape > 1) return GB_D__0;
        return give_log ? -log(scale) : 1 / scale;
    }

    if (shape < 1) {
        pr = gb_dpois_raw(shape, x / scale, give_log);
        // shape/x may overflow to +Inf (it cannot underflow to 0 here)
        return give_log
            ? pr + (isfinite(shape / x) ? log(shape / x) : log(shape) - log(x))
            : pr * shape / x;
    }
    // shape >= 1
    pr = gb_dpois_raw(shape - 1, x / scale, give_log);
    return give_log ? pr - log(scale) : pr / scale;
}
