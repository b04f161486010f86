//! The gamma distribution function (R's `pgamma.c`, Morten Welinder's
//! algorithm) and the log-space sums it defines.

// Coefficients keep the digits of R's C source.
#![allow(clippy::excessive_precision)]

/// `log(exp(logx) + exp(logy))` without overflow or needless loss of
/// accuracy (R's `logspace_add`).
pub fn logspace_add(logx: f64, logy: f64) -> f64 {
    fmax2(logx, logy) + (-(logx - logy).abs()).exp().ln_1p()
}

/// R's `fmax2`: the larger of two numbers, NaN if either is NaN.
fn fmax2(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    if x < y {
        y
    } else {
        x
    }
}
