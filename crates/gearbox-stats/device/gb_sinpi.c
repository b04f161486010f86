// gb_sinpi.c: sin(pi x), exact at multiples of 1/2 (R's sinpi in
// cospi.c; CUDA's built-in sinpi is not available to the host build).
// @depends
GB_FN double gb_sinpi(double x)
{
    if (isnan(x)) return x;
    if (!isfinite(x)) return GB_NAN;

    x = fmod(x, 2.); // sin(pi (x + 2k)) = sin(pi x)
    // map (-2, 2) to (-1, 1]
    if (x <= -1) x += 2.;
    else if (x > 1.) x -= 2.;
    if (x == 0. || x == 1.) return 0.;
    if (x == 0.5) return 1.;
    if (x == -0.5) return -1.;
    return sin(M_PI * x);
}
