// gb_pbeta.c: the beta distribution function (R's pbeta).
// @depends gb_pbeta_raw
GB_FN double gb_pbeta(double x, double a, double b, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(a) || isnan(b)) return x + a + b;

    if (a < 0 || b < 0) return GB_NAN;
    // allowing a==0 and b==0  <==> treat as one- or two-point mass

    if (x <= 0)
        return GB_DT_0;

    return gb_pbeta_raw(x, a, b, lower_tail, log_p);
}
