// gb_gsumln.c: ln(Gamma(a + b)) for 1 <= a <= 2 and 1 <= b <= 2 (TOMS 708
// gsumln).
// @depends gb_gamln1 gb_alnrel
GB_FN double gb_gsumln(double a, double b)
{
    double x = a + b - 2.;/* in [0, 2] */

    if (x <= 0.25)
        return gb_gamln1(x + 1.);

    /* else */
    if (x <= 1.25)
        return gb_gamln1(x) + gb_alnrel(x);
    /* else x > 1.25 : */
    return gb_gamln1(x - 1.) + log(x * (x + 1.));
}
