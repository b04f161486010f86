// gb_logspace_sub.c: log(exp(logx) - exp(logy)) without overflow (R's
// logspace_sub; R_Log1_Exp(v) == log1mexp(-v)).
// @depends gb_log1mexp
GB_FN double gb_logspace_sub(double logx, double logy)
{
    return logx + gb_log1mexp(-(logy - logx));
}
