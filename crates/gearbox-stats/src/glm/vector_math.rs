//! `exp` and `log1p` written without branches or calls, so that a loop
//! over observations that uses them compiles to vector instructions (the
//! fast GLM terms over runs of observations, [`super::runs`]). `FMA`
//! chooses fused multiply-adds, for code compiled for a CPU that has them;
//! without it the same polynomials are evaluated with separate multiplies
//! and adds (both stay within the error bounds below, which the tests
//! check against the C library).
//!
//! The reductions and polynomials are the classic ones of fdlibm (Sun
//! Microsystems, 1993: "Permission to use, copy, modify, and distribute
//! this software is freely granted, provided that this notice is
//! preserved"): `exp` by Cody and Waite's `x = k ln 2 + r`, `|r| <= ln 2 /
//! 2`, and the Taylor series of `e^r` to degree 13; `log` by `m = 1 + f`
//! in `[sqrt(2)/2, sqrt(2)]` and fdlibm's `Lg1..Lg7` minimax polynomial in
//! `s = f / (2 + f)`.

/// `a b + c`, fused where `FMA`.
#[inline(always)]
fn mul_add<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `1.5 2^52`: adding it rounds a double of magnitude below `2^51` to an
/// integer (to nearest, ties to even), which its low mantissa bits then
/// hold.
const ROUNDER: f64 = 6755399441055744.0;
const LN2_HI: f64 = 0.693_147_180_369_123_8;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// The smallest argument whose `e^x` is a normal double.
pub const EXP_MIN: f64 = -708.0;
/// The largest argument [`exp`] takes: above it, it gives `e^709`.
pub const EXP_MAX: f64 = 709.0;
/// `e^-600`, the scale of arguments below [`EXP_MIN`].
const EXP_MINUS_600: f64 = 2.6503965530043108e-261;

/// `e^x` within 2 ulp for `x` in [[`EXP_MIN`], [`EXP_MAX`]]; below, where
/// `e^x` is subnormal or 0, as `e^(x + 600) e^-600` (within one subnormal
/// unit); above, `e^709` (callers check the range themselves).
#[inline(always)]
pub fn exp<const FMA: bool>(x: f64) -> f64 {
    let low = x < EXP_MIN;
    // Exact: below -708 a double is a multiple of 2^-43, and x + 600 is
    // below 2^10 in magnitude until it reaches the clamp.
    let x = if low { x + 600.0 } else { x }.clamp(EXP_MIN, EXP_MAX);
    let shifted = mul_add::<FMA>(x, std::f64::consts::LOG2_E, ROUNDER);
    let k = shifted - ROUNDER;
    // The integer k in the low bits: |k| <= 1023, so the exponent field
    // k + 1023 is a normal one.
    let ki = shifted.to_bits().wrapping_sub(ROUNDER.to_bits()) as i64;
    let scale = f64::from_bits(((ki + 1023) as u64) << 52);
    // k ln2_hi is exact (ln2_hi has 32 significant bits, |k| < 2^11).
    let r = mul_add::<FMA>(-k, LN2_LO, mul_add::<FMA>(-k, LN2_HI, x));
    const C: [f64; 14] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362880.0,
        1.0 / 3628800.0,
        1.0 / 39916800.0,
        1.0 / 479001600.0,
        1.0 / 6227020800.0,
    ];
    let mut p = C[13];
    for &c in C[..13].iter().rev() {
        p = mul_add::<FMA>(p, r, c);
    }
    p * scale * if low { EXP_MINUS_600 } else { 1.0 }
}

const LG1: f64 = 0.666_666_666_666_673_5;
const LG2: f64 = 0.399_999_999_994_094_2;
const LG3: f64 = 0.285_714_287_436_623_9;
const LG4: f64 = 0.222_221_984_321_497_84;
const LG5: f64 = 0.181_835_721_616_180_5;
const LG6: f64 = 0.153_138_376_992_093_73;
const LG7: f64 = 0.147_981_986_051_165_86;

