// gb_logspace_add.c: log(exp(logx) + exp(logy)) without overflow (R's
// logspace_add; fmax2 returns NaN when either is NaN).
// @depends
GB_FN double gb_logspace_add(double logx, double logy)
{
    double m = (isnan(logx) || isnan(logy)) ? logx + logy : (logx < logy ? logy : logx);
    return m + log1p(exp(-fabs(logx - logy)));
}
