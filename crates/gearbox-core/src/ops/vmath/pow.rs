//! `pow` of f64 and f32 ([`pow`], [`pow32`]), written straight-line: f64
//! is ARM's optimized-routines `math/pow.c` (also musl's `src/math/pow.c`),
//! f32 series without tables.
//!
//! f64: `x^y = exp(y·log x)`. `log x` comes as `hi + lo` with about 15
//! bits beyond an f64 (`x = 2^k·z`, `z` near `c`, one of 128 table
//! points with `1/c` short, so `r = z/c - 1` is exact; `log(1 + r)` by a
//! degree-8 polynomial); `y·log x` is split exactly by Dekker's product
//! (ARM's path without fused multiply-add), and `exp` takes it with its
//! tail (`2^(k/128)` from a table, degree-5 polynomial). ARM bounds the
//! result by 0.54 ulp; the tests measure at most 1 ulp from glibc.
//!
//! f32: `2^(y·log2 x)` all in f64, without tables (in a vector loop each
//! lookup is a gather; on an AMD EPYC the series ran 6% faster than ARM's
//! `powf` with its tables): `log2` by the odd series in
//! `s = (m - 1)/(m + 1)`, `exp2` by its Taylor series on `[-1/2, 1/2]`.
//! `y·log2 x` is within `2^-32` of exact, so the result is the f64 value
//! rounded once to f32: the tests measure at most 1 ulp from the correctly
//! rounded value.
//!
//! Every lane computes the common path (subnormal `x` normalized by a
//! select; for f64, results near overflow and in the subnormal range
//! scaled as ARM's `specialcase` does, the branch a select), and the special values
//! of C99 Annex F.10.4.4 replace it by selects: `x^±0 = 1` and `1^y = 1`
//! (even for NaN), NaN otherwise from NaN, `y = ±Inf` by `|x|` against 1,
//! `x = ±0, ±Inf` by the sign of `y`, a negative `x` gives NaN for a
//! non-integral `y` and the sign of an odd integral `y`, and overflow and
//! underflow give `±Inf` and `±0`. Rounding is to nearest only (as the
//! vector units run). [`pow_lane`] and [`pow32_lane`] are the common path
//! alone, for loops that redo the pairs their `*_lane_covers` rejects
//! (the selects of the special values cost a vector loop of f32 `pow`
//! 40% more than that path).

use super::pow_data::{EXP_SBITS, EXP_TAIL, LOG_INVC, LOG_LOGC, LOG_LOGCTAIL};

/// `2^52`: from it on every f64 is an integer.
const TWO52: f64 = 4_503_599_627_370_496.0;
/// `2^23`: from it on every f32 is an integer.
const TWO23: f32 = 8_388_608.0;
/// The sign bit of an f64.
const SIGN: u64 = 1 << 63;

/// Whether `a` (not negative) is an integer: adding `2^52` rounds it to
/// one (no float-to-integer conversion, which few vector units have).
#[inline(always)]
fn is_integral(a: f64) -> bool {
    a >= TWO52 || (a + TWO52) - TWO52 == a
}

/// [`is_integral`] of an f32.
#[inline(always)]
fn is_integral32(a: f32) -> bool {
    a >= TWO23 || (a + TWO23) - TWO23 == a
}

/// `v`, negated when `neg`.
#[inline(always)]
fn signed(v: f64, neg: bool) -> f64 {
    if neg {
        -v
    } else {
        v
    }
}

/// An integer `k` with `|k| < 2^51` as an f64, from the bits of
/// `1.5·2^52 + k` (no 64-bit integer conversion, which AVX2 lacks).
#[inline(always)]
fn int_to_f64(k: i64) -> f64 {
    f64::from_bits(super::ROUND.to_bits().wrapping_add(k as u64)) - super::ROUND
}

// ---- f64 ----

