// gb_lgammacor.c: the correction lgammacor(x) = log(gamma(x)) -
// [log(sqrt(2 pi)) + (x - 1/2) log(x) - x] for x >= 10 (R's lgammacor,
// with chebyshev_eval inlined). NaN for x < 10; 0 once it underflows.
// @depends
GB_FN double gb_lgammacor(double x)
{
    // Fullerton's algmcs; R evaluates the first nalgm = 5 terms.
    const double algmcs[5] = {
        +.1666389480451863247205729650822e+0,
        -.1384948176067563840732986059135e-4,
        +.9810825646924729426157171547487e-8,
        -.1809129475572494194263306266719e-10,
        +.6221098041892605227126015543416e-13,
    };
    const int nalgm = 5;
    const double xbig = 94906265.62425156;
    const double xmax = 3.745194030963158e306;

    if (x < 10)
        return GB_NAN;
    else if (x >= xmax)
        return 0.; // underflow
    else if (x < xbig) {
        double tmp = 10 / x;
        double t = tmp * tmp * 2 - 1; // chebyshev_eval(t, algmcs, nalgm)
        if (t < -1.1 || t > 1.1) return GB_NAN;
        double twox = t * 2, b0 = 0, b1 = 0, b2 = 0;
        for (int i = 1; i <= nalgm; i++) {
            b2 = b1;
            b1 = b0;
            b0 = twox * b1 - b2 + algmcs[nalgm - i];
        }
        return (b0 - b2) * 0.5 / x;
    }
    return 1 / (x * 12);
}
