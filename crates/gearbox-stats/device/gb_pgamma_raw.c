// gb_pgamma_raw.c: the gamma distribution function with unit scale for
// non-NaN x and alph > 0 (R's pgamma_raw).
// @depends gb_pgamma_raw_once
GB_FN double gb_pgamma_raw(double x, double alph, int lower_tail, int log_p)
{
    double res = gb_pgamma_raw_once(x, alph, lower_tail, log_p);
    /*
     * We lose a fair amount of accuracy to underflow in the cases
     * where the final result is very close to DBL_MIN.	 In those
     * cases, simply redo via log space.
     */
    if (!log_p && res < GB_DBL_MIN / GB_DBL_EPSILON) {
        /* with(.Machine, double.xmin / double.eps) #|-> 1.002084e-292 */
        return exp(gb_pgamma_raw_once(x, alph, lower_tail, 1));
    } else
        return res;
}
