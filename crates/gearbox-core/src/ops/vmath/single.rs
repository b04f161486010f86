//! `exp`, `expm1`, `ln`, `ln_1p`, `sin`, `cos`, `tan`, `tanh`, `sigmoid`,
//! `softplus` and `atan2` of f32 in f32 arithmetic (twice the lanes of the f64
//! forms), from Cephes' single-precision functions (`expf`, `logf`,
//! `sinf`/`cosf`, `tanhf`, `atanf`) without their branches, `expm1` from `expf`'s
//! reduction and polynomial, and Kahan's form of `ln_1p`. Within 2 ulps of the correctly rounded f32 value
//! (`expm1` 1; `tan`, `ln_1p`, `softplus` 3; the tests measure each against
//! f64 libm rounded to f32). The
//! trigonometric reduction by π/2 runs in f64 (its polynomials in f32) and
//! holds up to [`TRIG_LIMIT`]; beyond it f32 goes through the f64 forms
//! ([`crate::ops::unary::Real`]).

/// `|x|` up to which the f32 reduction by π/2 is accurate.
pub const TRIG_LIMIT: f32 = 8192.0;
/// `1.5 · 2^23`: adding and subtracting it rounds an f32 to an integer.
const ROUND: f32 = 12_582_912.0;
/// The bits of [`ROUND`].
const ROUND_BITS: i32 = 0x4b40_0000;
/// `ln 2` in two parts (Cephes' `C1`, `-C2`).
const LN2_HI: f32 = 0.6933594;
const LN2_LO: f32 = -2.1219444e-04;
/// Cephes' `expf` polynomial, highest degree first.
const EXP_P: [f32; 6] = [
    1.9875691e-04,
    0.0013981999,
    0.008333452,
    0.041665796,
    0.16666666,
    0.5,
];
/// Cephes' `logf` polynomial, highest degree first.
const LOG_P: [f32; 9] = [
    0.070376836,
    -0.1151461,
    0.11676999,
    -0.12420141,
    0.14249323,
    -0.16668057,
    0.20000714,
    -0.24999994,
    0.3333333,
];
/// `π/2` in two f64 parts: 33 bits (exact products up to `q = 2^20`) and
/// the rest (fdlibm's `pio2_1`, `pio2_1t`).
const PIO2_HI: f64 = f64::from_bits(0x3ff9_21fb_5440_0000);
const PIO2_LO: f64 = f64::from_bits(0x3dd0_b461_1a62_6331);
/// `1.5 · 2^52`, the f64 [`ROUND`].
const ROUND64: f64 = 6_755_399_441_055_744.0;
/// Cephes' `sinf` and `cosf` polynomials, highest degree first.
const SIN_P: [f32; 3] = [-1.9515296e-04, 0.008332161, -0.16666655];
const COS_P: [f32; 3] = [2.4433157e-05, -0.0013887316, 0.041666646];
/// Cephes' `tanhf` polynomial for `|x| < 0.625`, highest degree first.
const TANH_P: [f32; 5] = [
    -0.0057049887,
    0.02063909,
    -0.053739715,
    0.13331442,
    -0.3333328,
];

/// Horner's rule over `c`, highest degree first.
#[inline(always)]
fn horner<const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut p = c[0];
    for &k in &c[1..] {
        p = p * x + k;
    }
    p
}

