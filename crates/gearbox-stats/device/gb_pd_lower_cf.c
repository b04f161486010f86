// gb_pd_lower_cf.c: the continued fraction for the scaled upper tail of
// the gamma distribution ~ (y / d) * [1 + (1-y)/d + O(((1-y)/d)^2)] (R's
// pd_lower_cf in pgamma.c).
// @depends
GB_FN double gb_pd_lower_cf(double y, double d)
{
    const double scalefactor = 1.157920892373162e77; /* 2^256 */
    const double max_it = 200000;
    double f = 0.0, of, f0;
    double i, c2, c3, c4, a1, b1, a2, b2;

    if (y == 0) return 0;

    f0 = y / d;
    /* Needed, e.g. for  pgamma(10^c(100,295), shape= 1.1, log=TRUE): */
    if (fabs(y - 1) < fabs(d) * GB_DBL_EPSILON) { /* includes y < d = Inf */
        return (f0);
    }

    if (f0 > 1.) f0 = 1.;
    c2 = y;
    c4 = d; /* original (y,d), *not* potentially scaled ones!*/

    a1 = 0; b1 = 1;
    a2 = y; b2 = d;

    while (b2 > scalefactor) {
        a1 /= scalefactor;
        b1 /= scalefactor;
        a2 /= scalefactor;
        b2 /= scalefactor;
    }

    i = 0; of = -1.; /* far away */
    while (i < max_it) {

        i++;	c2--;	c3 = i * c2;	c4 += 2;
        /* c2 = y - i,  c3 = i(y - i),  c4 = d + 2i,  for i odd */
        a1 = c4 * a2 + c3 * a1;
        b1 = c4 * b2 + c3 * b1;

        i++;	c2--;	c3 = i * c2;	c4 += 2;
        /* c2 = y - i,  c3 = i(y - i),  c4 = d + 2i,  for i even */
        a2 = c4 * a1 + c3 * a2;
        b2 = c4 * b1 + c3 * b2;

        if (b2 > scalefactor) {
            a1 /= scalefactor;
            b1 /= scalefactor;
            a2 /= scalefactor;
            b2 /= scalefactor;
        }

        if (b2 != 0) {
            f = a2 / b2;
            /* convergence check: relative; "absolute" for very small f : */
            double m = (isnan(f0) || isnan(fabs(f))) ? f0 + fabs(f)
                : (f0 < fabs(f) ? fabs(f) : f0); /* fmax2(f0, fabs(f)) */
            if (fabs(f - of) <= GB_DBL_EPSILON * m) {
                return f;
            }
            of = f;
        }
    }
    // (R warns of non-convergence here.)
    return f;/* should not happen ... */
}
