//! `slice` and `concat` on the device: copies on the backend's stream,
//! with no host staging.
//!
//! Storage is column-major, so around an axis an array is `(inner, len,
//! outer)`: `outer` contiguous blocks of `len * inner` values. A slice
//! `start..end` is one strided copy of `outer` rows of `(end - start) *
//! inner` values read at a pitch of `len * inner`; a concat is one such copy
//! per input, written at the input's offset inside each output block. Each
//! strided copy ([`BlockCopy`]) is issued as the cheapest form the driver
//! accepts ([`CopyForm`]): nothing when empty, one linear copy when the rows
//! are back to back, else one launch of the strided-copy kernel
//! ([`SOURCE`]). The kernel moves the widest unsigned words (1 to 16 bytes)
//! that the addresses, pitches and row width all allow. Copy-engine 2-D
//! copies (`cuMemcpy2DAsync`) moved rows at about half of copy bandwidth on
//! an H200 (a slice of rows 1..R-1 of a 6000 x 6000 f64 matrix: 0.36 ms
//! against 0.17 ms for PyTorch's copy kernel).
//!
//! The layout arithmetic is core's ([`gearbox_core::runtime::copies`]),
//! shared with the other backends.

use cudarc::driver::sys;
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::copies::{concat_copies, slice_copies, BlockCopy};
use gearbox_core::{DType, Result, Shape};

use cudarc::driver::PushKernelArg;

use crate::blas::unsupported;
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// CUDA C source of the strided copy: `rows` rows of `width` words of
/// `T`, row `r` read at `src + r * src_pitch` and written at
/// `dst + r * dst_pitch` (pitches in words). Blocks of 256 threads. Rows
/// of at least [`FLAT_BELOW`] words (`gb_copy_rows_*`): grid y walks rows,
/// grid x the words of a row, each thread [`WORDS_PER_THREAD`] words 256
/// apart (all loads before the stores). Shorter rows (`gb_copy_flat*`),
/// which would leave most of a row's block idle (the 62 values of each of
/// a million columns: 2.3x slower than PyTorch's copy): one thread per
/// word of all rows.
pub const SOURCE: &str = r#"
template <typename T>
__device__ void gb_copy_rows(const T* __restrict__ src, T* __restrict__ dst,
                             long long src_pitch, long long dst_pitch,
                             long long width, long long rows) {
    const long long span = (long long)gridDim.x * blockDim.x * 4;
    for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
        const T* s = src + r * src_pitch;
        T* d = dst + r * dst_pitch;
        for (long long c0 = (long long)blockIdx.x * blockDim.x * 4 + threadIdx.x; c0 < width;
             c0 += span) {
            T v[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const long long c = c0 + u * (long long)blockDim.x;
                if (c < width) v[u] = s[c];
            }
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const long long c = c0 + u * (long long)blockDim.x;
                if (c < width) d[c] = v[u];
            }
        }
    }
}
// Rows shorter than a block: one thread per word of all rows, its row
// and column from its flat index (32-bit when every index fits).
template <typename T, typename I>
__device__ void gb_copy_flat(const T* __restrict__ src, T* __restrict__ dst,
                             long long src_pitch, long long dst_pitch,
                             long long width, long long rows) {
    const I total = (I)(width * rows), w = (I)width, sp = (I)src_pitch, dp = (I)dst_pitch;
    const I stride = (I)gridDim.x * (I)blockDim.x;
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < total; i += stride) {
        const I r = i / w, c = i - r * w;
        dst[r * dp + c] = src[r * sp + c];
    }
}
#define GB_COPY(SIZE, T) \
extern "C" __global__ void gb_copy_rows_##SIZE(const T* __restrict__ src, T* __restrict__ dst, \
    long long src_pitch, long long dst_pitch, long long width, long long rows) { \
    gb_copy_rows<T>(src, dst, src_pitch, dst_pitch, width, rows); \
} \
extern "C" __global__ void gb_copy_flat32_##SIZE(const T* __restrict__ src, T* __restrict__ dst, \
    long long src_pitch, long long dst_pitch, long long width, long long rows) { \
    gb_copy_flat<T, unsigned int>(src, dst, src_pitch, dst_pitch, width, rows); \
} \
extern "C" __global__ void gb_copy_flat64_##SIZE(const T* __restrict__ src, T* __restrict__ dst, \
    long long src_pitch, long long dst_pitch, long long width, long long rows) { \
    gb_copy_flat<T, unsigned long long>(src, dst, src_pitch, dst_pitch, width, rows); \
}
GB_COPY(1, unsigned char)
GB_COPY(2, unsigned short)
GB_COPY(4, unsigned int)
GB_COPY(8, unsigned long long)
GB_COPY(16, uint4)
"#;

