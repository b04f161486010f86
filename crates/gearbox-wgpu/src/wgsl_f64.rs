//! Float64 math for WGSL kernels, written in WGSL from operations that are
//! exact or correctly rounded.
//!
//! # Why
//!
//! naga accepts `exp`, `log`, `sin`, ... on `f64`, but lowers them to the
//! SPIR-V GLSL.std.450 instructions, which Vulkan defines for 16- and 32-bit
//! floats only: Mesa's lavapipe returns 1.0 for `exp` of an f64, NVIDIA
//! computes it in float32 precision. [`PRELUDE_F64`] holds the functions the
//! kernel renderer calls instead.
//!
//! # The rule
//!
//! The functions use only `+ - * /`, `sqrt`, `abs`, `round`, `select`,
//! comparisons, integer arithmetic on `i32`/`u32`/`i64`/`u64` and bit casts
//! between `f64` and the 64-bit integers (SHADER_F64 and SHADER_INT64). No
//! GLSL.std.450 transcendental is ever applied to an f64. naga marks no
//! operation `NoContraction` (GLSL's `precise`), so drivers may and do apply
//! value-changing rewrites to f64 code; four more rules follow (from lavapipe,
//! Mesa 22.3, and NVIDIA's driver 580):
//!
//! - **No `fma`.** Vulkan lets `fma` be a multiply then an add, and lavapipe
//!   does exactly that. Exact products are Dekker's, from halves split by
//!   masking the significand (`gb_f64_mul_err`). Both drivers contract
//!   `a * b + c` into fused operations where they like; every algorithm here
//!   stays exact or gets more accurate when they do.
//! - **Order-sensitive sums are fenced.** Mesa's NIR rewrites `(a + b) - a`
//!   to `b` (which zeroes the error of Knuth's two-sum) and `a * b + a * c`
//!   to `a * (b + c)`; NVIDIA reassociates chains of additions (the tail
//!   `(r - y0) - w` of a Cody-Waite reduction comes out 0 there, and pow
//!   loses hundreds of ulps). Wherever fdlibm's order of additions matters, each
//!   intermediate goes through `gb_f64_keep`, an identity (up to NaN
//!   payloads) that no compiler can see into, so the compiler only ever gets
//!   sums of two terms.
//! - **Special values come from constants and bit tests.** NIR also rewrites
//!   `x * 0.0` to `0.0`, `x + 0.0` to `x` and reassociates constant factors,
//!   so NaNs, infinities and signed zeros are selected explicitly, ranges are
//!   tested on the bit patterns, power-of-two scaling uses factors built
//!   from bits at run time (`gb_f64_scale`), and rounding to an integer is
//!   `round` (the `(x + 1.5 2^52) - 1.5 2^52` trick folds away).
//! - **No `ldexp` or `frexp`.** lavapipe rounds `ldexp` into the subnormal
//!   range twice and returns wrong `frexp` fractions for subnormal inputs;
//!   exponents are read and written on the bit patterns.
//!
//! Division and `sqrt` must be correctly rounded (IEEE 754): `tests/f64_math.rs`
//! checks both bitwise on the adapter it runs on. Subnormal inputs and results
//! are handled as C handles them; on a device that flushes f64 subnormals to
//! zero, subnormal inputs act as zeros of their sign and subnormal results
//! come out as zeros (the test allows exactly that).
//!
//! # Algorithms
//!
//! Ports of Sun's fdlibm 5.3 as maintained in FreeBSD's msun (also the base
//! of musl), each documented there as accurate to within 1 ulp, with the
//! changes noted:
//!
//! - `gb_exp_f64`: e_exp.c, reduction by ln2 in two parts and a rational
//!   approximation of degree 5 in r²; scaling by 2^k on the bits, rounded
//!   once into the subnormal range.
//! - `gb_expm1_f64`: s_expm1.c, the same reduction with its correction term.
//! - `gb_log_f64`: e_log.c, `log(1 + f) = 2 atanh(f / (2 + f))` around 1 after
//!   taking the exponent from the bits.
//! - `gb_log1p_f64`: s_log1p.c, the same with the rounding error of `1 + x`
//!   carried as a correction.
//! - `gb_pow_f64`: e_pow.c: `log2(x)` in extended precision (a head with 29
//!   trailing zero bits and a tail), `y * log2(x)` split into an integer and a
//!   fraction exactly, then `2^fraction`; C99's special cases (Annex F.10.4.4).
//!   For `|y| > 2^31` and `|1 - x| <= 2^-20` e_pow.c rounds the product of
//!   `x - 1` and the head of 1/ln2 and loses several hundred ulps; here its
//!   exact error joins the tail.
//! - `gb_sin_f64`, `gb_cos_f64`, `gb_tan_f64`: k_sin.c, k_cos.c, k_tan.c on
//!   `[-pi/4, pi/4]` after a reduction by pi/2 to a head and a tail:
//!   e_rem_pio2.c's Cody-Waite reduction with pi/2 in three 33-bit parts for
//!   `|x| < 2^20 pi/2`, and beyond a Payne-Hanek reduction in 64-bit integer
//!   arithmetic, in place of k_rem_pio2.c: the 53-bit significand times the
//!   192 bits of 2/pi found at the argument's exponent (in the first 1216
//!   bits of 2/pi, fdlibm's `ipio2` as 64-bit words) gives the quadrant and
//!   190 bits of fraction, turned into a double-double and multiplied by
//!   pi/2 in double-double. The reduced argument is accurate to 2^-75
//!   relative or better, even for the double closest to a multiple of pi/2
//!   (6381956970095103 2^797, 4.7e-19 from one).
//! - `gb_tanh_f64`: Cephes' rational approximation (tanh.c) for `|x| < 0.625`,
//!   where s_tanh.c's `-t / (t + 2)` with `t = expm1(-2|x|)` is off by up to
//!   2 ulp (as glibc's tanh measures); `1 - 2 / (expm1(2|x|) + 2)` (s_tanh.c)
//!   up to 22, and ±1 beyond.
//! - `gb_atan2_f64`: s_atan.c's reduction to four breakpoints and its odd
//!   polynomial of 11 terms, inside e_atan2.c's quadrant rules.
//!
//! The test (`tests/f64_math.rs`) compares every function with Rust's std
//! (the platform's libm) over random and hard inputs and the special values:
//! all within 1 ulp of it, tanh within 2 (glibc's own error), on lavapipe
//! and on an NVIDIA H200.

