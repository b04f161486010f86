//! `slice` and `concat` on the wgpu device: copies recorded in the pending
//! command encoder, in order with the kernels around them, with no host
//! staging. Any dtype: a copy moves bytes, and every element of the buffer
//! layer is 4 bytes (f32, bool as `u32`) or 8 (f64, i64).
//!
//! # Layout
//!
//! Storage is column-major, so around an axis an array is `(inner, len,
//! outer)`: `outer` contiguous blocks of `len * inner` values. A slice
//! `start..end` is one strided copy of `outer` rows of `(end - start) *
//! inner` values read at a pitch of `len * inner`; a concat is one such copy
//! per input, written at the input's offset inside each output block (an
//! input's dimensions past its last count as 1): the arithmetic is core's
//! ([`gearbox_core::runtime::copies`]), shared with the CUDA backend.
//!
//! # Forms
//!
//! Each strided copy is issued in the cheapest form wgpu allows
//! ([`CopyForm`]): nothing when empty; one `copy_buffer_to_buffer` when the
//! rows are back to back (or there is one); one per row when there are at
//! most [`MAX_ROW_COPIES`] rows (a copy command per row is cheap, a kernel
//! costs a uniform buffer and a bind group); else one dispatch of a
//! strided-copy kernel over `u32` words (one kernel for every dtype), whose
//! word offsets must fit in `u32` (a larger copy is declined and runs on the
//! CPU). wgpu requires copy offsets and sizes that are multiples of 4 bytes:
//! every element size is, so every row and pitch is.
//!
//! # Rules
//!
//! Inputs are checked against their shapes and the result (dtype, length,
//! axis, range) before anything is recorded: the kernels run without
//! naga's bounds checks, so a copy may never reach past a buffer (the
//! checks are core's, shared with the OpenCL backend). Bad input
//! is declined with an error of kind `Compile` (the runtime reruns the call
//! on the CPU and the backend stays healthy), never a panic.

use gearbox_core::runtime::copies::{
    check_concat, check_slice, concat_copies, described, slice_copies, BlockCopy, Described,
};
use gearbox_core::{DType, Result, Shape};

use super::{declined, workgroups, Modules};
use crate::buffer::WgpuBuf;
use crate::device::Device;

/// Copies of at most this many rows are issued as one copy command per row;
/// more rows take the strided-copy kernel.
pub const MAX_ROW_COPIES: usize = 16;

/// How a [`BlockCopy`] is issued on the wgpu device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyForm {
    /// Nothing to copy (no rows or empty rows).
    Nothing,
    /// One copy command of this many bytes (the rows are back to back on
    /// both sides, or there is one row).
    Linear(usize),
    /// One copy command per row (at most [`MAX_ROW_COPIES`] rows).
    PerRow,
    /// One dispatch of the strided-copy kernel.
    Kernel,
}

/// The form `c` takes.
pub fn form(c: &BlockCopy) -> CopyForm {
    if c.is_empty() {
        CopyForm::Nothing
    } else if c.is_linear() {
        CopyForm::Linear(c.width * c.rows)
    } else if c.rows <= MAX_ROW_COPIES {
        CopyForm::PerRow
    } else {
        CopyForm::Kernel
    }
}

/// Slices `x` (shape `shape`) to `start..end` along `axis`, into a new
/// buffer of shape and dtype `out`.
pub fn slice(
    dev: &Device,
    modules: &Modules,
    (x, shape): (&WgpuBuf, &Shape),
    (axis, start, end): (usize, usize, usize),
    (out_shape, dtype): (&Shape, DType),
) -> Result<WgpuBuf> {
    check_slice(
        described((x, shape)),
        (axis, start, end),
        (out_shape, dtype),
    )
    .map_err(|why| declined("slice", why))?;
    let y = dev.alloc(out_shape.numel(), dtype)?;
    let copy = slice_copies(shape, axis, start, end, crate::buffer::element_bytes(dtype));
    issue(dev, modules, x, &y, &copy)?;
    Ok(y)
}

