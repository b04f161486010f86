//! `rand` and `randn` on the wgpu device: the Philox4x32-10 streams of
//! [`gearbox_core::random`] written in WGSL, one invocation per element.
//!
//! # The streams
//!
//! Element `i` (a `u64`: the start offset plus the invocation's index, with
//! carry) of the stream of `seed` is one Philox block, exactly as the CPU
//! defines it: counter `[lo32(i), hi32(i), stream, 0]`, key `[lo32(seed),
//! hi32(seed)]`, the round multipliers, key increments and stream numbers
//! taken from core's constants when the source is written. The 32 x 32 ->
//! 64-bit products of the rounds are formed from 16-bit halves in `u32`
//! (naga has no `u64` to `u32` narrowing, and the words are then portable
//! to any backend).
//!
//! - **uniform**: `bits53(x0, x1) * 2^-53`, with `bits53(a, b) = a * 2^21 +
//!   (b >> 11)` computed in f64: every step is exact (both terms are
//!   integers below 2^53 with disjoint bits, so the sum is core's xor, and
//!   the scaling is by a power of two), so the values equal
//!   [`gearbox_core::random::uniform_at`] bit for bit on any conforming
//!   device.
//! - **normal**: Box–Muller as the CPU does it, `sqrt(-2 ln u1) * cos(τ u2)`
//!   with `u1 = (bits53(x0, x1) + 1) * 2^-53`, `u2 = bits53(x2, x3) * 2^-53`
//!   and `τ` the f64 nearest 2π. `ln` and `cos` come from
//!   [`crate::wgsl_f64`]'s f64 polyfills (fdlibm's, within 1 ulp), which the
//!   compiler appends: drivers compute WGSL's own `log` and `cos` of an f64
//!   in f32 precision or not at all (SPIR-V's GLSL.std.450 defines them for
//!   32-bit floats only), so they are never called on f64 here; `sqrt` and
//!   the arithmetic are WGSL's, correctly rounded. The values agree with
//!   [`gearbox_core::random::normal_at`] to a few units in the last place,
//!   not bit for bit (the CPU's `ln` and `cos` are libm's; nor are two
//!   adapters' bits always the same, as a driver may fuse a multiply and an
//!   add inside the polyfills).
//!
//! # Rules
//!
//! Random arrays are f64 only (as on the CPU) and need f64 and i64 shaders
//! ([`crate::device::has_64_bit`]); arrays of 2^31 elements or more are
//! declined (the kernels index in `u32`). Declining is an error of kind
//! `Compile` (the runtime reruns the call on the CPU), never a panic.

use gearbox_core::random::{PHILOX_M4X32, PHILOX_W32, STREAM_NORMAL, STREAM_UNIFORM};
use gearbox_core::{DType, Result};

use super::Modules;
use super::{declined, workgroups, WORKGROUP};
use crate::buffer::WgpuBuf;
use crate::device::{has_64_bit, Device};

/// Philox4x32-10 and the stream layout, in WGSL (core's constants spliced
/// in by [`philox`]).
const PHILOX: &str = "
struct Random {
  // seed lo, seed hi, start lo, start hi
  key: vec4<u32>,
  // n, -, -, -
  size: vec4<u32>,
}

@group(0) @binding(0) var<storage, read_write> gb_out: array<f64>;
@group(0) @binding(1) var<uniform> gb_rng: Random;

// The 64-bit product of a and b as (high, low) words, from 16-bit halves:
// mid <= 3 (2^16 - 1) + (2^16 - 1)^2 = 2^32 - 1 never wraps.
fn gb_mulhilo(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p10 = a1 * b0;
  let mid = ((a0 * b0) >> 16u) + (p10 & 0xffffu) + a0 * b1;
  return vec2<u32>(a1 * b1 + (p10 >> 16u) + (mid >> 16u), a * b);
}

fn gb_philox_round(x: vec4<u32>, k: vec2<u32>) -> vec4<u32> {
  let p0 = gb_mulhilo(GB_M0, x.x);
  let p1 = gb_mulhilo(GB_M1, x.z);
  return vec4<u32>(p1.x ^ x.y ^ k.x, p1.y, p0.x ^ x.w ^ k.y, p0.y);
}