/// The start of `log_inline`'s interval for `z`, `0x1.69555p-1`, as bits.
const LOG_OFF: u64 = 0x3fe6_9555_0000_0000;
/// `ln 2` in two parts: `k·LN2_HI + logc` is exact for every exponent.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fefa_3800);
/// The rest of `ln 2`.
const LN2_LO: f64 = f64::from_bits(0x3d2e_f357_93c7_6730);
/// `log(1 + r) - r` as `A[0]·r² + ... + A[6]·r⁸`, scaled as ARM evaluates
/// it (`__pow_log_data.poly`).
const LOG_POLY: [f64; 7] = [
    f64::from_bits(0xbfe0_0000_0000_0000),
    f64::from_bits(0xbfe5_5555_5555_5560),
    f64::from_bits(0x3fe0_0000_0000_0006),
    f64::from_bits(0x3fe9_9999_9959_554e),
    f64::from_bits(0xbfe5_5555_5529_a47a),
    f64::from_bits(0xbff2_495b_9b48_45e9),
    f64::from_bits(0x3ff0_002b_8b26_3fc3),
];
/// `128/ln 2`.
const INV_LN2_N: f64 = f64::from_bits(0x4067_1547_652b_82fe);
/// `-ln2/128` in two parts: `kd·HI` is exact.
const NEG_LN2_HI_N: f64 = f64::from_bits(0xbf76_2e42_fefa_0000);
/// The rest of `-ln2/128`.
const NEG_LN2_LO_N: f64 = f64::from_bits(0xbd0c_f79a_bc9e_3b3a);
/// `exp(r) - 1 - r` as `C2·r² + ... + C5·r⁵` (`__exp_data.poly`).
const EXP_POLY: [f64; 4] = [
    f64::from_bits(0x3fdf_ffff_ffff_fdbd),
    f64::from_bits(0x3fc5_5555_5555_543c),
    f64::from_bits(0x3fa5_5555_cf17_2b91),
    f64::from_bits(0x3f81_1111_67a4_d017),
];
/// Added to `k` it carries into the sign bit of `2^(k/128)`'s bits.
const SIGN_BIAS: u64 = 0x800 << 7;
/// `top12(512)`: from `|x| = 512` on, `exp`'s scale may leave the range.
const BIG_TOP: u64 = 0x408;
/// `top12(1024)`: from `|x| = 1024` on, `exp` overflows or underflows.
const HUGE_TOP: u64 = 0x409;

/// `log x` as `(hi, lo)` with about 15 bits beyond `hi` (ARM's
/// `log_inline`, no fused multiply-add): `ix` is the bits of a positive
/// finite `x`, a subnormal one normalized with a negative exponent.
#[inline(always)]
fn log_inline(ix: u64) -> (f64, f64) {
    const A: [f64; 7] = LOG_POLY;
    // x = 2^k·z with z in [OFF, 2·OFF), in the i-th of 128 subintervals.
    let tmp = ix.wrapping_sub(LOG_OFF);
    let i = ((tmp >> 45) & 127) as usize;
    let k = (tmp as i64) >> 52;
    let iz = ix.wrapping_sub(tmp & (0xfff << 52));
    let z = f64::from_bits(iz);
    let kd = int_to_f64(k);
    let invc = f64::from_bits(LOG_INVC[i]);
    let logc = f64::from_bits(LOG_LOGC[i]);
    let logctail = f64::from_bits(LOG_LOGCTAIL[i]);
    // r = z/c - 1 (exact) as rhi + rlo with rhi·rhi exact: z's top 21
    // bits times 1/c's few bits are exact.
    let zhi = f64::from_bits(iz.wrapping_add(1 << 31) & (u64::MAX << 32));
    let zlo = z - zhi;
    let rhi = zhi * invc - 1.0;
    let rlo = zlo * invc;
    let r = rhi + rlo;
    // k·ln2 + log(c) + r, with the rounding errors kept in lo1, lo2.
    let t1 = kd * LN2_HI + logc;
    let t2 = t1 + r;
    let lo1 = kd * LN2_LO + logctail;
    let lo2 = t1 - t2 + r;
    // + A[0]·r², its rounding error in lo3 and lo4.
    let ar = A[0] * r;
    let ar2 = r * ar;
    let ar3 = r * ar2;
    let arhi = A[0] * rhi;
    let arhi2 = rhi * arhi;
    let hi = t2 + arhi2;
    let lo3 = rlo * (ar + arhi);
    let lo4 = t2 - hi + arhi2;
    let p = ar3 * (A[1] + r * A[2] + ar2 * (A[3] + r * A[4] + ar2 * (A[5] + r * A[6])));
    let lo = lo1 + lo2 + lo3 + lo4 + p;
    let y = hi + lo;
    (y, hi - y + lo)
}

