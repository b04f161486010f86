//! `slice` and `concat` on the device: device-to-device copies on the
//! backend's stream, with no kernel and no host staging.
//!
//! Storage is column-major, so around an axis an array is `(inner, len,
//! outer)`: `outer` contiguous blocks of `len * inner` values. A slice
//! `start..end` is one strided copy of `outer` rows of `(end - start) *
//! inner` values read at a pitch of `len * inner`; a concat is one such copy
//! per input, written at the input's offset inside each output block. Each
//! strided copy ([`BlockCopy`]) is issued as the cheapest form the driver
//! accepts ([`CopyForm`]): nothing when empty, one linear copy when the rows
//! are back to back, a 2-D copy (`cuMemcpy2DAsync`) when both pitches are
//! within the device's limit, else one linear copy per row (pitches beyond
//! the limit, about 2 GiB, leave only a handful of rows).
//!
//! The layout arithmetic is core's ([`gearbox_core::runtime::copies`]),
//! shared with the other backends.

use cudarc::driver::sys;
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::copies::{concat_copies, slice_copies, BlockCopy};
use gearbox_core::{DType, Result, Shape};

use crate::blas::unsupported;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// The most rows one 2-D copy is given (larger copies are cut into pieces),
/// kept within the driver's 32-bit row counts.
pub const MAX_ROWS_PER_COPY: usize = i32::MAX as usize;

/// How a [`BlockCopy`] is issued to the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyForm {
    /// Nothing to copy (no rows or empty rows).
    Nothing,
    /// One linear copy of this many bytes (the rows are back to back on
    /// both sides, or there is one row).
    Linear(usize),
    /// One 2-D copy (both pitches within the limit).
    TwoD,
    /// One linear copy per row (a pitch beyond the limit).
    PerRow,
}

/// The form `c` takes on a device whose 2-D copies accept pitches up to
/// `max_pitch` bytes.
pub fn form(c: &BlockCopy, max_pitch: usize) -> CopyForm {
    if c.is_empty() {
        CopyForm::Nothing
    } else if c.is_linear() {
        CopyForm::Linear(c.width * c.rows)
    } else if c.src_pitch <= max_pitch && c.dst_pitch <= max_pitch {
        CopyForm::TwoD
    } else {
        CopyForm::PerRow
    }
}

/// Slices `x` (shape `shape`) to `start..end` along `axis`.
pub fn slice(
    dev: &Device,
    x: &CudaBuf,
    shape: &Shape,
    (axis, start, end): (usize, usize, usize),
    out: (&Shape, DType),
) -> Result<CudaBuf> {
    let dtype = x.dtype();
    if out.1 != dtype || axis >= shape.ndim() || start > end || end > shape.dim(axis) {
        return Err(unsupported(format!(
            "slice {start}..{end} on axis {axis} of a {shape} {dtype} array into {}",
            out.1
        )));
    }
    let y = dev.pool.alloc(out.0.numel(), dtype)?;
    let copy = slice_copies(shape, axis, start, end, dtype.size_bytes());
    issue(dev, dev.ptr(x), dev.ptr(&y), &copy)?;
    Ok(y)
}

/// Joins `parts` (buffer and shape, each of the result dtype) along `axis`
/// into a new buffer of shape and dtype `out`.
pub fn concat(
    dev: &Device,
    parts: &[(&CudaBuf, &Shape)],
    axis: usize,
    out: (&Shape, DType),
) -> Result<CudaBuf> {
    let (shape, dtype) = out;
    if let Some((b, _)) = parts.iter().find(|(b, _)| b.dtype() != dtype) {
        return Err(unsupported(format!(
            "concat joins parts of the result dtype {dtype}, not {}",
            b.dtype()
        )));
    }
    let total: usize = parts.iter().map(|(_, s)| s.dim(axis)).sum();
    if axis >= shape.ndim() || total != shape.dim(axis) {
        return Err(unsupported(format!(
            "concat of {} parts along axis {axis} cannot fill a {shape} array",
            parts.len()
        )));
    }
    let y = dev.pool.alloc(shape.numel(), dtype)?;
    let shapes: Vec<&Shape> = parts.iter().map(|(_, s)| *s).collect();
    let copies = concat_copies(shape, axis, &shapes, dtype.size_bytes());
    let dst = dev.ptr(&y);
    for ((b, _), c) in parts.iter().zip(&copies) {
        issue(dev, dev.ptr(b), dst, c)?;
    }
    Ok(y)
}

/// Queues one strided copy from device address `src` to `dst` on the stream.
fn issue(dev: &Device, src: u64, dst: u64, c: &BlockCopy) -> Result<()> {
    let how = form(c, dev.max_pitch);
    if how == CopyForm::Nothing {
        return Ok(());
    }
    dev.ctx
        .bind_to_thread()
        .map_err(|e| fault("device copy", e))?;
    let stream = dev.stream.cu_stream();
    let linear = |from: usize, to: usize, bytes: usize| {
        // SAFETY: both ranges lie inside live buffers of this context (the
        // layout is checked against the shapes by the callers), the
        // destination is a fresh buffer that overlaps no source, and the copy
        // is ordered on the one stream every other use of them goes to.
        unsafe {
            sys::cuMemcpyDtoDAsync_v2(dst + to as u64, src + from as u64, bytes, stream)
                .result()
                .map_err(|e| fault("device copy", e))
        }
    };
    match how {
        CopyForm::Nothing => Ok(()),
        CopyForm::Linear(bytes) => linear(c.src, c.dst, bytes),
        CopyForm::PerRow => (0..c.rows)
            .try_for_each(|k| linear(c.src + k * c.src_pitch, c.dst + k * c.dst_pitch, c.width)),
        CopyForm::TwoD => {
            let mut first = 0;
            while first < c.rows {
                let rows = (c.rows - first).min(MAX_ROWS_PER_COPY);
                let params = sys::CUDA_MEMCPY2D {
                    srcXInBytes: 0,
                    srcY: 0,
                    srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                    srcHost: std::ptr::null(),
                    srcDevice: src + (c.src + first * c.src_pitch) as u64,
                    srcArray: std::ptr::null_mut(),
                    srcPitch: c.src_pitch,
                    dstXInBytes: 0,
                    dstY: 0,
                    dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                    dstHost: std::ptr::null_mut(),
                    dstDevice: dst + (c.dst + first * c.dst_pitch) as u64,
                    dstArray: std::ptr::null_mut(),
                    dstPitch: c.dst_pitch,
                    WidthInBytes: c.width,
                    Height: rows,
                };
                // SAFETY: as for the linear copies; the rows read and
                // written lie inside the buffers, and both pitches are at
                // most the device's limit.
                unsafe {
                    sys::cuMemcpy2DAsync_v2(&params, stream)
                        .result()
                        .map_err(|e| fault("device copy", e))?;
                }
                first += rows;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(form(&c(16, 8, 0, 5), 1 << 20), CopyForm::Nothing);
        assert_eq!(form(&c(16, 8, 8, 0), 1 << 20), CopyForm::Nothing);
        assert_eq!(form(&c(16, 8, 8, 1), 1 << 20), CopyForm::Linear(8));
        assert_eq!(form(&c(8, 8, 8, 4), 1 << 20), CopyForm::Linear(32));
        assert_eq!(form(&c(16, 8, 8, 4), 1 << 20), CopyForm::TwoD);
        assert_eq!(form(&c(16, 8, 8, 4), 15), CopyForm::PerRow);
        assert_eq!(form(&c(8, 16, 8, 4), 15), CopyForm::PerRow);
    }
}