// Ten rounds, the key bumped (wrapping) before each round after the first.
fn gb_philox4x32_10(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var x = gb_philox_round(counter, key);
  var k = key;
  for (var r = 1u; r < 10u; r++) {
    k = k + vec2<u32>(GB_W0, GB_W1);
    x = gb_philox_round(x, k);
  }
  return x;
}

// The block of element start + i of `stream` (a 64-bit index, with carry).
fn gb_block(i: u32, stream: u32) -> vec4<u32> {
  let lo = gb_rng.key.z + i;
  let hi = gb_rng.key.w + select(0u, 1u, lo < i);
  return gb_philox4x32_10(vec4<u32>(lo, hi, stream, 0u), gb_rng.key.xy);
}

// (a << 21) ^ (b >> 11) as an f64, exactly: the terms' bits are disjoint.
fn gb_bits53(a: u32, b: u32) -> f64 {
  return f64(a) * 2097152.0lf + f64(b >> 11u);
}

// 2^-53, exactly.
fn gb_ulp53() -> f64 {
  return 1.1102230246251565e-16lf;
}
";

/// The uniform stream's entry point.
const UNIFORM: &str = "
@compute @workgroup_size(256)
fn gb_rand_uniform(@builtin(global_invocation_id) gid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = gb_rng.size.x;
  for (var i = gid.x; i < n; i += nwg.x * 256u) {
    let x = gb_block(i, GB_STREAM_UNIFORM);
    gb_out[i] = gb_bits53(x.x, x.y) * gb_ulp53();
  }
}
";

/// The normal stream's entry point: Box–Muller from one block, with the
/// f64 polyfills' `ln` and `cos` (`sqrt` is correctly rounded in WGSL, as
/// [`crate::wgsl_f64`] requires of the adapter).
const NORMAL: &str = "
@compute @workgroup_size(256)
fn gb_rand_normal(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = gb_rng.size.x;
  for (var i = gid.x; i < n; i += nwg.x * 256u) {
    let x = gb_block(i, GB_STREAM_NORMAL);
    let u1 = (gb_bits53(x.x, x.y) + 1.0lf) * gb_ulp53();
    let u2 = gb_bits53(x.z, x.w) * gb_ulp53();
    gb_out[i] = sqrt(-2.0lf * gb_log_f64(u1)) * gb_cos_f64(GB_TAU * u2);
  }
}
";

/// [`PHILOX`] with core's constants in place of their names.
fn philox() -> String {
    let hex = |v: u32| format!("0x{v:08x}u");
    PHILOX
        .replace("GB_M0", &hex(PHILOX_M4X32[0]))
        .replace("GB_M1", &hex(PHILOX_M4X32[1]))
        .replace("GB_W0", &hex(PHILOX_W32[0]))
        .replace("GB_W1", &hex(PHILOX_W32[1]))
}

/// The WGSL module of the uniform stream (entry `gb_rand_uniform`).
pub fn uniform_source() -> String {
    philox() + &UNIFORM.replace("GB_STREAM_UNIFORM", &format!("{STREAM_UNIFORM}u"))
}

/// The WGSL module of the normal stream (entry `gb_rand_normal`). It calls
/// `gb_log_f64` and `gb_cos_f64`, which the compiler appends with their
/// helpers ([`crate::wgsl::complete`] adds the items of
/// [`crate::wgsl_f64::PRELUDE_F64`] a module reaches, to every module).
pub fn normal_source() -> String {
    // `{:?}` prints the shortest decimal that reads back as the same f64.
    let normal = NORMAL
        .replace("GB_STREAM_NORMAL", &format!("{STREAM_NORMAL}u"))
        .replace("GB_TAU", &format!("{:?}lf", std::f64::consts::TAU));
    philox() + &normal
}

