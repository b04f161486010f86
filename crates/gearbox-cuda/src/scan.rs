//! `cumsum` and `cumprod` on the device, in three phases: lanes of
//! contiguous values (`inner == 1`: a vector, or axis 0 of a column-major
//! matrix) long enough to fill a block are cut into tiles that a block reads
//! and writes coalesced (a block-wide fold, a block-wide scan of each lane's
//! tile totals, a block-wide scan of each tile from its prefix); any other
//! layout takes the chunked scan below, whose threads walk interleaved lanes
//! side by side.
//!
//! The array is seen as `(inner, len, outer)` around the scanned axis (the
//! flattening is `(1, n, 1)`), so it has `inner * outer` lanes of `len`
//! values, lane `(i, o)` reading `x[i + inner * (k + len * o)]`. Each lane is
//! cut into `chunks` pieces: phase 1 folds each piece, phase 2 turns each
//! lane's piece totals into exclusive prefixes, phase 3 rescans each piece
//! from its prefix. Accumulation is in double, as on the CPU, so results
//! match the sequential CPU scan to rounding.

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::scan_plan;
use gearbox_core::{DType, Result, Shape};

use crate::blas::unsupported;
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// CUDA C source of the scan phases, for float (`_s`) and double (`_d`).
pub const SOURCE: &str = r#"
struct Layout { long long inner, len, outer, chunks, chunk_len; };
__device__ __forceinline__ double gb_op(double a, double b, int product) { return product ? a * b : a + b; }
template <typename T> __device__ void phase1(const T* x, double* totals, Layout l, int product) {
    long long items = l.inner * l.outer * l.chunks;
    for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < items; w += (long long)gridDim.x * blockDim.x) {
        long long i = w % l.inner, c = (w / l.inner) % l.chunks, o = w / (l.inner * l.chunks);
        long long k0 = c * l.chunk_len, k1 = min(l.len, k0 + l.chunk_len);
        double acc = product ? 1.0 : 0.0;
        for (long long k = k0; k < k1; ++k) acc = gb_op(acc, (double)x[i + l.inner * (k + l.len * o)], product);
        totals[w] = acc;
    }
}
// One thread per lane: exclusive prefixes of its chunk totals, in place.
__device__ void phase2(double* totals, Layout l, int product) {
    long long lanes = l.inner * l.outer;
    for (long long lane = blockIdx.x * (long long)blockDim.x + threadIdx.x; lane < lanes; lane += (long long)gridDim.x * blockDim.x) {
        long long i = lane % l.inner, o = lane / l.inner;
        double acc = product ? 1.0 : 0.0;
        for (long long c = 0; c < l.chunks; ++c) {
            long long w = i + l.inner * (c + l.chunks * o);
            double t = totals[w];
            totals[w] = acc;
            acc = gb_op(acc, t, product);
        }
    }
}
template <typename T> __device__ void phase3(const T* x, T* y, const double* prefix, Layout l, int product) {
    long long items = l.inner * l.outer * l.chunks;
    for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < items; w += (long long)gridDim.x * blockDim.x) {
        long long i = w % l.inner, c = (w / l.inner) % l.chunks, o = w / (l.inner * l.chunks);
        long long k0 = c * l.chunk_len, k1 = min(l.len, k0 + l.chunk_len);
        double acc = prefix[w];
        for (long long k = k0; k < k1; ++k) {
            long long at = i + l.inner * (k + l.len * o);
            acc = gb_op(acc, (double)x[at], product);
            y[at] = (T)acc;
        }
    }
}
// The tiled scan of contiguous lanes: 256 threads, 16 values each a tile.
#define GB_TILE_THREADS 256
#define GB_TILE_ITEMS 16
#define GB_TILE (GB_TILE_THREADS * GB_TILE_ITEMS)
// A tile in shared memory has one pad element per 32, so that the threads
// of a warp reading their own 16 consecutive values hit different banks.
#define GB_PAD(k) ((k) + ((k) >> 5))
struct Tiles { long long len, outer, tiles; };
__device__ __forceinline__ double gb_ident(int product) { return product ? 1.0 : 0.0; }
// The fold of the block's values, in thread 0.
__device__ double gb_block_fold(double v, int product) {
    __shared__ double part[32];
    for (int d = 16; d > 0; d >>= 1) v = gb_op(v, __shfl_down_sync(0xffffffffu, v, d), product);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : gb_ident(product);
        for (int d = 16; d > 0; d >>= 1) v = gb_op(v, __shfl_down_sync(0xffffffffu, v, d), product);
    }
    __syncthreads();
    return v;
}
// The exclusive scan of one value per thread in thread order, and the
// block's total in *total (every thread).
__device__ double gb_block_exclusive(double v, int product, double* total) {
    __shared__ double warps[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    double inc = v;
    for (int d = 1; d < 32; d <<= 1) {
        double t = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= d) inc = gb_op(inc, t, product);
    }
    double ex = __shfl_up_sync(0xffffffffu, inc, 1);
    if (lane == 0) ex = gb_ident(product);
    if (lane == 31) warps[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        double w = lane < nw ? warps[lane] : gb_ident(product);
        for (int d = 1; d < 32; d <<= 1) {
            double t = __shfl_up_sync(0xffffffffu, w, d);
            if (lane >= d) w = gb_op(w, t, product);
        }
        if (lane < nw) warps[lane] = w;
    }
    __syncthreads();
    double before = warp == 0 ? gb_ident(product) : warps[warp - 1];
    *total = warps[nw - 1];
    __syncthreads();
    return gb_op(before, ex, product);
}
// Phase 1: block b folds tile b (lane b / tiles) into totals[b].
template <typename T> __device__ void tile_fold(const T* x, double* totals, Tiles l, int product) {
    long long b = blockIdx.x, o = b / l.tiles, k0 = (b % l.tiles) * GB_TILE;
    long long k1 = min(l.len, k0 + GB_TILE);
    const T* lane = x + o * l.len;
    double acc = gb_ident(product);
    for (long long k = k0 + threadIdx.x; k < k1; k += GB_TILE_THREADS) acc = gb_op(acc, (double)lane[k], product);
    acc = gb_block_fold(acc, product);
    if (threadIdx.x == 0) totals[b] = acc;
}
// Phase 2: block o turns lane o's tile totals into exclusive prefixes.
extern "C" __global__ void gb_tscan2(double* totals, Tiles l, int product) {
    double* t = totals + (long long)blockIdx.x * l.tiles;
    double carry = gb_ident(product);
    for (long long base = 0; base < l.tiles; base += blockDim.x) {
        long long c = base + threadIdx.x;
        double total;
        double ex = gb_block_exclusive(c < l.tiles ? t[c] : gb_ident(product), product, &total);
        if (c < l.tiles) t[c] = gb_op(carry, ex, product);
        carry = gb_op(carry, total, product);
    }
}
// Phase 3: block b scans tile b from its prefix: coalesced through shared
// memory, each thread scanning 16 consecutive values.
template <typename T> __device__ void tile_scan(const T* x, T* y, const double* prefix, Tiles l, int product) {
    __shared__ T tile[GB_PAD(GB_TILE)];
    long long b = blockIdx.x, o = b / l.tiles, k0 = (b % l.tiles) * GB_TILE;
    int count = (int)min((long long)GB_TILE, l.len - k0);
    const T* src = x + o * l.len + k0;
    T* dst = y + o * l.len + k0;
    for (int k = threadIdx.x; k < count; k += GB_TILE_THREADS) tile[GB_PAD(k)] = src[k];
    __syncthreads();
    int s0 = threadIdx.x * GB_TILE_ITEMS;
    double own = gb_ident(product);
    for (int j = 0; j < GB_TILE_ITEMS; ++j)
        if (s0 + j < count) own = gb_op(own, (double)tile[GB_PAD(s0 + j)], product);
    double total;
    double run = gb_op(prefix[b], gb_block_exclusive(own, product, &total), product);
    for (int j = 0; j < GB_TILE_ITEMS; ++j)
        if (s0 + j < count) { run = gb_op(run, (double)tile[GB_PAD(s0 + j)], product); tile[GB_PAD(s0 + j)] = (T)run; }
    __syncthreads();
    for (int k = threadIdx.x; k < count; k += GB_TILE_THREADS) dst[k] = tile[GB_PAD(k)];
}
extern "C" __global__ void gb_tscan1_s(const float* x, double* t, Tiles l, int p) { tile_fold(x, t, l, p); }
extern "C" __global__ void gb_tscan1_d(const double* x, double* t, Tiles l, int p) { tile_fold(x, t, l, p); }
extern "C" __global__ void gb_tscan3_s(const float* x, float* y, const double* t, Tiles l, int p) { tile_scan(x, y, t, l, p); }
extern "C" __global__ void gb_tscan3_d(const double* x, double* y, const double* t, Tiles l, int p) { tile_scan(x, y, t, l, p); }
extern "C" __global__ void gb_scan1_s(const float* x, double* t, Layout l, int p) { phase1(x, t, l, p); }
extern "C" __global__ void gb_scan1_d(const double* x, double* t, Layout l, int p) { phase1(x, t, l, p); }
extern "C" __global__ void gb_scan2(double* t, Layout l, int p) { phase2(t, l, p); }
extern "C" __global__ void gb_scan3_s(const float* x, float* y, const double* t, Layout l, int p) { phase3(x, y, t, l, p); }
extern "C" __global__ void gb_scan3_d(const double* x, double* y, const double* t, Layout l, int p) { phase3(x, y, t, l, p); }
"#;

