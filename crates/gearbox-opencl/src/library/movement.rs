//! `slice` and `concat` on the OpenCL device: each strided block copy
//! ([`gearbox_core::runtime::copies`], the arithmetic shared with the other
//! backends) is one `clEnqueueCopyBufferRect`, in order with the kernels
//! around it, with no host staging; any dtype (a copy moves bytes).
//!
//! Inputs are checked against their shapes and the result before anything
//! is enqueued ([`gearbox_core::runtime::copies::check_slice`] and
//! [`gearbox_core::runtime::copies::check_concat`]); bad input is declined
//! with an error of kind `Compile` (the runtime reruns the call on the CPU
//! and the backend stays healthy), never a panic.

use gearbox_core::runtime::copies::{
    check_concat, check_slice, concat_copies, described, slice_copies, BlockCopy, Described,
};
use gearbox_core::{DType, Result, Shape};

use super::{declined, Lib};
use crate::buffer::ClBuf;
use crate::device::cl_error;

/// Slices `x` (shape `shape`) to `start..end` along `axis`, into a new
/// buffer of shape and dtype `out`.
pub fn slice(
    lib: &Lib<'_>,
    (x, shape): (&ClBuf, &Shape),
    (axis, start, end): (usize, usize, usize),
    (out_shape, dtype): (&Shape, DType),
) -> Result<ClBuf> {
    check_slice(
        described((x, shape)),
        (axis, start, end),
        (out_shape, dtype),
    )
    .map_err(|why| declined("slice", why))?;
    let mut y = lib.dev.alloc(out_shape.numel(), dtype)?;
    let copy = slice_copies(shape, axis, start, end, dtype.size_bytes());
    issue(lib, x, &mut y, &copy)?;
    Ok(y)
}

/// Joins `parts` (buffer and shape, each of the result dtype) along `axis`
/// into a new buffer of shape and dtype `out`.
pub fn concat(
    lib: &Lib<'_>,
    parts: &[(&ClBuf, &Shape)],
    axis: usize,
    (out_shape, dtype): (&Shape, DType),
) -> Result<ClBuf> {
    let described: Vec<Described<'_>> = parts.iter().map(|&p| described(p)).collect();
    check_concat(&described, axis, (out_shape, dtype)).map_err(|why| declined("concat", why))?;
    let mut y = lib.dev.alloc(out_shape.numel(), dtype)?;
    let shapes: Vec<&Shape> = parts.iter().map(|(_, s)| *s).collect();
    let copies = concat_copies(out_shape, axis, &shapes, dtype.size_bytes());
    for ((b, _), c) in parts.iter().zip(&copies) {
        issue(lib, b, &mut y, c)?;
    }
    Ok(y)
}

/// Enqueues one strided copy from `src` to `dst` (whose extents the
/// callers checked against the shapes): rows of `width` bytes at the two
/// pitches, as one rectangle.
fn issue(lib: &Lib<'_>, src: &ClBuf, dst: &mut ClBuf, c: &BlockCopy) -> Result<()> {
    if c.is_empty() {
        return Ok(());
    }
    let q = &lib.dev.queue;
    // SAFETY: both buffers hold the rows the copy touches (checked against
    // the shapes); the driver retains them until the copy completes.
    unsafe {
        if c.is_linear() {
            q.enqueue_copy_buffer(
                src.block(),
                dst.block_mut(),
                c.src,
                c.dst,
                c.width * c.rows,
                &[],
            )
        } else {
            q.enqueue_copy_buffer_rect(
                src.block(),
                dst.block_mut(),
                [c.src, 0, 0].as_ptr(),
                [c.dst, 0, 0].as_ptr(),
                [c.width, c.rows, 1].as_ptr(),
                c.src_pitch,
                0,
                c.dst_pitch,
                0,
                &[],
            )
        }
    }
    .map_err(cl_error("copy"))?;
    Ok(())
}
