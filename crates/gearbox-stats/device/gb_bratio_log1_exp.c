// gb_bratio_log1_exp.c: log(1 - exp(x)) for x <= 0 through rexpm1, as
// toms708.c redefines R_Log1_Exp.
// @depends gb_rexpm1
GB_FN double gb_bratio_log1_exp(double x)
{
    return x > -M_LN2 ? log(-gb_rexpm1(x)) : log1p(-exp(x));
}
