//! `cumsum` and `cumprod` on the device. Lanes of contiguous values
//! (`inner == 1`: a vector, or axis 0 of a column-major matrix) long enough
//! to fill a block are cut into tiles of 4,096 values that a block reads and
//! writes coalesced and scans in shared memory, each from the running value
//! of the lane's tiles before it ([`path`] picks the way). Many lanes (at
//! least [`LANE_BLOCKS_PER_SM`] per SM) take one pass: a block per lane
//! walks its tiles in order, carrying the running value from one to the
//! next, so the data is read once and written once. Fewer lanes take three
//! phases, a block per tile, which fill the device however few the lanes:
//! a block-wide fold of each tile, a block-wide scan of each lane's tile
//! totals, a block-wide scan of each tile from its prefix (two reads and a
//! write). Any other layout takes the chunked scan below, whose threads
//! walk interleaved lanes side by side.
//!
//! The array is seen as `(inner, len, outer)` around the scanned axis (the
//! flattening is `(1, n, 1)`), so it has `inner * outer` lanes of `len`
//! values, lane `(i, o)` reading `x[i + inner * (k + len * o)]`. Each lane is
//! cut into `chunks` pieces: phase 1 folds each piece, phase 2 turns each
//! lane's piece totals into exclusive prefixes, phase 3 rescans each piece
//! from its prefix; a lane of one piece (many lanes: e.g. along the rows of
//! a tall matrix, adjacent threads taking adjacent rows) is scanned by
//! phase 3 alone, one pass over the data. Sums accumulate in double, as on
//! the CPU, so results match the sequential CPU scan to rounding; products
//! keep the scaled running product of
//! [`gearbox_core::runtime::scan_product`] (a double mantissa and an
//! exponent in units of 2^400), so no prefix overflows or underflows on the
//! way: a lane of one piece has the CPU's bits; grouped pieces and tiles
//! (scanned as trees of threads' folds) are within
//! `scan_product::tolerance`. The loops take a value at a time
//! (`ProdOp::step`) with the common case first, which keeps the bits of the
//! rule's lift and join.

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::scan_plan;
use gearbox_core::{DType, Result, Shape};

