//! `take` on the OpenCL device: positions along an axis gathered by one
//! kernel that moves unsigned words of 1, 4, 8 or 16 bytes (the widest
//! that divides the run of values one position selects: `take_launch`),
//! so one program serves every dtype; its index
//! arithmetic is 32-bit where the sizes allow. Around the axis
//! the input is `(inner, len, outer)`; output value `o = (k * n + j) *
//! inner + i` is input value `(k * len + idx[j]) * inner + i`. Positions
//! were checked against the axis when the take was made; a position
//! outside it gives a zero, never a read past the input.

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::copies::{check_take, described, take_launch, TAKE_ENTRIES};
use gearbox_core::{DType, Result, Shape};

use super::{declined, global_size, Lib, GROUP};
use crate::buffer::ClBuf;
use crate::launch::Arg;

/// OpenCL C source of the gather, for words of 1, 4, 8 and 16 bytes.
const SOURCE: &str = "
#define GB_TAKE(NAME, T, I) \\
__kernel void NAME(__global const T* x, __global const long* idx, __global T* y, \\
                   long inner_, long len_, long n_, long total_) { \\
    I inner = (I)inner_, len = (I)len_, n = (I)n_, total = (I)total_; \\
    for (I o = (I)get_global_id(0); o < total; o += (I)get_global_size(0)) { \\
        I rest = o / inner, i = o - rest * inner; \\
        I k = rest / n, j = rest - k * n; \\
        long p = idx[j]; \\
        y[o] = (p >= 0 && p < (long)len) ? x[(k * len + (I)p) * inner + i] : (T)0; \\
    } \\
}
GB_TAKE(gb_take_1, uchar, long)
GB_TAKE(gb_take_4, uint, long)
GB_TAKE(gb_take_8, ulong, long)
GB_TAKE(gb_take_16, uint4, long)
GB_TAKE(gb_take32_1, uchar, uint)
GB_TAKE(gb_take32_4, uint, uint)
GB_TAKE(gb_take32_8, ulong, uint)
GB_TAKE(gb_take32_16, uint4, uint)
";

/// Positions `idx` (an `i64` vector) along `axis` of `x` (shape `shape`),
/// into a new buffer of shape and dtype `out`.
pub fn take(
    lib: &Lib<'_>,
    (x, shape): (&ClBuf, &Shape),
    idx: &ClBuf,
    axis: usize,
    out: (&Shape, DType),
) -> Result<ClBuf> {
    check_take(described((x, shape)), (idx.len(), idx.dtype()), axis, out)
        .map_err(|why| declined("take", why))?;
    let y = lib.dev.alloc(out.0.numel(), x.dtype())?;
    let (entry, dims) = take_launch(shape, axis, idx.len(), x.dtype());
    if dims[3] == 0 {
        return Ok(y);
    }
    let program = lib.program("take", || SOURCE.to_string(), &TAKE_ENTRIES)?;
    let kernel = program.kernel(&entry)?;
    let mut args = vec![Arg::Buf(x), Arg::Buf(idx), Arg::Buf(&y)];
    args.extend(dims.map(Arg::Long));
    lib.dev.enqueue(
        &kernel,
        &args,
        [global_size(dims[3] as usize), 1],
        [GROUP, 1],
    )?;
    Ok(y)
}
