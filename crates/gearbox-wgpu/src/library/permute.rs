//! Transposes, permutations and flips on the wgpu device
//! (`LibraryCall::Permute`): one dispatch per call, planned in core
//! ([`permute_launch`]) as on every backend. A transpose moves 32 x 32
//! tiles through workgroup memory padded to 33 columns, workgroups of 256
//! reading rows along the input's contiguous axis and writing columns
//! along output axis 0 (tiles of the other axes' positions in a loop over
//! workgroups); flips and permutations that keep axis 0 first copy one
//! element per invocation. Elements move as their words (`u32` for f32
//! and bool, `vec2<u32>` for f64 and i64: one module of each), so every
//! dtype is served. Index arithmetic is `i32`: a permute of more than
//! 2^30 elements is declined (the CPU runs it).

use gearbox_core::ops::permute::AxisOrder;
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::copies::{
    check_permute, described, permute_launch, PermuteLaunch, PERMUTE_AXES, PERMUTE_TILE,
    PERMUTE_TILE_ROWS,
};
use gearbox_core::{DType, Result, Shape};

use super::{declined, Modules, WORKGROUP};
use crate::buffer::{element_bytes, WgpuBuf};
use crate::device::Device;

// The kernels hold the axes in two vec4s and tile with workgroups of 32 x 8.
const _: () = assert!(PERMUTE_AXES == 8 && WORKGROUP as usize == PERMUTE_TILE * PERMUTE_TILE_ROWS);

/// The kernels, after a line that says what `T` (one element) is.
const PERMUTE_SOURCE: &str = "
struct Permute {
  // total, base, rank, tiles
  head: vec4<i32>,
  dims: array<vec4<i32>, 2>,
  istrides: array<vec4<i32>, 2>,
  ostrides: array<vec4<i32>, 2>,
}
@group(0) @binding(0) var<storage, read> gb_x: array<T>;
@group(0) @binding(1) var<storage, read_write> gb_y: array<T>;
@group(0) @binding(2) var<uniform> gb_p: Permute;
var<workgroup> gb_tile: array<T, 1056>;

fn gb_dim(k: i32) -> i32 { return gb_p.dims[k / 4][k % 4]; }
fn gb_is(k: i32) -> i32 { return gb_p.istrides[k / 4][k % 4]; }
fn gb_os(k: i32) -> i32 { return gb_p.ostrides[k / 4][k % 4]; }

@compute @workgroup_size(256)
fn gb_permute(@builtin(global_invocation_id) gid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
  let total = gb_p.head.x;
  // The last axis needs no division (what is left is its position).
  let last = max(gb_p.head.z - 1, 0);
  let sl = gb_is(last);
  let stride = i32(nwg.x * 256u);
  for (var o = i32(gid.x); o < total; o += stride) {
    var rest = u32(o);
    var at = gb_p.head.y;
    for (var k = 0; k < last; k++) {
      let d = u32(gb_dim(k));
      let q = rest / d;
      at += i32(rest - q * d) * gb_is(k);
      rest = q;
    }
    gb_y[o] = gb_x[at + i32(rest) * sl];
  }
}

@compute @workgroup_size(256)
fn gb_transpose(@builtin(local_invocation_index) lid: u32,
                @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let tx = i32(lid % 32u);
  let ty = i32(lid / 32u);
  let rank = gb_p.head.z;
  let a = gb_dim(0);
  let b = gb_dim(1);
  let sa = gb_is(0);
  let sb = gb_is(1);
  let ob = gb_os(1);
  let ta = (a + 31) / 32;
  let tb = (b + 31) / 32;
  let tiles = gb_p.head.w;
  for (var t = i32(wid.x); t < tiles; t += i32(nwg.x)) {
    let rest = t / ta;
    let i0 = (t - rest * ta) * 32;
    var k = rest / tb;
    let j0 = (rest - k * tb) * 32;
    var src = gb_p.head.y;
    var dst = 0;
    for (var q = 2; q < rank; q++) {
      let d = gb_dim(q);
      let kq = k / d;
      let c = k - kq * d;
      src += c * gb_is(q);
      dst += c * gb_os(q);
      k = kq;
    }
    // Rows of the tile along the input's contiguous axis (b)...
    let j = j0 + tx;
    for (var r = ty; r < 32; r += 8) {
      let i = i0 + r;
      if (i < a && j < b) {
        gb_tile[r * 33 + tx] = gb_x[src + i * sa + j * sb];
      }
    }
    workgroupBarrier();
    // ... written as columns along output axis 0 (a).
    let i = i0 + tx;
    for (var r = ty; r < 32; r += 8) {
      let jj = j0 + r;
      if (i < a && jj < b) {
        gb_y[dst + i + jj * ob] = gb_tile[tx * 33 + r];
      }
    }
    workgroupBarrier();
  }
}
";

