//! The chunked path: a three-phase scan for any axis layout, one
//! invocation per piece of a lane (the CUDA backend's design,
//! `gearbox_cuda::scan`). The scan takes it when the lanes are not
//! contiguous (`inner > 1`): adjacent invocations then take adjacent lanes,
//! so they read `inner` adjacent values at each step (coalesced once
//! `inner` fills a memory transaction).
//!
//! Each lane is cut into `chunks` pieces ([`scan_plan::pieces`], shared
//! with the other backends: enough pieces for about 2^20 invocations, at
//! least [`scan_plan::MIN_PIECE`] values each), so a single long lane runs
//! in parallel too:
//!
//! 1. `gb_scan_fold`: one invocation per piece folds it to a total;
//! 2. the totals of each lane become exclusive prefixes, in place: one
//!    invocation per lane walking its totals (`gb_scan_carry_lanes`, when a
//!    lane has at most [`SERIAL_CARRY_MAX`] pieces), or one workgroup per
//!    lane scanning them in workgroup memory (`gb_scan_carry_groups`);
//! 3. `gb_scan_apply`: one invocation per piece rescans it from its prefix,
//!    writing the result.
//!
//! With one piece per lane (many lanes) only phase 3 runs, from the
//! identity. Phase 2 also serves the tiled path ([`super::tiles`]), whose
//! piece totals have the same layout (`inner == 1`).

use gearbox_core::runtime::scan_plan;
use gearbox_core::{DType, Result};

use super::super::{workgroups, Modules, WORKGROUP};
use super::{acc_bytes, accumulator, Accumulation};
use crate::buffer::WgpuBuf;
use crate::device::Device;
use crate::program::Program;

/// Lanes with at most this many pieces carry their prefixes with one
/// invocation each; longer ones with a workgroup each.
pub const SERIAL_CARRY_MAX: usize = 256;

/// The three phases, over `Elem` data and `Acc` running values. Each entry
/// point has its own bindings (from 0, 8, 16, 24: a binding number belongs
/// to one variable of the module), the uniform right after its buffers.
const PHASES: &str = "
struct Scan {
  // inner, len, outer, chunks
  shape: vec4<u32>,
  // chunk_len, product, use_prefix, 0 (the opaque zero)
  more: vec4<u32>,
}

// A zero the compiler cannot see, set from the uniform by each entry point
// (the compensated accumulator's guard against algebraic rewriting).
var<private> gb_opaque: u32;

// Piece w of the (inner, chunks, outer) pieces: (i, c, o), i fastest.
fn gb_piece(p: Scan, w: u32) -> vec3<u32> {
  let inner = p.shape.x;
  let chunks = p.shape.w;
  return vec3<u32>(w % inner, (w / inner) % chunks, w / (inner * chunks));
}

// Where piece (i, c, o) starts in the data, and its length.
fn gb_piece_span(p: Scan, q: vec3<u32>) -> vec2<u32> {
  let inner = p.shape.x;
  let len = p.shape.y;
  let k0 = q.y * p.more.x;
  let k1 = min(len, k0 + p.more.x);
  return vec2<u32>(q.x + inner * (k0 + len * q.z), k1 - k0);
}

@group(0) @binding(0) var<storage, read> gb_x1: array<Elem>;
@group(0) @binding(1) var<storage, read_write> gb_t1: array<Acc>;
@group(0) @binding(2) var<uniform> gb_p1: Scan;

// Phase 1: the total of each piece.
@compute @workgroup_size(256)
fn gb_scan_fold(@builtin(global_invocation_id) gid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = gb_p1;
  gb_opaque = p.more.w;
  let product = p.more.y != 0u;
  let inner = p.shape.x;
  let items = inner * p.shape.z * p.shape.w;
  for (var w = gid.x; w < items; w += nwg.x * 256u) {
    let span = gb_piece_span(p, gb_piece(p, w));
    var acc = gb_acc_identity(product);
    var at = span.x;
    for (var k = 0u; k < span.y; k++) {
      acc = gb_acc_join(acc, gb_acc_of(gb_x1[at]), product);
      at += inner;
    }
    gb_t1[w] = acc;
  }
}

@group(0) @binding(8) var<storage, read_write> gb_t2: array<Acc>;
@group(0) @binding(9) var<uniform> gb_p2: Scan;

