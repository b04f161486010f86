// gb_algdiv.c: ln(Gamma(b)/Gamma(a+b)) for b >= 8 (TOMS 708 algdiv).
// @depends gb_alnrel
GB_FN double gb_algdiv(double a, double b)
{
    const double c0 = .0833333333333333;
    const double c1 = -.00277777777760991;
    const double c2 = 7.9365066682539e-4;
    const double c3 = -5.9520293135187e-4;
    const double c4 = 8.37308034031215e-4;
    const double c5 = -.00165322962780713;

    double c, d, h, t, u, v, w, x, s3, s5, x2, s7, s9, s11;

    if (a > b) {
        h = b / a;
        c = 1. / (h + 1.);
        x = h / (h + 1.);
        d = a + (b - 0.5);
    }
    else {
        h = a / b;
        c = h / (h + 1.);
        x = 1. / (h + 1.);
        d = b + (a - 0.5);
    }

    /* Set s<n> = (1 - x^n)/(1 - x) : */
    x2 = x * x;
    s3 = x + x2 + 1.;
    s5 = x + x2 * s3 + 1.;
    s7 = x + x2 * s5 + 1.;
    s9 = x + x2 * s7 + 1.;
    s11 = x + x2 * s9 + 1.;

    /* w := Del(b) - Del(a + b) */
    t = 1./ (b * b);
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 *
         s3) * t + c0;
    w *= c / b;

    /* COMBINE THE RESULTS */
    u = d * gb_alnrel(a / b);
    v = a * (log(b) - 1.);
    if (u > v)
        return w - v - u;
    else
        return w - u - v;
}
