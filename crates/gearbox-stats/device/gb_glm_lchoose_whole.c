// gb_glm_lchoose_whole.c: lchoose(n, x) for whole 0 <= x <= n, through
// lgamma (glm::family's lchoose_whole).
// @depends gb_lgamma
GB_FN double gb_glm_lchoose_whole(double n, double x)
{
    return gb_lgamma(n + 1.) - gb_lgamma(x + 1.) - gb_lgamma(n - x + 1.);
}
