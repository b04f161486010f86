//! `take` on the OpenCL device: positions along an axis gathered by one
//! kernel that moves elements as unsigned integers of the dtype's size
//! (1, 4 or 8 bytes), so one program serves every dtype; its index
//! arithmetic is 32-bit where the sizes allow. Around the axis
//! the input is `(inner, len, outer)`; output value `o = (k * n + j) *
//! inner + i` is input value `(k * len + idx[j]) * inner + i`. Positions
//! were checked against the axis when the take was made; a position
//! outside it gives a zero, never a read past the input.

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::{DType, Result, Shape};

use super::{declined, global_size, Lib, GROUP};
use crate::buffer::ClBuf;
use crate::launch::Arg;

/// OpenCL C source of the gather, for elements of 1, 4 and 8 bytes.
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
GB_TAKE(gb_take32_1, uchar, uint)
GB_TAKE(gb_take32_4, uint, uint)
GB_TAKE(gb_take32_8, ulong, uint)
";

/// The entry points of [`SOURCE`]: 64-bit index arithmetic, and 32-bit
/// (`gb_take32_*`, cheaper) for inputs and results of fewer than 2^31
/// values.
const ENTRIES: [&str; 6] = [
    "gb_take_1",
    "gb_take_4",
    "gb_take_8",
    "gb_take32_1",
    "gb_take32_4",
    "gb_take32_8",
];

/// Positions `idx` (an `i64` vector) along `axis` of `x` (shape `shape`),
/// into a new buffer of shape and dtype `out`.
pub fn take(
    lib: &Lib<'_>,
    (x, shape): (&ClBuf, &Shape),
    idx: &ClBuf,
    axis: usize,
    out: (&Shape, DType),
) -> Result<ClBuf> {
    let dtype = x.dtype();
    let n = idx.len();
    if out.1 != dtype
        || idx.dtype() != DType::I64
        || axis >= shape.ndim()
        || *out.0 != shape.with_dim(axis, n)
    {
        return Err(declined(
            "take",
            format!(
                "{n} {} positions along axis {axis} of a {shape} {dtype} array into a {} {}",
                idx.dtype(),
                out.0,
                out.1
            ),
        ));
    }
    let y = lib.dev.alloc(out.0.numel(), dtype)?;
    let total = out.0.numel();
    if total == 0 {
        return Ok(y);
    }
    let (inner, len, _) = shape.split_at_axis(axis);
    let program = lib.program("take", || SOURCE.to_string(), &ENTRIES)?;
    let width = if shape.numel().max(total) < 1 << 31 {
        "32"
    } else {
        ""
    };
    let kernel = program.kernel(&format!("gb_take{width}_{}", dtype.size_bytes()))?;
    let args = [
        Arg::Buf(x),
        Arg::Buf(idx),
        Arg::Buf(&y),
        Arg::Long(inner as i64),
        Arg::Long(len as i64),
        Arg::Long(n as i64),
        Arg::Long(total as i64),
    ];
    lib.dev
        .enqueue(&kernel, &args, [global_size(total), 1], [GROUP, 1])?;
    Ok(y)
}