/// WGSL f64 functions built only from correctly rounded operations (no
/// GLSL.std.450 instruction on f64): `gb_exp_f64`, `gb_expm1_f64`,
/// `gb_log_f64`, `gb_log1p_f64`, `gb_pow_f64`, `gb_sin_f64`, `gb_cos_f64`,
/// `gb_tan_f64`, `gb_tanh_f64` and `gb_atan2_f64` (f64 in, f64 out, C's
/// semantics), with their helpers, all prefixed `gb_f64_`. Needs the
/// SHADER_F64 and SHADER_INT64 features.
pub const PRELUDE_F64: &str = r#"
// ---- Bits ----------------------------------------------------------------

// The high word of x as fdlibm reads it (sign and exponent, as i32).
fn gb_f64_hi(x: f64) -> i32 {
  return bitcast<i32>(u32(bitcast<u64>(x) >> 32u));
}

// The low word of x.
fn gb_f64_lo(x: f64) -> u32 {
  return u32(bitcast<u64>(x) & 0xfffffffflu);
}

// The double with words hi and lo.
fn gb_f64_from_words(hi: i32, lo: u32) -> f64 {
  return bitcast<f64>((u64(bitcast<u32>(hi)) << 32u) | u64(lo));
}

// x with its high word replaced.
fn gb_f64_set_hi(x: f64, hi: i32) -> f64 {
  return gb_f64_from_words(hi, gb_f64_lo(x));
}

// x with its low word cleared: 21 significant bits, whose products with
// another such head are exact.
fn gb_f64_clear_lo(x: f64) -> f64 {
  return bitcast<f64>(bitcast<u64>(x) & 0xffffffff00000000lu);
}

fn gb_f64_nan() -> f64 {
  return bitcast<f64>(0x7ff8000000000000lu);
}

fn gb_f64_inf() -> f64 {
  return bitcast<f64>(0x7ff0000000000000lu);
}

// v with its sign bit set when negative (v is a magnitude: 0, inf, ...).
fn gb_f64_signed(v: f64, negative: bool) -> f64 {
  return bitcast<f64>(bitcast<u64>(v) | select(0lu, 0x8000000000000000lu, negative));
}

// x, as a value the compiler cannot see into: a fence against value-changing
// rewrites (NIR turns (a + b) - a into b; NVIDIA reassociates sums). It sets
// the quiet bit of NaNs, computed without a select (a compiler may move
// float operations into the arms of a select), and leaves all else as is.
fn gb_f64_keep(x: f64) -> f64 {
  let u = bitcast<u64>(x);
  let nan = (0x7ff0000000000000lu - (u & 0x7ffffffffffffffflu)) >> 63u;
  return bitcast<f64>(u | (nan << 51u));
}

// ---- Exact arithmetic ----------------------------------------------------

// The head of x: its top 26 significant bits (the low 27 bits masked off).
fn gb_f64_split(x: f64) -> f64 {
  return bitcast<f64>(bitcast<u64>(x) & 0xfffffffff8000000lu);
}

// a * b - p for p = a * b rounded: Dekker's product from 26- and 27-bit
// halves (exact to within 2^-104 |p|), with no fma.
fn gb_f64_mul_err(a: f64, b: f64, p: f64) -> f64 {
  let ah = gb_f64_split(a);
  let al = a - ah;
  let bh = gb_f64_split(b);
  let bl = b - bh;
  return ((gb_f64_keep(ah * bh - p) + ah * bl) + al * bh) + al * bl;
}

// a + b as (sum, error) exactly: Knuth's two-sum.
fn gb_f64_two_sum(a: f64, b: f64) -> vec2<f64> {
  let s = gb_f64_keep(a + b);
  let bb = gb_f64_keep(s - a);
  return vec2<f64>(s, gb_f64_keep(a - gb_f64_keep(s - bb)) + gb_f64_keep(b - bb));
}

// 2^k for k in [-1022, 1023].
fn gb_f64_pow2(k: i32) -> f64 {
  return bitcast<f64>(u64(k + 1023) << 52u);
}

// y * 2^k, rounded once, for |y| in [2^-3, 2^3] and k in [-2000, 2000]: an
// exact scaling to a normal number, then one by 2^-1000, 1 or 2^1000 that
// rounds into the subnormal range or overflows correctly. The factors are
// built at run time and the first product is fenced, so the compiler can
// neither fold nor reassociate them (2^k alone may not be representable).
fn gb_f64_scale(y: f64, k: i32) -> f64 {
  let k2 = select(select(0, -1000, k < -1000), 1000, k > 1000);
  return gb_f64_keep(y * gb_f64_pow2(k - k2)) * gb_f64_pow2(k2);
}

// ---- exp, expm1 ----------------------------------------------------------

const gb_f64_ln2_hi: f64 = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
const gb_f64_ln2_lo: f64 = 1.90821492927058770002e-10;  // 0x3dea39ef35793c76
const gb_f64_inv_ln2: f64 = 1.44269504088896338700e+00;

// exp(x): fdlibm's e_exp.c.
fn gb_exp_f64(x: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let ahx = hx & 0x7fffffff;
  if (ahx >= 0x40862e42) {  // |x| >= 709.78, inf or NaN
    if (ahx >= 0x7ff00000) {
      if (((ahx & 0xfffff) | bitcast<i32>(gb_f64_lo(x))) != 0) {
        return x;
      }
      return select(x, 0.0, hx < 0);
    }
    if (x > 7.09782712893383973096e+02) {
      return gb_f64_inf();
    }
    if (x < -7.45133219101941108420e+02) {
      return 0.0;
    }
  }
  if (ahx < 0x3e300000) {  // |x| < 2^-28
    return 1.0 + x;
  }
  // x = k ln2 + (hi - lo), |hi - lo| <= ln2 / 2; k ln2_hi is exact.
  var k = 0;
  var hi = x;
  var lo: f64 = 0.0;
  if (ahx > 0x3fd62e42) {
    let kf = round(x * gb_f64_inv_ln2);
    k = i32(kf);
    hi = gb_f64_keep(x - kf * gb_f64_ln2_hi);
    lo = kf * gb_f64_ln2_lo;
  }
  let r = gb_f64_keep(hi - lo);
  let t = r * r;
  let c = r - t * (1.66666666666666019037e-01 + t * (-2.77777777770155933842e-03
    + t * (6.61375632143793436117e-05 + t * (-1.65339022054652515390e-06
    + t * 4.13813679705723846039e-08))));
  if (k == 0) {
    return 1.0 - gb_f64_keep((r * c) / (c - 2.0) - r);
  }
  let y = 1.0 - gb_f64_keep(gb_f64_keep(lo - (r * c) / (2.0 - c)) - hi);
  return gb_f64_scale(y, k);
}

