// gb_lbeta.c: log(beta(a, b)) (R's lbeta). NaN for a negative argument,
// +Inf when the smaller is 0, -Inf when the larger is +Inf.
// @depends gb_lgammacor gb_lgamma gb_gammafn
GB_FN double gb_lbeta(double a, double b)
{
    double corr, p, q;

    if (isnan(a) || isnan(b)) return a + b;
    p = q = a;
    if (b < p) p = b; // min(a, b)
    if (b > q) q = b; // max(a, b)

    // both arguments must be >= 0
    if (p < 0) return GB_NAN;
    else if (p == 0) return GB_POSINF;
    else if (!isfinite(q)) return GB_NEGINF;

    if (p >= 10) {
        // p and q are big
        corr = gb_lgammacor(p) + gb_lgammacor(q) - gb_lgammacor(p + q);
        return log(q) * -0.5 + M_LN_SQRT_2PI + corr
            + (p - 0.5) * log(p / (p + q)) + q * log1p(-p / (p + q));
    } else if (q >= 10) {
        // p is small, but q is big
        corr = gb_lgammacor(q) - gb_lgammacor(p + q);
        return gb_lgamma(p) + corr + p - p * log(p + q)
            + (q - 0.5) * log1p(-p / (p + q));
    } else {
        // p and q are small: p <= q < 10
        if (p < 1e-306) return gb_lgamma(p) + (gb_lgamma(q) - gb_lgamma(p + q));
        return log(gb_gammafn(p) * (gb_gammafn(q) / gb_gammafn(p + q)));
    }
}
