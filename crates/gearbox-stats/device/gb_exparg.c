// gb_exparg.c: the largest w with exp(w) finite (l == 0), or the most
// negative w with exp(w) nonzero (l != 0), with a 0.99999 fuzz (TOMS 708
// exparg; i1mach(16) = DBL_MAX_EXP = 1024, i1mach(15) = DBL_MIN_EXP = -1021).
// @depends
GB_FN double gb_exparg(int l)
{
    const double lnb = .69314718055995;
    int m = (l == 0) ? 1024 : -1021 - 1;

    return m * lnb * .99999;
}
