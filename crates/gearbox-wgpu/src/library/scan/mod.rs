//! `cumsum` and `cumprod` on the wgpu device, in f32 and f64, for any axis
//! layout: two three-phase scans (fold pieces to totals, carry the totals
//! into prefixes, rescan each piece from its prefix), chosen by how the
//! lanes lie in memory.
//!
//! # Layout and the two paths
//!
//! The array is seen as `(inner, len, outer)` around the scanned axis (the
//! flattening is `(1, n, 1)`), so it has `inner * outer` lanes of `len`
//! values, lane `(i, o)` reading `x[i + inner * (k + len * o)]`.
//!
//! * `inner == 1` (a flattened vector, the first axis of a column-major
//!   array): each lane is a contiguous range. The tiled path ([`tiles`])
//!   has a workgroup load tiles of consecutive values coalesced into
//!   workgroup memory and scan them there, so all traffic is coalesced.
//! * `inner > 1`: the chunked path ([`chunks`]), one invocation per piece
//!   of a lane, adjacent invocations taking adjacent lanes: at each step
//!   they read `inner` adjacent values, coalesced once `inner` fills a
//!   memory transaction, partly below that. (With `inner == 1` the same
//!   layout has adjacent invocations read a whole piece apart: a GPU then
//!   fetches a memory transaction for every value.)
//!
//! The rule: the tiled path where `inner == 1` on a GPU whose workgroup
//! memory holds a tile of 256 values ([`tiles::Tiling::of`]), the chunked
//! path everywhere else. CPU adapters (lavapipe, WARP) take the chunked
//! path for all layouts: they run a workgroup as a loop over batches of
//! invocations, where workgroup memory and barriers cost far more than on
//! a GPU, and coalescing buys nothing (each invocation's own contiguous
//! piece is what a CPU's caches serve best). [`tiles::scan`] runs the tiled
//! path on any adapter (tests).
//!
//! # Accumulation
//!
//! [`Accumulation::Double`] (devices with f64 shaders): every running value
//! is f64, as on the CPU and in CUDA, and rounded to the result dtype when
//! written, so f32 results match the sequential CPU scan to rounding.
//! [`Accumulation::Compensated`] (devices without f64): f32 data only; sums
//! carry a Kahan–Neumaier pair (sum, compensation) through all three phases
//! (partials are pairs, combined with an exact two-sum), products are plain
//! f32. A pair stops compensating once its sum is not finite (the error
//! term of an infinity is NaN).
//! Both paths combine values in another order than the CPU's sequential
//! one (pieces, and trees within tiles), within the same rounding bounds.
//!
//! Products keep the scaled running product of
//! [`gearbox_core::runtime::scan_product`] in either accumulation
//! ([`ACC_PRODUCT_DOUBLE`], [`ACC_PRODUCT_FLOAT`]): a mantissa and an
//! exponent in units of `2^400` (f64) or `2^60` (f32, an `i32` exponent),
//! so no prefix overflows or underflows on the way, zeros, infinities and
//! NaN behave as in a plain product, and a lane scanned one factor after
//! the other has the CPU's bits (f64); grouped pieces are within
//! `scan_product::tolerance`. Products are not compensated: the f32
//! accumulation rounds each one in f32.
//!
//! # Rules
//!
//! Element indices are `u32` in the kernels: arrays of 2^31 elements or more
//! are declined, as are non-float data, a result dtype other than the
//! input's, f64 data without f64 shaders and inputs whose buffer does not
//! match their shape. Declining is an error of kind `Compile` (the runtime
//! reruns the scan on the CPU), never a panic.

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::scan_plan;
pub use gearbox_core::runtime::scan_plan::Accumulation;
use gearbox_core::{DType, Result, Shape};

use super::{declined, Modules};
use crate::buffer::WgpuBuf;
use crate::device::{has_64_bit, Device};

pub mod chunks;
pub mod tiles;

pub use chunks::SERIAL_CARRY_MAX;

/// The sum in f64: `Acc` is the running value.
const ACC_DOUBLE: &str = "
alias Acc = f64;
fn gb_acc_identity(product: bool) -> Acc { return 0.0lf; }
fn gb_acc_of(x: Elem) -> Acc { return f64(x); }
fn gb_acc_join(a: Acc, b: Acc, product: bool) -> Acc { return a + b; }
fn gb_acc_value(a: Acc) -> Elem { return Elem(a); }
";

