// gb_pnorm_both.c: one tail of the standard normal distribution function
// (R's pnorm_both, Cody's algorithm). R fills *cum (i_tail 0), *ccum
// (i_tail 1) or both (i_tail 2); this returns cum for i_tail == 0 and ccum
// otherwise.
// @depends
GB_FN double gb_pnorm_both(double x, int i_tail, int log_p)
{
    const double a[5] = {
        2.2352520354606839287,
        161.02823106855587881,
        1067.6894854603709582,
        18154.981253343561249,
        0.065682337918207449113
    };
    const double b[4] = {
        47.20258190468824187,
        976.09855173777669322,
        10260.932208618978205,
        45507.789335026729956
    };
    const double c[9] = {
        0.39894151208813466764,
        8.8831497943883759412,
        93.506656132177855979,
        597.27027639480026226,
        2494.5375852903726711,
        6848.1904505362823326,
        11602.651437647350124,
        9842.7148383839780218,
        1.0765576773720192317e-8
    };
    const double d[8] = {
        22.266688044328115691,
        235.38790178262499861,
        1519.377599407554805,
        6485.558298266760755,
        18615.571640885098091,
        34900.952721145977266,
        38912.003286093271411,
        19685.429676859990727
    };
    const double p[6] = {
        0.21589853405795699,
        0.1274011611602473639,
        0.022235277870649807,
        0.001421619193227893466,
        2.9112874951168792e-5,
        0.02307344176494017303
    };
    const double q[5] = {
        1.28426009614491121,
        0.468238212480865118,
        0.0659881378689285515,
        0.00378239633202758244,
        7.29751555083966205e-5
    };

    double xden, xnum, temp, del, eps, xsq, y;
    double cum = 0., ccum = 0.;
    int i, lower, upper;

    if (isnan(x)) return x;

    eps = GB_DBL_EPSILON * 0.5;
    lower = i_tail != 1;
    upper = i_tail != 0;

// exp(-X^2/2) * temp with X^2 split into an exact part and a remainder
// (x * 16 and x * 0.5 are exact, like R's ldexp).
#define GB_PNORM_DO_DEL(X)                                              \
    xsq = trunc(X * 16) / 16;                                           \
    del = (X - xsq) * (X + xsq);                                        \
    if (log_p) {                                                        \
        cum = (-xsq * (xsq * 0.5)) - del * 0.5 + log(temp);             \
        if ((lower && x > 0.) || (upper && x <= 0.))                    \
            ccum = log1p(-exp(-xsq * (xsq * 0.5)) * exp(-(del * 0.5)) * temp); \
    }                                                                   \
    else {                                                              \
        cum = exp(-xsq * (xsq * 0.5)) * exp(-(del * 0.5)) * temp;       \
        ccum = 1.0 - cum;                                               \
    }

#define GB_PNORM_SWAP_TAIL                                              \
    if (x > 0.) {                                                       \
        temp = cum; if (lower) cum = ccum; ccum = temp;                 \
    }

    y = fabs(x);
    if (y <= 0.67448975) { /* qnorm(3/4) */
        if (y > eps) {
            xsq = x * x;
            xnum = a[4] * xsq;
            xden = xsq;
            for (i = 0; i < 3; ++i) {
                xnum = (xnum + a[i]) * xsq;
                xden = (xden + b[i]) * xsq;
            }
        } else xnum = xden = 0.0;

        temp = x * (xnum + a[3]) / (xden + b[3]);
        if (lower) cum = 0.5 + temp;
        if (upper) ccum = 0.5 - temp;
        if (log_p) {
            if (lower) cum = log(cum);
            if (upper) ccum = log(ccum);
        }
    }
    else if (y <= M_SQRT_32) {
        /* 0.674.. < |x| <= sqrt(32) ~= 5.657 */
        xnum = c[8] * y;
        xden = y;
        for (i = 0; i < 7; ++i) {
            xnum = (xnum + c[i]) * y;
            xden = (xden + d[i]) * y;
        }
        temp = (xnum + c[7]) / (xden + d[7]);
        GB_PNORM_DO_DEL(y);
        GB_PNORM_SWAP_TAIL;
    }
    else if ((log_p && y < 1e170)
             || (lower && -37.5193 < x && x < 8.2924)
             || (upper && -8.2924 < x && x < 37.5193)) {
        /* sqrt(32) < |x| where the result does not underflow */
        xsq = 1.0 / (x * x);
        xnum = p[5] * xsq;
        xden = xsq;
        for (i = 0; i < 4; ++i) {
            xnum = (xnum + p[i]) * xsq;
            xden = (xden + q[i]) * xsq;
        }
        temp = xsq * (xnum + p[4]) / (xden + q[4]);
        temp = (M_1_SQRT_2PI - temp) / y;
        GB_PNORM_DO_DEL(x);
        GB_PNORM_SWAP_TAIL;
    }
    else { /* large x: probabilities are 0 or 1 */
        if (x > 0) { cum = GB_PD__1; ccum = GB_PD__0; }
        else { cum = GB_PD__0; ccum = GB_PD__1; }
    }
#undef GB_PNORM_DO_DEL
#undef GB_PNORM_SWAP_TAIL
    return i_tail == 0 ? cum : ccum;
}
