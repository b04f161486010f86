// gb_log1pexp.c: log(1 + exp(x)) without overflow (R's log1pexp).
// @depends
GB_FN double gb_log1pexp(double x)
{
    if (x <= 18.) return log1p(exp(x));
    if (x > 33.3) return x;
    // else: 18.0 < x <= 33.3 :
    return x + exp(-x);
}