/// The sum in f32 pairs: `(sum, compensation)`, joined with an exact
/// two-sum (Neumaier).
///
/// Drivers may simplify float arithmetic algebraically (SPIR-V from naga
/// marks nothing `NoContraction`; Mesa's NIR, lavapipe's compiler, then
/// rewrites `a - (a - b)` to `b`), which would cancel the two-sum's error
/// term to 0. So the sum and its rounded part pass through `gb_keep`: an
/// xor with `gb_opaque`, a zero the compiler cannot see (each entry point
/// loads it from its uniform). Non-finite sums are told by their exponent
/// bits, not by a comparison a compiler may assume away.
const ACC_COMPENSATED: &str = "
alias Acc = vec2<f32>;
fn gb_keep(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ gb_opaque); }
fn gb_acc_identity(product: bool) -> Acc { return vec2<f32>(0.0f, 0.0f); }
fn gb_acc_of(x: Elem) -> Acc { return vec2<f32>(x, 0.0f); }
fn gb_acc_join(a: Acc, b: Acc, product: bool) -> Acc {
  let s = gb_keep(a.x + b.x);
  // Not finite (an infinity or NaN): the error term would be NaN.
  if ((bitcast<u32>(s) & 0x7f800000u) == 0x7f800000u) { return vec2<f32>(s, 0.0f); }
  let bb = gb_keep(s - a.x);
  let err = (a.x - (s - bb)) + (b.x - bb);
  return vec2<f32>(s, (a.y + b.y) + err);
}
fn gb_acc_value(a: Acc) -> Elem { return a.x + a.y; }
";

/// The running product in f64 (`scan_product`'s rule): `Acc` is a mantissa
/// and an exponent in units of `S = 2^400`. Non-finite values are told by
/// their exponent bits, and the value's signed infinities and zeros are
/// made from the sign bit, not by a multiplication a compiler may fold
/// (`x * 0.0` to `0.0` loses the sign). `S` and `1/S` are bit patterns
/// (functions: naga does not evaluate `bitcast` in constants).
pub const ACC_PRODUCT_DOUBLE: &str = "
struct Acc { m: f64, e: f64 }
fn gb_s() -> f64 { return bitcast<f64>(0x58f0000000000000lu); }
fn gb_inv() -> f64 { return bitcast<f64>(0x26f0000000000000lu); }
fn gb_rescale(m: f64, e: f64) -> Acc {
  let bits = bitcast<u64>(m);
  if (m == 0.0lf || (bits & 0x7ff0000000000000lu) == 0x7ff0000000000000lu) { return Acc(m, 0.0lf); }
  if (abs(m) > gb_s()) { return Acc(m * gb_inv(), e + 1.0lf); }
  if (abs(m) < gb_inv()) { return Acc(m * gb_s(), e - 1.0lf); }
  return Acc(m, e);
}
fn gb_acc_identity(product: bool) -> Acc { return Acc(1.0lf, 0.0lf); }
fn gb_acc_of(x: Elem) -> Acc {
  let r = gb_rescale(gb_widen(x), 0.0lf);
  return gb_rescale(r.m, r.e);
}
fn gb_acc_join(a: Acc, b: Acc, product: bool) -> Acc { return gb_rescale(a.m * b.m, a.e + b.e); }
// Four units out overflow or underflow whatever m is; within three only
// the last multiplication can round.
fn gb_acc_value(a: Acc) -> Elem {
  let sign = bitcast<u64>(a.m) & 0x8000000000000000lu;
  if (a.e > 3.0lf) { return Elem(bitcast<f64>(sign | 0x7ff0000000000000lu)); }
  if (a.e < -3.0lf) { return Elem(bitcast<f64>(sign)); }
  var x = a.m;
  for (var e = a.e; e > 0.0lf; e -= 1.0lf) { x = x * gb_s(); }
  for (var e = a.e; e < 0.0lf; e += 1.0lf) { x = x * gb_inv(); }
  return Elem(x);
}
";

