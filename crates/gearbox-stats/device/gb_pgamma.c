// gb_pgamma.c: the gamma distribution function (R's pgamma).
// @depends gb_pgamma_raw
GB_FN double gb_pgamma(double x, double alph, double scale, int lower_tail, int log_p)
{
    if (isnan(x) || isnan(alph) || isnan(scale))
        return x + alph + scale;
    if (alph < 0. || scale <= 0.)
        return GB_NAN;
    x /= scale;
    if (isnan(x)) /* eg. original x = scale = +Inf */
        return x;
    if (alph == 0.) /* limit case; useful e.g. in pnchisq() */
        return (x <= 0) ? GB_DT_0: GB_DT_1; /* <= assert  pgamma(0,0) ==> 0 */
    return gb_pgamma_raw(x, alph, lower_tail, log_p);
}
