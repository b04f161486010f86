// gb_dbinom_raw.c: the binomial probability of x successes in n trials,
// p and q = 1 - p given separately (R 4.2's dbinom_raw, Loader's
// saddle-point form). No argument checks; x need not be an integer; x
// outside [0, n] has density 0.
// @depends gb_stirlerr gb_bd0
GB_FN double gb_dbinom_raw(double x, double n, double p, double q, int give_log)
{
    double lf, lc;

    if (p == 0) return (x == 0) ? GB_D__1 : GB_D__0;
    if (q == 0) return (x == n) ? GB_D__1 : GB_D__0;

    if (x == 0) {
        if (n == 0) return GB_D__1;
        lc = (p < 0.1) ? -gb_bd0(n, n * q) - n * p : n * log(q);
        return GB_D_exp(lc);
    }
    if (x == n) {
        lc = (q < 0.1) ? -gb_bd0(n, n * p) - n * q : n * log(p);
        return GB_D_exp(lc);
    }
    if (x < 0 || x > n) return GB_D__0;

    // n p or n q can underflow to zero for small n and p or q (NaN then)
    lc = gb_stirlerr(n) - gb_stirlerr(x) - gb_stirlerr(n - x)
        - gb_bd0(x, n * p) - gb_bd0(n - x, n * q);
    // log(2 pi x (n - x) / n), written to stay accurate for x << n
    lf = M_LN_2PI + log(x) + log1p(-x / n);
    return GB_D_exp(lc - 0.5 * lf);
}
