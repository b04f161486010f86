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
//! term of an infinity is NaN). Products are not rescaled as the CPU's are
//! (which keeps an exponent aside): a running product that overflows the
//! accumulator stays infinite where the CPU's may come back into range.
//! Both paths combine values in another order than the CPU's sequential
//! one (pieces, and trees within tiles), within the same rounding bounds.
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

/// The accumulator in f64: `Acc` is the running value.
const ACC_DOUBLE: &str = "
alias Acc = f64;
fn gb_acc_identity(product: bool) -> Acc { return select(0.0lf, 1.0lf, product); }
fn gb_acc_of(x: Elem) -> Acc { return f64(x); }
fn gb_acc_join(a: Acc, b: Acc, product: bool) -> Acc {
  if (product) { return a * b; }
  return a + b;
}
fn gb_acc_value(a: Acc) -> Elem { return Elem(a); }
";

/// The accumulator in f32 pairs: `(sum, compensation)`, joined with an
/// exact two-sum (Neumaier); products keep no compensation.
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
fn gb_acc_identity(product: bool) -> Acc { return vec2<f32>(select(0.0f, 1.0f, product), 0.0f); }
fn gb_acc_of(x: Elem) -> Acc { return vec2<f32>(x, 0.0f); }
fn gb_acc_join(a: Acc, b: Acc, product: bool) -> Acc {
  if (product) { return vec2<f32>(a.x * b.x, 0.0f); }
  let s = gb_keep(a.x + b.x);
  // Not finite (an infinity or NaN): the error term would be NaN.
  if ((bitcast<u32>(s) & 0x7f800000u) == 0x7f800000u) { return vec2<f32>(s, 0.0f); }
  let bb = gb_keep(s - a.x);
  let err = (a.x - (s - bb)) + (b.x - bb);
  return vec2<f32>(s, (a.y + b.y) + err);
}
fn gb_acc_value(a: Acc) -> Elem { return a.x + a.y; }
";

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
