// gb_dlogis.c: the logistic density with location and scale (R's dlogis).
// NaN for scale <= 0.
// @depends
GB_FN double gb_dlogis(double x, double location, double scale, int give_log)
{
    double e, f;

    if (isnan(x) || isnan(location) || isnan(scale)) return x + location + scale;
    if (scale <= 0.0) return GB_NAN;

    x = fabs((x - location) / scale);
    e = exp(-x);
    f = 1.0 + e;
    return give_log ? -(x + log(scale * f * f)) : e / (scale * f * f);
}
