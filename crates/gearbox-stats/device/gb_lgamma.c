// gb_lgamma.c: log|gamma(x)| (R's lgammafn). +Inf at 0, the negative
// integers and beyond 2.53e305.
// @depends gb_gammafn gb_lgammacor gb_sinpi
GB_FN double gb_lgamma(double x)
{
    const double xmax = 2.5327372760800758e+305;

    if (isnan(x)) return x;
    if (x <= 0 && x == trunc(x)) return GB_POSINF; // zero or negative integer

    double y = fabs(x);
    if (y < 1e-306) return -log(y); // denormalized range
    if (y <= 10) return log(fabs(gb_gammafn(x)));
    if (y > xmax) return GB_POSINF;

    if (x > 0) {
        if (x > 1e17)
            return x * (log(x) - 1.);
        else if (x > 4934720.)
            return M_LN_SQRT_2PI + (x - 0.5) * log(x) - x;
        return M_LN_SQRT_2PI + (x - 0.5) * log(x) - x + gb_lgammacor(x);
    }
    // x < -10; y = -x
    double sinpiy = fabs(gb_sinpi(y));
    if (sinpiy == 0) return GB_NAN; // negative integer: caught above
    return M_LN_SQRT_PId2 + (x - 0.5) * log(y) - x - log(sinpiy) - gb_lgammacor(y);
}
