// gb_dpnorm.c: dnorm(x) / pnorm(x, lower_tail) given
// lp == pnorm(x, 0, 1, lower_tail, TRUE); Abramowitz & Stegun 26.2.12 in
// the far upper tail (R's dpnorm in pgamma.c).
// @depends gb_dnorm
GB_FN double gb_dpnorm(double x, int lower_tail, double lp)
{
    if (x < 0) {
        x = -x;
        lower_tail = !lower_tail;
    }

    if (x > 10 && !lower_tail) {
        double term = 1 / x;
        double sum = term;
        double x2 = x * x;
        double i = 1;

        do {
            term *= -i / x2;
            sum += term;
            i += 2;
        } while (fabs(term) > GB_DBL_EPSILON * sum);

        return 1 / sum;
    } else {
        double d = gb_dnorm(x, 0., 1., 0);
        return d / exp(lp);
    }
}
