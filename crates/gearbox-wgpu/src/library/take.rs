//! `take` on the wgpu device: positions along an axis gathered by one
//! kernel over `u32` words (every element is one word, f32 and bool, or
//! two, f64 and i64), so one kernel serves every dtype. Around the axis
//! the input is `(inner, len, outer)`; with `run = inner * words` words per
//! run, output word `o` is input word `(k * len + idx[j]) * run + i`, where
//! `i = o % run`, `j = (o / run) % n` and `k = o / (run * n)`. Positions
//! are `i64`, read as their low word: they were checked against the axis
//! when the take was made, so they are small and not negative; a position
//! outside the axis gives zeros, never a read past the input. A take whose
//! word indices pass `u32` is declined (the CPU runs it).

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::copies::{check_take, described};
use gearbox_core::{DType, Result, Shape};

use super::{declined, workgroups, Modules};
use crate::buffer::{element_bytes, WgpuBuf};
use crate::device::Device;

/// The gather kernel.
const TAKE_SOURCE: &str = "
struct Take {
  // words per run (inner * words per element), len, positions, total words
  dims: vec4<u32>,
}
@group(0) @binding(0) var<storage, read> gb_x: array<u32>;
@group(0) @binding(1) var<storage, read> gb_idx: array<u32>;
@group(0) @binding(2) var<storage, read_write> gb_y: array<u32>;
@group(0) @binding(3) var<uniform> gb_dims: Take;

@compute @workgroup_size(256)
fn gb_take(@builtin(global_invocation_id) gid: vec3<u32>,
           @builtin(num_workgroups) nwg: vec3<u32>) {
  let run = gb_dims.dims.x;
  let len = gb_dims.dims.y;
  let n = gb_dims.dims.z;
  let stride = nwg.x * 256u;
  for (var o = gid.x; o < gb_dims.dims.w; o += stride) {
    let rest = o / run;
    let i = o - rest * run;
    let k = rest / n;
    let j = rest - k * n;
    let p = gb_idx[2u * j];
    var v = 0u;
    if (gb_idx[2u * j + 1u] == 0u && p < len) {
      v = gb_x[(k * len + p) * run + i];
    }
    gb_y[o] = v;
  }
}
";

/// The kernel's uniform words, or `None` when a word index or the
/// grid-stride counter could pass `u32` (the input's and the result's
/// words, plus a stride, must stay below 2^32).
fn take_words(shape: &Shape, axis: usize, n: usize, dtype: DType) -> Option<[u32; 4]> {
    let words = element_bytes(dtype) / 4;
    let (inner, len, outer) = shape.split_at_axis(axis);
    let run = inner.checked_mul(words)?;
    let total = outer.checked_mul(n)?.checked_mul(run)?;
    let input = shape.numel().checked_mul(words)?;
    u32::try_from(total.max(input).checked_add(1 << 31)?).ok()?;
    Some([
        u32::try_from(run).ok()?,
        u32::try_from(len).ok()?,
        u32::try_from(n).ok()?,
        u32::try_from(total).ok()?,
    ])
}

/// Positions `idx` (an `i64` vector) along `axis` of `x` (shape `shape`),
/// into a new buffer of shape and dtype `out`.
pub fn take(
    dev: &Device,
    modules: &Modules,
    (x, shape): (&WgpuBuf, &Shape),
    idx: &WgpuBuf,
    axis: usize,
    out: (&Shape, DType),
) -> Result<WgpuBuf> {
    check_take(described((x, shape)), (idx.len(), idx.dtype()), axis, out)
        .map_err(|why| declined("take", why))?;
    let (dtype, n) = (x.dtype(), idx.len());
    let words = take_words(shape, axis, n, dtype).ok_or_else(|| {
        declined(
            "take",
            format!("a take from a {shape} {dtype} array passes the kernel's 32-bit word indices"),
        )
    })?;
    let y = dev.alloc(out.0.numel(), dtype)?;
    if words[3] == 0 {
        return Ok(y);
    }
    let program = modules.get(dev, "take", || TAKE_SOURCE.to_string(), &["gb_take"])?;
    let pipeline = program.pipeline("gb_take")?;
    let uniform: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let groups = workgroups(dev, words[3] as usize);
    dev.dispatch(pipeline, 0, &[x, idx, &y], &uniform, [groups, 1, 1])?;
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_take_kernel_is_valid_wgsl() {
        super::super::validate_wgsl(TAKE_SOURCE).unwrap();
    }

    #[test]
    fn word_indices_past_u32_are_declined() {
        let m = Shape::new(vec![1000, 30]);
        assert_eq!(take_words(&m, 0, 7, DType::F64), Some([2, 1000, 7, 420]));
        assert_eq!(take_words(&m, 1, 2, DType::F32), Some([1000, 30, 2, 2000]));
        assert_eq!(take_words(&m, 0, 1 << 30, DType::F64), None);
        assert_eq!(
            take_words(&Shape::new(vec![1 << 31]), 0, 1, DType::F32),
            None
        );
    }
}
