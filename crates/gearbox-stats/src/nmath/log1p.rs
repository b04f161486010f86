//! Logarithms and exponentials near 1 and 0: `log1p`, `expm1` (the C
//! library's, as R uses them), `log1pexp`, `log1mexp`, and `log1pmx` with the
//! continued fraction `logcf` behind it (R's `pgamma.c`).

use std::f64::consts::LN_2;

/// `log(1 + x)`, accurate for small `x` (the C library's `log1p`, which R
/// calls directly).
pub fn log1p(x: f64) -> f64 {
    x.ln_1p()
}

/// `exp(x) - 1`, accurate for small `x` (the C library's `expm1`, which R
/// calls directly).
pub fn expm1(x: f64) -> f64 {
    x.exp_m1()
}

/// `log(1 + exp(x))` without overflow for large `x` (R's `log1pexp`).
pub fn log1pexp(x: f64) -> f64 {
    if x <= 18.0 {
        return x.exp().ln_1p();
    }
    if x > 33.3 {
        return x;
    }
    x + (-x).exp()
}

/// `log(1 - exp(-x))` for `x >= 0` without cancellation (R's `log1mexp`,
/// that is `R_Log1_Exp(-x)`): `log(-expm1(-x))` for `x < log 2`, else
/// `log1p(-exp(-x))`. NaN for `x < 0`; `-Inf` at 0.
pub fn log1mexp(x: f64) -> f64 {
    let y = -x;
    if y > -LN_2 {
        (-y.exp_m1()).ln()
    } else {
        (-y.exp()).ln_1p()
    }
}

/// `2^256`: the rescaling factor of the continued fraction in [`logcf`].
const SCALEFACTOR: f64 = 1.157_920_892_373_162e77;

/// The continued fraction for `sum_{k>=0} x^k / (i + k d)`
/// `= 1/i + x/(i+d) + x^2/(i+2d) + ...`, to relative tolerance about `eps`
/// (R's `logcf`, used by [`log1pmx`] and `lgamma1p`). Needs `i > 0`,
/// `d >= 0` and `|x| < 1`.
pub fn logcf(x: f64, i: f64, d: f64, eps: f64) -> f64 {
    let mut c1 = 2.0 * d;
    let mut c2 = i + d;
    let mut c4 = c2 + d;
    let mut a1 = c2;
    let mut b1 = i * (c2 - i * x);
    let mut b2 = d * d * x;
    let mut a2 = c4 * c2 - b2;
    b2 = c4 * b1 - i * b2;

    while (a2 * b1 - a1 * b2).abs() > (eps * b1 * b2).abs() {
        let mut c3 = c2 * c2 * x;
        c2 += d;
        c4 += d;
        a1 = c4 * a2 - c3 * a1;
        b1 = c4 * b2 - c3 * b1;

        c3 = c1 * c1 * x;
        c1 += d;
        c4 += d;
        a2 = c4 * a1 - c3 * a2;
        b2 = c4 * b1 - c3 * b2;

        if b2.abs() > SCALEFACTOR {
            a1 /= SCALEFACTOR;
            b1 /= SCALEFACTOR;
            a2 /= SCALEFACTOR;
            b2 /= SCALEFACTOR;
        } else if b2.abs() < 1.0 / SCALEFACTOR {
            a1 *= SCALEFACTOR;
            b1 *= SCALEFACTOR;
            a2 *= SCALEFACTOR;
            b2 *= SCALEFACTOR;
        }
    }
    a2 / b2
}

/// `log(1 + x) - x`, accurate also for small `x` (R's `log1pmx`).
pub fn log1pmx(x: f64) -> f64 {
    const MIN_LOG1_VALUE: f64 = -0.79149064;
    if !(MIN_LOG1_VALUE..=1.0).contains(&x) {
        return x.ln_1p() - x;
    }
    // -0.791 <= x <= 1: expand in y = [x/(2+x)]^2,
    // log(1+x) - x = x/(2+x) * [2 y S(y) - x], S(y) = sum_k y^k / (2k+3).
    let r = x / (2.0 + x);
    let y = r * r;
    if x.abs() < 1e-2 {
        const TWO: f64 = 2.0;
        r * ((((TWO / 9.0 * y + TWO / 7.0) * y + TWO / 5.0) * y + TWO / 3.0) * y - x)
    } else {
        const TOL_LOGCF: f64 = 1e-14;
        r * (2.0 * y * logcf(y, 3.0, 2.0, TOL_LOGCF) - x)
    }
}
