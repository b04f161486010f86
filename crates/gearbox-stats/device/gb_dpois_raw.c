// gb_dpois_raw.c: the Poisson probability lambda^x e^-lambda / x! (R 4.2's
// dpois_raw, through Welinder's ebd0: x log(x/lambda) + lambda - x as a
// two-part sum). No argument checks; x need not be an integer; x < 0 has
// density 0.
// @depends gb_ebd0 gb_stirlerr gb_lgamma
GB_FN double gb_dpois_raw(double x, double lambda, int give_log)
{
    const double x_LRG = 2.86111748575702815380240589208115399625e+307; // 2^1023 / pi

    if (lambda == 0) return (x == 0) ? GB_D__1 : GB_D__0;
    if (!isfinite(lambda)) return GB_D__0; // also for x = lambda = +Inf
    if (x < 0) return GB_D__0;
    if (x <= lambda * GB_DBL_MIN) return GB_D_exp(-lambda);
    if (lambda < x * GB_DBL_MIN) {
        if (!isfinite(x)) return GB_D__0; // lambda < x = +Inf
        return GB_D_exp(-lambda + x * log(lambda) - gb_lgamma(x + 1));
    }

    double yh, yl;
    gb_ebd0(x, lambda, &yh, &yl);
    yl += gb_stirlerr(x);
    int Lrg_x = (x >= x_LRG); // 2 pi x overflows
    double rr = Lrg_x ? M_SQRT_2PI * sqrt(x) : M_2PI * x;
    return give_log
        ? -yl - yh - (Lrg_x ? log(rr) : 0.5 * log(rr))
        : exp(-yl) * exp(-yh) / (Lrg_x ? rr : sqrt(rr));
}
