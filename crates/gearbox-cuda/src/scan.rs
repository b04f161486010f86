//! `cumsum` and `cumprod` on the device: a three-phase chunked scan that
//! works for any axis layout.
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
extern "C" __global__ void gb_scan1_s(const float* x, double* t, Layout l, int p) { phase1(x, t, l, p); }
extern "C" __global__ void gb_scan1_d(const double* x, double* t, Layout l, int p) { phase1(x, t, l, p); }
extern "C" __global__ void gb_scan2(double* t, Layout l, int p) { phase2(t, l, p); }
extern "C" __global__ void gb_scan3_s(const float* x, float* y, const double* t, Layout l, int p) { phase3(x, y, t, l, p); }
extern "C" __global__ void gb_scan3_d(const double* x, double* y, const double* t, Layout l, int p) { phase3(x, y, t, l, p); }
"#;

/// The entry points of [`SOURCE`].
pub const ENTRIES: &[&str] = &[
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
    let compiled = cache.fixed(dev, SOURCE, ENTRIES)?;
    let sfx = if dtype == DType::F32 { "s" } else { "d" };
    let p = product as i32;
    let (px, py, pt) = (dev.ptr(x), dev.ptr(&y), dev.ptr(&totals));
    let grid = |items: usize| cudarc::driver::LaunchConfig {
        grid_dim: (items.div_ceil(256).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    use cudarc::driver::PushKernelArg;
    let f1 = compiled.function(&format!("gb_scan1_{sfx}"))?;
    let f2 = compiled.function("gb_scan2")?;
    let f3 = compiled.function(&format!("gb_scan3_{sfx}"))?;
    // SAFETY: each kernel reads x and writes y over the n values of the
    // layout, and totals over lanes * chunks entries; arguments follow SOURCE.
    unsafe {
        dev.stream
            .launch_builder(f1)
            .arg(&px)
            .arg(&pt)
            .arg(&layout)
            .arg(&p)
            .launch(grid(lanes * chunks))
            .map_err(|e| fault("cumsum", e))?;
        dev.stream
            .launch_builder(f2)
            .arg(&pt)
            .arg(&layout)
            .arg(&p)
            .launch(grid(lanes))
            .map_err(|e| fault("cumsum", e))?;
        dev.stream
            .launch_builder(f3)
            .arg(&px)
            .arg(&py)
            .arg(&pt)
            .arg(&layout)
            .arg(&p)
            .launch(grid(lanes * chunks))
            .map_err(|e| fault("cumsum", e))?;
    }
    drop(totals);
    Ok(y)
}