// Phase 2, short lanes: one invocation walks a lane's totals, leaving
// exclusive prefixes.
@compute @workgroup_size(256)
fn gb_scan_carry_lanes(@builtin(global_invocation_id) gid: vec3<u32>,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = gb_p2;
  gb_opaque = p.more.w;
  let product = p.more.y != 0u;
  let inner = p.shape.x;
  let chunks = p.shape.w;
  let lanes = inner * p.shape.z;
  for (var lane = gid.x; lane < lanes; lane += nwg.x * 256u) {
    let base = lane % inner + inner * chunks * (lane / inner);
    var carry = gb_acc_identity(product);
    for (var c = 0u; c < chunks; c++) {
      let at = base + inner * c;
      let total = gb_t2[at];
      gb_t2[at] = carry;
      carry = gb_acc_join(carry, total, product);
    }
  }
}

var<workgroup> gb_part: array<Acc, 256>;

// Phase 2, long lanes: a workgroup per lane; each invocation folds a run of
// the lane's totals, the runs are scanned in workgroup memory (Hillis and
// Steele), and each invocation rewrites its run from its run's prefix.
@compute @workgroup_size(256)
fn gb_scan_carry_groups(@builtin(local_invocation_index) t: u32,
                        @builtin(workgroup_id) wid: vec3<u32>,
                        @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = gb_p2;
  gb_opaque = p.more.w;
  let product = p.more.y != 0u;
  let inner = p.shape.x;
  let chunks = p.shape.w;
  let lanes = inner * p.shape.z;
  let per = (chunks + 255u) / 256u;
  let c0 = min(chunks, t * per);
  let c1 = min(chunks, c0 + per);
  for (var lane = wid.x; lane < lanes; lane += nwg.x) {
    let base = lane % inner + inner * chunks * (lane / inner);
    var run = gb_acc_identity(product);
    for (var c = c0; c < c1; c++) {
      run = gb_acc_join(run, gb_t2[base + inner * c], product);
    }
    gb_part[t] = run;
    workgroupBarrier();
    for (var d = 1u; d < 256u; d = d << 1u) {
      var v = gb_part[t];
      if (t >= d) {
        v = gb_acc_join(gb_part[t - d], v, product);
      }
      workgroupBarrier();
      gb_part[t] = v;
      workgroupBarrier();
    }
    var carry = gb_acc_identity(product);
    if (t > 0u) {
      carry = gb_part[t - 1u];
    }
    // Every invocation has read its prefix before the next lane's runs
    // overwrite the workgroup memory.
    workgroupBarrier();
    for (var c = c0; c < c1; c++) {
      let at = base + inner * c;
      let total = gb_t2[at];
      gb_t2[at] = carry;
      carry = gb_acc_join(carry, total, product);
    }
  }
}

@group(0) @binding(16) var<storage, read> gb_x3: array<Elem>;
@group(0) @binding(17) var<storage, read> gb_t3: array<Acc>;
@group(0) @binding(18) var<storage, read_write> gb_y3: array<Elem>;
@group(0) @binding(19) var<uniform> gb_p3: Scan;

// Phase 3: each piece rescanned from its prefix (the identity when the
// lanes are not cut), writing the results.
@compute @workgroup_size(256)
fn gb_scan_apply(@builtin(global_invocation_id) gid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = gb_p3;
  gb_opaque = p.more.w;
  let product = p.more.y != 0u;
  let inner = p.shape.x;
  let items = inner * p.shape.z * p.shape.w;
  for (var w = gid.x; w < items; w += nwg.x * 256u) {
    let span = gb_piece_span(p, gb_piece(p, w));
    var acc = gb_acc_identity(product);
    if (p.more.z != 0u) {
      acc = gb_t3[w];
    }
    var at = span.x;
    for (var k = 0u; k < span.y; k++) {
      acc = gb_acc_join(acc, gb_acc_of(gb_x3[at]), product);
      gb_y3[at] = gb_acc_value(acc);
      at += inner;
    }
  }
}
";

/// The entry points of the chunked module.
pub const ENTRIES: [&str; 4] = [
    "gb_scan_fold",
    "gb_scan_carry_lanes",
    "gb_scan_carry_groups",
    "gb_scan_apply",
];

/// The WGSL module scanning `elem` data (f32 or f64) with `acc`: sums, or
/// products when `product`.
pub fn source(elem: DType, acc: Accumulation, product: bool) -> String {
    let widen = super::widen_source(elem, acc, product);
    let elem = if elem == DType::F64 { "f64" } else { "f32" };
    let acc = accumulator(acc, product);
    format!("alias Elem = {elem};\n{widen}{acc}{PHASES}")
}