// expm1(x) = exp(x) - 1: fdlibm's s_expm1.c.
fn gb_expm1_f64(x: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let negative = hx < 0;
  let ahx = hx & 0x7fffffff;
  if (ahx >= 0x4043687a) {  // |x| >= 56 ln2
    if (ahx >= 0x7ff00000) {
      if (((ahx & 0xfffff) | bitcast<i32>(gb_f64_lo(x))) != 0) {
        return x;
      }
      return select(x, -1.0, negative);
    }
    if (negative) {
      return -1.0;
    }
    if (x > 7.09782712893383973096e+02) {
      return gb_f64_inf();
    }
  }
  if (ahx < 0x3c900000) {  // |x| < 2^-54 (keeps -0)
    return x;
  }
  // x = k ln2 + r + c, with c the rounding error of r.
  var k = 0;
  var r = x;
  var c: f64 = 0.0;
  if (ahx > 0x3fd62e42) {
    let kf = round(x * gb_f64_inv_ln2);
    k = i32(kf);
    let hi = gb_f64_keep(x - kf * gb_f64_ln2_hi);
    let lo = kf * gb_f64_ln2_lo;
    r = gb_f64_keep(hi - lo);
    c = gb_f64_keep(hi - r) - lo;
  }
  let hfx = 0.5 * r;
  let hxs = r * hfx;
  let r1 = 1.0 + hxs * (-3.33333333333331316428e-02 + hxs * (1.58730158725481460165e-03
    + hxs * (-7.93650757867487942473e-05 + hxs * (4.00821782732936239552e-06
    + hxs * -2.01099218183624371326e-07))));
  let t = 3.0 - r1 * hfx;
  var e = hxs * ((r1 - t) / (6.0 - r * t));
  if (k == 0) {
    return r - gb_f64_keep(r * e - hxs);
  }
  e = gb_f64_keep(gb_f64_keep(r * (e - c) - c) - hxs);
  if (k == -1) {
    return 0.5 * (r - e) - 0.5;
  }
  if (k == 1) {
    if (r < -0.25) {
      return -2.0 * (e - gb_f64_keep(r + 0.5));
    }
    return 1.0 + 2.0 * (r - e);
  }
  if (k <= -2 || k > 56) {
    return gb_f64_scale(1.0 - gb_f64_keep(e - r), k) - 1.0;
  }
  if (k < 20) {
    let one_minus = gb_f64_from_words(0x3ff00000 - (0x200000 >> u32(k)), 0u);  // 1 - 2^-k
    return (one_minus - gb_f64_keep(e - r)) * gb_f64_pow2(k);
  }
  let tiny = gb_f64_from_words((0x3ff - k) << 20u, 0u);  // 2^-k
  return (gb_f64_keep(r - gb_f64_keep(e + tiny)) + 1.0) * gb_f64_pow2(k);
}

// ---- log, log1p ----------------------------------------------------------

// log(1 + f) - f + f^2 / 2 for s = f / (2 + f): R(s^2) of fdlibm's log.
fn gb_f64_log_r(z: f64) -> f64 {
  let w = z * z;
  let t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01
    + w * 1.531383769920937332e-01));
  let t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01
    + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  return t2 + t1;
}

// log(x): fdlibm's e_log.c.
fn gb_log_f64(x_in: f64) -> f64 {
  var x = x_in;
  var hx = gb_f64_hi(x);
  var k = 0;
  if (hx < 0x00100000) {  // x < 2^-1022, zero or negative
    if (((hx & 0x7fffffff) | bitcast<i32>(gb_f64_lo(x))) == 0) {
      return -gb_f64_inf();
    }
    if (hx < 0) {
      return gb_f64_nan();
    }
    k = -54;
    x = x * 18014398509481984.0;  // 2^54
    hx = gb_f64_hi(x);
  }
  if (hx >= 0x7ff00000) {
    return x;
  }
  k += (hx >> 20u) - 1023;
  hx &= 0x000fffff;
  let i = (hx + 0x95f64) & 0x100000;
  x = gb_f64_set_hi(x, hx | (i ^ 0x3ff00000));  // x or x/2 in [sqrt(2)/2, sqrt(2)]
  k += i >> 20u;
  let f = x - 1.0;
  let dk = f64(k);
  if ((0x000fffff & (2 + hx)) < 3) {  // -2^-20 <= f < 2^-20
    if (f == 0.0) {
      if (k == 0) {
        return 0.0;
      }
      return gb_f64_keep(dk * gb_f64_ln2_hi) + dk * gb_f64_ln2_lo;
    }
    let r = f * f * (0.5 - 0.33333333333333333 * f);
    if (k == 0) {
      return f - r;
    }
    return dk * gb_f64_ln2_hi - gb_f64_keep(gb_f64_keep(r - dk * gb_f64_ln2_lo) - f);
  }
  let s = f / (2.0 + f);
  let r = gb_f64_log_r(s * s);
  // The significand of x in [1.38, 1.42] (|f| near its largest): the form
  // with hfsq is the more accurate one there.
  if (((hx - 0x6147a) | (0x6b851 - hx)) > 0) {
    let hfsq = 0.5 * f * f;
    let sr = gb_f64_keep(s * (hfsq + r));
    if (k == 0) {
      return f - gb_f64_keep(hfsq - sr);
    }
    let low = gb_f64_keep(sr + dk * gb_f64_ln2_lo);
    return dk * gb_f64_ln2_hi - gb_f64_keep(gb_f64_keep(hfsq - low) - f);
  }
  if (k == 0) {
    return f - s * (f - r);
  }
  let low = gb_f64_keep(s * (f - r) - dk * gb_f64_ln2_lo);
  return dk * gb_f64_ln2_hi - gb_f64_keep(low - f);
}