/// Joins `parts` (buffer and shape, each of the result dtype) along `axis`
/// into a new buffer of shape and dtype `out`.
pub fn concat(
    dev: &Device,
    modules: &Modules,
    parts: &[(&WgpuBuf, &Shape)],
    axis: usize,
    (out_shape, dtype): (&Shape, DType),
) -> Result<WgpuBuf> {
    let described: Vec<Described<'_>> = parts.iter().map(|&p| described(p)).collect();
    check_concat(&described, axis, (out_shape, dtype)).map_err(|why| declined("concat", why))?;
    let y = dev.alloc(out_shape.numel(), dtype)?;
    let shapes: Vec<&Shape> = parts.iter().map(|(_, s)| *s).collect();
    let copies = concat_copies(
        out_shape,
        axis,
        &shapes,
        crate::buffer::element_bytes(dtype),
    );
    for ((b, _), c) in parts.iter().zip(&copies) {
        issue(dev, modules, b, &y, c)?;
    }
    Ok(y)
}

/// Records one strided copy from `src` to `dst` (whose extents the callers
/// checked against the shapes).
fn issue(
    dev: &Device,
    modules: &Modules,
    src: &WgpuBuf,
    dst: &WgpuBuf,
    c: &BlockCopy,
) -> Result<()> {
    let (s, d) = (src.block(), dst.block());
    let at = |v: usize| v as u64;
    match form(c) {
        CopyForm::Nothing => Ok(()),
        CopyForm::Linear(bytes) => dev.record(|encoder| {
            encoder.copy_buffer_to_buffer(s, at(c.src), d, at(c.dst), at(bytes));
        }),
        CopyForm::PerRow => dev.record(|encoder| {
            for k in 0..c.rows {
                let (from, to) = (c.src + k * c.src_pitch, c.dst + k * c.dst_pitch);
                encoder.copy_buffer_to_buffer(s, at(from), d, at(to), at(c.width));
            }
        }),
        CopyForm::Kernel => copy_kernel(dev, modules, src, dst, c),
    }
}

/// The strided-copy kernel: `rows * width` words, word `w` of the grid
/// stride loop being column `w % width` of row `w / width`. Offsets,
/// pitches and widths are in `u32` words.
const COPY_SOURCE: &str = "
struct Copy {
  // src, src_pitch, dst, dst_pitch
  at: vec4<u32>,
  // width, rows, -, -
  size: vec4<u32>,
}
@group(0) @binding(0) var<storage, read> gb_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> gb_dst: array<u32>;
@group(0) @binding(2) var<uniform> gb_copy: Copy;

@compute @workgroup_size(256)
fn gb_copy_rows(@builtin(global_invocation_id) gid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let width = gb_copy.size.x;
  let total = width * gb_copy.size.y;
  let stride = nwg.x * 256u;
  for (var w = gid.x; w < total; w += stride) {
    let r = w / width;
    let col = w - r * width;
    gb_dst[gb_copy.at.z + r * gb_copy.at.w + col] = gb_src[gb_copy.at.x + r * gb_copy.at.y + col];
  }
}
";

/// The copy's uniform words (offsets, pitches and sizes in `u32` words), or
/// `None` when a word index or the grid-stride loop's counter could pass
/// `u32` (`rows * width + stride` must stay below 2^32).
fn copy_words(c: &BlockCopy) -> Option<[u32; 8]> {
    let w = |bytes: usize| u32::try_from(bytes / 4).ok();
    let total = (c.rows.checked_mul(c.width)? / 4).checked_add(1 << 31)?;
    u32::try_from(total).ok()?;
    Some([
        w(c.src)?,
        w(c.src_pitch)?,
        w(c.dst)?,
        w(c.dst_pitch)?,
        w(c.width)?,
        u32::try_from(c.rows).ok()?,
        // Not read by the kernel: the ends checked to fit too.
        w(c.src_end())?,
        w(c.dst_end())?,
    ])
}

