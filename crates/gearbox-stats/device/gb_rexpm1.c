// gb_rexpm1.c: exp(x) - 1 (TOMS 708 rexpm1).
// @depends
GB_FN double gb_rexpm1(double x)
{
    const double p1 = 9.14041914819518e-10;
    const double p2 = .0238082361044469;
    const double q1 = -.499999999085958;
    const double q2 = .107141568980644;
    const double q3 = -.0119041179760821;
    const double q4 = 5.95130811860248e-4;

    if (fabs(x) <= 0.15) {
        return x * (((p2 * x + p1) * x + 1.) /
                    ((((q4 * x + q3) * x + q2) * x + q1) * x + 1.));
    }
    else { /* |x| > 0.15 : */
        double w = exp(x);
        if (x > 0.)
            return w * (0.5 - 1. / w + 0.5);
        else
            return w - 0.5 - 0.5;
    }
}