/// Elements `start .. start + n` of the uniform (or, when `normal`, the
/// standard normal) stream of `seed`, as a new f64 buffer.
pub fn random(
    dev: &Device,
    modules: &Modules,
    (seed, normal): (u64, bool),
    start: u64,
    n: usize,
) -> Result<WgpuBuf> {
    let name = if normal { "randn" } else { "rand" };
    if !has_64_bit(dev.features) {
        return Err(declined(name, "the adapter has no f64 and i64 shaders"));
    }
    if n >= 1 << 31 {
        return Err(declined(
            name,
            format!("{n} elements exceed the 32-bit indices of the random kernels"),
        ));
    }
    let out = dev.alloc(n, DType::F64)?;
    if n == 0 {
        return Ok(out);
    }
    let (key, source, entry): (&str, fn() -> String, &str) = if normal {
        ("random-normal", normal_source, "gb_rand_normal")
    } else {
        ("random-uniform", uniform_source, "gb_rand_uniform")
    };
    let program = modules.get(dev, key, source, &[entry])?;
    let pipeline = program.pipeline(entry)?;
    let words = [
        seed as u32,
        (seed >> 32) as u32,
        start as u32,
        (start >> 32) as u32,
        n as u32,
        0,
        0,
        0,
    ];
    let uniform: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    dev.dispatch(pipeline, 0, &[&out], &uniform, [workgroups(dev, n), 1, 1])?;
    Ok(out)
}

// The kernels' `@workgroup_size(256)` and grid strides are the size
// `workgroups` counts with.
const _: () = assert!(WORKGROUP == 256);

/// Checks the result dtype of a random call: f64, as on the CPU.
pub fn check_dtype(dtype: DType, normal: bool) -> Result<()> {
    if dtype != DType::F64 {
        let name = if normal { "randn" } else { "rand" };
        return Err(declined(
            name,
            format!("random arrays are f64, not {dtype}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_uniform_module_is_valid_wgsl() {
        super::super::validate_wgsl(&uniform_source()).unwrap();
    }

    #[test]
    fn the_normal_module_is_valid_wgsl_with_the_polyfills_it_reaches() {
        let complete = crate::wgsl::complete(&normal_source());
        assert!(complete.contains("fn gb_log_f64") && complete.contains("fn gb_cos_f64"));
        super::super::validate_wgsl(&complete).unwrap();
    }

    #[test]
    fn core_constants_are_spliced_in() {
        let src = uniform_source();
        assert!(!src.contains("GB_"), "{src}");
        let src = normal_source();
        assert!(!src.contains("GB_TAU") && !src.contains("GB_STREAM"));
        assert!(src.contains("6.283185307179586lf"));
        assert!(src.contains("0xd2511f53u") && src.contains("0xbb67ae85u"));
    }

    /// `gb_mulhilo`'s arithmetic in Rust (`u32` wrapping as in WGSL).
    fn mulhilo(a: u32, b: u32) -> (u32, u32) {
        let (a0, a1, b0, b1) = (a & 0xffff, a >> 16, b & 0xffff, b >> 16);
        let p10 = a1 * b0;
        let mid = ((a0 * b0) >> 16) + (p10 & 0xffff) + a0 * b1;
        let hi = (a1 * b1).wrapping_add(p10 >> 16).wrapping_add(mid >> 16);
        (hi, a.wrapping_mul(b))
    }

    #[test]
    fn the_product_from_16_bit_halves_is_the_64_bit_product() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut pairs = vec![
            (u32::MAX, u32::MAX),
            (0, u32::MAX),
            (0xffff, 0x1_0000),
            (1, 1),
        ];
        pairs.extend(PHILOX_M4X32.map(|m| (m, u32::MAX)));
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            pairs.push((state as u32, (state >> 32) as u32));
        }
        for (a, b) in pairs {
            let p = u64::from(a) * u64::from(b);
            assert_eq!(
                mulhilo(a, b),
                ((p >> 32) as u32, p as u32),
                "{a:#x} * {b:#x}"
            );
        }
    }

    #[test]
    fn the_scale_literal_is_2_pow_minus_53() {
        let text = "1.1102230246251565e-16";
        assert_eq!(text.parse::<f64>().unwrap(), (-53f64).exp2());
        assert!(PHILOX.contains(text));
    }
}
