// gb_pt.c: Student's t distribution function (R's pt).
// @depends gb_pnorm gb_lbeta gb_pbeta
GB_FN double gb_pt(double x, double n, int lower_tail, int log_p)
{
    double val, nx;
    if (isnan(x) || isnan(n))
        return x + n;
    if (n <= 0.0) return GB_NAN;

    if (!isfinite(x))
        return (x < 0) ? GB_DT_0 : GB_DT_1;
    if (!isfinite(n))
        return gb_pnorm(x, 0.0, 1.0, lower_tail, log_p);

    nx = 1 + (x/n)*x;
    /* a version of this test is needed for x*x > D_MAX */
    if (nx > 1e100) { /* <==>  x*x > 1e100 * n  */
        /* Danger of underflow. So use Abramowitz & Stegun 26.5.4
           pbeta(z, a, b) ~ z^a(1-z)^b / aB(a,b) ~ z^a / aB(a,b),
           with z = 1/nx,  a = n/2,  b= 1/2 :
        */
        double lval;
        lval = -0.5*n*(2*log(fabs(x)) - log(n))
            - gb_lbeta(0.5*n, 0.5) - log(0.5*n);
        val = log_p ? lval : exp(lval);
    } else {
        val = (n > x * x)
            ? gb_pbeta (x * x / (n + x * x), 0.5, n / 2., /*lower_tail*/0, log_p)
            : gb_pbeta (1. / nx,             n / 2., 0.5, /*lower_tail*/1, log_p);
    }

    /* Use "1 - v"  if	lower_tail  and	 x > 0 (but not both):*/
    if (x <= 0.)
        lower_tail = !lower_tail;

    if (log_p) {
        if (lower_tail) return log1p(-0.5*exp(val));
        else return val - M_LN2; /* = log(.5* pbeta(....)) */
    }
    else {
        val /= 2.;
        return lower_tail ? (0.5 - (val) + 0.5) : (val); /* R_D_Cval(val) */
    }
}
