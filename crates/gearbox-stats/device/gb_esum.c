// gb_esum.c: exp(mu + x) (TOMS 708 esum), a log with give_log.
// @depends
GB_FN double gb_esum(int mu, double x, int give_log)
{
    if (give_log)
        return x + (double) mu;

    // else :
    double w;
    if (x > 0.) { /* L10: */
        if (mu > 0) return exp((double) mu) * exp(x);
        w = mu + x;
        if (w < 0.) return exp((double) mu) * exp(x);
    }
    else { /* x <= 0 */
        if (mu < 0) return exp((double) mu) * exp(x);
        w = mu + x;
        if (w > 0.) return exp((double) mu) * exp(x);
    }
    return exp(w);
}