use crate::blas::unsupported;
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// CUDA C source of the scans (the one pass, the tiled phases, the chunked
/// phases), for float (`_s`) and double (`_d`).
pub const SOURCE: &str = r#"
struct Layout { long long inner, len, outer, chunks, chunk_len; };
// The running product m * S^e, S = 2^400 (scan_product's rule: the
// representation of prod's scaled accumulator).
struct gb_scaled { double m, e; };
#define GB_S 2.5822498780869086e120
#define GB_INV 3.8725919148493183e-121
#define GB_DMAX 1.7976931348623157e308
// Whether m lies in [1/S, S], where the rescale leaves it as it is.
__device__ __forceinline__ bool gb_in_unit(double m) { return fabs(m) >= GB_INV && fabs(m) <= GB_S; }
// Zero, infinite and NaN mantissas reset the exponent; one step brings the
// product of two in-range mantissas back into [1/S, S]. The common case,
// nothing to do, is tested first (two comparisons, the same result).
__device__ __forceinline__ gb_scaled gb_rescale(double m, double e) {
    gb_scaled r;
    r.m = m;
    r.e = e;
    if (gb_in_unit(m)) return r;
    if (m == 0.0 || !(fabs(m) <= GB_DMAX)) r.e = 0.0;
    else if (fabs(m) > GB_S) { r.m = m * GB_INV; r.e = e + 1.0; }
    else if (fabs(m) < GB_INV) { r.m = m * GB_S; r.e = e - 1.0; }
    return r;
}
// The accumulators: a double sum, and the scaled product. Each has the
// identity, the lift of one value (two rescale steps: a value may lie two
// units out), the join (a's values before b's), the step (the join of a
// running value with the lift of the next value of the data, T) and the
// value. The scans' loops take steps, one per value.
struct SumOp {
    typedef double A;
    static __device__ __forceinline__ A ident() { return 0.0; }
    static __device__ __forceinline__ A lift(double x) { return x; }
    static __device__ __forceinline__ A join(A a, A b) { return a + b; }
    template <typename T> static __device__ __forceinline__ A step(A a, T x) { return a + (double)x; }
    static __device__ __forceinline__ double value(A a) { return a; }
};
struct ProdOp {
    typedef gb_scaled A;
    static __device__ __forceinline__ A ident() { gb_scaled r; r.m = 1.0; r.e = 0.0; return r; }
    static __device__ __forceinline__ A lift(double x) { A r = gb_rescale(x, 0.0); return gb_rescale(r.m, r.e); }
    static __device__ __forceinline__ A join(A a, A b) { return gb_rescale(a.m * b.m, a.e + b.e); }
    // join(a, lift(x)) bit for bit, cheaper: a float (zero, infinite and
    // NaN included) or a double within [1/S, S] lifts to (x, 0), so the
    // join multiplies the mantissas and keeps a's exponent (a.e + 0 is
    // a.e: exponents are whole numbers, never -0); other doubles lift.
    template <typename T> static __device__ __forceinline__ A step(A a, T x) {
        double v = (double)x;
        if (sizeof(T) == sizeof(double) && !gb_in_unit(v)) return join(a, lift(v));
        return gb_rescale(a.m * v, a.e);
    }
    // m * S^e rounded once: four units out overflow or underflow whatever
    // m is; within three, only the last multiplication can round (none
    // when e is 0, the common case, tested first).
    static __device__ __forceinline__ double value(A a) {
        if (a.e == 0.0) return a.m;
        double x = a.m;
        if (a.e > 3.0) return x * __longlong_as_double(0x7ff0000000000000LL);
        if (a.e < -3.0) return x * 0.0;
        for (double e = a.e; e > 0.0; e -= 1.0) x *= GB_S;
        for (double e = a.e; e < 0.0; e += 1.0) x *= GB_INV;
        return x;
    }
};
__device__ __forceinline__ double gb_shfl_up(double v, int d) { return __shfl_up_sync(0xffffffffu, v, d); }
__device__ __forceinline__ double gb_shfl_down(double v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ gb_scaled gb_shfl_up(gb_scaled v, int d) {
    v.m = __shfl_up_sync(0xffffffffu, v.m, d);
    v.e = __shfl_up_sync(0xffffffffu, v.e, d);
    return v;
}
__device__ __forceinline__ gb_scaled gb_shfl_down(gb_scaled v, int d) {
    v.m = __shfl_down_sync(0xffffffffu, v.m, d);
    v.e = __shfl_down_sync(0xffffffffu, v.e, d);
    return v;
}
// Piece w of the chunked scan: its lane position i, piece c, outer o.
#define GB_PIECE(w, l) \
    long long i = w % l.inner, c = (w / l.inner) % l.chunks, o = w / (l.inner * l.chunks); \
    long long k0 = c * l.chunk_len, k1 = min(l.len, k0 + l.chunk_len); \
    long long at = i + l.inner * (k0 + l.len * o)
template <typename T, typename Op> __device__ void phase1(const T* __restrict__ x, typename Op::A* __restrict__ totals, Layout l) {
    long long items = l.inner * l.outer * l.chunks;
    for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < items; w += (long long)gridDim.x * blockDim.x) {
        GB_PIECE(w, l);
        typename Op::A acc = Op::ident();
        for (long long k = k0; k < k1; ++k, at += l.inner) acc = Op::step(acc, x[at]);
        totals[w] = acc;
    }
}
// One thread per lane: exclusive prefixes of its chunk totals, in place.
template <typename Op> __device__ void phase2(typename Op::A* totals, Layout l) {
    long long lanes = l.inner * l.outer;
    for (long long lane = blockIdx.x * (long long)blockDim.x + threadIdx.x; lane < lanes; lane += (long long)gridDim.x * blockDim.x) {
        long long i = lane % l.inner, o = lane / l.inner;
        typename Op::A acc = Op::ident();
        for (long long c = 0; c < l.chunks; ++c) {
            long long w = i + l.inner * (c + l.chunks * o);
            typename Op::A t = totals[w];
            totals[w] = acc;
            acc = Op::join(acc, t);
        }
    }
}
// Each piece rescanned from its prefix (the identity when a lane is one
// piece: then phase 3 is the whole scan, one pass over the data). With
// interleaved lanes adjacent threads take adjacent lanes, so every step of
// the loop reads and writes a coalesced row; x and y never alias, so the
// loads of later steps may be issued ahead of this step's store.
template <typename T, typename Op> __device__ void phase3(const T* __restrict__ x, T* __restrict__ y, const typename Op::A* __restrict__ prefix, Layout l) {
    long long items = l.inner * l.outer * l.chunks;
    for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < items; w += (long long)gridDim.x * blockDim.x) {
        GB_PIECE(w, l);
        typename Op::A acc = l.chunks > 1 ? prefix[w] : Op::ident();
#pragma unroll 4
        for (long long k = k0; k < k1; ++k, at += l.inner) {
            acc = Op::step(acc, x[at]);
            y[at] = (T)Op::value(acc);
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
// The fold of the block's values, in thread 0.
template <typename Op> __device__ typename Op::A gb_block_fold(typename Op::A v) {
    __shared__ typename Op::A part[32];
    for (int d = 16; d > 0; d >>= 1) v = Op::join(v, gb_shfl_down(v, d));
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : Op::ident();
        for (int d = 16; d > 0; d >>= 1) v = Op::join(v, gb_shfl_down(v, d));
    }
    __syncthreads();
    return v;
}
// The exclusive scan of one value per thread in thread order, and the
// block's total in *total (every thread).
template <typename Op> __device__ typename Op::A gb_block_exclusive(typename Op::A v, typename Op::A* total) {
    typedef typename Op::A A;
    __shared__ A warps[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    A inc = v;
    for (int d = 1; d < 32; d <<= 1) {
        A t = gb_shfl_up(inc, d);
        if (lane >= d) inc = Op::join(t, inc);
    }
    A ex = gb_shfl_up(inc, 1);
    if (lane == 0) ex = Op::ident();
    if (lane == 31) warps[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        A w = lane < nw ? warps[lane] : Op::ident();
        for (int d = 1; d < 32; d <<= 1) {
            A t = gb_shfl_up(w, d);
            if (lane >= d) w = Op::join(t, w);
        }
        if (lane < nw) warps[lane] = w;
    }
    __syncthreads();
    A before = warp == 0 ? Op::ident() : warps[warp - 1];
    *total = warps[nw - 1];
    __syncthreads();
    return Op::join(before, ex);
}
// Phase 1: block b folds tile b (lane b / tiles) into totals[b].
template <typename T, typename Op> __device__ void tile_fold(const T* __restrict__ x, typename Op::A* totals, Tiles l) {
    long long b = blockIdx.x, o = b / l.tiles, k0 = (b % l.tiles) * GB_TILE;
    long long k1 = min(l.len, k0 + GB_TILE);
    const T* lane = x + o * l.len;
    typename Op::A acc = Op::ident();
    for (long long k = k0 + threadIdx.x; k < k1; k += GB_TILE_THREADS) acc = Op::step(acc, lane[k]);
    acc = gb_block_fold<Op>(acc);
    if (threadIdx.x == 0) totals[b] = acc;
}
// Phase 2: block o turns lane o's tile totals into exclusive prefixes.
template <typename Op> __device__ void tile_carry(typename Op::A* totals, Tiles l) {
    typedef typename Op::A A;
    A* t = totals + (long long)blockIdx.x * l.tiles;
    A carry = Op::ident();
    for (long long base = 0; base < l.tiles; base += blockDim.x) {
        long long c = base + threadIdx.x;
        A total;
        A ex = gb_block_exclusive<Op>(c < l.tiles ? t[c] : Op::ident(), &total);
        if (c < l.tiles) t[c] = Op::join(carry, ex);
        carry = Op::join(carry, total);
    }
}
// Scans the tile of `count` values in shared memory in place, from the
// running value `before` of the lane's values ahead of it, and returns the
// tile's total: each thread folds its 16 consecutive values, a block-wide
// exclusive scan gives it the fold of the threads before it, and it
// rescans its values from there. A barrier ends it, so the tile may then
// be read in any order.
template <typename T, typename Op> __device__ typename Op::A gb_tile_scan(T* tile, int count, typename Op::A before) {
    typedef typename Op::A A;
    int s0 = threadIdx.x * GB_TILE_ITEMS;
    A own = Op::ident();
    for (int j = 0; j < GB_TILE_ITEMS; ++j)
        if (s0 + j < count) own = Op::step(own, tile[GB_PAD(s0 + j)]);
    A total;
    A run = Op::join(before, gb_block_exclusive<Op>(own, &total));
    for (int j = 0; j < GB_TILE_ITEMS; ++j)
        if (s0 + j < count) { run = Op::step(run, tile[GB_PAD(s0 + j)]); tile[GB_PAD(s0 + j)] = (T)Op::value(run); }
    __syncthreads();
    return total;
}
// Phase 3: block b scans tile b from its prefix: coalesced through shared
// memory, each thread scanning 16 consecutive values.
template <typename T, typename Op> __device__ void tile_scan(const T* __restrict__ x, T* __restrict__ y, const typename Op::A* prefix, Tiles l) {
    __shared__ T tile[GB_PAD(GB_TILE)];
    long long b = blockIdx.x, o = b / l.tiles, k0 = (b % l.tiles) * GB_TILE;
    int count = (int)min((long long)GB_TILE, l.len - k0);
    const T* src = x + o * l.len + k0;
    T* dst = y + o * l.len + k0;
    for (int k = threadIdx.x; k < count; k += GB_TILE_THREADS) tile[GB_PAD(k)] = src[k];
    __syncthreads();
    gb_tile_scan<T, Op>(tile, count, prefix[b]);
    for (int k = threadIdx.x; k < count; k += GB_TILE_THREADS) dst[k] = tile[GB_PAD(k)];
}
// Thread t's values of a tile of `count` at src, positions t + 256 j, into
// v: all 16 loads issued before any is used.
template <typename T> __device__ __forceinline__ void gb_tile_load(T (&v)[GB_TILE_ITEMS], const T* __restrict__ src, int count) {
    if (count == GB_TILE) {
#pragma unroll
        for (int j = 0; j < GB_TILE_ITEMS; ++j) v[j] = src[threadIdx.x + j * GB_TILE_THREADS];
    } else {
#pragma unroll
        for (int j = 0; j < GB_TILE_ITEMS; ++j) {
            int k = threadIdx.x + j * GB_TILE_THREADS;
            if (k < count) v[j] = src[k];
        }
    }
}
// The single pass over many contiguous lanes: block o walks lane o's tiles
// in order, scanning each in shared memory from the running value of the
// tiles before it (gb_tile_scan, as phase 3 does from its prefix), so the
// data is read once and written once. While a tile is scanned the block's
// loads of the next one are in flight, into registers, so a block keeps
// memory busy even when few share an SM.
template <typename T, typename Op> __device__ void lane_scan(const T* __restrict__ x, T* __restrict__ y, Tiles l) {
    typedef typename Op::A A;
    __shared__ T tile[GB_PAD(GB_TILE)];
    const T* src = x + (long long)blockIdx.x * l.len;
    T* dst = y + (long long)blockIdx.x * l.len;
    T v[GB_TILE_ITEMS];
    gb_tile_load<T>(v, src, (int)min((long long)GB_TILE, l.len));
    A carry = Op::ident();
    for (long long k0 = 0; k0 < l.len; k0 += GB_TILE) {
        int count = (int)min((long long)GB_TILE, l.len - k0);
#pragma unroll
        for (int j = 0; j < GB_TILE_ITEMS; ++j) {
            int k = threadIdx.x + j * GB_TILE_THREADS;
            if (k < count) tile[GB_PAD(k)] = v[j];
        }
        __syncthreads();
        long long next = k0 + GB_TILE;
        if (next < l.len) gb_tile_load<T>(v, src + next, (int)min((long long)GB_TILE, l.len - next));
        A total = gb_tile_scan<T, Op>(tile, count, carry);
        carry = Op::join(carry, total);
        for (int k = threadIdx.x; k < count; k += GB_TILE_THREADS) dst[k0 + k] = tile[GB_PAD(k)];
        // The next tile overwrites this one only once every thread has
        // written its values out.
        __syncthreads();
    }
}
// The one pass's blocks per SM: its registers (the next tile's values
// among them) capped so that four blocks of float data, three of double,
// share an SM with no spills, their tiles' loads in flight side by side.
#define GB_LANE_BOUNDS(blocks) __launch_bounds__(GB_TILE_THREADS, blocks)
// The entry points: gb_ for sums, gb_p for products; _s for float data,
// _d for double.
#define GB_ENTRIES(P, Op) \
extern "C" __global__ void P##tscan1_s(const float* x, Op::A* t, Tiles l) { tile_fold<float, Op>(x, t, l); } \
extern "C" __global__ void P##tscan1_d(const double* x, Op::A* t, Tiles l) { tile_fold<double, Op>(x, t, l); } \
extern "C" __global__ void P##tscan2(Op::A* t, Tiles l) { tile_carry<Op>(t, l); } \
extern "C" __global__ void P##tscan3_s(const float* x, float* y, const Op::A* t, Tiles l) { tile_scan<float, Op>(x, y, t, l); } \
extern "C" __global__ void P##tscan3_d(const double* x, double* y, const Op::A* t, Tiles l) { tile_scan<double, Op>(x, y, t, l); } \
extern "C" __global__ void GB_LANE_BOUNDS(4) P##lscan_s(const float* x, float* y, Tiles l) { lane_scan<float, Op>(x, y, l); } \
extern "C" __global__ void GB_LANE_BOUNDS(3) P##lscan_d(const double* x, double* y, Tiles l) { lane_scan<double, Op>(x, y, l); } \
extern "C" __global__ void P##scan1_s(const float* x, Op::A* t, Layout l) { phase1<float, Op>(x, t, l); } \
extern "C" __global__ void P##scan1_d(const double* x, Op::A* t, Layout l) { phase1<double, Op>(x, t, l); } \
extern "C" __global__ void P##scan2(Op::A* t, Layout l) { phase2<Op>(t, l); } \
extern "C" __global__ void P##scan3_s(const float* x, float* y, const Op::A* t, Layout l) { phase3<float, Op>(x, y, t, l); } \
extern "C" __global__ void P##scan3_d(const double* x, double* y, const Op::A* t, Layout l) { phase3<double, Op>(x, y, t, l); }
GB_ENTRIES(gb_, SumOp)
GB_ENTRIES(gb_p, ProdOp)
"#;

/// The entry points of [`SOURCE`]: `gb_` for sums, `gb_p` for products.
pub const ENTRIES: &[&str] = &[
    "gb_tscan1_s",
    "gb_tscan1_d",
    "gb_tscan2",
    "gb_tscan3_s",
    "gb_tscan3_d",
    "gb_lscan_s",
    "gb_lscan_d",
    "gb_scan1_s",
    "gb_scan1_d",
    "gb_scan2",
    "gb_scan3_s",
    "gb_scan3_d",
    "gb_ptscan1_s",
    "gb_ptscan1_d",
    "gb_ptscan2",
    "gb_ptscan3_s",
    "gb_ptscan3_d",
    "gb_plscan_s",
    "gb_plscan_d",
    "gb_pscan1_s",
    "gb_pscan1_d",
    "gb_pscan2",
    "gb_pscan3_s",
    "gb_pscan3_d",
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

impl Tiles {
    /// `outer` lanes of `len` contiguous values cut into tiles of [`TILE`].
    fn of(len: usize, outer: usize) -> Tiles {
        Tiles {
            len: len as i64,
            outer: outer as i64,
            tiles: len.div_ceil(TILE) as i64,
        }
    }
}

/// A launch of `grid` blocks of [`TILE_THREADS`] (the tiled and one-pass
/// kernels), or the error naming `what` when `grid` is more blocks than a
/// launch takes.
fn tile_launch(grid: usize, what: &str) -> Result<cudarc::driver::LaunchConfig> {
    if grid > i32::MAX as usize {
        return Err(unsupported(format!(
            "{grid} {what} are more blocks than a launch takes"
        )));
    }
    Ok(cudarc::driver::LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (TILE_THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// Threads of a tiled-scan block, and values a tile holds (`GB_TILE_THREADS`
/// and `GB_TILE` in [`SOURCE`]).
const TILE_THREADS: usize = 256;
const TILE: usize = TILE_THREADS * 16;

/// Lanes per SM from which [`scan`] takes the one pass, a block per lane:
/// with fewer, some SMs would sit idle or hold a single block (whose every
/// tile waits on the one before), while three tiled phases keep them all
/// busy at the cost of a second read.
pub const LANE_BLOCKS_PER_SM: usize = 2;

/// How [`scan`] walks the lanes of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Interleaved lanes, or contiguous ones shorter than a block: the
    /// chunked scan, threads walking lanes side by side.
    Chunked,
    /// Few contiguous lanes of a block's length or more: three tiled
    /// phases (fold, carry, scan), a block per tile; two reads and a write.
    Tiled,
    /// Many contiguous lanes of a block's length or more: one pass, a block
    /// per lane walking its tiles in order; one read and one write.
    OnePass,
}

/// The path of `outer` lanes of `len` values, `inner` apart, on a device of
/// `sm_count` SMs. Contiguous lanes (`inner == 1`) of at least a block's
/// threads are scanned by tiles: in one pass when there are at least
/// [`LANE_BLOCKS_PER_SM`] lanes per SM (a block per lane fills the device),
/// else in three phases (a block per tile, however few the lanes). Any
/// other layout is chunked.
pub fn path(inner: usize, len: usize, outer: usize, sm_count: u32) -> Path {
    if inner != 1 || len < TILE_THREADS {
        Path::Chunked
    } else if outer >= LANE_BLOCKS_PER_SM * (sm_count.max(1) as usize) {
        Path::OnePass
    } else {
        Path::Tiled
    }
}

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
    let how = Entries {
        prefix: if product { "gb_p" } else { "gb_" },
        sfx: if dtype == DType::F32 { "s" } else { "d" },
        // A running value: a double, or a product's mantissa and exponent.
        acc_doubles: if product { 2 } else { 1 },
    };
    match path(inner, len, outer, dev.sm_count) {
        Path::OnePass => return one_pass(dev, &compiled, x, y, (len, outer), &how),
        Path::Tiled => return tiled(dev, &compiled, x, y, (len, outer), &how),
        Path::Chunked => {}
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
    // One unused running value when each lane is one piece.
    let totals = dev
        .pool
        .alloc(lanes * chunks * how.acc_doubles, DType::F64)?;
    let grid = |items: usize| cudarc::driver::LaunchConfig {
        grid_dim: (items.div_ceil(256).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let pieces = grid(lanes * chunks);
    let phases = [how.entry("scan1"), how.entry("scan2"), how.entry("scan3")];
    let entries: [&str; 3] = std::array::from_fn(|k| phases[k].as_str());
    // A lane of one piece is scanned by phase 3 alone, from the identity:
    // one pass over the data (many lanes, e.g. along the rows of a tall
    // matrix, a thread per row walking its columns).
    let skip = chunks == 1;
    launch_phases(
        dev,
        &compiled,
        (entries, skip),
        (x, &y, &totals),
        &layout,
        [pieces, grid(lanes), pieces],
    )?;
    drop(totals);
    Ok(y)
}

/// Which entries of [`SOURCE`] a scan launches, and the size of its running
/// values.
struct Entries {
    /// `gb_` (sums) or `gb_p` (products).
    prefix: &'static str,
    /// `s` (float data) or `d` (double).
    sfx: &'static str,
    /// Doubles per running value.
    acc_doubles: usize,
}

impl Entries {
    /// The entry of phase `phase` (`scan1`, `tscan2`, ...): the data's
    /// suffix on every phase but the carries, which see no data.
    fn entry(&self, phase: &str) -> String {
        if phase.ends_with('2') {
            format!("{}{phase}", self.prefix)
        } else {
            format!("{}{phase}_{}", self.prefix, self.sfx)
        }
    }
}

/// The tiled scan of `outer` contiguous lanes of `len` values (at least a
/// block's threads) of `x` into `y`.
fn tiled(
    dev: &Device,
    compiled: &crate::compile::Compiled,
    x: &CudaBuf,
    y: CudaBuf,
    (len, outer): (usize, usize),
    how: &Entries,
) -> Result<CudaBuf> {
    let layout = Tiles::of(len, outer);
    let blocks = outer * layout.tiles as usize;
    let (per_tile, per_lane) = (tile_launch(blocks, "tiles")?, tile_launch(outer, "lanes")?);
    let totals = dev.pool.alloc(blocks * how.acc_doubles, DType::F64)?;
    let phases = [
        how.entry("tscan1"),
        how.entry("tscan2"),
        how.entry("tscan3"),
    ];
    let entries: [&str; 3] = std::array::from_fn(|k| phases[k].as_str());
    launch_phases(
        dev,
        compiled,
        (entries, false),
        (x, &y, &totals),
        &layout,
        [per_tile, per_lane, per_tile],
    )?;
    drop(totals);
    Ok(y)
}

/// The single pass over `outer` contiguous lanes of `len` values (at least a
/// block's threads) of `x` into `y`: a block per lane.
fn one_pass(
    dev: &Device,
    compiled: &crate::compile::Compiled,
    x: &CudaBuf,
    y: CudaBuf,
    (len, outer): (usize, usize),
    how: &Entries,
) -> Result<CudaBuf> {
    use cudarc::driver::PushKernelArg;
    let config = tile_launch(outer, "lanes")?;
    let layout = Tiles::of(len, outer);
    let f = compiled.function(&how.entry("lscan"))?;
    let (px, py) = (dev.ptr(x), dev.ptr(&y));
    // SAFETY: x and y hold outer lanes of len values each, as lane_scan
    // indexes them (block o the values o * len ..); the arguments follow
    // its signature in SOURCE.
    unsafe {
        dev.stream
            .launch_builder(f)
            .arg(&px)
            .arg(&py)
            .arg(&layout)
            .launch(config)
            .map_err(|e| fault("scan", e))?;
    }
    Ok(y)
}

/// Launches a scan's three kernels `entries` (fold to totals, totals to
/// prefixes, rescan from the prefixes) on their `grids`, each taking the
/// layout argument `layout` (a [`Layout`] or a [`Tiles`]) and reading `x`,
/// the last writing `y`, with the partials in `totals`; only the last when
/// `skip` (lanes of one piece).
fn launch_phases<L: cudarc::driver::DeviceRepr>(
    dev: &Device,
    compiled: &crate::compile::Compiled,
    (entries, skip): ([&str; 3], bool),
    (x, y, totals): (&CudaBuf, &CudaBuf, &CudaBuf),
    layout: &L,
    grids: [cudarc::driver::LaunchConfig; 3],
) -> Result<()> {
    use cudarc::driver::PushKernelArg;
    let (px, py, pt) = (dev.ptr(x), dev.ptr(y), dev.ptr(totals));
    let [fold, carry, rescan] = entries;
    let (fold, carry, rescan) = (
        compiled.function(fold)?,
        compiled.function(carry)?,
        compiled.function(rescan)?,
    );
    let failed = |e| fault("scan", e);
    // SAFETY: the callers' layouts describe x and y (the same number of
    // values) and the entries of totals (running values of the entries'
    // accumulator) exactly as SOURCE's kernels index them; the arguments
    // follow the kernels' signatures in SOURCE.
    unsafe {
        if !skip {
            dev.stream
                .launch_builder(fold)
                .arg(&px)
                .arg(&pt)
                .arg(layout)
                .launch(grids[0])
                .map_err(failed)?;
            dev.stream
                .launch_builder(carry)
                .arg(&pt)
                .arg(layout)
                .launch(grids[1])
                .map_err(failed)?;
        }
        dev.stream
            .launch_builder(rescan)
            .arg(&px)
            .arg(&py)
            .arg(&pt)
            .arg(layout)
            .launch(grids[2])
            .map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gearbox_core::runtime::scan_plan::Accumulation;
    use gearbox_core::runtime::scan_product::unit_log2;

    #[test]
    fn the_product_unit_is_scan_products() {
        let s = 2f64.powi(unit_log2(Accumulation::Double));
        assert!(SOURCE.contains(&format!("#define GB_S {s:e}\n")));
        assert!(SOURCE.contains(&format!("#define GB_INV {:e}\n", 1.0 / s)));
        assert!(SOURCE.contains(&format!("#define GB_DMAX {:e}\n", f64::MAX)));
    }

    #[test]
    fn many_contiguous_lanes_take_one_pass() {
        // 132 SMs (an H200): a block per lane from 264 lanes on.
        assert_eq!(path(1, 6000, 6000, 132), Path::OnePass);
        assert_eq!(path(1, 256, 264, 132), Path::OnePass);
        assert_eq!(path(1, 256, 263, 132), Path::Tiled);
        assert_eq!(path(1, 1_000_000, 64, 132), Path::Tiled);
        // Lanes shorter than a block, or interleaved, are chunked however
        // many there are.
        assert_eq!(path(1, 255, 100_000, 132), Path::Chunked);
        assert_eq!(path(6000, 6000, 1, 132), Path::Chunked);
        assert_eq!(path(2, 5000, 10_000, 132), Path::Chunked);
        // No SM count read: as one SM.
        assert_eq!(path(1, 300, 2, 0), Path::OnePass);
        assert_eq!(path(1, 300, 1, 0), Path::Tiled);
    }

    #[test]
    fn every_entry_is_defined_once() {
        for e in ENTRIES {
            let (p, rest) = e.split_at(if e.starts_with("gb_p") { 4 } else { 3 });
            let (phase, sfx) = rest.split_once('_').unwrap_or((rest, ""));
            let how = Entries {
                prefix: if p == "gb_p" { "gb_p" } else { "gb_" },
                sfx: if sfx.is_empty() { "s" } else { sfx },
                acc_doubles: 1,
            };
            assert_eq!(&how.entry(phase), e);
        }
        assert_eq!(SOURCE.matches("GB_ENTRIES(gb_").count(), 2);
    }
}
