// gb_gammafn.c: the gamma function (R's gammafn). NaN at 0 and the
// negative integers; +Inf above 171.61; 0 below -170.57.
// @depends gb_gammafn_small gb_stirlerr gb_sinpi
GB_FN double gb_gammafn(double x)
{
    const double xmin = -170.5674972726612;
    const double xmax = 171.61447887182298;

    if (isnan(x)) return x;
    // exactly zero or a negative integer
    if (x == 0 || (x < 0 && x == round(x))) return GB_NAN;

    double y = fabs(x);
    if (y <= 10) return gb_gammafn_small(x);

    // |x| > 10
    if (x > xmax) return GB_POSINF;
    if (x < xmin) return 0.;

    double value;
    if (y <= 50 && y == (int)y) { // (y - 1)!
        value = 1.;
        for (int i = 2; i < y; i++) value *= i;
    } else {
        // R tests 2*y == (int)2*y here, which always holds: stirlerr(y).
        value = exp((y - 0.5) * log(y) - y + M_LN_SQRT_2PI + gb_stirlerr(y));
    }
    if (x > 0) return value;

    double sinpiy = gb_sinpi(y);
    if (sinpiy == 0) return GB_POSINF; // negative integer: overflow
    return -M_PI / (y * sinpiy * value);
}