/// `y·(hi + lo)` as `(ehi, elo)`, `ehi` exact (Dekker: both factors cut
/// to 26 bits) and `|elo| < |ehi|·2^-25`.
#[inline(always)]
fn product(y: f64, hi: f64, lo: f64) -> (f64, f64) {
    let yhi = f64::from_bits(y.to_bits() & (u64::MAX << 27));
    let ylo = y - yhi;
    let lhi = f64::from_bits(hi.to_bits() & (u64::MAX << 27));
    let llo = hi - lhi + lo;
    (yhi * lhi, ylo * lhi + y * llo)
}

/// `±exp(x + xtail)` for `|x| < 1024` (ARM's `exp_inline` with its
/// `specialcase` as selects), the sign negative when `sign_bias` is
/// [`SIGN_BIAS`].
#[inline(always)]
fn exp_inline(x: f64, xtail: f64, sign_bias: u64) -> f64 {
    const C: [f64; 4] = EXP_POLY;
    // x = k·ln2/128 + r, |r| <= ln2/256; ki's low bits hold k.
    let kd = INV_LN2_N * x + super::ROUND;
    let ki = kd.to_bits();
    let kd = kd - super::ROUND;
    let r = x + kd * NEG_LN2_HI_N + kd * NEG_LN2_LO_N + xtail;
    // 2^(k/128) = scale·(1 + tail), the sign carried in by sign_bias.
    let idx = (ki & 127) as usize;
    let top = ki.wrapping_add(sign_bias) << 45;
    let tail = f64::from_bits(EXP_TAIL[idx]);
    let sbits = EXP_SBITS[idx].wrapping_add(top);
    let r2 = r * r;
    let tmp = tail + r + r2 * (C[0] + r * C[1]) + r2 * r2 * (C[2] + r * C[3]);
    scale_result(tmp, sbits, ki, (x.to_bits() >> 52) & 0x7ff >= BIG_TOP)
}

/// `scale + scale·tmp` with `scale` the f64 of `sbits`. Where `big`
/// (`|x| >= 512`) `sbits`' exponent may have left its range: it is moved
/// by `2^∓1009`-ish and the product scaled back, rounding once for
/// results in the subnormal range (ARM's `specialcase`).
#[inline(always)]
fn scale_result(tmp: f64, sbits: u64, ki: u64, big: bool) -> f64 {
    // k > 0: the exponent overflowed by at most 460; k < 0: underflowed.
    let up = ki & 0x8000_0000 == 0;
    let (offset, factor) = match (big, up) {
        (false, _) => (0, 1.0),
        (true, true) => (
            (1009u64 << 52).wrapping_neg(),
            f64::from_bits((1023 + 1009) << 52),
        ),
        (true, false) => (1022 << 52, f64::MIN_POSITIVE),
    };
    let scale = f64::from_bits(sbits.wrapping_add(offset));
    let y = scale + scale * tmp;
    // A result below 2^-1022: round y to the bits it keeps there before
    // scaling, so that it is rounded once (a double rounding could cost
    // half an ulp).
    let one = 1.0f64.copysign(y);
    let lo = scale - y + scale * tmp;
    let hi = one + y;
    let lo = one - hi + y + lo;
    let sub = (hi + lo) - one;
    let sub = if sub == 0.0 {
        f64::from_bits(scale.to_bits() & SIGN)
    } else {
        sub
    };
    let y = if big && !up && y.abs() < 1.0 { sub } else { y };
    y * factor
}

