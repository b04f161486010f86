//! Transposes, permutations and flips on the OpenCL device
//! (`LibraryCall::Permute`): one kernel per call, planned in core
//! ([`permute_launch`]) as on every backend. A transpose moves 32 x 32
//! tiles through local memory padded to 33 columns, work-groups of 256
//! reading rows along the input's contiguous axis and writing columns
//! along output axis 0 (tiles of the other axes' positions in a loop over
//! groups); flips and permutations that keep axis 0 first copy one
//! element per work-item. Elements move as unsigned integers of the
//! dtype's size (1, 4 or 8 bytes), so one program serves every dtype;
//! index arithmetic is 32-bit where every index stays below 2^30. The
//! axis lengths and strides travel as `long8` arguments.

use gearbox_core::ops::permute::AxisOrder;
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::copies::{
    check_permute, described, permute_launch, PERMUTE_AXES, PERMUTE_ENTRIES, PERMUTE_TILE,
    PERMUTE_TILE_ROWS,
};
use gearbox_core::{DType, Result, Shape};

use super::{declined, global_size, Lib, GROUP};
use crate::buffer::ClBuf;
use crate::launch::Arg;

/// OpenCL C source of the strided copy and the tiled transpose, for
/// elements of 1, 4 and 8 bytes.
const SOURCE: &str = "
#define GB_PERMUTE_ARGS(T) __global const T* x, __global T* y, long total_, long base_, \\
    long rank_, long tiles_, long8 dim8, long8 is8, long8 os8
// Component k of v for a k known only at run time (once per work-item):
// the axes are read as named components everywhere else, never through a
// private array indexed at run time, which compilers keep in off-chip
// memory (the strided copy read it for every axis of every element).
long gb_component8(long8 v, int k) {
    switch (k) {
    case 0: return v.s0; case 1: return v.s1; case 2: return v.s2; case 3: return v.s3;
    case 4: return v.s4; case 5: return v.s5; case 6: return v.s6; default: return v.s7;
    }
}
// Axis K of the strided copy, when it is not the last: its position in
// `at`, the rest carried on.
#define GB_AXIS(K, U, I) if (K < last) { \\
    const U d = (U)dim8.s##K, q = rest / d; \\
    at += (I)(rest - q * d) * (I)is8.s##K; \\
    rest = q; \\
}
#define GB_PERMUTE(NAME, T, I, U) \\
__kernel void NAME(GB_PERMUTE_ARGS(T)) { \\
    const int last = rank_ > 0 ? (int)rank_ - 1 : 0; \\
    const I total = (I)total_, sl = (I)gb_component8(is8, last); \\
    for (I o = (I)get_global_id(0); o < total; o += (I)get_global_size(0)) { \\
        U rest = (U)o; \\
        I at = (I)base_; \\
        GB_AXIS(0, U, I) GB_AXIS(1, U, I) GB_AXIS(2, U, I) GB_AXIS(3, U, I) \\
        GB_AXIS(4, U, I) GB_AXIS(5, U, I) GB_AXIS(6, U, I) \\
        y[o] = x[at + (I)rest * sl]; \\
    } \\
}
// Batch axis Q (2 and up) of a tile: its position in `src` and `dst`.
#define GB_BATCH(Q, I) if (Q < rank) { \\
    const I d = (I)dim8.s##Q, kq = k / d, c = k - kq * d; \\
    src += c * (I)is8.s##Q; \\
    dst += c * (I)os8.s##Q; \\
    k = kq; \\
}
#define GB_TRANSPOSE(NAME, T, I) \\
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void NAME(GB_PERMUTE_ARGS(T)) { \\
    __local T tile[32][33]; \\
    const int lid = (int)get_local_id(0), tx = lid % 32, ty = lid / 32, rank = (int)rank_; \\
    const I a = (I)dim8.s0, b = (I)dim8.s1, sa = (I)is8.s0, sb = (I)is8.s1, ob = (I)os8.s1; \\
    const I ta = (a + 31) / 32, tb = (b + 31) / 32, tiles = (I)tiles_; \\
    for (I t = (I)get_group_id(0); t < tiles; t += (I)get_num_groups(0)) { \\
        I rest = t / ta; \\
        const I i0 = (t - rest * ta) * 32; \\
        I k = rest / tb; \\
        const I j0 = (rest - k * tb) * 32; \\
        I src = (I)base_, dst = 0; \\
        GB_BATCH(2, I) GB_BATCH(3, I) GB_BATCH(4, I) GB_BATCH(5, I) GB_BATCH(6, I) GB_BATCH(7, I) \\
        const I j = j0 + tx; \\
        for (int r = ty; r < 32; r += 8) { \\
            const I i = i0 + r; \\
            if (i < a && j < b) tile[r][tx] = x[src + i * sa + j * sb]; \\
        } \\
        barrier(CLK_LOCAL_MEM_FENCE); \\
        const I i = i0 + tx; \\
        for (int r = ty; r < 32; r += 8) { \\
            const I jj = j0 + r; \\
            if (i < a && jj < b) y[dst + i + jj * ob] = tile[tx][r]; \\
        } \\
        barrier(CLK_LOCAL_MEM_FENCE); \\
    } \\
}
GB_PERMUTE(gb_permute_1, uchar, long, ulong)
GB_PERMUTE(gb_permute_4, uint, long, ulong)
GB_PERMUTE(gb_permute_8, ulong, long, ulong)
GB_PERMUTE(gb_permute32_1, uchar, int, uint)
GB_PERMUTE(gb_permute32_4, uint, int, uint)
GB_PERMUTE(gb_permute32_8, ulong, int, uint)
GB_TRANSPOSE(gb_transpose_1, uchar, long)
GB_TRANSPOSE(gb_transpose_4, uint, long)
GB_TRANSPOSE(gb_transpose_8, ulong, long)
GB_TRANSPOSE(gb_transpose32_1, uchar, int)
GB_TRANSPOSE(gb_transpose32_4, uint, int)
GB_TRANSPOSE(gb_transpose32_8, ulong, int)
";