/// The entry points of [`SOURCE`].
pub const ENTRIES: &[&str] = &[
    "gb_tscan1_s",
    "gb_tscan1_d",
    "gb_tscan2",
    "gb_tscan3_s",
    "gb_tscan3_d",
    "gb_scan1_s",
    "gb_scan1_d",
    "gb_scan2",
    "gb_scan3_s",
    "gb_scan3_d",
];

/// The kernels' `Layout` argument (same field order and types as the C struct).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Layout {
    inner: i64,
    len: i64,
    outer: i64,
    chunks: i64,
    chunk_len: i64,
}

// SAFETY: plain-old-data of five i64, laid out like the C struct.
unsafe impl cudarc::driver::DeviceRepr for Layout {}

/// The tiled kernels' `Tiles` argument (same field order and types as the
/// C struct): lanes of `len` contiguous values, `outer` of them, `tiles`
/// tiles each.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Tiles {
    len: i64,
    outer: i64,
    tiles: i64,
}

// SAFETY: plain-old-data of three i64, laid out like the C struct.
unsafe impl cudarc::driver::DeviceRepr for Tiles {}

/// Threads of a tiled-scan block, and values a tile holds (`GB_TILE_THREADS`
/// and `GB_TILE` in [`SOURCE`]).
const TILE_THREADS: usize = 256;
const TILE: usize = TILE_THREADS * 16;

