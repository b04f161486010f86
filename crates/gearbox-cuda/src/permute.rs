//! Transposes, permutations and flips on the device
//! ([`LibraryCall::Permute`](gearbox_core::runtime::LibraryCall::Permute)):
//! one kernel launch per call, planned in core
//! ([`permute_launch`]) so every backend issues it alike, with no host
//! staging. Where output axis 0 reads the input at a stride and another
//! output axis reads it contiguously (a transpose), blocks of 256 threads
//! move 32 x 32 tiles through shared memory padded to 33 columns, so
//! both the reads (along the input's contiguous axis) and the writes
//! (along output axis 0) are coalesced and the tile's transposed reads
//! hit no bank twice; tiles of the other axes' positions (a batch) are
//! visited by a grid-stride loop. Otherwise (flips, permutations that keep
//! axis 0 first) each thread copies a few elements a block apart (their
//! loads in flight together), reads and writes along axis 0. Elements move as unsigned words of the dtype's size (1,
//! 4 or 8 bytes), so one kernel serves every dtype; index arithmetic is
//! 32-bit where every index stays below 2^30.

use cudarc::driver::PushKernelArg;
use gearbox_core::ops::permute::AxisOrder;
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::copies::{
    check_permute, described, permute_launch, PermuteLaunch, PERMUTE_AXES, PERMUTE_ENTRIES,
};
use gearbox_core::{DType, Result, Shape};

use crate::blas::unsupported;
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// CUDA C source of the strided copy and the tiled transpose, for
/// elements of 1, 4 and 8 bytes. The parameter block is
/// [`gearbox_core::runtime::copies::PermuteLaunch::params`].
pub const SOURCE: &str = r#"
#define GB_PER_THREAD(BYTES) ((BYTES) == 8 ? 2 : 4)
struct gb_perm {
    long long total, base, rank, tiles;
    long long dim[8], is[8], os[8];
};
template <typename T, typename I, typename U>
__device__ __forceinline__ I gb_source(const gb_perm& p, const I o) {
    // The last axis needs no division (what is left is its position).
    const int last = p.rank > 0 ? (int)p.rank - 1 : 0;
    U rest = (U)o;
    I at = (I)p.base;
    for (int k = 0; k < last; ++k) {
        const U d = (U)p.dim[k], q = rest / d;
        at += (I)(rest - q * d) * (I)p.is[k];
        rest = q;
    }
    return at + (I)rest * (I)p.is[last];
}
// Each thread moves V elements a block apart per step: their reads are
// issued before the writes, so a warp keeps V coalesced loads in flight
// (one 4-byte load per thread leaves the memory system half idle).
template <typename T, typename I, typename U, int V>
__device__ void gb_strided(const T* __restrict__ x, T* __restrict__ y, const gb_perm& p) {
    const I total = (I)p.total, block = (I)blockDim.x;
    const I step = (I)gridDim.x * block * V;
    for (I o0 = (I)blockIdx.x * block * V + (I)threadIdx.x; o0 < total; o0 += step) {
        T v[V];
#pragma unroll
        for (int u = 0; u < V; ++u) {
            const I o = o0 + (I)u * block;
            if (o < total) v[u] = x[gb_source<T, I, U>(p, o)];
        }
#pragma unroll
        for (int u = 0; u < V; ++u) {
            const I o = o0 + (I)u * block;
            if (o < total) y[o] = v[u];
        }
    }
}
template <typename T, typename I>
__device__ void gb_tiled(const T* __restrict__ x, T* __restrict__ y, const gb_perm& p,
                         T (*tile)[33]) {
    const int tx = (int)(threadIdx.x % 32), ty = (int)(threadIdx.x / 32);
    const int rank = (int)p.rank;
    const I a = (I)p.dim[0], b = (I)p.dim[1], sa = (I)p.is[0], sb = (I)p.is[1], ob = (I)p.os[1];
    const I ta = (a + 31) / 32, tb = (b + 31) / 32, tiles = (I)p.tiles;
    for (I t = (I)blockIdx.x; t < tiles; t += (I)gridDim.x) {
        I rest = t / ta;
        const I i0 = (t - rest * ta) * 32;
        I k = rest / tb;
        const I j0 = (rest - k * tb) * 32;
        I src = (I)p.base, dst = 0;
        for (int q = 2; q < rank; ++q) {
            const I d = (I)p.dim[q], kq = k / d, c = k - kq * d;
            src += c * (I)p.is[q];
            dst += c * (I)p.os[q];
            k = kq;
        }
        // Rows of the tile along the input's contiguous axis (b)...
        const I j = j0 + tx;
        for (int r = ty; r < 32; r += 8) {
            const I i = i0 + r;
            if (i < a && j < b) tile[r][tx] = x[src + i * sa + j * sb];
        }
        __syncthreads();
        // ... written as columns along output axis 0 (a).
        const I i = i0 + tx;
        for (int r = ty; r < 32; r += 8) {
            const I jj = j0 + r;
            if (i < a && jj < b) y[dst + i + jj * ob] = tile[tx][r];
        }
        __syncthreads();
    }
}
#define GB_PERMUTE(NAME, T, I, U) extern "C" __global__ void NAME( \
    const T* __restrict__ x, T* __restrict__ y, const gb_perm p) { \
    gb_strided<T, I, U, GB_PER_THREAD(sizeof(T))>(x, y, p); }