/// The chunked module for `dtype` data accumulated as `acc` (products when
/// `product`).
pub(super) fn program(
    dev: &Device,
    modules: &Modules,
    (dtype, acc, product): (DType, Accumulation, bool),
) -> Result<std::sync::Arc<Program>> {
    let op = if product { "prod" } else { "sum" };
    let key = format!("scan-{op}-{dtype}-{}", acc.name());
    modules.get(dev, &key, || source(dtype, acc, product), &ENTRIES)
}

/// The kernels' uniform (`struct Scan`): the layout, the pieces, the
/// operation, whether there are prefixes, and the opaque zero.
pub(super) fn uniform(
    (inner, len, outer): (usize, usize, usize),
    (chunks, chunk_len): (usize, usize),
    product: bool,
) -> Vec<u8> {
    let words = [
        inner,
        len,
        outer,
        chunks,
        chunk_len,
        product as usize,
        (chunks > 1) as usize,
        0,
    ];
    // Every word is below 2^31: the scan's checks bound the element count.
    words
        .iter()
        .flat_map(|&w| (w as u32).to_le_bytes())
        .collect()
}

/// The chunked scan of `x` (`(inner, len, outer)`, at least one value)
/// into `y`, `dtype` data accumulated as `acc`.
pub(super) fn scan(
    dev: &Device,
    modules: &Modules,
    (x, y): (&WgpuBuf, &WgpuBuf),
    (inner, len, outer): (usize, usize, usize),
    (product, dtype, acc): (bool, DType, Accumulation),
) -> Result<()> {
    let lanes = inner * outer;
    // Pieces of equal length but the last, none empty.
    let (chunks, chunk_len) = scan_plan::pieces(lanes, len);
    let uniform = uniform((inner, len, outer), (chunks, chunk_len), product);
    let program = program(dev, modules, (dtype, acc, product))?;
    let pieces = lanes * chunks;
    // The running values of every piece (8 or 16 bytes each, `acc_bytes`);
    // one unused value when the lanes are not cut.
    let values = if chunks > 1 { pieces } else { 1 };
    let totals = dev.alloc(values * acc_bytes(acc, product) / 8, DType::F64)?;
    let groups = [workgroups(dev, pieces), 1, 1];
    if chunks > 1 {
        let fold = program.pipeline("gb_scan_fold")?;
        dev.dispatch(fold, 0, &[x, &totals], &uniform, groups)?;
        carry(
            dev,
            &program,
            &totals,
            &uniform,
            (lanes, chunks),
            SERIAL_CARRY_MAX,
        )?;
    }
    let apply = program.pipeline("gb_scan_apply")?;
    dev.dispatch(apply, 16, &[x, &totals, y], &uniform, groups)
}

/// Phase 2: the totals of `lanes` lanes of `chunks` pieces (`uniform`
/// describing them) become exclusive prefixes: with an invocation per lane
/// walking its totals when there are at most `serial_max` per lane, else
/// with a workgroup per lane.
pub(super) fn carry(
    dev: &Device,
    program: &Program,
    totals: &WgpuBuf,
    uniform: &[u8],
    (lanes, chunks): (usize, usize),
    serial_max: usize,
) -> Result<()> {
    if chunks <= serial_max {
        let pipeline = program.pipeline("gb_scan_carry_lanes")?;
        dev.dispatch(
            pipeline,
            8,
            &[totals],
            uniform,
            [workgroups(dev, lanes), 1, 1],
        )
    } else {
        let pipeline = program.pipeline("gb_scan_carry_groups")?;
        // One workgroup per lane (the kernel loops past the adapter's limit).
        let most = dev.limits.max_compute_workgroups_per_dimension.max(1) as usize;
        let groups = lanes.clamp(1, most) as u32;
        dev.dispatch(pipeline, 8, &[totals], uniform, [groups, 1, 1])
    }
}

// The kernels' `@workgroup_size(256)` and grid strides are the size
// `workgroups` counts with.
const _: () = assert!(WORKGROUP == 256);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_valid_wgsl() {
        for (elem, acc) in [
            (DType::F32, Accumulation::Double),
            (DType::F64, Accumulation::Double),
            (DType::F32, Accumulation::Compensated),
        ] {
            for product in [false, true] {
                let src = source(elem, acc, product);
                if let Err(e) = super::super::super::validate_wgsl(&src) {
                    panic!("{elem} {acc:?} product {product}: {e}");
                }
            }
        }
    }
}
