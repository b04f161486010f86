// gb_log1pmx.c: log(1 + x) - x, accurate also for small x (R's log1pmx).
// @depends gb_logcf
GB_FN double gb_log1pmx(double x)
{
    const double minLog1Value = -0.79149064;

    if (x > 1 || x < minLog1Value)
        return log1p(x) - x;
    // -0.791 <= x <= 1: expand in y = [x/(2+x)]^2,
    // log(1+x) - x = x/(2+x) * [2 y S(y) - x], S(y) = sum_k y^k / (2k+3).
    double r = x / (2 + x), y = r * r;
    if (fabs(x) < 1e-2) {
        const double two = 2;
        return r * ((((two / 9 * y + two / 7) * y + two / 5) * y + two / 3) * y - x);
    } else {
        const double tol_logcf = 1e-14;
        return r * (2 * y * gb_logcf(y, 3, 2, tol_logcf) - x);
    }
}