#define GB_TRANSPOSE(NAME, T, I) extern "C" __global__ void NAME( \
    const T* __restrict__ x, T* __restrict__ y, const gb_perm p) { \
    __shared__ T tile[32][33]; gb_tiled<T, I>(x, y, p, tile); }
GB_PERMUTE(gb_permute_1, unsigned char, long long, unsigned long long)
GB_PERMUTE(gb_permute_4, unsigned int, long long, unsigned long long)
GB_PERMUTE(gb_permute_8, unsigned long long, long long, unsigned long long)
GB_PERMUTE(gb_permute32_1, unsigned char, int, unsigned int)
GB_PERMUTE(gb_permute32_4, unsigned int, int, unsigned int)
GB_PERMUTE(gb_permute32_8, unsigned long long, int, unsigned int)
GB_TRANSPOSE(gb_transpose_1, unsigned char, long long)
GB_TRANSPOSE(gb_transpose_4, unsigned int, long long)
GB_TRANSPOSE(gb_transpose_8, unsigned long long, long long)
GB_TRANSPOSE(gb_transpose32_1, unsigned char, int)
GB_TRANSPOSE(gb_transpose32_4, unsigned int, int)
GB_TRANSPOSE(gb_transpose32_8, unsigned long long, int)
"#;

/// The kernels' parameter block, `struct gb_perm` in [`SOURCE`]: 28
/// `long long`s, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct Params([i64; 4 + 3 * PERMUTE_AXES]);

// SAFETY: a plain array of i64, laid out as `struct gb_perm` (28 long
// longs, no padding).
unsafe impl cudarc::driver::DeviceRepr for Params {}

/// Elements each thread of the strided copy moves per step:
/// `GB_PER_THREAD` in [`SOURCE`] for elements of `bytes` bytes.
fn per_thread(bytes: usize) -> usize {
    if bytes == 8 {
        2
    } else {
        4
    }
}

/// Blocks of 256 threads `launch` needs before its grid-stride loop: a
/// tile each, or `GB_PER_THREAD` elements per thread of the strided copy.
pub fn grid_blocks(launch: &PermuteLaunch, dtype: DType) -> usize {
    if launch.tiled {
        launch.blocks()
    } else {
        launch.blocks().div_ceil(per_thread(dtype.size_bytes()))
    }
}

/// Most blocks one launch starts (the kernels' grid-stride loops cover
/// the rest).
const MAX_BLOCKS: usize = 1 << 20;

/// `x` (shape `shape`) with its axes permuted and reversed by `order`,
/// into a new buffer of shape and dtype `out`.
pub fn permute(
    dev: &Device,
    cache: &KernelCache,
    (x, shape): (&CudaBuf, &Shape),
    order: AxisOrder,
    out: (&Shape, DType),
) -> Result<CudaBuf> {
    check_permute(described((x, shape)), order, out)
        .map_err(|why| unsupported(format!("permute: {why}")))?;
    let launch = permute_launch(shape, order, x.dtype()).ok_or_else(|| {
        unsupported(format!(
            "permute: axes {:?} of a {shape} array leave more than {PERMUTE_AXES} strided axes",
            order.perm()
        ))
    })?;
    let y = dev.pool.alloc(out.0.numel(), x.dtype())?;
    if launch.total == 0 {
        return Ok(y);
    }
    let compiled = cache.fixed(dev, SOURCE, &PERMUTE_ENTRIES)?;
    let entry = compiled.function(&launch.entry)?;
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (
            grid_blocks(&launch, x.dtype()).clamp(1, MAX_BLOCKS) as u32,
            1,
            1,
        ),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let params = Params(launch.params());
    let (px, py) = (dev.ptr(x), dev.ptr(&y));
    // SAFETY: x holds shape's values and y the result's (checked above);
    // the plan reads x only at base + sum o_k * is_k, inside x for every
    // output position, and writes each of y's values once; the arguments
    // follow gb_permute_*'s and gb_transpose_*'s signature in SOURCE.
    unsafe {
        dev.stream
            .launch_builder(entry)
            .arg(&px)
            .arg(&py)
            .arg(&params)
            .launch(config)
            .map_err(|e| fault("permute", e))?;
    }
    Ok(y)
}
