// gb_basym.c: the asymptotic expansion for I_x(a,b) for large a and b,
// with lambda = (a + b)*y - b >= 0 and a, b >= 15 (TOMS 708 basym).
// @depends gb_rlog1 gb_erfc1 gb_bcorr
GB_FN double gb_basym(double a, double b, double lambda, double eps, int log_p)
{
    /* num_IT = 20: the maximum n of the loop below; it must be even. */
    const double e0 = 1.12837916709551;/* e0 == 2/sqrt(pi) */
    const double e1 = .353553390593274;/* e1 == 2^(-3/2)   */
    const double ln_e0 = 0.120782237635245; /* == ln(e0) */

    double a0[21], b0[21], c[21], d[21];

    double f = a * gb_rlog1(-lambda/a) + b * gb_rlog1(lambda/b), t;
    if (log_p)
        t = -f;
    else {
        t = exp(-f);
        if (t == 0.) {
            return 0; /* once underflow, always underflow .. */
        }
    }
    double z0 = sqrt(f),
        z = z0 / e1 * 0.5,
        z2 = f + f,
        h, r0, r1, w0;

    if (a < b) {
        h = a / b;
        r0 = 1. / (h + 1.);
        r1 = (b - a) / b;
        w0 = 1. / sqrt(a * (h + 1.));
    } else {
        h = b / a;
        r0 = 1. / (h + 1.);
        r1 = (b - a) / a;
        w0 = 1. / sqrt(b * (h + 1.));
    }

    a0[0] = r1 * .66666666666666663;
    c[0] = a0[0] * -0.5;
    d[0] = -c[0];
    double j0 = 0.5 / e0 * gb_erfc1(1, z0),
        j1 = e1,
        sum = j0 + d[0] * w0 * j1;

    double s = 1.,
        h2 = h * h,
        hn = 1.,
        w = w0,
        znm1 = z,
        zn = z2;
    for (int n = 2; n <= 20; n += 2) {
        hn *= h2;
        a0[n - 1] = r0 * 2. * (h * hn + 1.) / (n + 2.);
        int np1 = n + 1;
        s += hn;
        a0[np1 - 1] = r1 * 2. * s / (n + 3.);

        for (int i = n; i <= np1; ++i) {
            double r = (i + 1.) * -0.5;
            b0[0] = r * a0[0];
            for (int m = 2; m <= i; ++m) {
                double bsum = 0.;
                for (int j = 1; j <= m-1; ++j) {
                    int mmj = m - j;
                    bsum += (j * r - mmj) * a0[j - 1] * b0[mmj - 1];
                }
                b0[m - 1] = r * a0[m - 1] + bsum / m;
            }
            c[i - 1] = b0[i - 1] / (i + 1.);

            double dsum = 0.;
            for (int j = 1; j <= i-1; ++j) {
                dsum += d[i - j - 1] * c[j - 1];
            }
            d[i - 1] = -(dsum + c[i - 1]);
        }

        j0 = e1 * znm1 + (n - 1.) * j0;
        j1 = e1 * zn + n * j1;
        znm1 = z2 * znm1;
        zn = z2 * zn;
        w *= w0;
        double t0 = d[n - 1] * w * j0;
        w *= w0;
        double t1 = d[np1 - 1] * w * j1;
        sum += t0 + t1;
        if (fabs(t0) + fabs(t1) <= eps * sum) {
            break;
        }
    }

    if (log_p)
        return ln_e0 + t - gb_bcorr(a, b) + log(sum);
    else {
        double u = exp(-gb_bcorr(a, b));
        return e0 * t * u * sum;
    }
}