/// The module's source for elements of `words` 32-bit words (1 or 2).
fn source(words: usize) -> String {
    let t = if words == 2 { "vec2<u32>" } else { "u32" };
    format!("alias T = {t};\n{PERMUTE_SOURCE}")
}

/// The kernel's uniform block (`struct Permute`), or `None` when a value
/// passes `i32` (the plan's 32-bit entries are those of at most 2^30
/// elements, whose every index fits).
fn uniform(launch: &PermuteLaunch) -> Option<Vec<u8>> {
    if !launch.entry.contains("32_") {
        return None;
    }
    let head = [launch.total, launch.base, launch.rank, launch.tiles];
    let words = head
        .iter()
        .chain(&launch.dims)
        .chain(&launch.istrides)
        .chain(&launch.ostrides)
        .map(|&v| i32::try_from(v).ok())
        .collect::<Option<Vec<i32>>>()?;
    Some(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// `x` (shape `shape`) with its axes permuted and reversed by `order`,
/// into a new buffer of shape and dtype `out`.
pub fn permute(
    dev: &Device,
    modules: &Modules,
    (x, shape): (&WgpuBuf, &Shape),
    order: AxisOrder,
    out: (&Shape, DType),
) -> Result<WgpuBuf> {
    check_permute(described((x, shape)), order, out).map_err(|why| declined("permute", why))?;
    let dtype = x.dtype();
    let launch = permute_launch(shape, order, dtype).ok_or_else(|| {
        declined(
            "permute",
            format!(
                "axes {:?} of a {shape} array leave more than {PERMUTE_AXES} strided axes",
                order.perm()
            ),
        )
    })?;
    let block = uniform(&launch).ok_or_else(|| {
        declined(
            "permute",
            format!("a permute of a {shape} {dtype} array passes the kernels' 32-bit indices"),
        )
    })?;
    let y = dev.alloc(out.0.numel(), dtype)?;
    if launch.total == 0 {
        return Ok(y);
    }
    let words = element_bytes(dtype) / 4;
    let key = format!("permute_w{words}");
    let program = modules.get(dev, &key, || source(words), &["gb_permute", "gb_transpose"])?;
    let entry = if launch.tiled {
        "gb_transpose"
    } else {
        "gb_permute"
    };
    let pipeline = program.pipeline(entry)?;
    let most = dev.limits.max_compute_workgroups_per_dimension.max(1) as usize;
    let groups = launch.blocks().clamp(1, most) as u32;
    dev.dispatch(pipeline, 0, &[x, &y], &block, [groups, 1, 1])?;
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_permute_kernels_are_valid_wgsl() {
        super::super::validate_wgsl(&source(1)).unwrap();
        super::super::validate_wgsl(&source(2)).unwrap();
    }

    #[test]
    fn permutes_past_i32_are_declined() {
        let order = AxisOrder::new(&[1, 0], &[false, true]).unwrap();
        let small = permute_launch(&Shape::new(vec![40, 50]), order, DType::F64).unwrap();
        let block = uniform(&small).unwrap();
        assert_eq!(block.len(), 4 * 28);
        assert_eq!(&block[..4], &2000i32.to_le_bytes());
        let big = permute_launch(&Shape::new(vec![1 << 16, 1 << 15]), order, DType::F32).unwrap();
        assert_eq!(uniform(&big), None);
    }
}
