// gb_alnrel.c: ln(1 + a) (TOMS 708 alnrel).
// @depends
GB_FN double gb_alnrel(double a)
{
    if (fabs(a) > 0.375)
        return log(1. + a);
    // else : |a| <= 0.375
    const double
        p1 = -1.29418923021993,
        p2 = .405303492862024,
        p3 = -.0178874546012214,
        q1 = -1.62752256355323,
        q2 = .747811014037616,
        q3 = -.0845104217945565;
    double
        t = a / (a + 2.),
        t2 = t * t,
        w = (((p3 * t2 + p2) * t2 + p1) * t2 + 1.) /
        (((q3 * t2 + q2) * t2 + q1) * t2 + 1.);
    return t * 2. * w;
}
