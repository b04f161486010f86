//! `tanh`, `sigmoid` and `softplus` of f64, from [`super::exp`],
//! [`super::expm1`] and [`super::ln_1p`].
//!
//! `tanh(x) = e/(e + 2)` with `e = expm1(2|x|)`, signed as `x` (accurate
//! near zero, where `1 - 2/(e^2x + 1)` would cancel; `±1` from `|x| = 22`).
//! `sigmoid(x) = 1/(1 + e)` for `x >= 0` and `e/(1 + e)` below, with
//! `e = e^-|x|` (never overflows). `softplus(x) = max(x, 0) + ln_1p(e)`.

/// From here on `tanh` is `±1` to the last bit.
const TANH_ONE: f64 = 22.0;

/// The hyperbolic tangent.
#[inline(always)]
pub fn tanh(x: f64) -> f64 {
    let a = x.abs().min(TANH_ONE);
    let e = super::expm1(2.0 * a);
    let y = (e / (e + 2.0)).copysign(x);
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// The logistic function `1 / (1 + e^-x)`.
#[inline(always)]
pub fn sigmoid(x: f64) -> f64 {
    let e = super::exp(-x.abs());
    let s = 1.0 / (1.0 + e);
    if x >= 0.0 {
        s
    } else {
        e * s
    }
}

/// `ln(1 + e^x)`, without overflow for large `x`.
#[inline(always)]
pub fn softplus(x: f64) -> f64 {
    x.max(0.0) + super::ln_1p(super::exp(-x.abs()))
}