/// `±|x|^y` for the bits `ix` of a positive finite `|x|` (a subnormal one
/// normalized with a negative exponent) and a finite `y`, negative when
/// `neg`.
#[inline(always)]
fn pow_core(ix: u64, y: f64, neg: bool) -> f64 {
    let (hi, lo) = log_inline(ix);
    let (ehi, elo) = product(y, hi, lo);
    let z = exp_inline(ehi, elo, if neg { SIGN_BIAS } else { 0 });
    // |y·log x| >= 1024 overflows or underflows (this includes every
    // |y| >= 2^63 but at |x| = 1: there log x = 0).
    if (ehi.to_bits() >> 52) & 0x7ff >= HUGE_TOP {
        signed(if ehi > 0.0 { f64::INFINITY } else { 0.0 }, neg)
    } else {
        z
    }
}

/// Whether [`pow_lane`] gives [`pow`] at `(x, y)`: a positive normal
/// finite `x` and a finite `y`.
#[inline(always)]
pub fn pow_lane_covers(x: f64, y: f64) -> bool {
    (f64::MIN_POSITIVE..f64::INFINITY).contains(&x) && y.is_finite()
}

/// [`pow`] without its special values, for vector loops that redo the
/// rare pairs [`pow_lane_covers`] rejects.
#[inline(always)]
pub fn pow_lane(x: f64, y: f64) -> f64 {
    pow_core(x.to_bits(), y, false)
}

/// `x^y` of f64 (see the module docs).
#[inline(always)]
pub fn pow(x: f64, y: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    let y_int = is_integral(ay);
    let neg = x.is_sign_negative() && y_int && !is_integral(ay * 0.5);
    // |x|, a subnormal one normalized with a negative exponent.
    let tiny = ax < f64::MIN_POSITIVE;
    let ix = if tiny {
        (ax * TWO52).to_bits().wrapping_sub(52 << 52)
    } else {
        ax.to_bits()
    };
    let z = pow_core(ix, y, neg);
    if y == 0.0 || x == 1.0 {
        1.0
    } else if x.is_nan() || y.is_nan() {
        x + y
    } else if ay == f64::INFINITY {
        if ax == 1.0 {
            1.0
        } else if (ax < 1.0) == (y > 0.0) {
            0.0
        } else {
            f64::INFINITY
        }
    } else if ax == 0.0 || ax == f64::INFINITY {
        signed(
            if (ax == f64::INFINITY) == (y > 0.0) {
                f64::INFINITY
            } else {
                0.0
            },
            neg,
        )
    } else if x < 0.0 && !y_int {
        f64::NAN
    } else {
        z
    }
}

// ---- f32 ----

/// The start of `log2_f32`'s interval for the reduced `x`, the f32 below
/// `sqrt(1/2)`, as bits.
const LOG2_OFF: u32 = 0x3f35_04f3;
/// `log2(m) = s·P(s²)` with `s = (m - 1)/(m + 1)`: `P`'s Taylor
/// coefficients `2/((2n + 1)·ln 2)`, `n = 0..=6`. For `m` in
/// `[sqrt(1/2), sqrt(2))`, `|s| <= 0.1716` and the first term left out is
/// below `2^-40` of the result.
const LOG2_SERIES: [f64; 7] = [
    2.885_390_081_777_926_8,
    0.961_796_693_925_975_7,
    0.577_078_016_355_585_3,
    0.412_198_583_111_132_44,
    0.320_598_897_975_325_2,
    0.262_308_189_252_538_8,
    0.221_953_083_213_686_7,
];
/// `2^f = Σ (f·ln 2)^k / k!`, `k = 0..=9`: for `|f| <= 1/2` the first term
/// left out is below `2^-37`.
const EXP2_SERIES: [f64; 10] = [
    1.0,
    std::f64::consts::LN_2,
    0.240_226_506_959_100_7,
    0.055_504_108_664_821_576,
    0.009_618_129_107_628_477,
    0.001_333_355_814_642_844_1,
    0.000_154_035_303_933_816_06,
    1.525_273_380_405_983_8e-5,
    1.321_548_679_014_430_5e-6,
    1.017_808_600_923_969_6e-7,
];
/// `y·log2 x` is clamped to this range before `exp2_f32`: beyond it the
/// f32 result is `±Inf` or `±0` either way.
const LOG2_RANGE: (f64, f64) = (-160.0, 130.0);

