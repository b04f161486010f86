// gb_psi.c: the digamma function (TOMS 708 psi, Cody, Strecok & Thacher
// 1973); 0 where it cannot be computed.
// @depends
GB_FN double gb_psi(double x)
{
    const double piov4 = .785398163397448; /* == pi / 4 */
    /*     dx0 = zero of psi() to extended precision : */
    const double dx0 = 1.461632144968362341262659542325721325;

    /* COEFFICIENTS FOR RATIONAL APPROXIMATION OF PSI(X) / (X - X0),  0.5 <= X <= 3. */
    const double p1[7] = {
        .0089538502298197,4.77762828042627,142.441585084029,
        1186.45200713425,3633.51846806499,4138.10161269013,1305.60269827897 };
    const double q1[6] = {
        44.8452573429826,520.752771467162,2210.0079924783,
        3641.27349079381,1908.310765963,6.91091682714533e-6 };
    /* COEFFICIENTS FOR RATIONAL APPROXIMATION OF PSI(X) - LN(X) + 1 / (2*X),  X > 3. */
    const double p2[4] = {
        -2.12940445131011,-7.01677227766759,-4.48616543918019,-.648157123766197 };
    const double q2[4] = {
        32.2703493791143,89.2920700481861,54.6117738103215,7.77788548522962 };

    int i, m, n, nq;
    double d2;
    double w, z;
    double den, aug, sgn, xmx0, xmax1, upper, xsmall;

    /* XMAX1 = THE SMALLEST POSITIVE FLOATING POINT CONSTANT WITH ENTIRELY
     * INT REPRESENTATION = min(INT_MAX, 1/DBL_EPSILON) */
    xmax1 = 2147483647.;
    d2 = 0.5 / (0.5 * GB_DBL_EPSILON); /*= 1/DBL_EPSILON = 2^52 */
    if(xmax1 > d2) xmax1 = d2;

    /* XSMALL = ABSOLUTE ARGUMENT BELOW WHICH PI*COTAN(PI*X) MAY BE REPRESENTED BY 1/X. */
    xsmall = 1e-9;

    aug = 0.;
    if (x < 0.5) {
        /* X < 0.5,  USE REFLECTION FORMULA PSI(1-X) = PSI(X) + PI * COTAN(PI*X) */
        if (fabs(x) <= xsmall) {

            if (x == 0.) {
                return 0.; /* L_err */
            }
            /* 0 < |X| <= XSMALL.  USE 1/X AS A SUBSTITUTE FOR  PI*COTAN(PI*X) */
            aug = -1. / x;
        } else { /* |x| > xsmall */
            /* REDUCTION OF ARGUMENT FOR COTAN */
            /* L100: */
            w = -x;
            sgn = piov4;
            if (w <= 0.) {
                w = -w;
                sgn = -sgn;
            }
            /* MAKE AN ERROR EXIT IF |X| >= XMAX1 */
            if (w >= xmax1) {
                return 0.; /* L_err */
            }
            nq = (int) w;
            w -= (double) nq;
            nq = (int) (w * 4.);
            w = (w - (double) nq * 0.25) * 4.;
            /* W IS NOW RELATED TO THE FRACTIONAL PART OF  4. * X.
             * ADJUST ARGUMENT TO CORRESPOND TO VALUES IN FIRST
             * QUADRANT AND DETERMINE SIGN */
            n = nq / 2;
            if (n + n != nq) {
                w = 1. - w;
            }
            z = piov4 * w;
            m = n / 2;
            if (m + m != n) {
                sgn = -sgn;
            }
            /* DETERMINE FINAL VALUE FOR  -PI*COTAN(PI*X) */
            n = (nq + 1) / 2;
            m = n / 2;
            m += m;
            if (m == n) {
                /* CHECK FOR SINGULARITY */
                if (z == 0.) {
                    return 0.; /* L_err */
                }
                /* USE COS/SIN AS A SUBSTITUTE FOR COTAN, AND
                 * SIN/COS AS A SUBSTITUTE FOR TAN */
                aug = sgn * (cos(z) / sin(z) * 4.);

            } else { /* L140: */
                aug = sgn * (sin(z) / cos(z) * 4.);
            }
        }

        x = 1. - x;

    }
    /* L200: */
    if (x <= 3.) {
        /* 0.5 <= X <= 3. */
        den = x;
        upper = p1[0] * x;

        for (i = 1; i <= 5; ++i) {
            den = (den + q1[i - 1]) * x;
            upper = (upper + p1[i]) * x;
        }

        den = (upper + p1[6]) / (den + q1[5]);
        xmx0 = x - dx0;
        return den * xmx0 + aug;
    }

    /* IF X >= XMAX1, PSI = LN(X) */
    if (x < xmax1) {
        /* 3. < X < XMAX1 */
        w = 1. / (x * x);
        den = w;
        upper = p2[0] * w;

        for (i = 1; i <= 3; ++i) {
            den = (den + q2[i - 1]) * w;
            upper = (upper + p2[i]) * w;
        }

        aug = upper / (den + q2[3]) - 0.5 / x + aug;
    }
    return aug + log(x);
}
