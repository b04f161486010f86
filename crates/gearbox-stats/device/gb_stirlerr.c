// gb_stirlerr.c: stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n), the
// error of Stirling's formula (R 4.2's stirlerr): a table at the
// half-integers up to 15, lgamma(n + 1) at other n <= 15 (inlined for the
// n + 1 in [1, 16] that reach it), the asymptotic series above 15.
// Defined for n >= 0; NaN for negative n.
// @depends gb_gammafn_small gb_lgammacor

// stirlerr(n) at n = 0, 0.5, 1.0, ..., 15.0 (n = 0: placeholder).
GB_TABLE double gb_sferr_halves[31] = {
    0.0,
    0.1534264097200273452913848,
    0.0810614667953272582196702,
    0.0548141210519176538961390,
    0.0413406959554092940938221,
    0.03316287351993628748511048,
    0.02767792568499833914878929,
    0.02374616365629749597132920,
    0.02079067210376509311152277,
    0.01848845053267318523077934,
    0.01664469118982119216319487,
    0.01513497322191737887351255,
    0.01387612882307074799874573,
    0.01281046524292022692424986,
    0.01189670994589177009505572,
    0.01110455975820691732662991,
    0.010411265261972096497478567,
    0.009799416126158803298389475,
    0.009255462182712732917728637,
    0.008768700134139385462952823,
    0.008330563433362871256469318,
    0.007934114564314020547248100,
    0.007573675487951840794972024,
    0.007244554301320383179543912,
    0.006942840107209529865664152,
    0.006665247032707682442354394,
    0.006408994188004207068439631,
    0.006171712263039457647532867,
    0.005951370112758847735624416,
    0.005746216513010115682023589,
    0.005554733551962801371038690,
};
GB_FN double gb_stirlerr(double n)
{
    const double S0 = 0.083333333333333333333;        // 1/12
    const double S1 = 0.00277777777777777777778;      // 1/360
    const double S2 = 0.00079365079365079365079365;   // 1/1260
    const double S3 = 0.000595238095238095238095238;  // 1/1680
    const double S4 = 0.0008417508417508417508417508; // 1/1188

    double nn;

    if (n <= 15.0) {
        nn = n + n;
        if (nn >= 0 && nn == trunc(nn)) return gb_sferr_halves[(int)nn];
        if (n < 0) return GB_NAN; // log(n) below is NaN
        // lgammafn(n + 1) for n + 1 in [1, 16]
        double x = n + 1, lg;
        if (x <= 10)
            lg = log(fabs(gb_gammafn_small(x)));
        else
            lg = M_LN_SQRT_2PI + (x - 0.5) * log(x) - x + gb_lgammacor(x);
        return lg - (n + 0.5) * log(n) + n - M_LN_SQRT_2PI;
    }

    nn = n * n;
    if (n > 500) return (S0 - S1 / nn) / n;
    if (n > 80) return (S0 - (S1 - S2 / nn) / nn) / n;
    if (n > 35) return (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n;
    // 15 < n <= 35
    return (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n;
}
