//! `take` on the device: positions along an axis gathered by one kernel,
//! with no host staging. Around the axis the input is `(inner, len,
//! outer)`; output value `o = (k * n + j) * inner + i` is input value
//! `(k * len + idx[j]) * inner + i`. The kernel moves unsigned words of 1, 4,
//! 8 or 16 bytes (the widest that divides the run of values one position
//! selects: `take_launch`), so one kernel serves every dtype; its index arithmetic is 32-bit where the sizes allow. Positions
//! were checked against the axis when the take was made
//! (`gearbox_core::ops::take`); a position outside it would give a zero,
//! never a read past the input.

use cudarc::driver::PushKernelArg;
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::copies::{check_take, described, take_launch, TAKE_ENTRIES};
use gearbox_core::{DType, Result, Shape};

use crate::blas::unsupported;
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// CUDA C source of the gather, for words of 1, 4, 8 and 16 bytes.
pub const SOURCE: &str = r#"
template <typename T, typename I> __device__ void gather(const T* x, const long long* idx, T* y,
                                                         I inner, I len, I n, I total) {
    I stride = (I)gridDim.x * blockDim.x;
    for (I o = (I)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += stride) {
        I rest = o / inner, i = o - rest * inner;
        I k = rest / n, j = rest - k * n;
        long long p = idx[j];
        y[o] = (p >= 0 && p < (long long)len) ? x[(k * len + (I)p) * inner + i] : T();
    }
}
#define GB_TAKE(NAME, T, I) extern "C" __global__ void NAME(const T* x, const long long* idx, T* y, \
    long long inner, long long len, long long n, long long total) { gather<T, I>(x, idx, y, inner, len, n, total); }
GB_TAKE(gb_take_1, unsigned char, long long)
GB_TAKE(gb_take_4, unsigned int, long long)
GB_TAKE(gb_take_8, unsigned long long, long long)
GB_TAKE(gb_take_16, uint4, long long)
GB_TAKE(gb_take32_1, unsigned char, unsigned int)
GB_TAKE(gb_take32_4, unsigned int, unsigned int)
GB_TAKE(gb_take32_8, unsigned long long, unsigned int)
GB_TAKE(gb_take32_16, uint4, unsigned int)
"#;

/// Positions `idx` (an `i64` vector) along `axis` of `x` (shape `shape`),
/// into a new buffer of shape and dtype `out`.
pub fn take(
    dev: &Device,
    cache: &KernelCache,
    (x, shape): (&CudaBuf, &Shape),
    idx: &CudaBuf,
    axis: usize,
    out: (&Shape, DType),
) -> Result<CudaBuf> {
    check_take(described((x, shape)), (idx.len(), idx.dtype()), axis, out)
        .map_err(|why| unsupported(format!("take: {why}")))?;
    let y = dev.pool.alloc(out.0.numel(), x.dtype())?;
    let (entry, dims) = take_launch(shape, axis, idx.len(), x.dtype());
    let total = dims[3] as usize;
    if total == 0 {
        return Ok(y);
    }
    let compiled = cache.fixed(dev, SOURCE, &TAKE_ENTRIES)?;
    let entry = compiled.function(&entry)?;
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (total.div_ceil(256).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let (px, pi, py) = (dev.ptr(x), dev.ptr(idx), dev.ptr(&y));
    // SAFETY: x holds shape's values, idx n positions and y the result's
    // total values (checked above); the kernel reads x only at positions
    // inside the axis and writes each of y's values once; the arguments
    // follow gb_take_*'s signature in SOURCE.
    unsafe {
        dev.stream
            .launch_builder(entry)
            .arg(&px)
            .arg(&pi)
            .arg(&py)
            .arg(&dims[0])
            .arg(&dims[1])
            .arg(&dims[2])
            .arg(&dims[3])
            .launch(config)
            .map_err(|e| fault("take", e))?;
    }
    Ok(y)
}
