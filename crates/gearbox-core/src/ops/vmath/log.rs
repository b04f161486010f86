//! `ln` and `ln_1p` of f64.
//!
//! `ln` is fdlibm's `__ieee754_log` without its branches: `x = 2^k·m` with
//! `m` in `(√2/2, √2]`, `f = m - 1`, `s = f/(2 + f)` and
//! `ln(1 + f) = 2s + s·R(s²)` (fdlibm's degree-14 polynomial), less than
//! 1 ulp from the correctly rounded value. The exponent `k` is taken from
//! the bits as a float (no integer conversion); subnormal inputs are scaled
//! by `2^54` first. `ln(0) = -Inf`, `ln(x < 0) = NaN`, `ln(+Inf) = +Inf`.
//!
//! `ln_1p(x)` is Kahan's `ln(u)·x/(u - 1)` with `u = 1 + x` rounded, which
//! cancels the rounding of `u` (`x` itself where `u` rounds to 1): a few
//! ulps everywhere, `-0.0` kept, `ln_1p(-1) = -Inf`.

/// `ln 2` in two parts: `k·HI` is exact for every exponent `k`.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
/// The rest of `ln 2`.
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// fdlibm's coefficients of `R(z) = Lg1·z + Lg2·z² + ... + Lg7·z⁷`.
const LG: [f64; 7] = [
    f64::from_bits(0x3fe5_5555_5555_5593),
    f64::from_bits(0x3fd9_9999_9997_fa04),
    f64::from_bits(0x3fd2_4924_9422_9359),
    f64::from_bits(0x3fcc_71c5_1d8e_78af),
    f64::from_bits(0x3fc7_4664_96cb_03de),
    f64::from_bits(0x3fc3_9a09_d078_c69f),
    f64::from_bits(0x3fc2_f112_df3e_5244),
];
/// `2^54`, the scale of subnormal inputs.
const TWO54: f64 = 18_014_398_509_481_984.0;
/// `2^52`: a small integer in the low mantissa bits of `2^52` is that
/// integer added to it.
const TWO52: f64 = 4_503_599_627_370_496.0;

/// The natural logarithm (see the module docs).
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * TWO54 } else { x };
    let bits = xs.to_bits();
    // The biased exponent as a float: its 11 bits put into 2^52's mantissa.
    let biased = f64::from_bits(TWO52.to_bits() | ((bits >> 52) & 0x7ff)) - TWO52;
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let high = m > std::f64::consts::SQRT_2;
    let m = if high { m * 0.5 } else { m };
    let k = biased - 1023.0 + if high { 1.0 } else { 0.0 } - if tiny { 54.0 } else { 0.0 };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG[1] + w * (LG[3] + w * LG[5]));
    let t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])));
    let r = t2 + t1;
    let hfsq = 0.5 * f * f;
    let y = k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f);
    if x.is_nan() {
        x
    } else if x < 0.0 {
        f64::NAN
    } else if x == 0.0 {
        f64::NEG_INFINITY
    } else if x == f64::INFINITY {
        x
    } else {
        y
    }
}

/// `ln(1 + x)`, accurate near zero (see the module docs).
#[inline(always)]
pub fn ln_1p(x: f64) -> f64 {
    let u = 1.0 + x;
    let d = u - 1.0;
    let y = ln(u) * (x / d);
    if d == 0.0 || x == f64::INFINITY {
        x
    } else {
        y
    }
}
