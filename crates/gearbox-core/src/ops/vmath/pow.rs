//! `pow` of f64 and f32 ([`pow`], [`pow32`]): ARM's optimized-routines
//! `math/pow.c` and `math/powf.c` (also musl's `src/math/pow.c` and
//! `powf.c`), written straight-line.
//!
//! f64: `x^y = exp(y·log x)`. `log x` comes as `hi + lo` with about 15
//! bits beyond an f64 (`x = 2^k·z`, `z` near `c`, one of 128 table
//! points with `1/c` short, so `r = z/c - 1` is exact; `log(1 + r)` by a
//! degree-8 polynomial); `y·log x` is split exactly by Dekker's product
//! (ARM's path without fused multiply-add), and `exp` takes it with its
//! tail (`2^(k/128)` from a table, degree-5 polynomial). ARM bounds the
//! result by 0.54 ulp; the tests measure at most 1 ulp from glibc.
//!
//! f32: `2^(y·log2 x)` all in f64: `log2` from a 16-entry table and a
//! degree-5 polynomial, `exp2` from a 32-entry table and a cubic; within
//! 0.82 ulp (ARM), the tests measure at most 1 ulp from the correctly
//! rounded value.
//!
//! Every lane computes the common path (subnormal `x` normalized by a
//! select, results near overflow and in the subnormal range scaled as
//! ARM's `specialcase` does, the branch a select), and the special values
//! of C99 Annex F.10.4.4 replace it by selects: `x^±0 = 1` and `1^y = 1`
//! (even for NaN), NaN otherwise from NaN, `y = ±Inf` by `|x|` against 1,
//! `x = ±0, ±Inf` by the sign of `y`, a negative `x` gives NaN for a
//! non-integral `y` and the sign of an odd integral `y`, and overflow and
//! underflow give `±Inf` and `±0`. Rounding is to nearest only (as the
//! vector units run).

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
    let (hi, lo) = log_inline(ix);
    let (ehi, elo) = product(y, hi, lo);
    let z = exp_inline(ehi, elo, if neg { SIGN_BIAS } else { 0 });
    // |y·log x| >= 1024 overflows or underflows (this includes every
    // |y| >= 2^63 but at |x| = 1: there log x = 0).
    let z = if (ehi.to_bits() >> 52) & 0x7ff >= HUGE_TOP {
        signed(if ehi > 0.0 { f64::INFINITY } else { 0.0 }, neg)
    } else {
        z
    };
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

/// The start of `log2_inline`'s interval for `z`, `0x1.66p-1`, as bits.
const LOG2_OFF: u32 = 0x3f33_0000;
/// `1/c` of each of the 16 subintervals (`__powf_log2_data.tab[i].invc`).
const LOG2_INVC: [u64; 16] = [
    0x3ff6_61ec_79f8_f3be,
    0x3ff5_71ed_4aaf_883d,
    0x3ff4_9539_f0f0_10b0,
    0x3ff3_c995_b0b8_0385,
    0x3ff3_0d19_0c88_64a5,
    0x3ff2_5e22_7b0b_8ea0,
    0x3ff1_bb4a_4a1a_343f,
    0x3ff1_2358_f08a_e5ba,
    0x3ff0_953f_4199_00a7,
    0x3ff0_0000_0000_0000,
    0x3fee_608c_fd9a_47ac,
    0x3fec_a4b3_1f02_6aa0,
    0x3feb_2036_576a_fce6,
    0x3fe9_c2d1_63a1_aa2d,
    0x3fe8_86e6_0378_41ed,
    0x3fe7_67dc_f553_4862,
];
/// `log2(c)` of each subinterval (`tab[i].logc`).
const LOG2_LOGC: [u64; 16] = [
    0xbfde_fec6_5b96_3019,
    0xbfdb_0b68_32d4_fca4,
    0xbfd7_418b_0a1f_b77b,
    0xbfd3_9de9_1a6d_cf7b,
    0xbfd0_1d9b_f3f2_b631,
    0xbfc9_7c1d_1b3b_7af0,
    0xbfc2_f9e3_93af_3c9f,
    0xbfb9_60cb_bf78_8d5c,
    0xbfaa_6f9d_b647_5fce,
    0x0000_0000_0000_0000,
    0x3fb3_38ca_9f24_f53d,
    0x3fc4_76a9_5438_91ba,
    0x3fce_840b_4ac4_e4d2,
    0x3fd4_0645_f0c6_651c,
    0x3fd8_8e9c_2c1b_9ff8,
    0x3fdc_e0a4_4eb1_7bcc,
];
/// `log2(1 + r)` as `A[0]·r⁵ + ... + A[4]·r` (`__powf_log2_data.poly`).
const LOG2_POLY: [f64; 5] = [
    f64::from_bits(0x3fd2_7616_c949_6e0b),
    f64::from_bits(0xbfd7_1969_a075_c67a),
    f64::from_bits(0x3fde_c70a_6ca7_badd),
    f64::from_bits(0xbfe7_1547_48be_f6c8),
    f64::from_bits(0x3ff7_1547_652a_b82b),
];
/// `2^(i/32)`'s bits less `i << 47` (`__exp2f_data.tab`).
const EXP2_TAB: [u64; 32] = [
    0x3ff0_0000_0000_0000,
    0x3fef_d9b0_d315_8574,
    0x3fef_b558_6cf9_890f,
    0x3fef_9301_d012_5b51,
    0x3fef_72b8_3c7d_517b,
    0x3fef_5487_3168_b9aa,
    0x3fef_387a_6e75_6238,
    0x3fef_1e9d_f51f_dee1,
    0x3fef_06fe_0a31_b715,
    0x3fee_f1a7_373a_a9cb,
    0x3fee_dea6_4c12_3422,
    0x3fee_ce08_6061_892d,
    0x3fee_bfda_d536_2a27,
    0x3fee_b42b_569d_4f82,
    0x3fee_ab07_dd48_5429,
    0x3fee_a47e_b03a_5585,
    0x3fee_a09e_667f_3bcd,
    0x3fee_9f75_e8ec_5f74,
    0x3fee_a114_73eb_0187,
    0x3fee_a589_994c_ce13,
    0x3fee_ace5_422a_a0db,
    0x3fee_b737_b0cd_c5e5,
    0x3fee_c491_82a3_f090,
    0x3fee_d503_b23e_255d,
    0x3fee_e89f_995a_d3ad,
    0x3fee_ff76_f2fb_5e47,
    0x3fef_199b_dd85_529c,
    0x3fef_3720_dcef_9069,
    0x3fef_5818_dcfb_a487,
    0x3fef_7c97_337b_9b5f,
    0x3fef_a4af_a2a4_90da,
    0x3fef_d076_5b6e_4540,
];
/// `2^r` for `|r| <= 1/64` as `C[0]·r³ + C[1]·r² + C[2]·r + 1`
/// (`__exp2f_data.poly`).
const EXP2_POLY: [f64; 3] = [
    f64::from_bits(0x3fac_6af8_4b91_2394),
    f64::from_bits(0x3fce_bfce_50fa_c4f3),
    f64::from_bits(0x3fe6_2e42_ff0c_52d6),
];
/// `1.5·2^52/32`: adding it rounds to a multiple of `1/32`, whose
/// numerator the sum's low bits hold.
const EXP2_SHIFT: f64 = 211_106_232_532_992.0;
/// Added to `k` it carries into the sign bit of `2^(k/32)`'s bits.
const SIGN_BIAS32: u64 = 1 << (5 + 11);
/// From here `|x^y|` rounds past `f32::MAX` (`0x1.fffffffd1d571p+6`).
const LOG2_OVERFLOW: f64 = f64::from_bits(0x405f_ffff_ffd1_d571);
/// From here up to [`LOG2_OVERFLOW`] ARM gives `±f32::MAX`
/// (`0x1.fffffffa3aae2p+6`).
const LOG2_MAX: f64 = f64::from_bits(0x405f_ffff_ffa3_aae2);
/// At and below this `x^y` rounds to zero.
const LOG2_UNDERFLOW: f64 = -150.0;

