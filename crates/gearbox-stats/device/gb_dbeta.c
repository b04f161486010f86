// gb_dbeta.c: the beta density with shapes a and b (R's dbeta). NaN for a
// negative shape; zero or infinite shapes give R's limiting point masses.
// @depends gb_dbinom_raw gb_lbeta
GB_FN double gb_dbeta(double x, double a, double b, int give_log)
{
    if (isnan(x) || isnan(a) || isnan(b)) return x + a + b;

    if (a < 0 || b < 0) return GB_NAN;
    if (x < 0 || x > 1) return GB_D__0;

    // limit cases for (a, b): point masses
    if (a == 0 || b == 0 || !isfinite(a) || !isfinite(b)) {
        if (a == 0 && b == 0) // mass 1/2 at each of 0 and 1
            return (x == 0 || x == 1) ? GB_POSINF : GB_D__0;
        if (a == 0 || b / a == GB_POSINF) // mass 1 at 0
            return (x == 0) ? GB_POSINF : GB_D__0;
        if (b == 0 || a / b == GB_POSINF) // mass 1 at 1
            return (x == 1) ? GB_POSINF : GB_D__0;
        // a = b = Inf: mass 1 at 1/2
        return (x == 0.5) ? GB_POSINF : GB_D__0;
    }

    if (x == 0) {
        if (a > 1) return GB_D__0;
        if (a < 1) return GB_POSINF;
        return GB_D_val(b); // a == 1
    }
    if (x == 1) {
        if (b > 1) return GB_D__0;
        if (b < 1) return GB_POSINF;
        return GB_D_val(a); // b == 1
    }

    double lval;
    if (a <= 2 || b <= 2)
        lval = (a - 1) * log(x) + (b - 1) * log1p(-x) - gb_lbeta(a, b);
    else
        lval = log(a + b - 1) + gb_dbinom_raw(a - 1, a + b - 2, x, 1 - x, 1);
    return GB_D_exp(lval);
}
