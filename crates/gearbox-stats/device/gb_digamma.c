// gb_digamma.c: the digamma function psi(x) = d/dx log gamma(x), the
// derivative of lgamma (TOMS 708 psi); NaN at the poles (0 and the
// negative integers), at -Inf and below -2147483647, where the reflection
// is not computed.
// @depends gb_psi
GB_FN double gb_digamma(double x)
{
    if (isnan(x)) return x;
    if (x <= 0. && (x == floor(x) || x < -2147483647.)) return GB_NAN;
    return gb_psi(x);
}