/// `log2 x` for the bits `ix` of a positive finite `x`, a subnormal one
/// normalized with a negative exponent (ARM's `log2_inline`).
#[inline(always)]
fn log2_inline(ix: u32) -> f64 {
    const A: [f64; 5] = LOG2_POLY;
    // x = 2^k·z with z in [OFF, 2·OFF], in the i-th of 16 subintervals.
    let tmp = ix.wrapping_sub(LOG2_OFF);
    let i = ((tmp >> 19) & 15) as usize;
    let top = tmp & 0xff80_0000;
    let iz = ix.wrapping_sub(top);
    let k = (top as i32) >> 23;
    let invc = f64::from_bits(LOG2_INVC[i]);
    let logc = f64::from_bits(LOG2_LOGC[i]);
    let z = f64::from(f32::from_bits(iz));
    // log2(x) = log1p(z/c - 1)/ln2 + log2(c) + k.
    let r = z * invc - 1.0;
    let y0 = logc + f64::from(k);
    let r2 = r * r;
    let y = A[0] * r + A[1];
    let p = A[2] * r + A[3];
    let r4 = r2 * r2;
    let q = A[4] * r + y0;
    let q = p * r2 + q;
    y * r4 + q
}

/// `±2^xd` rounded to f32, for `xd` in `(-150, 128)` (ARM's
/// `exp2_inline`), negative when `sign_bias` is [`SIGN_BIAS32`].
#[inline(always)]
fn exp2_inline(xd: f64, sign_bias: u64) -> f32 {
    const C: [f64; 3] = EXP2_POLY;
    // xd = k/32 + r, |r| <= 1/64; ki's low bits hold k.
    let kd = xd + EXP2_SHIFT;
    let ki = kd.to_bits();
    let kd = kd - EXP2_SHIFT;
    let r = xd - kd;
    // 2^(k/32) from the table, the sign carried in by sign_bias.
    let t = EXP2_TAB[(ki & 31) as usize].wrapping_add(ki.wrapping_add(sign_bias) << 47);
    let s = f64::from_bits(t);
    let z = C[0] * r + C[1];
    let r2 = r * r;
    let y = C[2] * r + 1.0;
    let y = z * r2 + y;
    (y * s) as f32
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
    // Cannot overflow: |y| < 2^128 and |log2 x| < 150.
    let ylogx = f64::from(y) * log2_inline(ix);
    let z = exp2_inline(ylogx, if neg { SIGN_BIAS32 } else { 0 });
    let sign = |v: f32| if neg { -v } else { v };
    let z = if ylogx <= LOG2_UNDERFLOW {
        sign(0.0)
    } else if ylogx > LOG2_OVERFLOW {
        sign(f32::INFINITY)
    } else if ylogx > LOG2_MAX {
        sign(f32::MAX)
    } else {
        z
    };
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