/// `log(1 + e)` within 2 ulp for `e` in `[0, 1]` (the `log1p` of `exp(-|eta|)`
/// that the binomial logit term needs): `u = 1 + e` rounded, `log(u)` by
/// fdlibm's reduction and polynomial, and the rounding of `u` added back
/// as `(e - (u - 1)) / u` (both `u - 1` and that difference are exact).
#[inline(always)]
pub fn log1p_unit<const FMA: bool>(e: f64) -> f64 {
    let u = 1.0 + e;
    let correction = (e - (u - 1.0)) / u;
    let big = u > std::f64::consts::SQRT_2;
    let m = if big { 0.5 * u } else { u };
    let k = if big { 1.0 } else { 0.0 };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * mul_add::<FMA>(w, mul_add::<FMA>(w, LG6, LG4), LG2);
    let t2 = z * mul_add::<FMA>(w, mul_add::<FMA>(w, mul_add::<FMA>(w, LG7, LG5), LG3), LG1);
    let r = t2 + t1;
    let hfsq = 0.5 * f * f;
    k * LN2_HI - ((hfsq - (s * (hfsq + r) + (k * LN2_LO + correction))) - f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constants are fdlibm's, bit for bit.
    #[test]
    fn the_constants_are_fdlibms() {
        let bits = [LN2_HI, LN2_LO, LG1, LG2, LG3, LG4, LG5, LG6, LG7].map(f64::to_bits);
        assert_eq!(
            bits,
            [
                0x3fe6_2e42_fee0_0000,
                0x3dea_39ef_3579_3c76,
                0x3fe5_5555_5555_5593,
                0x3fd9_9999_9997_fa04,
                0x3fd2_4924_9422_9359,
                0x3fcc_71c5_1d8e_78af,
                0x3fc7_4664_96cb_03de,
                0x3fc3_9a09_d078_c69f,
                0x3fc2_f112_df3e_5244,
            ]
        );
    }

    /// |got - want| in units of the last place of `want`.
    fn ulps(got: f64, want: f64) -> f64 {
        if got == want {
            return 0.0;
        }
        let ulp = f64::from_bits(want.abs().to_bits() + 1) - want.abs();
        (got - want).abs() / ulp
    }

    /// Points spread over `[lo, hi]` (a fixed pseudo-random sequence and
    /// the ends).
    fn points(lo: f64, hi: f64, n: usize) -> Vec<f64> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut v: Vec<f64> = (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                lo + (hi - lo) * ((state >> 11) as f64 / (1u64 << 53) as f64)
            })
            .collect();
        v.extend([lo, hi]);
        v
    }

    fn worst(f: impl Fn(f64) -> f64, reference: impl Fn(f64) -> f64, xs: &[f64]) -> (f64, f64) {
        xs.iter()
            .map(|&x| (ulps(f(x), reference(x)), x))
            .fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a })
    }

    /// Within 1.5 ulp of the C library's `exp` (itself within 1 ulp) over
    /// the whole range, small arguments and arguments near multiples of
    /// `ln 2` included; both with and without fused multiply-adds.
    #[test]
    fn exp_is_within_two_ulp_over_its_range() {
        let mut xs = points(EXP_MIN, EXP_MAX, 400_000);
        xs.extend(points(-1.0, 1.0, 200_000));
        xs.extend(points(-1e-6, 1e-6, 10_000));
        xs.extend((-1000..1000).map(|k| k as f64 * std::f64::consts::LN_2 * 0.5));
        xs.extend([0.0, -0.0, 1e-300, -1e-300]);
        for (name, (err, at)) in [
            ("fma", worst(exp::<true>, f64::exp, &xs)),
            ("no fma", worst(exp::<false>, f64::exp, &xs)),
        ] {
            assert!(err <= 1.5, "exp ({name}): {err} ulp at {at:e}");
        }
        assert_eq!(exp::<false>(0.0), 1.0);
        assert_eq!(EXP_MINUS_600, (-600f64).exp());
        // Subnormal results, within one subnormal unit, and 0 below.
        for x in points(-745.2, EXP_MIN, 100_000) {
            for got in [exp::<true>(x), exp::<false>(x)] {
                let want = x.exp();
                assert!(
                    (got - want).abs() <= f64::from_bits(1).max(2.5e-16 * want),
                    "exp({x:e}) = {got:e}, want {want:e}"
                );
            }
        }
        assert_eq!(exp::<false>(-800.0), 0.0);
        assert_eq!(exp::<false>(-1e300), 0.0);
    }

    /// Within 1.5 ulp of the C library's `log1p` over `[0, 1]`, tiny
    /// arguments included.
    #[test]
    fn log1p_unit_is_within_two_ulp_on_the_unit_interval() {
        let mut xs = points(0.0, 1.0, 400_000);
        xs.extend(points(0.0, 1e-3, 100_000));
        xs.extend(points(0.40, 0.43, 100_000));
        xs.extend((1..1075).map(|k| 2f64.powi(-k)));
        xs.extend([0.0, 1.0, f64::MIN_POSITIVE, 5e-324]);
        for (name, (err, at)) in [
            ("fma", worst(log1p_unit::<true>, f64::ln_1p, &xs)),
            ("no fma", worst(log1p_unit::<false>, f64::ln_1p, &xs)),
        ] {
            assert!(err <= 1.5, "log1p ({name}): {err} ulp at {at:e}");
        }
        assert_eq!(log1p_unit::<false>(0.0), 0.0);
    }
}