/// The cumulative sum or product of `x` (shape `shape`) along `axis`.
pub fn scan(
    dev: &Device,
    cache: &KernelCache,
    x: &CudaBuf,
    shape: &Shape,
    product: bool,
    axis: Option<usize>,
    out: DType,
) -> Result<CudaBuf> {
    let dtype = x.dtype();
    scan_plan::check_dtype(dtype, out).map_err(unsupported)?;
    let (inner, len, outer) = scan_plan::lanes(shape, axis).map_err(unsupported)?;
    let y = dev.pool.alloc(shape.numel(), dtype)?;
    let lanes = inner * outer;
    if lanes == 0 || len == 0 {
        return Ok(y);
    }
    let compiled = cache.fixed(dev, SOURCE, ENTRIES)?;
    let sfx = if dtype == DType::F32 { "s" } else { "d" };
    if inner == 1 && len >= TILE_THREADS {
        return tiled(dev, &compiled, x, y, (len, outer), product, sfx);
    }
    // Enough pieces for about 2^20 threads, at least 64 values each.
    let chunks = scan_plan::chunks_for(lanes, len);
    let layout = Layout {
        inner: inner as i64,
        len: len as i64,
        outer: outer as i64,
        chunks: chunks as i64,
        chunk_len: len.div_ceil(chunks) as i64,
    };
    let totals = dev.pool.alloc(lanes * chunks, DType::F64)?;
    let grid = |items: usize| cudarc::driver::LaunchConfig {
        grid_dim: (items.div_ceil(256).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let pieces = grid(lanes * chunks);
    launch_phases(
        dev,
        &compiled,
        [
            &format!("gb_scan1_{sfx}"),
            "gb_scan2",
            &format!("gb_scan3_{sfx}"),
        ],
        (x, &y, &totals),
        &layout,
        product,
        [pieces, grid(lanes), pieces],
    )?;
    drop(totals);
    Ok(y)
}

/// The tiled scan of `outer` contiguous lanes of `len` values (at least a
/// block's threads) of `x` into `y`.
fn tiled(
    dev: &Device,
    compiled: &crate::compile::Compiled,
    x: &CudaBuf,
    y: CudaBuf,
    (len, outer): (usize, usize),
    product: bool,
    sfx: &str,
) -> Result<CudaBuf> {
    let tiles = len.div_ceil(TILE);
    let layout = Tiles {
        len: len as i64,
        outer: outer as i64,
        tiles: tiles as i64,
    };
    let blocks = outer * tiles;
    if blocks > i32::MAX as usize {
        return Err(unsupported(format!(
            "{blocks} tiles are more blocks than a launch takes"
        )));
    }
    let totals = dev.pool.alloc(blocks, DType::F64)?;
    let config = |grid: usize| cudarc::driver::LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (TILE_THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    launch_phases(
        dev,
        compiled,
        [
            &format!("gb_tscan1_{sfx}"),
            "gb_tscan2",
            &format!("gb_tscan3_{sfx}"),
        ],
        (x, &y, &totals),
        &layout,
        product,
        [config(blocks), config(outer), config(blocks)],
    )?;
    drop(totals);
    Ok(y)
}

/// Launches a scan's three kernels `entries` (fold to totals, totals to
/// prefixes, rescan from the prefixes) on their `grids`, each taking the
/// layout argument `layout` (a [`Layout`] or a [`Tiles`]) and reading `x`,
/// the last writing `y`, with the partials in `totals`.
fn launch_phases<L: cudarc::driver::DeviceRepr>(
    dev: &Device,
    compiled: &crate::compile::Compiled,
    entries: [&str; 3],
    (x, y, totals): (&CudaBuf, &CudaBuf, &CudaBuf),
    layout: &L,
    product: bool,
    grids: [cudarc::driver::LaunchConfig; 3],
) -> Result<()> {
    use cudarc::driver::PushKernelArg;
    let p = product as i32;
    let (px, py, pt) = (dev.ptr(x), dev.ptr(y), dev.ptr(totals));
    let [fold, carry, rescan] = entries;
    let (fold, carry, rescan) = (
        compiled.function(fold)?,
        compiled.function(carry)?,
        compiled.function(rescan)?,
    );
    let failed = |e| fault("cumsum", e);
    // SAFETY: the callers' layouts describe x and y (the same number of
    // values) and the entries of totals exactly as SOURCE's kernels index
    // them; the arguments follow the kernels' signatures in SOURCE.
    unsafe {
        dev.stream
            .launch_builder(fold)
            .arg(&px)
            .arg(&pt)
            .arg(layout)
            .arg(&p)
            .launch(grids[0])
            .map_err(failed)?;
        dev.stream
            .launch_builder(carry)
            .arg(&pt)
            .arg(layout)
            .arg(&p)
            .launch(grids[1])
            .map_err(failed)?;
        dev.stream
            .launch_builder(rescan)
            .arg(&px)
            .arg(&py)
            .arg(&pt)
            .arg(layout)
            .arg(&p)
            .launch(grids[2])
            .map_err(failed)?;
    }
    Ok(())
}