/// `2^k` for `k` in `-126..=127`.
#[inline(always)]
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `e^x`.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Clamped so that 2^n stays within two normal factors; the ends
    // overflow to +Inf and underflow to 0 in the last product.
    #[allow(clippy::manual_clamp)]
    let c = x.max(-104.0).min(89.0);
    let t = c * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = (c - n * LN2_HI) - n * LN2_LO;
    let p = horner(r, &EXP_P) * (r * r) + r + 1.0;
    let k = t.to_bits() as i32 - ROUND_BITS;
    let half = k >> 1;
    let y = p * pow2(half) * pow2(k - half);
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// The natural logarithm.
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let bits = xs.to_bits();
    let e = (((bits >> 23) & 0xff) as i32 - 126) as f32 - if tiny { 23.0 } else { 0.0 };
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    let low = m < std::f32::consts::FRAC_1_SQRT_2;
    let e = if low { e - 1.0 } else { e };
    let f = if low { m + m - 1.0 } else { m - 1.0 };
    let z = f * f;
    let y = f * z * horner(f, &LOG_P) + e * LN2_LO - 0.5 * z;
    let y = f + y + e * LN2_HI;
    if x.is_nan() {
        x
    } else if x < 0.0 {
        f32::NAN
    } else if x == 0.0 {
        f32::NEG_INFINITY
    } else if x == f32::INFINITY {
        x
    } else {
        y
    }
}

/// `x - q·π/2` and `q mod 4`, `q` the nearest integer to `x·2/π`. In
/// f64 (`π/2` in a 33-bit part, whose products are exact, and the rest):
/// an f32 reduction loses most of `r`'s bits near multiples of `π/2`.
#[inline(always)]
fn reduce(x: f32) -> (f32, u32) {
    let x = x as f64;
    let t = x * std::f64::consts::FRAC_2_PI + ROUND64;
    let q = t - ROUND64;
    let r = (x - q * PIO2_HI) - q * PIO2_LO;
    (r as f32, (t.to_bits() & 3) as u32)
}

/// `(sin r, cos r)` for `|r| <= π/4`.
#[inline(always)]
fn sin_cos(r: f32) -> (f32, f32) {
    let z = r * r;
    let s = horner(z, &SIN_P) * z * r + r;
    let c = horner(z, &COS_P) * z * z - 0.5 * z + 1.0;
    (s, c)
}

/// `sin(x)` for `|x| <= TRIG_LIMIT`.
#[inline(always)]
pub fn sin_reduced(x: f32) -> f32 {
    let (r, q) = reduce(x);
    let (s, c) = sin_cos(r);
    let v = if q & 1 == 0 { s } else { c };
    let y = if q & 2 == 0 { v } else { -v };
    if x == 0.0 {
        x
    } else {
        y
    }
}

/// `cos(x)` for `|x| <= TRIG_LIMIT`.
#[inline(always)]
pub fn cos_reduced(x: f32) -> f32 {
    let (r, q) = reduce(x);
    let (s, c) = sin_cos(r);
    let v = if q & 1 == 0 { c } else { s };
    if (q + 1) & 2 == 0 {
        v
    } else {
        -v
    }
}

/// `tan(x)` for `|x| <= TRIG_LIMIT`.
#[inline(always)]
pub fn tan_reduced(x: f32) -> f32 {
    let (r, q) = reduce(x);
    let (s, c) = sin_cos(r);
    let y = if q & 1 == 0 { s / c } else { -c / s };
    if x == 0.0 {
        x
    } else {
        y
    }
}

/// The hyperbolic tangent: Cephes' odd polynomial below `|x| = 0.625`,
/// `1 - 2/(e^2|x| + 1)` above (±1 from 9 on), signed as `x`.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let a = x.abs().min(9.0);
    let z = x * x;
    let small = horner(z, &TANH_P) * z * x + x;
    let large = (1.0 - 2.0 / (exp(2.0 * a) + 1.0)).copysign(x);
    if x.is_nan() || x == 0.0 {
        x
    } else if a < 0.625 {
        small
    } else {
        large
    }
}

/// The logistic function `1 / (1 + e^-x)`.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    let e = exp(-x.abs());
    let s = 1.0 / (1.0 + e);
    if x >= 0.0 {
        s
    } else {
        e * s
    }
}