/// `gb_widen(x)`, which the f64 product accumulator calls (empty for the
/// others, which may run where f64 is absent): an `Elem` as f64, exactly.
/// An f32 subnormal is rebuilt from its bits (integer mantissa times
/// 2^-149, exact in f64), since drivers that flush f32 subnormals
/// (NVIDIA's Vulkan) may flush them in the conversion too.
pub fn widen_source(elem: DType, acc: Accumulation, product: bool) -> &'static str {
    if !product || acc != Accumulation::Double {
        ""
    } else if elem == DType::F64 {
        "fn gb_widen(x: Elem) -> f64 { return x; }\n"
    } else {
        "fn gb_widen(x: Elem) -> f64 {
  let bits = bitcast<u32>(x);
  let mant = bits & 0x007fffffu;
  if ((bits & 0x7f800000u) == 0u && mant != 0u) {
    let m = f64(mant) * bitcast<f64>(0x36a0000000000000lu);
    return select(m, -m, (bits & 0x80000000u) != 0u);
  }
  return f64(x);
}
"
    }
}

/// The running product in f32 (`scan_product`'s rule): a mantissa and an
/// `i32` exponent in units of `S = 2^60`; as [`ACC_PRODUCT_DOUBLE`]
/// otherwise.
pub const ACC_PRODUCT_FLOAT: &str = "
struct Acc { m: f32, e: i32 }
fn gb_s() -> f32 { return bitcast<f32>(0x5d800000u); }
fn gb_inv() -> f32 { return bitcast<f32>(0x21800000u); }
fn gb_rescale(m: f32, e: i32) -> Acc {
  let bits = bitcast<u32>(m);
  if (m == 0.0f || (bits & 0x7f800000u) == 0x7f800000u) { return Acc(m, 0); }
  if (abs(m) > gb_s()) { return Acc(m * gb_inv(), e + 1); }
  if (abs(m) < gb_inv()) { return Acc(m * gb_s(), e - 1); }
  return Acc(m, e);
}
fn gb_acc_identity(product: bool) -> Acc { return Acc(1.0f, 0); }
fn gb_acc_of(x: Elem) -> Acc {
  // A subnormal factor is lifted from its bits (its integer mantissa times
  // 2^31, in units of S^-3 = 2^-180: exactly 2^-149 per unit), so drivers
  // that flush f32 subnormals in arithmetic (NVIDIA's Vulkan) keep it.
  let bits = bitcast<u32>(f32(x));
  let mant = bits & 0x007fffffu;
  if ((bits & 0x7f800000u) == 0u && mant != 0u) {
    let m = f32(mant) * 2147483648.0f;
    return Acc(select(m, -m, (bits & 0x80000000u) != 0u), -3);
  }
  let r = gb_rescale(f32(x), 0);
  return gb_rescale(r.m, r.e);
}
// Inf · 0 is NaN, told by bits: WGSL lets a compiler assume finite
// values, and NVIDIA's Vulkan driver does not make it NaN in f32.
fn gb_acc_join(a: Acc, b: Acc, product: bool) -> Acc {
  let am = bitcast<u32>(a.m) & 0x7fffffffu;
  let bm = bitcast<u32>(b.m) & 0x7fffffffu;
  if ((am == 0u && bm == 0x7f800000u) || (bm == 0u && am == 0x7f800000u)) {
    return Acc(bitcast<f32>(0x7fc00000u), 0);
  }
  return gb_rescale(a.m * b.m, a.e + b.e);
}
fn gb_acc_value(a: Acc) -> Elem {
  let sign = bitcast<u32>(a.m) & 0x80000000u;
  if (a.e > 3) { return Elem(bitcast<f32>(sign | 0x7f800000u)); }
  if (a.e < -3) { return Elem(bitcast<f32>(sign)); }
  var x = a.m;
  for (var e = a.e; e > 0; e -= 1) { x = x * gb_s(); }
  for (var e = a.e; e < 0; e += 1) { x = x * gb_inv(); }
  return Elem(x);
}
";