// The kernels take the axes as `long8`s and tile with groups of 32 x 8.
const _: () = assert!(PERMUTE_AXES == 8 && GROUP == PERMUTE_TILE * PERMUTE_TILE_ROWS);

/// `x` (shape `shape`) with its axes permuted and reversed by `order`,
/// into a new buffer of shape and dtype `out`.
pub fn permute(
    lib: &Lib<'_>,
    (x, shape): (&ClBuf, &Shape),
    order: AxisOrder,
    out: (&Shape, DType),
) -> Result<ClBuf> {
    check_permute(described((x, shape)), order, out).map_err(|why| declined("permute", why))?;
    let launch = permute_launch(shape, order, x.dtype()).ok_or_else(|| {
        declined(
            "permute",
            format!(
                "axes {:?} of a {shape} array leave more than {PERMUTE_AXES} strided axes",
                order.perm()
            ),
        )
    })?;
    let y = lib.dev.alloc(out.0.numel(), x.dtype())?;
    if launch.total == 0 {
        return Ok(y);
    }
    let program = lib.program("permute", || SOURCE.to_string(), &PERMUTE_ENTRIES)?;
    let kernel = program.kernel(&launch.entry)?;
    let args = [
        Arg::Buf(x),
        Arg::Buf(&y),
        Arg::Long(launch.total),
        Arg::Long(launch.base),
        Arg::Long(launch.rank),
        Arg::Long(launch.tiles),
        Arg::Long8(launch.dims),
        Arg::Long8(launch.istrides),
        Arg::Long8(launch.ostrides),
    ];
    // One work-group of GROUP (256) per tile or per 256 elements, at most
    // 65,536 groups: the kernels' loops cover the rest.
    let global = global_size(launch.blocks() * GROUP);
    lib.dev.enqueue(&kernel, &args, [global, 1], [GROUP, 1])?;
    Ok(y)
}
