// gb_log1mexp.c: log(1 - exp(-x)) for x >= 0 without cancellation
// (R's log1mexp, i.e. R_Log1_Exp(-x)). NaN for x < 0.
// @depends
GB_FN double gb_log1mexp(double x)
{
    return (-x > -M_LN2) ? log(-expm1(-x)) : log1p(-exp(-x));
}
