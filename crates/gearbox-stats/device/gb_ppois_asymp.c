// gb_ppois_asymp.c: the asymptotic expansion of the probability that a
// Poisson variate with mean lambda is at most x (R's ppois_asymp in
// pgamma.c).
// @depends gb_log1pmx gb_pnorm gb_dpnorm gb_dnorm
GB_FN double gb_ppois_asymp(double x, double lambda, int lower_tail, int log_p)
{
    const double coefs_a[8] = {
        -1e99, /* placeholder used for 1-indexing */
        2/3.,
        -4/135.,
        8/2835.,
        16/8505.,
        -8992/12629925.,
        -334144/492567075.,
        698752/1477701225.
    };

    const double coefs_b[8] = {
        -1e99, /* placeholder */
        1/12.,
        1/288.,
        -139/51840.,
        -571/2488320.,
        163879/209018880.,
        5246819/75246796800.,
        -534703531/902961561600.
    };

    double elfb, elfb_term;
    double res12, res1_term, res1_ig, res2_term, res2_ig;
    double dfm, pt_, s2pt, f, np;
    int i;

    dfm = lambda - x;
    /* If lambda is large, the distribution is highly concentrated
       about lambda.  So representation error in x or lambda can lead
       to arbitrarily large values of pt_ and hence divergence of the
       coefficients of this approximation.
    */
    pt_ = - gb_log1pmx(dfm / x);
    s2pt = sqrt(2 * x * pt_);
    if (dfm < 0) s2pt = -s2pt;

    res12 = 0;
    res1_ig = res1_term = sqrt(x);
    res2_ig = res2_term = s2pt;
    for (i = 1; i < 8; i++) {
        res12 += res1_ig * coefs_a[i];
        res12 += res2_ig * coefs_b[i];
        res1_term *= pt_ / i ;
        res2_term *= 2 * pt_ / (2 * i + 1);
        res1_ig = res1_ig / x + res1_term;
        res2_ig = res2_ig / x + res2_term;
    }

    elfb = x;
    elfb_term = 1;
    for (i = 1; i < 8; i++) {
        elfb += elfb_term * coefs_b[i];
        elfb_term /= x;
    }
    if (!lower_tail) elfb = -elfb;

    f = res12 / elfb;

    np = gb_pnorm(s2pt, 0.0, 1.0, !lower_tail, log_p);

    if (log_p) {
        double n_d_over_p = gb_dpnorm(s2pt, !lower_tail, np);
        return np + log1p(f * n_d_over_p);
    } else {
        double nd = gb_dnorm(s2pt, 0., 1., log_p);
        return np + f * nd;
    }
}