// log(1 + x): fdlibm's s_log1p.c.
fn gb_log1p_f64(x: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let ax = hx & 0x7fffffff;
  var k = 1;
  var f: f64 = 0.0;
  var hu = 0;
  if (hx < 0x3fda827a) {  // 1 + x < sqrt(2)
    if (ax >= 0x3ff00000) {  // x <= -1, or a negative NaN
      if (x == -1.0) {
        return -gb_f64_inf();
      }
      return gb_f64_nan();
    }
    if (ax < 0x3e200000) {  // |x| < 2^-29
      if (ax < 0x3c900000) {
        return x;
      }
      return x - x * x * 0.5;
    }
    if (hx > 0 || hx <= bitcast<i32>(0xbfd2bec4u)) {  // sqrt(2)/2 <= 1 + x < sqrt(2)
      k = 0;
      f = x;
      hu = 1;
    }
  }
  if (hx >= 0x7ff00000) {
    return x;
  }
  var c: f64 = 0.0;
  if (k != 0) {
    // u = 1 + x rounded, c = its error / u; u normalised to [sqrt(2)/2, sqrt(2)].
    var u = x;
    if (hx < 0x43400000) {
      u = gb_f64_keep(1.0 + x);
      hu = gb_f64_hi(u);
      k = (hu >> 20u) - 1023;
      c = select(x - gb_f64_keep(u - 1.0), 1.0 - gb_f64_keep(u - x), k > 0) / u;
    } else {
      hu = gb_f64_hi(u);
      k = (hu >> 20u) - 1023;
    }
    hu &= 0x000fffff;
    if (hu < 0x6a09e) {
      u = gb_f64_set_hi(u, hu | 0x3ff00000);
    } else {
      k += 1;
      u = gb_f64_set_hi(u, hu | 0x3fe00000);
      hu = (0x00100000 - hu) >> 2u;
    }
    f = u - 1.0;
  }
  let hfsq = 0.5 * f * f;
  let dk = f64(k);
  if (hu == 0) {  // |f| < 2^-20
    if (f == 0.0) {
      if (k == 0) {
        return 0.0;
      }
      return gb_f64_keep(dk * gb_f64_ln2_hi) + gb_f64_keep(c + dk * gb_f64_ln2_lo);
    }
    let r = hfsq * (1.0 - 0.66666666666666666 * f);
    if (k == 0) {
      return f - r;
    }
    let low = gb_f64_keep(r - gb_f64_keep(dk * gb_f64_ln2_lo + c));
    return dk * gb_f64_ln2_hi - gb_f64_keep(low - f);
  }
  let s = f / (2.0 + f);
  let r = gb_f64_log_r(s * s);
  let sr = gb_f64_keep(s * (hfsq + r));
  if (k == 0) {
    return f - gb_f64_keep(hfsq - sr);
  }
  let low = gb_f64_keep(sr + gb_f64_keep(dk * gb_f64_ln2_lo + c));
  return dk * gb_f64_ln2_hi - gb_f64_keep(gb_f64_keep(hfsq - low) - f);
}

// ---- pow -----------------------------------------------------------------

// 1 when y is an odd integer, 2 when an even one, 0 otherwise (y finite,
// non-zero; words iy = |y|'s high word, ly the low one).
fn gb_f64_integer_kind(iy: i32, ly: u32) -> i32 {
  if (iy >= 0x43400000) {  // |y| >= 2^53
    return 2;
  }
  if (iy < 0x3ff00000) {
    return 0;
  }
  let e = (iy >> 20u) - 0x3ff;
  if (e > 20) {
    let j = ly >> u32(52 - e);
    return select(0, 2 - i32(j & 1u), (j << u32(52 - e)) == ly);
  }
  if (ly != 0u) {
    return 0;
  }
  let j = iy >> u32(20 - e);
  return select(0, 2 - (j & 1), (j << u32(20 - e)) == iy);
}

// log2(ax) as head + tail (the head with 29 trailing zero bits) for finite
// ax > 0: e_pow.c's extended log2, from s = (ax - bp) / (ax + bp) with bp
// 1 or 1.5.
fn gb_f64_log2_ext(ax_in: f64) -> vec2<f64> {
  var ax = ax_in;
  var ix = gb_f64_hi(ax);
  var n = 0;
  if (ix < 0x00100000) {  // subnormal
    ax = ax * 9007199254740992.0;  // 2^53
    n = -53;
    ix = gb_f64_hi(ax);
  }
  n += (ix >> 20u) - 0x3ff;
  let j = ix & 0x000fffff;
  ix = j | 0x3ff00000;
  var k = 0;
  if (j > 0x3988e && j < 0xbb67a) {  // sqrt(3/2) <= |x| < sqrt(3)
    k = 1;
  } else if (j >= 0xbb67a) {
    n += 1;
    ix -= 0x00100000;
  }
  ax = gb_f64_set_hi(ax, ix);
  let bp: f64 = select(1.0lf, 1.5lf, k == 1);
  let dp_h: f64 = select(0.0lf, 5.84962487220764160156e-01lf, k == 1);
  let dp_l: f64 = select(0.0lf, 1.35003920212974897128e-08lf, k == 1);

  // ss = s_h + s_l = (x - bp) / (x + bp)
  let u = gb_f64_keep(ax - bp);
  let v = 1.0 / (ax + bp);
  let ss = u * v;
  let s_h = gb_f64_clear_lo(ss);
  let t_h = gb_f64_from_words(((ix >> 1u) | 0x20000000) + 0x00080000 + (k << 18u), 0u);
  let t_l = ax - gb_f64_keep(t_h - bp);
  let s_l = v * (gb_f64_keep(u - s_h * t_h) - s_h * t_l);

  // log(ax) / (2/3 ln2 ...) as u + v = ss * (3 + ...)
  var s2 = ss * ss;
  var r = s2 * s2 * (5.99999999999994648725e-01 + s2 * (4.28571428578550184252e-01
    + s2 * (3.33333329818377432918e-01 + s2 * (2.72728123808534006489e-01
    + s2 * (2.30660745775561754067e-01 + s2 * 2.06975017800338417784e-01)))));
  r = gb_f64_keep(r + s_l * (s_h + ss));
  s2 = s_h * s_h;
  let t3_h = gb_f64_clear_lo(3.0 + s2 + r);
  let t3_l = r - gb_f64_keep(gb_f64_keep(t3_h - 3.0) - s2);
  let pu = s_h * t3_h;
  let pv = gb_f64_keep(s_l * t3_h + t3_l * ss);
  let p_h = gb_f64_clear_lo(pu + pv);
  let p_l = pv - gb_f64_keep(p_h - pu);

  // times 2 / (3 ln2) = cp_h + cp_l, plus n and log2(bp)
  let z_h = 9.61796700954437255859e-01 * p_h;
  let z_l = gb_f64_keep(-7.02846165095275826516e-09 * p_h + p_l * 9.61796693925975554329e-01
    + dp_l);
  let t = f64(n);
  let t1 = gb_f64_clear_lo(((z_h + z_l) + dp_h) + t);
  let t2 = z_l - gb_f64_keep(gb_f64_keep(gb_f64_keep(t1 - t) - dp_h) - z_h);
  return vec2<f64>(t1, t2);
}