/// `ln(1 + x)`, accurate near zero: Kahan's `ln(u)·x/(u - 1)` with
/// `u = 1 + x` rounded (`x` itself where `u` rounds to 1).
#[inline(always)]
pub fn ln_1p(x: f32) -> f32 {
    let u = 1.0 + x;
    let d = u - 1.0;
    let y = ln(u) * (x / d);
    if d == 0.0 || x == f32::INFINITY {
        x
    } else {
        y
    }
}

/// `e^x - 1`, accurate near zero: `x = k ln2 + r` as [`exp`] reduces it,
/// `e^r - 1` by Cephes' `expf` polynomial without its leading 1, then
/// `2^k (e^r - 1) + (2^k - 1)` in f64, where both terms are exact and the
/// sum rounds once (so no cancellation, and no overflow of `2^k` before
/// the result itself overflows).
#[inline(always)]
pub fn expm1(x: f32) -> f32 {
    #[allow(clippy::manual_clamp)]
    let c = x.max(-104.0).min(89.0);
    let t = c * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = (c - n * LN2_HI) - n * LN2_LO;
    let p = horner(r, &EXP_P) * (r * r) + r;
    let k = t.to_bits() as i32 - ROUND_BITS;
    let scale = super::pow2(i64::from(k));
    let y = (scale * p as f64 + (scale - 1.0)) as f32;
    // NaN stays NaN, and zeros keep their sign (the reduction loses it).
    if x.is_nan() || x == 0.0 {
        x
    } else {
        y
    }
}

/// `ln(1 + e^x)`, without overflow for large `x`.
#[inline(always)]
pub fn softplus(x: f32) -> f32 {
    x.max(0.0) + ln_1p(exp(-x.abs()))
}

/// Cephes' `atanf` polynomial in `z = t²`, highest degree first.
const ATAN_P: [f64; 4] = [
    8.053_744_495_38e-2,
    -1.387_768_560_32e-1,
    1.997_771_064_78e-1,
    -3.333_294_915_39e-1,
];
/// `tan(π/8)`: Cephes' `atanf` reduces from `π/4` above it and from
/// `π/2` above its inverse, `tan(3π/8)`.
const TAN_PI_8: f64 = 0.414_213_562_373_095_03;

/// The angle of the point `(x, y)`: `atan(|y|/|x|)` by Cephes' `atanf`
/// reduction and polynomial, evaluated in f64 so that the result is
/// rounded once (within an ulp of the correctly rounded value): one
/// division, `|y|/|x|`, `(|y| - |x|)/(|y| + |x|)` (exact operands: f32
/// values widened) or `-|x|/|y|`, from the centre 0, `π/4` or `π/2`;
/// placed in its quadrant with C99 Annex F's special values (as the f64
/// [`super::atan2`]).
#[inline(always)]
pub fn atan2(y: f32, x: f32) -> f32 {
    let (ax, ay) = ((x as f64).abs(), (y as f64).abs());
    let steep = ax < TAN_PI_8 * ay;
    let middle = ay > TAN_PI_8 * ax;
    let (num, den, centre) = if steep {
        (-ax, ay, std::f64::consts::FRAC_PI_2)
    } else if middle {
        (ay - ax, ay + ax, std::f64::consts::FRAC_PI_4)
    } else {
        (ay, ax, 0.0)
    };
    let t = num / den;
    let z = t * t;
    let mut p = ATAN_P[0];
    for &k in &ATAN_P[1..] {
        p = p * z + k;
    }
    let angle = centre + (t + p * z * t);
    // 0/0 and Inf/Inf: the angle of the axis or of the diagonal.
    let angle = if ax == 0.0 && ay == 0.0 { 0.0 } else { angle };
    let angle = if ax == f64::INFINITY && ay == f64::INFINITY {
        std::f64::consts::FRAC_PI_4
    } else {
        angle
    };
    let placed = if x.is_sign_negative() {
        std::f64::consts::PI - angle
    } else {
        angle
    };
    let r = (placed as f32).copysign(y);
    if x.is_nan() || y.is_nan() {
        x + y
    } else {
        r
    }
}
