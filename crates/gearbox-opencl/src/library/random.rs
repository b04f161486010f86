//! `rand` and `randn` on the OpenCL device: the Philox4x32-10 streams of
//! [`gearbox_core::random`] in OpenCL C, one work-item per element (a
//! grid-stride loop).
//!
//! # The streams
//!
//! Element `i` (a `ulong`: the start offset plus the element's position)
//! of the stream of `seed` is one Philox block, exactly as the CPU defines
//! it: counter `[lo32(i), hi32(i), stream, 0]`, key `[lo32(seed),
//! hi32(seed)]`, the round multipliers, key increments and stream numbers
//! taken from core's constants when the source is written; the rounds'
//! 32 x 32 -> 64-bit products are `mul_hi` and a wrapping `*` on `uint`.
//!
//! - **uniform**: `bits53(x0, x1) * 2^-53`, where `bits53(a, b) = (a << 21)
//!   ^ (b >> 11)` is a `ulong` below 2^53: converting it to double and
//!   scaling by a power of two are exact, so the values equal
//!   [`gearbox_core::random::uniform_at`] bit for bit on any conforming
//!   device.
//! - **normal**: Box–Muller as the CPU does it, `sqrt(-2 log u1) * cos(τ
//!   u2)` with `u1 = (bits53(x0, x1) + 1) * 2^-53`, `u2 = bits53(x2, x3) *
//!   2^-53` and `τ` the double nearest 2π, with contraction off (the CPU
//!   fuses nothing). `sqrt` and the arithmetic are correctly rounded in
//!   OpenCL C's double; `log` and `cos` are the driver's (OpenCL allows
//!   them 3 and 4 ulps; pocl's and NVIDIA's are within about 1), so the
//!   values agree with [`gearbox_core::random::normal_at`] to a few units
//!   in the last place, not bit for bit.
//!
//! # Rules
//!
//! Random arrays are f64 (as on the CPU) and need `cl_khr_fp64`; anything
//! else is declined (an error of kind `Compile`: the runtime reruns the
//! call on the CPU), never a panic.

use gearbox_core::random::{PHILOX_M4X32, PHILOX_W32, STREAM_NORMAL, STREAM_UNIFORM};
use gearbox_core::runtime::backend::LibraryCall;
use gearbox_core::{DType, Result, Shape};

use super::{declined, global_size, Lib, FP64_PRAGMA, GROUP};
use crate::buffer::ClBuf;
use crate::launch::Arg;

/// Philox4x32-10, the stream layout and the two entry points, in OpenCL C
/// (core's constants spliced in by [`source`]).
const PHILOX: &str = "
#pragma OPENCL FP_CONTRACT OFF

// Ten rounds, the key bumped (wrapping) before each round after the first.
static inline uint4 gb_philox4x32_10(uint4 x, uint2 k) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) { k.x += GB_W0; k.y += GB_W1; }
    uint hi0 = mul_hi(GB_M0, x.x), lo0 = GB_M0 * x.x;
    uint hi1 = mul_hi(GB_M1, x.z), lo1 = GB_M1 * x.z;
    x = (uint4)(hi1 ^ x.y ^ k.x, lo1, hi0 ^ x.w ^ k.y, lo0);
  }
  return x;
}

// The block of element i of `stream` under `seed`.
static inline uint4 gb_block(ulong seed, ulong i, uint stream) {
  return gb_philox4x32_10((uint4)((uint)i, (uint)(i >> 32), stream, 0u),
                          (uint2)((uint)seed, (uint)(seed >> 32)));
}

// (a << 21) ^ (b >> 11), below 2^53.
static inline ulong gb_bits53(uint a, uint b) {
  return ((ulong)a << 21) ^ ((ulong)b >> 11);
}

// 2^-53, exactly.
#define GB_ULP53 1.1102230246251565e-16

__kernel void gb_rand_uniform(__global double* out, long n, ulong seed, ulong start) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    uint4 x = gb_block(seed, start + (ulong)i, GB_STREAM_UNIFORM);
    out[i] = (double)gb_bits53(x.x, x.y) * GB_ULP53;
  }
}

