// gb_bcorr.c: del(a0) + del(b0) - del(a0 + b0) where ln(Gamma(a)) =
// (a - 0.5)*ln(a) - a + 0.5*ln(2*pi) + del(a), for a0, b0 >= 8 (TOMS 708
// bcorr).
// @depends
GB_FN double gb_bcorr(double a0, double b0)
{
    const double c0 = .0833333333333333;
    const double c1 = -.00277777777760991;
    const double c2 = 7.9365066682539e-4;
    const double c3 = -5.9520293135187e-4;
    const double c4 = 8.37308034031215e-4;
    const double c5 = -.00165322962780713;

    double ret_val, r1;
    double a, b, c, h, t, w, x, s3, s5, x2, s7, s9, s11;

    a = (a0 < b0) ? a0 : b0;
    b = (a0 > b0) ? a0 : b0;

    h = a / b;
    c = h / (h + 1.);
    x = 1. / (h + 1.);
    x2 = x * x;

    /* SET SN = (1 - X^N)/(1 - X) */
    s3 = x + x2 + 1.;
    s5 = x + x2 * s3 + 1.;
    s7 = x + x2 * s5 + 1.;
    s9 = x + x2 * s7 + 1.;
    s11 = x + x2 * s9 + 1.;

    /* SET W = DEL(B) - DEL(A + B) */
    r1 = 1. / b;
    t = r1 * r1;
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 *
         s3) * t + c0;
    w *= c / b;

    /* COMPUTE  DEL(A) + W */
    r1 = 1. / a;
    t = r1 * r1;
    ret_val = (((((c5 * t + c4) * t + c3) * t + c2) * t + c1) * t + c0) / a +
        w;
    return ret_val;
}
