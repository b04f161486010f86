//! `exp` and `expm1` of f64.
//!
//! The method: `x = n·ln2 + r` with `n` the nearest integer to `x/ln2` and
//! `|r| <= ln2/2` (Cody and Waite's two-part `ln2`, exact for `|n| < 2^11`),
//! `e^r` by its Taylor series through `r^13` (the truncation is below
//! 2e-16 relative; `exp` carries the roundings of `r` and of the sums to
//! one last rounding, so it is within 0.6 ulp and almost always the
//! correctly rounded value; `expm1` takes `n = 0` on all of `(-ln2, ln2)` and its
//! series `e^r - 1` through `r^17`), then `2^n` applied as two exact
//! powers of two so that results down into the subnormal range are scaled
//! without overflow. `exp(+Inf)` and `x > 709.79` are `+Inf`, `x < -745.14` and `exp(-Inf)`
//! are `+0`, NaN stays NaN. `expm1` is within 2 ulps (its sum
//! `2^n·(e^r - 1) + (2^n - 1)` cancels at most a bit), `-0.0` at `-0.0`,
//! `-1` below `-60`.

/// `1 / ln 2`.
const LOG2_E: f64 = std::f64::consts::LOG2_E;
/// `ln 2` in two parts: the high part has trailing zero bits, so `n·HI` is
/// exact for the `n` that occur.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
/// The rest of `ln 2`.
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// Above this `exp` overflows.
const OVERFLOW: f64 = 709.782_712_893_384;
/// Below this `exp` rounds to zero.
const UNDERFLOW: f64 = -745.133_219_101_941_2;
/// Below this `expm1` is `-1` to the last bit.
const EXPM1_FLOOR: f64 = -60.0;
/// From this `n` on, `2^n·e^r - 1` rounds to `2^n·e^r`.
const EXPM1_EXP_FROM: f64 = 57.0;

/// `x` split as `n·ln2 + r`: `(t, n, r)` with `t = ROUND + n` (its low
/// bits hold `n`), for `x` clamped into a finite range.
#[inline(always)]
fn split(c: f64) -> (f64, f64, f64) {
    let t = c * LOG2_E + super::ROUND;
    let n = t - super::ROUND;
    (t, n, (c - n * LN2_HI) - n * LN2_LO)
}

/// `2^n` for the `n` held by `t` (see [`split`]), as two factors that are
/// each a normal number for `n` in `-2044..=2046`.
#[inline(always)]
fn pow2_halves(t: f64) -> (f64, f64) {
    let n = i64::from(t.to_bits() as i32);
    let half = n >> 1;
    (super::pow2(half), super::pow2(n - half))
}

/// `e^x` (see the module docs for its accuracy and special values).
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    // Clamped so that every step below stays finite (NaN becomes an end,
    // and is put back with the ends at the last step): plain min and max,
    // which compile to single instructions where `clamp` keeps NaN.
    #[allow(clippy::manual_clamp)]
    let c = x.max(UNDERFLOW - 1.0).min(OVERFLOW + 1.0);
    let t = c * LOG2_E + super::ROUND;
    let n = t - super::ROUND;
    // r = c - n·ln2 with the rounding error of its last step kept apart.
    let hi_part = c - n * LN2_HI;
    let lo_part = n * LN2_LO;
    let r = hi_part - lo_part;
    let r_err = (hi_part - r) - lo_part;
    // e^r = 1 + s, s = r + r²·(1/2! + r/3! + ... + r^11/13!), with the
    // roundings of both sums carried to the one last rounding.
    let mut p = 1.0 / FACTORIALS[13];
    for k in (2..=12).rev() {
        p = p * r + 1.0 / FACTORIALS[k];
    }
    let tail = r * r * p;
    let s = r + tail;
    let s_err = (r - s) + tail;
    let one_s = 1.0 + s;
    let p = one_s + (((1.0 - one_s) + s) + (s_err + r_err * one_s));
    let (a, b) = pow2_halves(t);
    let y = p * a * b;
    if x > OVERFLOW {
        f64::INFINITY
    } else if x < UNDERFLOW {
        0.0
    } else if x.is_nan() {
        x
    } else {
        y
    }
}

/// `e^x - 1`, accurate near zero (see the module docs).
#[inline(always)]
pub fn expm1(x: f64) -> f64 {
    #[allow(clippy::manual_clamp)]
    let c = x.max(EXPM1_FLOOR).min(OVERFLOW + 1.0);
    // n = 0 on all of (-ln2, ln2) (the series reaches that far), so that
    // the sum below never cancels more than a bit.
    let (t, nearest, _) = split(c);
    let n = if c.abs() < std::f64::consts::LN_2 {
        0.0
    } else {
        nearest
    };
    let r = (c - n * LN2_HI) - n * LN2_LO;
    // q = e^r - 1 = r·(1 + r/2! + ... + r^16/17!).
    let mut s = 1.0 / FACTORIALS[17];
    for k in (1..=16).rev() {
        s = s * r + 1.0 / FACTORIALS[k];
    }
    let q = r * s;
    // Small n: 2^n·q + (2^n - 1), both parts exact but the last rounding.
    let small = super::pow2_of(n.min(EXPM1_EXP_FROM));
    let near = small * q + (small - 1.0);
    // Large n: e^x itself (the 1 is below half an ulp).
    let (a, b) = pow2_halves(t);
    let far = (1.0 + q) * a * b;
    let y = if n >= EXPM1_EXP_FROM { far } else { near };
    if x > OVERFLOW {
        f64::INFINITY
    } else if x == 0.0 || x.is_nan() {
        x
    } else {
        y
    }
}

/// `k!` for `k` in `0..=17`.
const FACTORIALS: [f64; 18] = [
    1.0,
    1.0,
    2.0,
    6.0,
    24.0,
    120.0,
    720.0,
    5_040.0,
    40_320.0,
    362_880.0,
    3_628_800.0,
    39_916_800.0,
    479_001_600.0,
    6_227_020_800.0,
    87_178_291_200.0,
    1_307_674_368_000.0,
    20_922_789_888_000.0,
    355_687_428_096_000.0,
];