__kernel void gb_rand_normal(__global double* out, long n, ulong seed, ulong start) {
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {
    uint4 x = gb_block(seed, start + (ulong)i, GB_STREAM_NORMAL);
    double u1 = (double)(gb_bits53(x.x, x.y) + 1UL) * GB_ULP53;
    double u2 = (double)gb_bits53(x.z, x.w) * GB_ULP53;
    out[i] = sqrt(-2.0 * log(u1)) * cos(GB_TAU * u2);
  }
}
";

/// The entry points of the random program.
pub const ENTRIES: [&str; 2] = ["gb_rand_uniform", "gb_rand_normal"];

/// The OpenCL C program of both streams, with core's constants in place
/// of their names.
pub fn source() -> String {
    let hex = |v: u32| format!("0x{v:08x}u");
    let body = PHILOX
        .replace("GB_M0", &hex(PHILOX_M4X32[0]))
        .replace("GB_M1", &hex(PHILOX_M4X32[1]))
        .replace("GB_W0", &hex(PHILOX_W32[0]))
        .replace("GB_W1", &hex(PHILOX_W32[1]))
        .replace("GB_STREAM_UNIFORM", &format!("{STREAM_UNIFORM}u"))
        .replace("GB_STREAM_NORMAL", &format!("{STREAM_NORMAL}u"))
        // `{:?}` prints the shortest decimal that reads back as the same f64.
        .replace("GB_TAU", &format!("{:?}", std::f64::consts::TAU));
    format!("{FP64_PRAGMA}{body}")
}

/// The call's name, for errors.
fn name(normal: bool) -> &'static str {
    LibraryCall::Random { seed: 0, normal }.name()
}

/// Checks that a random array of `dtype` fits the device: f64, as on the
/// CPU, with `cl_khr_fp64`.
fn check(lib: &Lib<'_>, normal: bool, dtype: DType) -> Result<()> {
    if dtype != DType::F64 {
        return Err(declined(
            name(normal),
            format!("random arrays are f64, not {dtype}"),
        ));
    }
    if !lib.dev.fp64 {
        return Err(declined(name(normal), "the device has no cl_khr_fp64"));
    }
    Ok(())
}

/// `out.0.numel()` uniform (or, when `normal`, standard normal) values of
/// the Philox stream `seed`, from its start, as a new buffer of dtype
/// `out.1` (f64).
pub fn random(lib: &Lib<'_>, (seed, normal): (u64, bool), out: (&Shape, DType)) -> Result<ClBuf> {
    check(lib, normal, out.1)?;
    stream(lib, (seed, normal), 0, out.0.numel())
}

/// Elements `start .. start + n` of the uniform (or, when `normal`, the
/// standard normal) stream of `seed`, as a new f64 buffer.
pub fn stream(lib: &Lib<'_>, (seed, normal): (u64, bool), start: u64, n: usize) -> Result<ClBuf> {
    check(lib, normal, DType::F64)?;
    let out = lib.dev.alloc(n, DType::F64)?;
    if n == 0 {
        return Ok(out);
    }
    let program = lib.program("random", source, &ENTRIES)?;
    let kernel = program.kernel(ENTRIES[normal as usize])?;
    // The kernels read seed and start as `ulong`: the same bits.
    let args = [
        Arg::Buf(&out),
        Arg::Long(n as i64),
        Arg::Long(seed as i64),
        Arg::Long(start as i64),
    ];
    lib.dev
        .enqueue(&kernel, &args, [global_size(n), 1], [GROUP, 1])?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_constants_are_spliced_in() {
        let src = source();
        assert!(!src.contains("GB_M") && !src.contains("GB_W") && !src.contains("GB_STREAM"));
        assert!(!src.contains("GB_TAU"));
        assert!(src.contains("6.283185307179586"));
        assert!(src.contains("0xd2511f53u") && src.contains("0xbb67ae85u"));
        assert!(src.starts_with("#pragma OPENCL EXTENSION cl_khr_fp64"));
    }

    #[test]
    fn the_scale_literal_is_2_pow_minus_53() {
        let text = "1.1102230246251565e-16";
        assert_eq!(text.parse::<f64>().unwrap(), (-53f64).exp2());
        assert!(PHILOX.contains(text));
    }
}