// log2(ax) as head + tail for |1 - ax| <= 2^-20 (where pow does not over-
// or underflow at |y| > 2^31): the series of log(1 + t) to t^4.
fn gb_f64_log2_near1(ax: f64) -> vec2<f64> {
  let t = ax - 1.0;
  let w = (t * t) * (0.5 - t * (0.3333333333333333333333 - t * 0.25));
  // t has up to 33 significant bits and the head of 1/ln2 24: u is rounded,
  // and its error (which e_pow.c drops, costing up to ~600 ulp at large
  // |y|) goes into the tail.
  let ivln2_h: f64 = 1.44269502162933349609e+00;
  let u = ivln2_h * t;
  let v = gb_f64_keep(t * 1.92596299112661746887e-08 - w * 1.44269504088896338700e+00
    + gb_f64_mul_err(ivln2_h, t, u));
  let t1 = gb_f64_clear_lo(u + v);
  return vec2<f64>(t1, v - gb_f64_keep(t1 - u));
}

// 2^(p_h + p_l) with |p_h + p_l| < 1075 (e_pow.c's last part).
fn gb_f64_exp2_ext(p_h_in: f64, p_l: f64) -> f64 {
  var p_h = p_h_in;
  let z = p_l + p_h;
  let j = gb_f64_hi(z);
  let i = j & 0x7fffffff;
  var k = (i >> 20u) - 0x3ff;
  var n = 0;
  if (i > 0x3fe00000) {  // |z| > 0.5: take out n = [z + 0.5]
    n = j + (0x00100000 >> u32(k + 1));
    k = ((n & 0x7fffffff) >> 20u) - 0x3ff;
    let t = gb_f64_from_words(n & ~(0x000fffff >> u32(k)), 0u);
    n = ((n & 0x000fffff) | 0x00100000) >> u32(20 - k);
    if (j < 0) {
      n = -n;
    }
    p_h = gb_f64_keep(p_h - t);
  }
  let t = gb_f64_clear_lo(p_l + p_h);
  let u = t * 6.93147182464599609375e-01;  // ln2 head
  let v = gb_f64_keep((p_l - gb_f64_keep(t - p_h)) * 6.93147180559945286227e-01
    + t * -1.90465429995776804525e-09);
  let zz = gb_f64_keep(u + v);
  let w = v - gb_f64_keep(zz - u);
  let tt = zz * zz;
  let t1 = zz - tt * (1.66666666666666019037e-01 + tt * (-2.77777777770155933842e-03
    + tt * (6.61375632143793436117e-05 + tt * (-1.65339022054652515390e-06
    + tt * 4.13813679705723846039e-08))));
  let r = gb_f64_keep((zz * t1) / (t1 - 2.0) - gb_f64_keep(w + zz * w));
  let e = 1.0 - gb_f64_keep(r - zz);
  let je = gb_f64_hi(e) + (n << 20u);
  if ((je >> 20u) <= 0) {  // subnormal result
    return gb_f64_scale(e, n);
  }
  return gb_f64_set_hi(e, je);
}

// pow(x, y): fdlibm's e_pow.c, with C99's special cases.
fn gb_pow_f64(x: f64, y: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let lx = gb_f64_lo(x);
  let hy = gb_f64_hi(y);
  let ly = gb_f64_lo(y);
  let ix = hx & 0x7fffffff;
  let iy = hy & 0x7fffffff;
  if ((iy | bitcast<i32>(ly)) == 0) {  // x^0 = 1, even for NaN x
    return 1.0;
  }
  if (hx == 0x3ff00000 && lx == 0u) {  // 1^y = 1, even for NaN y
    return 1.0;
  }
  if (ix > 0x7ff00000 || (ix == 0x7ff00000 && lx != 0u)
      || iy > 0x7ff00000 || (iy == 0x7ff00000 && ly != 0u)) {
    return gb_f64_nan();
  }
  var yisint = 0;
  if (hx < 0) {
    yisint = gb_f64_integer_kind(iy, ly);
  }
  if (ly == 0u) {
    if (iy == 0x7ff00000) {  // y = +-inf
      if (((ix - 0x3ff00000) | bitcast<i32>(lx)) == 0) {  // (-1)^+-inf = 1
        return 1.0;
      }
      if (ix >= 0x3ff00000) {  // |x| > 1
        return select(0.0, y, hy >= 0);
      }
      return select(0.0, -y, hy < 0);
    }
    if (iy == 0x3ff00000) {
      return select(x, 1.0 / x, hy < 0);
    }
    if (hy == 0x40000000) {
      return x * x;
    }
    if (hy == 0x3fe00000 && hx >= 0) {
      return sqrt(x);
    }
  }
  let ax = abs(x);
  if (lx == 0u && (ix == 0x7ff00000 || ix == 0 || ix == 0x3ff00000)) {  // +-0, +-inf, -1
    var z = select(ax, 1.0 / ax, hy < 0);
    if (hx < 0) {
      if (((ix - 0x3ff00000) | yisint) == 0) {
        return gb_f64_nan();  // (-1)^non-integer
      }
      if (yisint == 1) {
        z = -z;
      }
    }
    return z;
  }
  if (hx < 0 && yisint == 0) {  // negative ^ non-integer
    return gb_f64_nan();
  }
  let negative = hx < 0 && yisint == 1;

  var l: vec2<f64>;
  if (iy > 0x41e00000) {  // |y| > 2^31
    if (iy > 0x43f00000) {  // |y| > 2^64: overflow or underflow unless x is 1
      if (ix <= 0x3fefffff) {
        return select(0.0, gb_f64_inf(), hy < 0);
      }
      return select(0.0, gb_f64_inf(), hy > 0);
    }
    if (ix < 0x3fefffff) {
      return gb_f64_signed(select(0.0, gb_f64_inf(), hy < 0), negative);
    }
    if (ix > 0x3ff00000) {
      return gb_f64_signed(select(0.0, gb_f64_inf(), hy > 0), negative);
    }
    l = gb_f64_log2_near1(ax);
  } else {
    l = gb_f64_log2_ext(ax);
  }

  // y * log2|x| = p_h + p_l, y split into a 21-bit head and a tail.
  let y1 = gb_f64_clear_lo(y);
  let p_l = gb_f64_keep((y - y1) * l.x + y * l.y);
  let p_h = y1 * l.x;
  let z = gb_f64_keep(p_l + p_h);
  let j = gb_f64_hi(z);
  let i = bitcast<i32>(gb_f64_lo(z));
  if (j >= 0x40900000) {  // z >= 1024
    if (((j - 0x40900000) | i) != 0 || p_l + 8.0085662595372944372e-17 > z - p_h) {
      return gb_f64_signed(gb_f64_inf(), negative);
    }
  } else if ((j & 0x7fffffff) >= 0x4090cc00) {  // z <= -1075
    if (((j - bitcast<i32>(0xc090cc00u)) | i) != 0 || p_l <= z - p_h) {
      return gb_f64_signed(0.0, negative);
    }
  }
  let m = gb_f64_exp2_ext(p_h, p_l);
  return select(m, -m, negative);
}