/// The word sizes of [`SOURCE`]'s kernels, in bytes.
const WORD_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// The kernels of [`SOURCE`]: rows, then flat with 32-bit and with 64-bit
/// indices, each for every one of [`WORD_SIZES`].
const ENTRIES: [&str; 15] = [
    "gb_copy_rows_1",
    "gb_copy_rows_2",
    "gb_copy_rows_4",
    "gb_copy_rows_8",
    "gb_copy_rows_16",
    "gb_copy_flat32_1",
    "gb_copy_flat32_2",
    "gb_copy_flat32_4",
    "gb_copy_flat32_8",
    "gb_copy_flat32_16",
    "gb_copy_flat64_1",
    "gb_copy_flat64_2",
    "gb_copy_flat64_4",
    "gb_copy_flat64_8",
    "gb_copy_flat64_16",
];

/// Words each thread of the strided copy moves per row.
pub const WORDS_PER_THREAD: usize = 4;

/// Rows shorter than this many words are copied a thread per word.
pub const FLAT_BELOW: usize = 256 * WORDS_PER_THREAD;

/// The entry of [`SOURCE`] and its grid that copy `rows` rows of `width`
/// words of `word` bytes, with the largest pitch `pitch` (in words): rows
/// of at least [`FLAT_BELOW`] words a block row per row, shorter ones a
/// thread per word (32-bit indices while every index fits).
pub fn plan(
    word: usize,
    width: usize,
    rows: usize,
    pitch: usize,
) -> (&'static str, (u32, u32, u32)) {
    let size = WORD_SIZES.iter().position(|&s| s == word).unwrap_or(0);
    let entry = |kind: usize| ENTRIES[kind * WORD_SIZES.len() + size];
    if width >= FLAT_BELOW {
        let grid = (
            width.div_ceil(FLAT_BELOW).clamp(1, 1 << 16) as u32,
            rows.clamp(1, 65535) as u32,
            1,
        );
        return (entry(0), grid);
    }
    let span = width.max(pitch).saturating_mul(rows);
    let kind = if span < u32::MAX as usize { 1 } else { 2 };
    let grid = ((width * rows).div_ceil(256).clamp(1, 1 << 20) as u32, 1, 1);
    (entry(kind), grid)
}

/// The widest word (1, 2, 4, 8 or 16 bytes) dividing every one of
/// `values` (addresses, pitches and widths in bytes).
pub fn word_bytes(values: &[u64]) -> usize {
    let all = values.iter().fold(16u64, |acc, &v| acc | v);
    1 << all.trailing_zeros().min(4)
}

/// How a [`BlockCopy`] is issued to the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyForm {
    /// Nothing to copy (no rows or empty rows).
    Nothing,
    /// One linear copy of this many bytes (the rows are back to back on
    /// both sides, or there is one row).
    Linear(usize),
    /// One launch of the strided-copy kernel.
    Rows,
}

/// The form `c` takes.
pub fn form(c: &BlockCopy) -> CopyForm {
    if c.is_empty() {
        CopyForm::Nothing
    } else if c.is_linear() {
        CopyForm::Linear(c.width * c.rows)
    } else {
        CopyForm::Rows
    }
}

/// Slices `x` (shape `shape`) to `start..end` along `axis`.
pub fn slice(
    dev: &Device,
    cache: &KernelCache,
    x: &CudaBuf,
    shape: &Shape,
    (axis, start, end): (usize, usize, usize),
    out: (&Shape, DType),
) -> Result<CudaBuf> {
    let dtype = x.dtype();
    if out.1 != dtype || axis >= shape.ndim() || start > end || end > shape.dim(axis) {
        return Err(unsupported(format!(
            "slice {start}..{end} on axis {axis} of a {shape} {dtype} array into {}",
            out.1
        )));
    }
    let y = dev.pool.alloc(out.0.numel(), dtype)?;
    let copy = slice_copies(shape, axis, start, end, dtype.size_bytes());
    issue(dev, cache, dev.ptr(x), dev.ptr(&y), &copy)?;
    Ok(y)
}

/// Joins `parts` (buffer and shape, each of the result dtype) along `axis`
/// into a new buffer of shape and dtype `out`.
pub fn concat(
    dev: &Device,
    cache: &KernelCache,
    parts: &[(&CudaBuf, &Shape)],
    axis: usize,
    out: (&Shape, DType),
) -> Result<CudaBuf> {
    let (shape, dtype) = out;
    if let Some((b, _)) = parts.iter().find(|(b, _)| b.dtype() != dtype) {
        return Err(unsupported(format!(
            "concat joins parts of the result dtype {dtype}, not {}",
            b.dtype()
        )));
    }
    let total: usize = parts.iter().map(|(_, s)| s.dim(axis)).sum();
    if axis >= shape.ndim() || total != shape.dim(axis) {
        return Err(unsupported(format!(
            "concat of {} parts along axis {axis} cannot fill a {shape} array",
            parts.len()
        )));
    }
    let y = dev.pool.alloc(shape.numel(), dtype)?;
    let shapes: Vec<&Shape> = parts.iter().map(|(_, s)| *s).collect();
    let copies = concat_copies(shape, axis, &shapes, dtype.size_bytes());
    let dst = dev.ptr(&y);
    for ((b, _), c) in parts.iter().zip(&copies) {
        issue(dev, cache, dev.ptr(b), dst, c)?;
    }
    Ok(y)
}

