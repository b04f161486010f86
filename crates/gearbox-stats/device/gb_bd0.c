// gb_bd0.c: the deviance term bd0(x, np) = x log(x/np) + np - x (Loader),
// stable also for x/np near 1 through the series of log((1+v)/(1-v)),
// v = (x-np)/(x+np) (R 4.2's bd0). NaN for infinite arguments or np == 0.
// @depends
GB_FN double gb_bd0(double x, double np)
{
    if (!isfinite(x) || !isfinite(np) || np == 0.0) return GB_NAN;

    if (fabs(x - np) < 0.1 * (x + np)) {
        double v = (x - np) / (x + np); // might underflow to 0
        double s = (x - np) * v;
        if (fabs(s) < GB_DBL_MIN) return s;
        double ej = 2 * x * v;
        v = v * v;
        for (int j = 1; j < 1000; j++) { // |v| < .1: v^2000 is "zero"
            ej *= v; // 2 x v^(2j+1)
            double s1 = s + ej / ((j << 1) + 1);
            if (s1 == s) return s1; // last term was effectively 0
            s = s1;
        }
    }
    // |x - np| is not small (or, never seen, the series did not converge)
    return x * log(x / np) + np - x;
}