/// Dispatches the strided-copy kernel for `c`.
fn copy_kernel(
    dev: &Device,
    modules: &Modules,
    src: &WgpuBuf,
    dst: &WgpuBuf,
    c: &BlockCopy,
) -> Result<()> {
    let words = copy_words(c).ok_or_else(|| {
        declined(
            "copy",
            format!(
                "a copy of {} rows of {} bytes passes the 32-bit word indices of the copy kernel",
                c.rows, c.width
            ),
        )
    })?;
    let program = modules.get(
        dev,
        "copy_rows",
        || COPY_SOURCE.to_string(),
        &["gb_copy_rows"],
    )?;
    let pipeline = program.pipeline("gb_copy_rows")?;
    let uniform: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let groups = workgroups(dev, c.rows * c.width / 4);
    dev.dispatch(pipeline, 0, &[src, dst], &uniform, [groups, 1, 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Carries out `c` on host bytes as [`issue`] does on the device, form
    /// by form (the kernel as its loop over words).
    fn run_on_host(c: &BlockCopy, src: &[u8], dst: &mut [u8]) {
        let rows = |dst: &mut [u8]| {
            for k in 0..c.rows {
                let (s, d) = (c.src + k * c.src_pitch, c.dst + k * c.dst_pitch);
                dst[d..d + c.width].copy_from_slice(&src[s..s + c.width]);
            }
        };
        match form(c) {
            CopyForm::Nothing => {}
            CopyForm::Linear(n) => dst[c.dst..c.dst + n].copy_from_slice(&src[c.src..c.src + n]),
            CopyForm::PerRow => rows(dst),
            CopyForm::Kernel => {
                let u = copy_words(c).expect("fits");
                for w in 0..u[4] * u[5] {
                    let (r, col) = (w / u[4], w % u[4]);
                    let (s, d) = (
                        (u[0] + r * u[1] + col) as usize,
                        (u[2] + r * u[3] + col) as usize,
                    );
                    dst[4 * d..4 * d + 4].copy_from_slice(&src[4 * s..4 * s + 4]);
                }
            }
        }
    }

    #[test]
    fn every_form_carries_out_the_copy_as_the_reference_does() {
        let copy = |src, src_pitch, dst, dst_pitch, width, rows| BlockCopy {
            src,
            src_pitch,
            dst,
            dst_pitch,
            width,
            rows,
        };
        let copies = [
            copy(0, 16, 0, 8, 0, 5),
            copy(8, 40, 0, 24, 24, 1),
            copy(0, 16, 0, 16, 16, 9),
            copy(4, 20, 8, 12, 12, 7),
            copy(8, 40, 4, 16, 16, MAX_ROW_COPIES + 9),
            copy(0, 44, 12, 28, 20, 3 * MAX_ROW_COPIES),
        ];
        for c in copies {
            let src: Vec<u8> = (0..c.src_end()).map(|i| (i * 7 + 3) as u8).collect();
            let (mut got, mut want) = (vec![0u8; c.dst_end()], vec![0u8; c.dst_end()]);
            run_on_host(&c, &src, &mut got);
            c.apply(&src, &mut want);
            assert_eq!(got, want, "{c:?} as {:?}", form(&c));
        }
    }

    #[test]
    fn forms() {
        let c = |src_pitch, dst_pitch, width, rows| BlockCopy {
            src: 0,
            src_pitch,
            dst: 0,
            dst_pitch,
            width,
            rows,
        };
        assert_eq!(form(&c(16, 8, 0, 5)), CopyForm::Nothing);
        assert_eq!(form(&c(16, 8, 8, 0)), CopyForm::Nothing);
        assert_eq!(form(&c(16, 8, 8, 1)), CopyForm::Linear(8));
        assert_eq!(form(&c(8, 8, 8, 4)), CopyForm::Linear(32));
        assert_eq!(form(&c(16, 8, 8, 4)), CopyForm::PerRow);
        assert_eq!(form(&c(16, 8, 8, MAX_ROW_COPIES)), CopyForm::PerRow);
        assert_eq!(form(&c(16, 8, 8, MAX_ROW_COPIES + 1)), CopyForm::Kernel);
    }

    #[test]
    fn the_kernel_declines_copies_past_32_bit_words() {
        let big = BlockCopy {
            src: 0,
            src_pitch: 1 << 33,
            dst: 0,
            dst_pitch: 8,
            width: 8,
            rows: 100,
        };
        assert_eq!(copy_words(&big), None);
        let many = BlockCopy {
            src_pitch: 16,
            rows: 1 << 30,
            ..big
        };
        assert_eq!(copy_words(&many), None);
        let fine = BlockCopy {
            src_pitch: 16,
            rows: 1000,
            ..big
        };
        assert!(copy_words(&fine).is_some());
    }

    #[test]
    fn the_copy_kernel_is_valid_wgsl() {
        super::super::validate_wgsl(COPY_SOURCE).unwrap();
    }
}
