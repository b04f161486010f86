// gb_glm_dbinom_raw_rows.c: R's dbinom_raw(x, n, p, q, log = TRUE) for
// whole 0 < x < n with p, q positive, from the row's hoisted constants
// h = stirlerr(n) - stirlerr(x) - stirlerr(n - x) and
// lf = log(2 pi) + log(x) + log1p(-x / n) (glm::hoisted's dbinom_raw_rows):
// lc = h - bd0(x, n p) - bd0(n - x, n q), then lc - lf / 2, the bits of
// gb_dbinom_raw.
// @depends gb_bd0
GB_FN double gb_glm_dbinom_raw_rows(double x, double n, double h, double lf,
    double p, double q)
{
    double lc = h - gb_bd0(x, n * p) - gb_bd0(n - x, n * q);
    return lc - 0.5 * lf;
}