// ---- sin, cos, tan -------------------------------------------------------

// x = n pi/2 + hi + lo with |hi + lo| <= pi/4 (about).
struct gb_f64_reduced {
  n: i32,
  hi: f64,
  lo: f64,
}

// The first 1216 bits of 2/pi after the binary point (fdlibm's ipio2) in
// 64-bit words, behind one zero word: the table holds (2/pi) 2^-64, so the
// window of an exponent down to -62 starts inside it.
const gb_f64_two_over_pi = array<u64, 20>(
  0x0000000000000000lu, 0xa2f9836e4e441529lu, 0xfc2757d1f534ddc0lu,
  0xdb6295993c439041lu, 0xfe5163abdebbc561lu, 0xb7246e3a424dd2e0lu,
  0x06492eea09d1921clu, 0xfe1deb1cb129a73elu, 0xe88235f52ebb4484lu,
  0xe99c7026b45f7e41lu, 0x3991d639835339f4lu, 0x9c845f8bbdf9283blu,
  0x1ff897ffde05980flu, 0xef2f118b5a0a6d1flu, 0x6d367ecf27cb09b7lu,
  0x4f463f669e5fea2dlu, 0x7527bac7ebe5f17blu, 0x3d0739f78a5292ealu,
  0x6bfb5fb11f8d5d08lu, 0x56033046fc7b6bablu);

// The 64 bits of the table after bit p + 64 k.
fn gb_f64_two_over_pi_bits(p: u32, k: u32) -> u64 {
  let i = (p >> 6u) + k;
  let s = p & 63u;
  let a = gb_f64_two_over_pi[i];
  let b = gb_f64_two_over_pi[i + 1u];
  return select((a << s) | (b >> (64u - s)), a, s == 0u);
}

// a * b as (high word, low word).
fn gb_f64_mul_wide(a: u64, b: u64) -> vec2<u64> {
  let m = 0xfffffffflu;
  let a0 = a & m;
  let a1 = a >> 32u;
  let b0 = b & m;
  let b1 = b >> 32u;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = ((a0 * b0) >> 32u) + (p01 & m) + (p10 & m);
  return vec2<u64>(a1 * b1 + (p01 >> 32u) + (p10 >> 32u) + (mid >> 32u), a * b);
}

// Payne-Hanek reduction for finite |x| >= 2^20 pi/2, in integer arithmetic.
// With x = m 2^e (m the 53-bit significand), x 2/pi mod 4 only depends on
// the bits of 2/pi from position e - 1 on (earlier ones contribute
// multiples of 4): m times the 192 bits taken there is a 245-bit integer
// whose bits 191..190 are the quadrant and whose 190 lower bits are the
// fraction (in units of pi/2). The bits left out beyond the window move the
// fraction by less than 2^-137.
fn gb_f64_rem_pio2_large(x: f64) -> gb_f64_reduced {
  let u = bitcast<u64>(x);
  let m = (u & 0x000ffffffffffffflu) | 0x0010000000000000lu;
  let p = u32(i32((u >> 52u) & 0x7fflu) - 1075 + 62);
  let w0 = gb_f64_two_over_pi_bits(p, 0u);
  let w1 = gb_f64_two_over_pi_bits(p, 1u);
  let w2 = gb_f64_two_over_pi_bits(p, 2u);
  let t2 = gb_f64_mul_wide(m, w2);
  let t1 = gb_f64_mul_wide(m, w1);
  let limb0 = t2.y;
  let limb1 = t1.y + t2.x;
  let limb2 = m * w0 + t1.x + select(0lu, 1lu, limb1 < t1.y);  // bits 128..191
  var q = u32(limb2 >> 62u);
  var f2 = (limb2 << 2u) | (limb1 >> 62u);  // fraction, 2^-64 units
  var f1 = (limb1 << 2u) | (limb0 >> 62u);  // 2^-128 units
  var f0 = limb0 << 2u;                      // 2^-192 units
  let upper = (f2 >> 63u) != 0lu;
  if (upper) {  // fraction >= 1/2: next quadrant, magnitude 1 - fraction
    q += 1u;
    f0 = ~f0 + 1lu;
    let c0 = f0 == 0lu;
    f1 = ~f1 + select(0lu, 1lu, c0);
    f2 = ~f2 + select(0lu, 1lu, c0 && f1 == 0lu);
  }
  // The magnitude as a double-double, from 32-bit pieces (each exact).
  let mask = 0xfffffffflu;
  var s = vec2<f64>(f64(f2 >> 32u) * 0x1p-32, 0.0);
  var e: f64 = 0.0;
  s = gb_f64_two_sum(s.x, f64(f2 & mask) * 0x1p-64);
  e += s.y;
  s = gb_f64_two_sum(s.x, f64(f1 >> 32u) * 0x1p-96);
  e += s.y;
  s = gb_f64_two_sum(s.x, f64(f1 & mask) * 0x1p-128);
  e += s.y;
  e += f64(f0 >> 32u) * 0x1p-160;
  let h = gb_f64_keep(s.x + e);
  let l = e - gb_f64_keep(h - s.x);
  // times pi/2 = 0x1.921fb54442d18p0 + 0x1.1a62633145c07p-54
  let pio2_hi: f64 = 1.5707963267948966;
  let r = h * pio2_hi;
  let re = gb_f64_keep(gb_f64_mul_err(h, pio2_hi, r)
    + gb_f64_keep(h * 6.123233995736766e-17 + l * pio2_hi));
  let y0 = gb_f64_keep(r + re);
  let y1 = re - gb_f64_keep(y0 - r);
  let flip = upper != (x < 0.0);
  let n = select(i32(q & 3u), -i32(q & 3u), x < 0.0);
  return gb_f64_reduced(n, select(y0, -y0, flip), select(y1, -y1, flip));
}

