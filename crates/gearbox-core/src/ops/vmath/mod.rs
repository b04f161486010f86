//! Elementwise math of f64 in straight-line arithmetic: `exp`, `expm1`,
//! `ln`, `ln_1p`, `sin`, `cos`, `tan`, `atan2`, `pow`, `tanh`, `sigmoid`
//! and `softplus`,
//! written without calls and with special values chosen by selects, so that
//! the CPU's elementwise loops vectorize them (the platform's libm is a call
//! per value). f32 computes in f32 ([`single`]: twice the lanes; [`pow32`]
//! in f64); every
//! CPU gives the same bits. Plain multiplies and
//! adds only (no fused multiply-add): a result does not depend on which
//! instructions the CPU has.
//!
//! Accuracy, in ulps from the platform's libm over each function's range
//! (the tests): `exp` 1 (0.6 from the exact value: the last bit differs
//! from glibc's for about 1% of arguments), `ln`, `sin`, `cos` 1;
//! `expm1`, `ln_1p`, `tan`, `atan2` 2;
//! `tanh`, `sigmoid`, `softplus` 3; `pow` 1 (ARM's optimized-routines
//! `pow`: 0.54 ulp from the exact value), and its f32 form [`pow32`]
//! (computed in f64) 1 from the correctly rounded f32;
//! special values (zeros with their sign,
//! infinities, NaN, the ends of the range) as libm gives them. `sin`, `cos`
//! and `tan` reduce their argument by π/2 in three parts, exact up to
//! [`TRIG_LIMIT`]; beyond it the `*_reduced` forms are not valid, and
//! [`sin`], [`cos`] and [`tan`] call libm (elementwise loops compute the
//! reduced form and then redo the rare wide arguments:
//! [`crate::ops::unary::UnaryOp::redo_uncovered`]).

mod atan;
mod exp;
mod hyper;
mod log;
mod pow;
mod pow_data;
pub mod single;
#[cfg(test)]
mod tests;
mod trig;

pub use atan::atan2;
pub use exp::{exp, expm1};
pub use hyper::{sigmoid, softplus, tanh};
pub use log::{ln, ln_1p};
pub use pow::{pow, pow32, pow32_lane, pow32_lane_covers, pow_lane, pow_lane_covers};
pub use trig::{cos, cos_reduced, sin, sin_reduced, tan, tan_reduced, TRIG_LIMIT};

/// The functions that have straight-line forms, for code that picks one
/// by value (a constant in each loop, so the match folds away).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Math {
    Exp,
    Expm1,
    Ln,
    Ln1p,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sigmoid,
    Softplus,
}

impl Math {
    /// The function of an f64; `sin`, `cos` and `tan` valid up to
    /// [`TRIG_LIMIT`].
    #[inline(always)]
    pub fn of_f64(self, x: f64) -> f64 {
        match self {
            Math::Exp => exp(x),
            Math::Expm1 => expm1(x),
            Math::Ln => ln(x),
            Math::Ln1p => ln_1p(x),
            Math::Sin => sin_reduced(x),
            Math::Cos => cos_reduced(x),
            Math::Tan => tan_reduced(x),
            Math::Tanh => tanh(x),
            Math::Sigmoid => sigmoid(x),
            Math::Softplus => softplus(x),
        }
    }

    /// The function of an f32, in f32 arithmetic ([`single`]; `sin`, `cos`
    /// and `tan` valid up to [`single::TRIG_LIMIT`]).
    #[inline(always)]
    pub fn of_f32(self, x: f32) -> f32 {
        match self {
            Math::Exp => single::exp(x),
            Math::Ln => single::ln(x),
            Math::Sin => single::sin_reduced(x),
            Math::Cos => single::cos_reduced(x),
            Math::Tan => single::tan_reduced(x),
            Math::Tanh => single::tanh(x),
            Math::Sigmoid => single::sigmoid(x),
            Math::Expm1 => single::expm1(x),
            Math::Ln1p => single::ln_1p(x),
            Math::Softplus => single::softplus(x),
        }
    }
}

/// `1.5 · 2^52`: adding and subtracting it rounds to the nearest integer,
/// and the sum's low bits hold that integer.
const ROUND: f64 = 6_755_399_441_055_744.0;

/// `2^k` for `k` in `-1022..=1023`, built from its exponent bits.
#[inline(always)]
fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `2^n` for an integral `n` in `-1022..=1023` held as an f64, without a
/// float-to-integer conversion (which few vector units have for 64 bits).
#[inline(always)]
fn pow2_of(n: f64) -> f64 {
    pow2(i64::from((n + ROUND).to_bits() as i32))
}