/// The accumulator's source for sums or (`product`) products kept as
/// `acc` says.
pub fn accumulator(acc: Accumulation, product: bool) -> &'static str {
    match (acc, product) {
        (Accumulation::Double, false) => ACC_DOUBLE,
        (Accumulation::Compensated, false) => ACC_COMPENSATED,
        (Accumulation::Double, true) => ACC_PRODUCT_DOUBLE,
        (Accumulation::Compensated, true) => ACC_PRODUCT_FLOAT,
    }
}

/// Bytes of a running value kept as `acc` for sums or (`product`)
/// products: 16 for an f64 product (mantissa and exponent), else 8 (an
/// f64, an f32 pair, an f32 mantissa and `i32` exponent).
pub fn acc_bytes(acc: Accumulation, product: bool) -> usize {
    if product && acc == Accumulation::Double {
        16
    } else {
        8
    }
}

/// The call's name, for errors.
fn name(product: bool) -> &'static str {
    if product {
        "cumprod"
    } else {
        "cumsum"
    }
}

/// Checks what a scan of `x` (shape `shape`) along `axis` into `out` with
/// `acc` needs; the lanes `(inner, len, outer)` around the axis.
fn check(
    dev: &Device,
    (x, shape): (&WgpuBuf, &Shape),
    axis: Option<usize>,
    (out_shape, dtype): (&Shape, DType),
    (acc, name): (Accumulation, &str),
) -> Result<(usize, usize, usize)> {
    let no = |why| declined(name, why);
    scan_plan::check_dtype(x.dtype(), dtype).map_err(no)?;
    if dtype == DType::F64 && acc != Accumulation::Double {
        return Err(declined(name, "f64 data accumulate in f64 only"));
    }
    if acc == Accumulation::Double && !has_64_bit(dev.features) {
        return Err(declined(
            name,
            "the adapter has no f64 shaders to accumulate in",
        ));
    }
    scan_plan::check_len(x.len(), shape, out_shape).map_err(no)?;
    let n = shape.numel();
    if n >= 1 << 31 {
        return Err(declined(
            name,
            format!("{n} elements exceed the 32-bit indices of the scan kernels"),
        ));
    }
    scan_plan::lanes(shape, axis).map_err(no)
}

/// The cumulative sum (or product, when `product`) of `x` (shape `shape`)
/// along `axis` (or the flattening), accumulated as `acc` says, into a new
/// buffer of `out` shape and dtype (the input's): on the tiled path for
/// contiguous lanes on a GPU, the chunked path otherwise (the module's
/// docs give the rule).
pub fn scan(
    dev: &Device,
    modules: &Modules,
    (x, shape): (&WgpuBuf, &Shape),
    (product, axis): (bool, Option<usize>),
    out: (&Shape, DType),
    acc: Accumulation,
) -> Result<WgpuBuf> {
    let name = name(product);
    let (inner, len, outer) = check(dev, (x, shape), axis, out, (acc, name))?;
    let dtype = out.1;
    let y = dev.alloc(shape.numel(), dtype)?;
    if inner * outer == 0 || len == 0 {
        return Ok(y);
    }
    let how = (product, dtype, acc);
    match tiles::Tiling::of(dev, dtype) {
        Some(tiling) if inner == 1 && !dev.cpu_adapter => {
            tiles::run(dev, modules, (x, &y), (len, outer), how, tiling)?
        }
        _ => chunks::scan(dev, modules, (x, &y), (inner, len, outer), how)?,
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gearbox_core::runtime::scan_product::unit_log2;

    #[test]
    fn product_units_are_scan_products() {
        let k = unit_log2(Accumulation::Double);
        let (s, inv) = (2f64.powi(k).to_bits(), 2f64.powi(-k).to_bits());
        assert!(ACC_PRODUCT_DOUBLE.contains(&format!("bitcast<f64>({s:#x}lu)")));
        assert!(ACC_PRODUCT_DOUBLE.contains(&format!("bitcast<f64>({inv:#x}lu)")));
        let k = unit_log2(Accumulation::Compensated);
        let (s, inv) = (2f32.powi(k).to_bits(), 2f32.powi(-k).to_bits());
        assert!(ACC_PRODUCT_FLOAT.contains(&format!("bitcast<f32>({s:#x}u)")));
        assert!(ACC_PRODUCT_FLOAT.contains(&format!("bitcast<f32>({inv:#x}u)")));
    }
}