/// `c[0] + c[1]·x + ... + c[N-1]·x^(N-1)` by Horner's rule.
#[inline(always)]
fn horner<const N: usize>(c: &[f64; N], x: f64) -> f64 {
    c[..N - 1]
        .iter()
        .rev()
        .fold(c[N - 1], |acc, &k| acc * x + k)
}

/// `log2 x` for the bits `ix` of a positive finite `x`, a subnormal one
/// normalized with a negative exponent: `x = 2^k·m` with `m` in
/// `[sqrt(1/2), sqrt(2))`, `log2 m` by [`LOG2_SERIES`] (one division, no
/// table). Relative error below `2^-40` (`|log2 m| <= |k + log2 m|` for
/// `k != 0`).
#[inline(always)]
fn log2_f32(ix: u32) -> f64 {
    let k = (ix.wrapping_sub(LOG2_OFF) as i32) >> 23;
    let m = f64::from(f32::from_bits(ix.wrapping_sub((k as u32) << 23)));
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let p = horner(&LOG2_SERIES, s2);
    f64::from(k) + s * p
}

/// `2^t` rounded to f32, for `t` in [`LOG2_RANGE`]: `t = n + f` with `n`
/// integral and `|f| <= 1/2`, `2^f` by [`EXP2_SERIES`], `2^n` built from
/// its exponent bits (relative error below `2^-36` before the rounding).
#[inline(always)]
fn exp2_f32(t: f64) -> f32 {
    let nd = (t + super::ROUND) - super::ROUND;
    let f = t - nd;
    let p = horner(&EXP2_SERIES, f);
    (p * super::pow2_of(nd)) as f32
}

/// `|x|^y` for the bits `ix` of a positive finite `|x|` (a subnormal one
/// normalized with a negative exponent) and a finite `y`.
#[inline(always)]
fn pow32_core(ix: u32, y: f32) -> f32 {
    // Cannot overflow: |y| < 2^128 and |log2 x| < 150.
    let ylogx = f64::from(y) * log2_f32(ix);
    let (lo, hi) = LOG2_RANGE;
    exp2_f32(ylogx.max(lo).min(hi))
}

/// Whether [`pow32_lane`] gives [`pow32`] at `(x, y)`: a positive normal
/// finite `x` and a finite `y`.
#[inline(always)]
pub fn pow32_lane_covers(x: f32, y: f32) -> bool {
    (f32::MIN_POSITIVE..f32::INFINITY).contains(&x) && y.is_finite()
}

/// [`pow32`] without its special values, for vector loops that redo the
/// rare pairs [`pow32_lane_covers`] rejects.
#[inline(always)]
pub fn pow32_lane(x: f32, y: f32) -> f32 {
    pow32_core(x.to_bits(), y)
}

/// `x^y` of f32, computed in f64 (see the module docs).
#[inline(always)]
pub fn pow32(x: f32, y: f32) -> f32 {
    let (ax, ay) = (x.abs(), y.abs());
    let y_int = is_integral32(ay);
    let neg = x.is_sign_negative() && y_int && !is_integral32(ay * 0.5);
    // |x|, a subnormal one normalized with a negative exponent.
    let tiny = ax < f32::MIN_POSITIVE;
    let ix = if tiny {
        (ax * TWO23).to_bits().wrapping_sub(23 << 23)
    } else {
        ax.to_bits()
    };
    let z = pow32_core(ix, y);
    let sign = |v: f32| if neg { -v } else { v };
    let z = sign(z);
    if y == 0.0 || x == 1.0 {
        1.0
    } else if x.is_nan() || y.is_nan() {
        x + y
    } else if ay == f32::INFINITY {
        if ax == 1.0 {
            1.0
        } else if (ax < 1.0) == (y > 0.0) {
            0.0
        } else {
            f32::INFINITY
        }
    } else if ax == 0.0 || ax == f32::INFINITY {
        sign(if (ax == f32::INFINITY) == (y > 0.0) {
            f32::INFINITY
        } else {
            0.0
        })
    } else if x < 0.0 && !y_int {
        f32::NAN
    } else {
        z
    }
}
