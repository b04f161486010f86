// gb_pbeta_raw.c: the beta distribution function for 0 < x (R's
// pbeta_raw): the limit cases as point masses, then bratio.
// @depends gb_bratio
GB_FN double gb_pbeta_raw(double x, double a, double b, int lower_tail, int log_p)
{
    // treat limit cases correctly here:
    if (a == 0 || b == 0 || !isfinite(a) || !isfinite(b)) {
        // NB:  0 < x < 1 :
        if (a == 0 && b == 0) // point mass 1/2 at each of {0,1} :
            return (log_p ? -M_LN2 : 0.5);
        if (a == 0 || a/b == 0) // point mass 1 at 0 ==> P(X <= x) = 1, all x > 0
            return GB_DT_1;
        if (b == 0 || b/a == 0) // point mass 1 at 1 ==> P(X <= x) = 0, all x < 1
            return GB_DT_0;
        // else, remaining case:  a = b = Inf : point mass 1 at 1/2
        if (x < 0.5) return GB_DT_0; else return GB_DT_1;
    }
    if (x >= 1) // may happen when called from qbeta()
        return GB_DT_1;

    // Now:  0 < a < Inf;  0 < b < Inf

    double x1 = 0.5 - x + 0.5, w, wc;
    int ierr;
    gb_bratio(a, b, x, x1, &w, &wc, &ierr, log_p);
    // (R warns when ierr is neither 0, 11 nor 14.)
    return lower_tail ? w : wc;
}