// Cody-Waite reduction for pi/4 < |x| < 2^20 pi/2: e_rem_pio2.c's medium
// case, pi/2 in three parts of 33 bits, each product by n exact.
fn gb_f64_rem_pio2_medium(x: f64) -> gb_f64_reduced {
  let fn_ = round(x * 6.36619772367581382433e-01);
  let j = (gb_f64_hi(x) >> 20u) & 0x7ff;
  var r = gb_f64_keep(x - fn_ * 1.57079632673412561417e+00);
  var w = fn_ * 6.07710050650619224932e-11;
  var y0 = gb_f64_keep(r - w);
  if (j - ((gb_f64_hi(y0) >> 20u) & 0x7ff) > 16) {  // cancellation: second part
    var t = r;
    w = fn_ * 6.07710050630396597660e-11;
    r = gb_f64_keep(t - w);
    w = gb_f64_keep(fn_ * 2.02226624879595063154e-21 - gb_f64_keep(gb_f64_keep(t - r) - w));
    y0 = gb_f64_keep(r - w);
    if (j - ((gb_f64_hi(y0) >> 20u) & 0x7ff) > 49) {  // third part
      t = r;
      w = fn_ * 2.02226624871116645580e-21;
      r = gb_f64_keep(t - w);
      w = gb_f64_keep(fn_ * 8.47842766036889956997e-32 - gb_f64_keep(gb_f64_keep(t - r) - w));
      y0 = gb_f64_keep(r - w);
    }
  }
  return gb_f64_reduced(i32(fn_), y0, gb_f64_keep(r - y0) - w);
}

// x mod pi/2 for finite |x| > pi/4.
fn gb_f64_rem_pio2(x: f64) -> gb_f64_reduced {
  if ((gb_f64_hi(x) & 0x7fffffff) < 0x413921fb) {
    return gb_f64_rem_pio2_medium(x);
  }
  return gb_f64_rem_pio2_large(x);
}

// sin(x + y) on [-pi/4, pi/4]: fdlibm's k_sin.c.
fn gb_f64_kernel_sin(x: f64, y: f64) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04
    + z * 2.75573137070700676789e-06) + z * w * (-2.50507602534068634195e-08
    + z * 1.58969099521155010221e-10);
  let v = z * x;
  let tail = gb_f64_keep(gb_f64_keep(z * (0.5 * y - v * r) - y) - v * -1.66666666666666324348e-01);
  return x - tail;
}

// cos(x + y) on [-pi/4, pi/4]: fdlibm's k_cos.c.
fn gb_f64_kernel_cos(x: f64, y: f64) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03
    + z * 2.48015872894767294178e-05)) + w * w * (-2.75573143513906633035e-07
    + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11));
  let hz = 0.5 * z;
  let v = gb_f64_keep(1.0 - hz);
  let tail = gb_f64_keep(gb_f64_keep(1.0 - v) - hz) + gb_f64_keep(z * r - x * y);
  return v + tail;
}

// tan(x + y) (odd = false) or -1/tan(x + y) (odd = true) on [-pi/4, pi/4]:
// fdlibm's k_tan.c.
fn gb_f64_kernel_tan(x_in: f64, y_in: f64, odd: bool) -> f64 {
  var x = x_in;
  var y = y_in;
  let hx = gb_f64_hi(x);
  let big = (hx & 0x7fffffff) >= 0x3fe59428;  // |x| >= 0.6744
  if (big) {  // tan|x| = tan(pi/4 - x') with x' = pi/4 - |x| small
    if (hx < 0) {
      x = -x;
      y = -y;
    }
    x = gb_f64_keep(gb_f64_keep(7.85398163397448278999e-01 - x)
      + gb_f64_keep(3.06161699786838301793e-17 - y));
    y = 0.0;
  }
  let z = x * x;
  let w = z * z;
  var r = 1.33333333333201242699e-01 + w * (2.18694882948595424599e-02
    + w * (3.59207910759131235356e-03 + w * (5.88041240820264096874e-04
    + w * (7.81794442939557092300e-05 + w * -1.85586374855275456654e-05))));
  let v = z * (5.39682539762260521377e-02 + w * (8.86323982359930005737e-03
    + w * (1.45620945432529025516e-03 + w * (2.46463134818469906812e-04
    + w * (7.14072491382608190305e-05 + w * 2.59073051863633712884e-05)))));
  let s = z * x;
  r = gb_f64_keep(gb_f64_keep(y + z * (s * (r + v) + y)) + 3.33333333333334091986e-01 * s);
  let t = gb_f64_keep(x + r);
  if (big) {
    let iy: f64 = select(1.0lf, -1.0lf, odd);
    let m = iy - 2.0 * (x - gb_f64_keep(t * t / (t + iy) - r));
    return select(m, -m, hx < 0);
  }
  if (!odd) {
    return t;
  }
  // -1/t with a correction: t = th + tv exactly, a = -1/t.
  let th = gb_f64_clear_lo(t);
  let tv = r - gb_f64_keep(th - x);
  let a = -1.0 / t;
  let ah = gb_f64_clear_lo(a);
  let e = gb_f64_keep(1.0 + ah * th);
  return ah + a * (e + ah * tv);
}

