// gb_bup.c: I_x(a,b) - I_x(a+n,b) for a positive integer n (TOMS 708 bup).
// @depends gb_exparg gb_brcmp1
GB_FN double gb_bup(double a, double b, double x, double y, int n, double eps,
                         int give_log)
{
    double ret_val;
    int i, k, mu;
    double d, l;

    // Obtain the scaling factor exp(-mu) and exp(mu)*(x^a * y^b / beta(a,b))/a
    double apb = a + b,
        ap1 = a + 1.;
    if (n > 1 && a >= 1. && apb >= ap1 * 1.1) {
        mu = (int)fabs(gb_exparg(1));
        k = (int) gb_exparg(0);
        if (mu > k)
            mu = k;
        d = exp(-(double) mu);
    }
    else {
        mu = 0;
        d = 1.;
    }

    /* L10: */
    ret_val = give_log
        ? gb_brcmp1(mu, a, b, x, y, 1) - log(a)
        : gb_brcmp1(mu, a, b, x, y, 0)  / a;
    if (n == 1 ||
        (give_log && ret_val == GB_NEGINF) || (!give_log && ret_val == 0.))
        return ret_val;

    int nm1 = n - 1;
    double w = d;

    /* LET K BE THE INDEX OF THE MAXIMUM TERM */
    k = 0;
    if (b > 1.) {
        if (y > 1e-4) {
            double r = (b - 1.) * x / y - a;
            if (r >= 1.)
                k = (r < nm1) ? (int) r : nm1;
        } else
            k = nm1;

        //  ADD THE INCREASING TERMS OF THE SERIES - if k > 0
        /* L30: */
        for (i = 0; i < k; ++i) {
            l = (double) i;
            d *= (apb + l) / (ap1 + l) * x;
            w += d;
        }
    }

    // L40: ADD THE REMAINING TERMS OF THE SERIES
    for (i = k; i < nm1; ++i) {
        l = (double) i;
        d *= (apb + l) / (ap1 + l) * x;
        w += d;
        if (d <= eps * w) /* relativ convergence (eps) */
            break;
    }

    // L50: TERMINATE THE PROCEDURE
    if (give_log) {
        ret_val += log(w);
    } else
        ret_val *= w;

    return ret_val;
}
