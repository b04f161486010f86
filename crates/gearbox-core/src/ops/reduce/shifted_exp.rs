//! The exponential that `logsumexp` sums on the CPU: `exp(v - m)` for the
//! values of a lane shifted by its maximum, in straight-line arithmetic
//! (no call, no branch) so that the summing loops vectorize. The lane
//! functions and the tests' reference both use it, so `logsumexp` has one
//! definition on the CPU.
//!
//! The method: `x = n·ln2 + r` with `n` the nearest integer to `x/ln2` and
//! `|r| <= ln2/2` (Cody and Waite's two-part `ln2`, exact for `|n| < 2^11`),
//! `exp(r)` by its Taylor series through `r^13` (truncation below 2e-16
//! relative), then `2^n` applied as two exact powers of two so that
//! results down into the subnormal range are scaled without overflow. Within
//! 2 ulps of the correctly rounded value; `exp(+Inf)` and `x > 709.79` are
//! `+Inf`, `x < -745.14` and `exp(-Inf)` are `+0`, NaN stays NaN.

/// `1 / ln 2`.
const LOG2_E: f64 = std::f64::consts::LOG2_E;
/// `ln 2` in two parts: the high part has trailing zero bits, so `n·HI` is
/// exact for the `n` that occur.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
/// The rest of `ln 2`.
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// `1.5 · 2^52`: adding and subtracting it rounds to the nearest integer.
const ROUND: f64 = 6_755_399_441_055_744.0;
/// Above this `exp` overflows.
const OVERFLOW: f64 = 709.782_712_893_384;
/// Below this `exp` rounds to zero.
const UNDERFLOW: f64 = -745.133_219_101_941_2;

/// `e^x` (see the module docs for its accuracy and special values).
#[inline(always)]
pub(super) fn exp(x: f64) -> f64 {
    // Clamped so that every step below stays finite (NaN becomes an end,
    // and is put back with the ends at the last step): plain min and max,
    // which compile to single instructions where `clamp` keeps NaN.
    #[allow(clippy::manual_clamp)]
    let c = x.max(UNDERFLOW - 1.0).min(OVERFLOW + 1.0);
    let t = c * LOG2_E + ROUND;
    let n = t - ROUND;
    let r = (c - n * LN2_HI) - n * LN2_LO;
    let mut p = 1.0 / 6_227_020_800.0;
    for k in (1..=12).rev() {
        p = p * r + 1.0 / FACTORIALS[k];
    }
    let p = p * r + 1.0;
    // t's low bits hold n (t = 1.5·2^52 + n exactly); 2^n as two powers of
    // two, each a normal number.
    let n = i64::from(t.to_bits() as i32);
    let half = n >> 1;
    let pow2 = |k: i64| f64::from_bits(((k + 1023) as u64) << 52);
    let y = p * pow2(half) * pow2(n - half);
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

/// `k!` for `k` in `0..=12`.
const FACTORIALS: [f64; 13] = [
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
];

#[cfg(test)]
mod tests {
    use super::exp;

    /// The distance in ulps between `a` and `b` (finite, same sign).
    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    #[test]
    fn within_two_ulps_of_the_library_exp_over_its_range() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut worst = 0;
        for i in 0..2_000_000u64 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            // Every scale: the shifted values of logsumexp (<= 0), and
            // both ends of the range.
            let x = match i % 4 {
                0 => -unit * 40.0,
                1 => -unit * 745.0,
                2 => unit * 709.0,
                _ => (unit - 0.5) * 2.0,
            };
            let (got, want) = (exp(x), x.exp());
            if want >= f64::MIN_POSITIVE {
                let d = ulps(got, want);
                worst = worst.max(d);
                assert!(d <= 2, "exp({x:e}) = {got:e}, library {want:e}: {d} ulps");
            } else {
                // Subnormal results: within two of the smallest steps.
                assert!(
                    (got - want).abs() <= 2.0 * 5e-324,
                    "exp({x:e}) = {got:e}, want {want:e}"
                );
            }
        }
        assert!(worst <= 2);
    }

    #[test]
    fn special_values_are_the_library_exps() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            709.78,
            709.79,
            710.0,
            -745.13,
            -745.14,
            -746.0,
            -1e300,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let (got, want) = (exp(x), x.exp());
            assert!(
                got == want || ulps(got, want) <= 2 || (got - want).abs() <= 1e-323,
                "exp({x:e}) = {got:e}, library {want:e}"
            );
        }
        assert!(exp(f64::NAN).is_nan());
        assert_eq!(exp(0.0), 1.0);
    }
}