// sin(x).
fn gb_sin_f64(x: f64) -> f64 {
  let ix = gb_f64_hi(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {  // |x| <= pi/4
    if (ix < 0x3e500000) {  // |x| < 2^-26: sin(x) rounds to x (keeps -0)
      return x;
    }
    return gb_f64_kernel_sin(x, 0.0);
  }
  if (ix >= 0x7ff00000) {
    return gb_f64_nan();
  }
  let r = gb_f64_rem_pio2(x);
  switch (r.n & 3) {
    case 0: { return gb_f64_kernel_sin(r.hi, r.lo); }
    case 1: { return gb_f64_kernel_cos(r.hi, r.lo); }
    case 2: { return -gb_f64_kernel_sin(r.hi, r.lo); }
    default: { return -gb_f64_kernel_cos(r.hi, r.lo); }
  }
}

// cos(x).
fn gb_cos_f64(x: f64) -> f64 {
  let ix = gb_f64_hi(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {
    if (ix < 0x3e46a09e) {  // |x| < 2^-27 sqrt(2): cos(x) rounds to 1
      return 1.0;
    }
    return gb_f64_kernel_cos(x, 0.0);
  }
  if (ix >= 0x7ff00000) {
    return gb_f64_nan();
  }
  let r = gb_f64_rem_pio2(x);
  switch (r.n & 3) {
    case 0: { return gb_f64_kernel_cos(r.hi, r.lo); }
    case 1: { return -gb_f64_kernel_sin(r.hi, r.lo); }
    case 2: { return -gb_f64_kernel_cos(r.hi, r.lo); }
    default: { return gb_f64_kernel_sin(r.hi, r.lo); }
  }
}

// tan(x).
fn gb_tan_f64(x: f64) -> f64 {
  let ix = gb_f64_hi(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {
    if (ix < 0x3e400000) {  // |x| < 2^-27: tan(x) rounds to x (keeps -0)
      return x;
    }
    return gb_f64_kernel_tan(x, 0.0, false);
  }
  if (ix >= 0x7ff00000) {
    return gb_f64_nan();
  }
  let r = gb_f64_rem_pio2(x);
  return gb_f64_kernel_tan(r.hi, r.lo, (r.n & 1) != 0);
}

// ---- tanh ----------------------------------------------------------------

// tanh(x): Cephes' rational below 0.625, 1 - 2 / (expm1(2|x|) + 2) up to
// 22, +-1 beyond.
fn gb_tanh_f64(x: f64) -> f64 {
  let hx = gb_f64_hi(x);
  let ix = hx & 0x7fffffff;
  if (ix >= 0x7ff00000) {
    if ((bitcast<u64>(x) & 0x000ffffffffffffflu) != 0lu) {
      return x;
    }
    return select(1.0lf, -1.0lf, hx < 0);
  }
  if (ix < 0x3e300000) {  // |x| < 2^-28: tanh(x) rounds to x (keeps -0)
    return x;
  }
  let ax = abs(x);
  var t: f64 = 1.0;
  if (ax < 0.625) {
    let s = ax * ax;
    let p = (-9.64399179425052238628e-1 * s - 9.92877231001918586564e1) * s
      - 1.61468768441708447952e3;
    let q = ((s + 1.12811678491632931402e2) * s + 2.23548839060100448583e3) * s
      + 4.84406305325125486048e3;
    t = ax + ax * s * (p / q);
  } else if (ix < 0x40360000) {  // |x| < 22
    t = 1.0 - 2.0 / (gb_expm1_f64(2.0 * ax) + 2.0);
  }
  return select(t, -t, hx < 0);
}

// ---- atan2 ---------------------------------------------------------------

// atan(x) for finite x: fdlibm's s_atan.c.
fn gb_f64_atan(x_in: f64) -> f64 {
  var x = x_in;
  let hx = gb_f64_hi(x);
  let ix = hx & 0x7fffffff;
  if (ix >= 0x44100000) {  // |x| >= 2^66
    let h: f64 = 1.57079632679489655800e+00 + 6.12323399573676603587e-17;
    return select(h, -h, hx < 0);
  }
  var id = -1;
  if (ix < 0x3fdc0000) {  // |x| < 0.4375
    if (ix < 0x3e200000) {  // |x| < 2^-29
      return x;
    }
  } else {
    x = abs(x);
    if (ix < 0x3fe60000) {  // 7/16 <= |x| < 11/16
      id = 0;
      x = (2.0 * x - 1.0) / (2.0 + x);
    } else if (ix < 0x3ff30000) {  // 11/16 <= |x| < 19/16
      id = 1;
      x = (x - 1.0) / (x + 1.0);
    } else if (ix < 0x40038000) {  // 19/16 <= |x| < 39/16
      id = 2;
      x = (x - 1.5) / (1.0 + 1.5 * x);
    } else {
      id = 3;
      x = -1.0 / x;
    }
  }
  let z = x * x;
  let w = z * z;
  let s1 = z * (3.33333333333329318027e-01 + w * (1.42857142725034663711e-01
    + w * (9.09088713343650656196e-02 + w * (6.66107313738753120669e-02
    + w * (4.97687799461593236017e-02 + w * 1.62858201153657823623e-02)))));
  let s2 = w * (-1.99999999998764832476e-01 + w * (-1.11111104054623557880e-01
    + w * (-7.69187620504482999495e-02 + w * (-5.83357013379057348645e-02
    + w * -3.65315727442169155270e-02))));
  if (id < 0) {
    return x - x * (s1 + s2);
  }
  var hi: f64 = 1.57079632679489655800e+00;  // atan(inf)
  var lo: f64 = 6.12323399573676603587e-17;
  if (id == 0) {  // atan(0.5)
    hi = 4.63647609000806093515e-01;
    lo = 2.26987774529616870924e-17;
  } else if (id == 1) {  // atan(1)
    hi = 7.85398163397448278999e-01;
    lo = 3.06161699786838301793e-17;
  } else if (id == 2) {  // atan(1.5)
    hi = 9.82793723247329054082e-01;
    lo = 1.39033110312309984516e-17;
  }
  let m = hi - gb_f64_keep(gb_f64_keep(x * (s1 + s2) - lo) - x);
  return select(m, -m, hx < 0);
}

// atan2(y, x): fdlibm's e_atan2.c, C's rules for zeros and infinities.
fn gb_atan2_f64(y: f64, x: f64) -> f64 {
  let ux = bitcast<u64>(x) & 0x7ffffffffffffffflu;
  let uy = bitcast<u64>(y) & 0x7ffffffffffffffflu;
  if (ux > 0x7ff0000000000000lu || uy > 0x7ff0000000000000lu) {
    return gb_f64_nan();
  }
  let pi: f64 = 3.1415926535897931160e+00;
  let pi_lo: f64 = 1.2246467991473531772e-16;
  let pi_o_2: f64 = 1.5707963267948965580e+00;
  let pi_o_4: f64 = 7.8539816339744827900e-01;
  let y_neg = gb_f64_hi(y) < 0;
  let x_neg = gb_f64_hi(x) < 0;
  if (uy == 0lu) {  // atan2(+-0, +x) = +-0, atan2(+-0, -x) = +-pi
    return select(y, select(pi, -pi, y_neg), x_neg);
  }
  if (ux == 0lu) {
    return select(pi_o_2, -pi_o_2, y_neg);
  }
  let inf = 0x7ff0000000000000lu;
  if (ux == inf) {
    var m: f64;
    if (uy == inf) {
      m = select(pi_o_4, 3.0 * pi_o_4, x_neg);
    } else {
      m = select(0.0, pi, x_neg);
    }
    return select(m, -m, y_neg);
  }
  if (uy == inf) {
    return select(pi_o_2, -pi_o_2, y_neg);
  }
  let k = ((gb_f64_hi(y) & 0x7fffffff) - (gb_f64_hi(x) & 0x7fffffff)) >> 20u;  // about log2|y/x|
  var z: f64;
  if (k > 60) {  // |y/x| > 2^60
    z = pi_o_2 + 0.5 * pi_lo;
  } else if (x_neg && k < -60) {  // |y/x| < 2^-60, x < 0
    z = 0.0;
  } else {
    z = gb_f64_atan(abs(y / x));
  }
  if (!x_neg || k > 60) {
    return select(z, -z, y_neg);
  }
  let m = pi - gb_f64_keep(z - pi_lo);
  return select(m, -m, y_neg);
}
"#;
