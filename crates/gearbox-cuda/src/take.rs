//! `take` on the device: positions along an axis gathered by one kernel,
//! with no host staging. Around the axis the input is `(inner, len,
//! outer)`; output value `o = (k * n + j) * inner + i` is input value
//! `(k * len + idx[j]) * inner + i`. The kernel moves elements as unsigned
//! words of the dtype's size (1, 4 or 8 bytes), so one kernel serves every
//! dtype; its index arithmetic is 32-bit where the sizes allow. Positions were checked against the axis when the take was made
//! (`gearbox_core::ops::take`); a position outside it would give a zero,
//! never a read past the input.

use cudarc::driver::PushKernelArg;
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::{DType, Result, Shape};

use crate::blas::unsupported;
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// CUDA C source of the gather, for elements of 1, 4 and 8 bytes.
pub const SOURCE: &str = r#"
template <typename T, typename I> __device__ void gather(const T* x, const long long* idx, T* y,
                                                         I inner, I len, I n, I total) {
    I stride = (I)gridDim.x * blockDim.x;
    for (I o = (I)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += stride) {
        I rest = o / inner, i = o - rest * inner;
        I k = rest / n, j = rest - k * n;
        long long p = idx[j];
        y[o] = (p >= 0 && p < (long long)len) ? x[(k * len + (I)p) * inner + i] : (T)0;
    }
}
#define GB_TAKE(NAME, T, I) extern "C" __global__ void NAME(const T* x, const long long* idx, T* y, \
    long long inner, long long len, long long n, long long total) { gather<T, I>(x, idx, y, inner, len, n, total); }
GB_TAKE(gb_take_1, unsigned char, long long)
GB_TAKE(gb_take_4, unsigned int, long long)
GB_TAKE(gb_take_8, unsigned long long, long long)
GB_TAKE(gb_take32_1, unsigned char, unsigned int)
GB_TAKE(gb_take32_4, unsigned int, unsigned int)
GB_TAKE(gb_take32_8, unsigned long long, unsigned int)
"#;

/// The entry points of [`SOURCE`]: 64-bit index arithmetic, and 32-bit
/// (`gb_take32_*`, cheaper) for inputs and results of fewer than 2^31
/// values.
pub const ENTRIES: &[&str] = &[
    "gb_take_1",
    "gb_take_4",
    "gb_take_8",
    "gb_take32_1",
    "gb_take32_4",
    "gb_take32_8",
];

/// Whether a take reading `input` values and writing `total` fits the
/// kernels' 32-bit index arithmetic (with room for a grid stride).
pub fn fits_32_bits(input: usize, total: usize) -> bool {
    input.max(total) < 1 << 31
}

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
    let dtype = x.dtype();
    let n = idx.len();
    if out.1 != dtype
        || idx.dtype() != DType::I64
        || axis >= shape.ndim()
        || *out.0 != shape.with_dim(axis, n)
    {
        return Err(unsupported(format!(
            "take of {n} {} positions along axis {axis} of a {shape} {dtype} array into a {} {}",
            idx.dtype(),
            out.0,
            out.1
        )));
    }
    let y = dev.pool.alloc(out.0.numel(), dtype)?;
    let total = out.0.numel();
    if total == 0 {
        return Ok(y);
    }
    let (inner, len, _) = shape.split_at_axis(axis);
    let compiled = cache.fixed(dev, SOURCE, ENTRIES)?;
    let width = if fits_32_bits(shape.numel(), total) {
        "32"
    } else {
        ""
    };
    let entry = compiled.function(&format!("gb_take{width}_{}", dtype.size_bytes()))?;
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (total.div_ceil(256).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let (px, pi, py) = (dev.ptr(x), dev.ptr(idx), dev.ptr(&y));
    let dims = [inner as i64, len as i64, n as i64, total as i64];
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
