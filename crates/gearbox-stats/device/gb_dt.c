// gb_dt.c: Student's t density with n degrees of freedom (R's dt, Loader's
// saddle-point form; n need not be an integer). NaN for n <= 0; n = Inf is
// the standard normal.
// @depends gb_bd0 gb_stirlerr gb_dnorm
GB_FN double gb_dt(double x, double n, int give_log)
{
    if (isnan(x) || isnan(n)) return x + n;
    if (n <= 0) return GB_NAN;
    if (!isfinite(x)) return GB_D__0;
    if (!isfinite(n)) return gb_dnorm(x, 0., 1., give_log);

    double u, t = -gb_bd0(n / 2., (n + 1) / 2.) + gb_stirlerr((n + 1) / 2.) - gb_stirlerr(n / 2.),
              x2n = x * x / n, // in [0, Inf]
              ax = 0.,
              l_x2n; // log(sqrt(1 + x2n)) = log(1 + x2n) / 2
    int lrg_x2n = (x2n > 1. / GB_DBL_EPSILON);
    if (lrg_x2n) { // large x^2/n
        ax = fabs(x);
        l_x2n = log(ax) - log(n) / 2.; // log(x2n) / 2
        u = n * l_x2n;
    } else if (x2n > 0.2) {
        l_x2n = log(1 + x2n) / 2.;
        u = n * l_x2n;
    } else {
        l_x2n = log1p(x2n) / 2.;
        u = -gb_bd0(n / 2., (n + x * x) / 2.) + x * x / 2.;
    }

    if (give_log) return t - u - (M_LN_SQRT_2PI + l_x2n);

    // 1/sqrt(1 + x2n); for large x2n, sqrt(1 + 1/x2n) is 1
    double I_sqrt_ = (lrg_x2n ? sqrt(n) / ax : exp(-l_x2n));
    return exp(t - u) * M_1_SQRT_2PI * I_sqrt_;
}
