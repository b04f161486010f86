// gb_log1p_unit.c: log1p(x) for 0 <= x <= 1 (e = exp(-|eta|) in the logit
// terms) through one branch of the math library's log1p for every x: above
// 0.65 as log(2) + log1p((x - 1) / 2), whose argument is exact (x - 1 by
// Sterbenz's lemma, then a halving) and within (-0.175, 0], with log(2)
// added in two parts (fdlibm's ln2_hi, exact in 32 bits, and ln2_lo); the
// result stays within one ulp. The device log1p takes a second, longer
// branch from about 0.667, and a warp whose lanes straddle it runs both.
// @depends
GB_FN double gb_log1p_unit(double x)
{
    const double ln2_hi = 6.93147180369123816490e-01;
    const double ln2_lo = 1.90821492927058770002e-10;
    int high = x > 0.65;
    double l = log1p(high ? (x - 1.) * 0.5 : x);
    return high ? ln2_hi + (l + ln2_lo) : l;
}
