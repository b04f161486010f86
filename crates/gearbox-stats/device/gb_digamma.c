// gb_digamma.c: the digamma function psi(x) = d/dx log gamma(x), the
// derivative of lgamma, as R's digamma computes it: -dpsifn(x, 0, 1, 1)
// (Amos's algorithm 610 for n = 0, one member, kode 1), the same
// operations in the same order as nmath::digamma (src/nmath/polygamma.rs,
// which explains each step). The asymptotic expansion from 9 up (after the
// recurrence psi(x) = psi(x + 1) - 1/x below 9), log(x) where x log(x) >
// 2^51, -1/x below 2^-53, the reflection psi(x) = psi(1 - x) - pi cot(pi x)
// for x <= 0. NaN at the poles (0 and the negative integers, -Inf) and,
// as in R, for 0 < x < exp(-700.6) (about 3.8e-305); +Inf at +Inf.
// @depends

// The Bernoulli numbers B2, B4, ..., B40.
GB_TABLE double gb_digamma_bernoulli[20] = {
     1.66666666666666667e-01,
    -3.33333333333333333e-02,
     2.38095238095238095e-02,
    -3.33333333333333333e-02,
     7.57575757575757576e-02,
    -2.53113553113553114e-01,
     1.16666666666666667e+00,
    -7.09215686274509804e+00,
     5.49711779448621554e+01,
    -5.29124242424242424e+02,
     6.19212318840579710e+03,
    -8.65802531135531136e+04,
     1.42551716666666667e+06,
    -2.72982310678160920e+07,
     6.01580873900642368e+08,
    -1.51163157670921569e+10,
     4.29614643061166667e+11,
    -1.37116552050883328e+13,
     4.88332318973593167e+14,
    -1.92965793419400681e+16
};

GB_FN double gb_digamma(double x)
{
    // dpsifn's constants for n = 0: its tolerance 2^-53, its exponent
    // limit 2.302 (1021 log10(2) - 3), the start of the expansion (9) and
    // 1 / (2 DBL_EPSILON) = 2^51.
    const double wdtol = GB_DBL_EPSILON * 0.5;
    const double elim = 2.302 * (1021. * 0.301029995663981195213738894724 - 3.0);
    const double xmin = 9.;
    const double large = 1. / (2. * GB_DBL_EPSILON);
    double xr = 0., a, xln, xdmy, xdmln, tt, tst, rxsq, t, s, tk, term;
    int reflect = 0, steps = 0, whole, i, k;

    if (isnan(x)) return x;
    if (x <= 0.) {
        if (x == round(x)) return GB_NAN;
        reflect = 1;
        xr = x;
        x = 1. - x;
    }
    xln = log(x);
    if (x * xln > large) {
        a = -xln;
    } else if (fabs(xln) > elim) {
        return GB_NAN; // dpsifn's overflow flag (tiny x only)
    } else if (x < wdtol) {
        a = 1. / x;
    } else {
        xdmy = x;
        xdmln = xln;
        if (x < xmin) {
            whole = (int) x;
            xdmy = xmin - (double) whole;
            steps = (int) xdmy;
            xdmy = x + xdmy;
            xdmln = log(xdmy);
        }
        tt = 0.5 / xdmy;
        tst = wdtol * tt;
        rxsq = 1. / (xdmy * xdmy);
        t = 0.5 * rxsq;
        s = t * gb_digamma_bernoulli[0];
        if (fabs(s) >= tst) {
            tk = 2.;
            for (k = 1; k < 20; k++) {
                t = t * (tk / (tk + 2.)) * rxsq;
                term = t * gb_digamma_bernoulli[k];
                if (fabs(term) < tst) break;
                s += term;
                tk += 2.;
            }
        }
        s += tt;
        for (i = 1; i <= steps; i++) s += 1. / (x + (double) (steps - i));
        a = s - xdmln;
    }
    if (reflect) {
        xr *= M_PI;
        a = a + M_PI * (cos(xr) / sin(xr));
    }
    return -a;
}
