// gb_dnorm.c: the normal density with mean mu and standard deviation sigma
// (R 4.2's dnorm4), accurate far in the tails: for |x| >= 5 the square is
// split so that x^2 loses no digits. NaN for sigma < 0; sigma == 0 is the
// point mass at mu.
// @depends
GB_FN double gb_dnorm(double x, double mu, double sigma, int give_log)
{
    if (isnan(x) || isnan(mu) || isnan(sigma)) return x + mu + sigma;
    if (sigma < 0) return GB_NAN;
    if (!isfinite(sigma)) return GB_D__0;
    if (!isfinite(x) && mu == x) return GB_NAN; // x - mu is NaN
    if (sigma == 0) return (x == mu) ? GB_POSINF : GB_D__0;
    x = (x - mu) / sigma;

    if (!isfinite(x)) return GB_D__0;

    x = fabs(x);
    if (x >= 2 * sqrt(GB_DBL_MAX)) return GB_D__0;
    if (give_log) return -(M_LN_SQRT_2PI + 0.5 * x * x + log(sigma));
    if (x < 5) return M_1_SQRT_2PI * exp(-0.5 * x * x) / sigma;

    // exp(-x^2/2) underflows to 0 (subnormals included) beyond
    // sqrt(-2 log(2) (DBL_MIN_EXP + 1 - DBL_MANT_DIG)) = 38.57
    if (x > sqrt(-2 * M_LN2 * (-1021 + 1 - 53))) return 0.;

    // x = x1 + x2 with |x2| <= 2^-16, so that x1 * x1 is exact
    double x1 = ldexp(nearbyint(ldexp(x, 16)), -16);
    double x2 = x - x1;
    return M_1_SQRT_2PI / sigma * (exp(-0.5 * x1 * x1) * exp((-0.5 * x2 - x1) * x2));
}
