//! Float64 math for WGSL kernels, written in WGSL from operations that are
//! exact or correctly rounded.
//!
//! # Why
//!
//! naga accepts `exp`, `log`, `sin`, ... on `f64`, but lowers them to the
//! SPIR-V GLSL.std.450 instructions, which Vulkan defines for 16- and 32-bit
//! floats only: Mesa's lavapipe returns 1.0 for `exp` of an f64, NVIDIA
//! computes it in float32 precision. [`PRELUDE_F64`] holds the functions the
//! kernel renderer calls instead; its WGSL lives beside this file, one file
//! per family (`wgsl_f64/bits.wgsl`, `exact`, `exp`, `log`, `pow`, `trig`,
//! `tanh`, `atan2`).
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
//! Division and `sqrt` must be correctly rounded (IEEE 754): `tests/gpu_f64_math.rs`
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
//! The test (`tests/gpu_f64_math.rs`) compares every function with Rust's std
//! (the platform's libm) over random and hard inputs and the special values:
//! all within 1 ulp of it, tanh within 2 (glibc's own error), on lavapipe
//! and on an NVIDIA H200.

/// WGSL f64 functions built only from correctly rounded operations (no
/// GLSL.std.450 instruction on f64): `gb_exp_f64`, `gb_expm1_f64`,
/// `gb_log_f64`, `gb_log1p_f64`, `gb_pow_f64`, `gb_sin_f64`, `gb_cos_f64`,
/// `gb_tan_f64`, `gb_tanh_f64` and `gb_atan2_f64` (f64 in, f64 out, C's
/// semantics), with their helpers, all prefixed `gb_f64_`. Needs the
/// SHADER_F64 and SHADER_INT64 features.
pub const PRELUDE_F64: &str = concat!(
    "\n",
    include_str!("wgsl_f64/bits.wgsl"),
    "\n",
    include_str!("wgsl_f64/exact.wgsl"),
    "\n",
    include_str!("wgsl_f64/exp.wgsl"),
    "\n",
    include_str!("wgsl_f64/log.wgsl"),
    "\n",
    include_str!("wgsl_f64/pow.wgsl"),
    "\n",
    include_str!("wgsl_f64/trig.wgsl"),
    "\n",
    include_str!("wgsl_f64/tanh.wgsl"),
    "\n",
    include_str!("wgsl_f64/atan2.wgsl"),
);