/// Queues one strided copy from device address `src` to `dst` on the stream.
fn issue(dev: &Device, cache: &KernelCache, src: u64, dst: u64, c: &BlockCopy) -> Result<()> {
    let how = form(c);
    if how == CopyForm::Nothing {
        return Ok(());
    }
    dev.ctx
        .bind_to_thread()
        .map_err(|e| fault("device copy", e))?;
    let (from, to) = (src + c.src as u64, dst + c.dst as u64);
    if let CopyForm::Linear(bytes) = how {
        // SAFETY: both ranges lie inside live buffers of this context (the
        // layout is checked against the shapes by the callers), the
        // destination is a fresh buffer that overlaps no source, and the copy
        // is ordered on the one stream every other use of them goes to.
        return unsafe {
            sys::cuMemcpyDtoDAsync_v2(to, from, bytes, dev.stream.cu_stream())
                .result()
                .map_err(|e| fault("device copy", e))
        };
    }
    let word = word_bytes(&[
        from,
        to,
        c.src_pitch as u64,
        c.dst_pitch as u64,
        c.width as u64,
    ]);
    let compiled = cache.fixed(dev, SOURCE, &ENTRIES)?;
    let width = c.width / word;
    let (src_pitch, dst_pitch) = (c.src_pitch / word, c.dst_pitch / word);
    let (name, grid_dim) = plan(word, width, c.rows, src_pitch.max(dst_pitch));
    let function = compiled.function(name)?;
    let config = cudarc::driver::LaunchConfig {
        grid_dim,
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let (src_pitch, dst_pitch) = (src_pitch as i64, dst_pitch as i64);
    let (width, rows) = (width as i64, c.rows as i64);
    // SAFETY: as for the linear copy; the kernel reads `rows` rows of
    // `width` words at the source pitch and writes them at the destination
    // pitch, all inside the buffers, and `word` divides every address,
    // pitch and width, so each access is aligned to its word.
    unsafe {
        dev.stream
            .launch_builder(function)
            .arg(&from)
            .arg(&to)
            .arg(&src_pitch)
            .arg(&dst_pitch)
            .arg(&width)
            .arg(&rows)
            .launch(config)
            .map_err(|e| fault("device copy", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let c = |src_pitch, dst_pitch, width, rows| BlockCopy {
            src: 0,
            src_pitch,
            dst: 0,
            dst_pitch,
            width,
            rows,
        };
        assert_eq!(form(&c(16, 8, 0, 5)), CopyForm::Nothing);
        assert_eq!(form(&c(16, 8, 8, 0)), CopyForm::Nothing);
        assert_eq!(form(&c(16, 8, 8, 1)), CopyForm::Linear(8));
        assert_eq!(form(&c(8, 8, 8, 4)), CopyForm::Linear(32));
        assert_eq!(form(&c(16, 8, 8, 4)), CopyForm::Rows);
        assert_eq!(form(&c(8, 16, 8, 4)), CopyForm::Rows);
    }

    #[test]
    fn words() {
        assert_eq!(word_bytes(&[0, 0, 48000, 47984, 47984]), 16);
        assert_eq!(word_bytes(&[8, 0, 48000, 47984, 47984]), 8);
        assert_eq!(word_bytes(&[4, 0, 24000, 23992, 23992]), 4);
        assert_eq!(word_bytes(&[1 << 20, 0, 6, 4, 4]), 2);
        assert_eq!(word_bytes(&[3, 0, 16, 16, 16]), 1);
        assert_eq!(word_bytes(&[0, 0, 0, 0, 0]), 16);
    }

    #[test]
    fn plans() {
        assert_eq!(plan(8, 5998, 6000, 6000), ("gb_copy_rows_8", (6, 6000, 1)));
        assert_eq!(
            plan(1, 1098, 70_000, 1100),
            ("gb_copy_rows_1", (2, 65535, 1))
        );
        assert_eq!(
            plan(4, 62, 1_000_000, 64),
            ("gb_copy_flat32_4", (242188, 1, 1))
        );
        assert_eq!(plan(1, 100, 1 << 30, 128).0, "gb_copy_flat64_1");
        assert_eq!(plan(16, 1, 3, 2), ("gb_copy_flat32_16", (1, 1, 1)));
    }
}
