//! Library calls on the device: the dispatch of every [`LibraryCall`], GEMM
//! variants through cuBLAS (column-major, transposes as cuBLAS operation
//! flags, never materialized; TF32 only when `GEARBOX_CUDA_TF32=1`), random
//! arrays, and the helpers the factorizations ([`crate::solver`]) share.
//! Slices and joins are copies ([`crate::movement`]); takes and permutes
//! are kernels ([`crate::take`], [`crate::permute`]).

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::gemm_shapes::GemmShape;
use gearbox_core::runtime::LibraryCall;
use gearbox_core::{DType, DeviceErrorKind, Error, HostBuffer, Result, Shape};

use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

pub(crate) fn unsupported(why: String) -> Error {
    // Not a device fault: the runtime reruns the call on the CPU and the
    // backend stays healthy.
    Error::Device {
        backend: "cuda".into(),
        op: "library call".into(),
        reason: why,
        kind: DeviceErrorKind::Compile,
    }
}

/// Runs `call` on `inputs` (buffer and shape), producing `out` shape and dtype.
pub fn library_call(
    dev: &Device,
    cache: &KernelCache,
    call: LibraryCall,
    inputs: &[(&CudaBuf, &Shape)],
    out: (&Shape, DType),
) -> Result<CudaBuf> {
    let (out_shape, dtype) = out;
    // Data movement copies any dtype; everything else is float math on
    // operands of the result dtype.
    let float_operands =
        matches!(dtype, DType::F32 | DType::F64) && inputs.iter().all(|(b, _)| b.dtype() == dtype);
    match call {
        LibraryCall::Slice { axis, start, end } => {
            let (x, shape) = inputs
                .first()
                .ok_or_else(|| unsupported("slice of nothing".into()))?;
            crate::movement::slice(dev, cache, x, shape, (axis, start, end), out)
        }
        LibraryCall::Concat { axis } => crate::movement::concat(dev, cache, inputs, axis, out),
        LibraryCall::Take { axis } => match inputs {
            [x, (idx, _)] => crate::take::take(dev, cache, *x, idx, axis, out),
            _ => Err(unsupported(format!("take of {} inputs", inputs.len()))),
        },
        LibraryCall::Permute { order } => match inputs {
            [x] => crate::permute::permute(dev, cache, *x, order, out),
            _ => Err(unsupported(format!("permute of {} inputs", inputs.len()))),
        },
        _ if !float_operands => Err(unsupported(format!(
            "cuBLAS/cuSOLVER need {dtype} operands of the result dtype"
        ))),
        LibraryCall::Matmul | LibraryCall::Crossprod | LibraryCall::Tcrossprod => {
            gemm(dev, call, inputs, out_shape, dtype)
        }
        LibraryCall::Cholesky => {
            crate::solver::cholesky(dev, cache, inputs[0].0, inputs[0].1, dtype)
        }
        LibraryCall::Solve => crate::solver::lu_solve(
            dev,
            cache,
            inputs[0].0,
            inputs[0].1,
            Some(inputs[1].0),
            out_shape,
            dtype,
        ),
        LibraryCall::Inv => {
            crate::solver::lu_solve(dev, cache, inputs[0].0, inputs[0].1, None, out_shape, dtype)
        }
        LibraryCall::InvUpper => {
            crate::solver::inv_upper(dev, cache, inputs[0].0, inputs[0].1, dtype)
        }
        LibraryCall::Qr => crate::solver::qr(dev, cache, inputs[0].0, inputs[0].1, dtype),
        LibraryCall::Scan { product, axis } => {
            crate::scan::scan(dev, cache, inputs[0].0, inputs[0].1, product, axis, dtype)
        }
        LibraryCall::Random { seed, normal } => {
            random(dev, cache, seed, normal, out_shape.numel(), dtype)
        }
        LibraryCall::LinearGrid { spec, points } => {
            crate::linear_grid::linear_grid(dev, cache, spec, points, inputs, out_shape)
        }
    }
}

/// `rand` / `randn` generated on the device (float64, as on the CPU).
fn random(
    dev: &Device,
    cache: &KernelCache,
    seed: u64,
    normal: bool,
    n: usize,
    dtype: DType,
) -> Result<CudaBuf> {
    if dtype != DType::F64 {
        return Err(unsupported(format!("random arrays are f64, not {dtype}")));
    }
    let out = dev.pool.alloc(n, DType::F64)?;
    if n > 0 {
        support(
            dev,
            cache,
            "gb_philox_d",
            &[dev.ptr(&out), seed, normal as u64],
            n as i64,
            n,
        )?;
    }
    Ok(out)
}

/// A GEMM's cuBLAS parameters: operation flags, sizes and leading dimensions.
struct GemmDims {
    transa: cublasOperation_t,
    transb: cublasOperation_t,
    m: i32,
    n: i32,
    k: i32,
    lda: i32,
    ldb: i32,
    ldc: i32,
}

impl GemmDims {
    /// The parameters of `call` on operands of shapes `sa` and `sb`
    /// ([`GemmShape::of`]), or `None` when the result is empty (nothing to
    /// compute).
    fn of(call: LibraryCall, sa: &Shape, sb: &Shape) -> Result<Option<GemmDims>> {
        let g = GemmShape::of(call, sa, sb).map_err(unsupported)?;
        if g.m == 0 || g.n == 0 {
            return Ok(None);
        }
        let op = |t: bool| match t {
            true => cublasOperation_t::CUBLAS_OP_T,
            false => cublasOperation_t::CUBLAS_OP_N,
        };
        let as_int = |v: usize| {
            i32::try_from(v)
                .map_err(|_| unsupported(format!("dimension {v} exceeds cuBLAS's 32-bit limit")))
        };
        let [lda, ldb, ldc] = g.leading_dims();
        Ok(Some(GemmDims {
            transa: op(g.a_transposed),
            transb: op(g.b_transposed),
            m: as_int(g.m)?,
            n: as_int(g.n)?,
            k: as_int(g.k)?,
            lda: as_int(lda)?,
            ldb: as_int(ldb)?,
            ldc: as_int(ldc)?,
        }))
    }
}

fn gemm(
    dev: &Device,
    call: LibraryCall,
    inputs: &[(&CudaBuf, &Shape)],
    out_shape: &Shape,
    dtype: DType,
) -> Result<CudaBuf> {
    let c = dev.pool.alloc(out_shape.numel(), dtype)?;
    gemm_into(dev, call, inputs, &c, 1.0, 0.0)?;
    Ok(c)
}

/// `c <- alpha * product + beta * c` for the GEMM `call` (a resident
/// handle's `gemm_inplace`; `c` holds the product's elements in its dtype,
/// checked by the caller). With `beta` 0, `c` is not read (BLAS's rule).
pub fn gemm_into(
    dev: &Device,
    call: LibraryCall,
    inputs: &[(&CudaBuf, &Shape)],
    c: &CudaBuf,
    alpha: f64,
    beta: f64,
) -> Result<()> {
    let dtype = c.dtype();
    if !call.is_gemm() || inputs.len() != 2 || inputs.iter().any(|(b, _)| b.dtype() != dtype) {
        return Err(unsupported(format!(
            "{} into a buffer needs two {dtype} operands",
            call.name()
        )));
    }
    let ((a, sa), (b, sb)) = (inputs[0], inputs[1]);
    let Some(d) = GemmDims::of(call, sa, sb)? else {
        return Ok(());
    };
    let (pa, pb, pc) = (dev.ptr(a), dev.ptr(b), dev.ptr(c));
    let blas = dev.blas.lock().unwrap_or_else(|e| e.into_inner());
    let handle = *blas.handle();
    // k == 0: beta = 0 with alpha * (empty product) writes zeros.
    // SAFETY: a, b, c are live device buffers of at least lda*k, ldb*n, ldc*n
    // elements of `dtype`; alpha and beta point to host scalars.
    let status = unsafe {
        if dtype == DType::F32 {
            let (alpha, beta) = (alpha as f32, beta as f32);
            cudarc::cublas::result::sgemm(
                handle,
                d.transa,
                d.transb,
                d.m,
                d.n,
                d.k,
                &alpha,
                pa as *const f32,
                d.lda,
                pb as *const f32,
                d.ldb,
                &beta,
                pc as *mut f32,
                d.ldc,
            )
        } else {
            cudarc::cublas::result::dgemm(
                handle,
                d.transa,
                d.transb,
                d.m,
                d.n,
                d.k,
                &alpha,
                pa as *const f64,
                d.lda,
                pb as *const f64,
                d.ldb,
                &beta,
                pc as *mut f64,
                d.ldc,
            )
        }
    };
    status.map_err(|e| fault(call.name(), e))?;
    drop(blas);
    Ok(())
}

/// Batched GEMM calls made by this process (for tests and metrics).
pub static BATCHED_GEMM_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Runs the GEMM `call` on every operand pair of `batch` (equal shapes) with
/// one cuBLAS batched call: the operand and result pointers go to the device
/// as three arrays, so no operand is copied.
pub fn gemm_batched(
    dev: &Device,
    call: LibraryCall,
    batch: &[Vec<(&CudaBuf, &Shape)>],
    out: (&Shape, DType),
) -> Result<Vec<CudaBuf>> {
    let (out_shape, dtype) = out;
    if !call.is_gemm()
        || !matches!(dtype, DType::F32 | DType::F64)
        || batch.iter().flatten().any(|(b, _)| b.dtype() != dtype)
    {
        return Err(unsupported(format!(
            "batched {} needs {dtype} operands of the result dtype",
            call.name()
        )));
    }
    let results: Vec<CudaBuf> = batch
        .iter()
        .map(|_| dev.pool.alloc(out_shape.numel(), dtype))
        .collect::<Result<_>>()?;
    let Some(first) = batch.first() else {
        return Ok(results);
    };
    let Some(d) = GemmDims::of(call, first[0].1, first[1].1)? else {
        return Ok(results);
    };
    let count = i32::try_from(batch.len()).map_err(|_| {
        unsupported(format!(
            "{} products exceed cuBLAS's batch limit",
            batch.len()
        ))
    })?;
    // Pointer arrays A, B, C back to back; device pointers fit in i64.
    let ptrs: Vec<i64> = [0usize, 1]
        .iter()
        .flat_map(|&side| batch.iter().map(move |ops| dev.ptr(ops[side].0) as i64))
        .chain(results.iter().map(|c| dev.ptr(c) as i64))
        .collect();
    let table = dev.upload(&HostBuffer::I64(ptrs))?;
    let base = dev.ptr(&table) as usize;
    let slot = |i: usize| (base + i * batch.len() * 8) as *const *const std::ffi::c_void;
    let blas = dev.blas.lock().unwrap_or_else(|e| e.into_inner());
    let handle = *blas.handle();
    // SAFETY: the table holds `count` live device pointers per operand, each
    // to a buffer of the shape checked by the planner (equal across the
    // batch); alpha and beta point to host scalars. The table stays alive
    // until the stream has consumed it (freed to the stream-ordered pool).
    let status = unsafe {
        use cudarc::cublas::sys;
        if dtype == DType::F32 {
            let (alpha, beta) = (1.0f32, 0.0f32);
            sys::cublasSgemmBatched(
                handle,
                d.transa,
                d.transb,
                d.m,
                d.n,
                d.k,
                &alpha,
                slot(0) as *const *const f32,
                d.lda,
                slot(1) as *const *const f32,
                d.ldb,
                &beta,
                slot(2) as *const *mut f32,
                d.ldc,
                count,
            )
        } else {
            let (alpha, beta) = (1.0f64, 0.0f64);
            sys::cublasDgemmBatched(
                handle,
                d.transa,
                d.transb,
                d.m,
                d.n,
                d.k,
                &alpha,
                slot(0) as *const *const f64,
                d.lda,
                slot(1) as *const *const f64,
                d.ldb,
                &beta,
                slot(2) as *const *mut f64,
                d.ldc,
                count,
            )
        }
    };
    drop(blas);
    status
        .result()
        .map_err(|e| fault(&format!("batched {}", call.name()), e))?;
    drop(table);
    BATCHED_GEMM_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(results)
}

/// Launches one support kernel over `items` items with pointer args and `n`.
pub(crate) fn support(
    dev: &Device,
    cache: &KernelCache,
    name: &str,
    ptrs: &[u64],
    n: i64,
    items: usize,
) -> Result<()> {
    let compiled = cache.fixed(dev, crate::support::SOURCE, crate::support::ENTRIES)?;
    let f = compiled.function(name)?;
    let mut args = dev.stream.launch_builder(f);
    args.arg(&ptrs[0]).arg(&n);
    for p in &ptrs[1..] {
        args.arg(p);
    }
    let grid = items
        .div_ceil(256)
        .clamp(1, dev.sm_count.max(1) as usize * 32) as u32;
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the support kernels take (matrix pointer, n[, out pointer]) and
    // touch at most n*n matrix entries and two out entries.
    unsafe { args.launch(cfg) }
        .map(|_| ())
        .map_err(|e| fault(name, e))
}

pub(crate) fn suffix(dtype: DType) -> &'static str {
    if dtype == DType::F32 {
        "s"
    } else {
        "d"
    }
}

/// Runs a (max-asymmetry | diagonal-range) support kernel and reads its two results.
pub(crate) fn two_values(
    dev: &Device,
    cache: &KernelCache,
    name: &str,
    a: &CudaBuf,
    n: usize,
    init: [f64; 2],
    dtype: DType,
) -> Result<[f64; 2]> {
    // The kernel keeps order-preserving bit patterns of non-negative floats,
    // so the buffer starts as (and is read back as) floats of `dtype`.
    let init_buf = if dtype == DType::F32 {
        HostBuffer::F32(init.iter().map(|&v| v as f32).collect())
    } else {
        HostBuffer::F64(init.to_vec())
    };
    let out = dev.upload(&init_buf)?;
    support(
        dev,
        cache,
        &format!("{name}_{}", suffix(dtype)),
        &[dev.ptr(a), dev.ptr(&out)],
        n as i64,
        n * n,
    )?;
    let back = dev.download(&out)?.to_f64_vec()?;
    Ok([back[0], back[1]])
}

/// The largest `|a_i|` over the first `len` entries of `a` (0 when there
/// are none), by one reduction on the device: finite exactly when every
/// entry is, NaN when one is NaN.
pub(crate) fn max_abs(
    dev: &Device,
    cache: &KernelCache,
    a: &CudaBuf,
    len: usize,
    dtype: DType,
) -> Result<f64> {
    // The kernel keeps the order-preserving bit pattern of a non-negative
    // float, so the result starts as (and is read back as) a float of `dtype`.
    let init = if dtype == DType::F32 {
        HostBuffer::F32(vec![0.0])
    } else {
        HostBuffer::F64(vec![0.0])
    };
    let out = dev.upload(&init)?;
    if len > 0 {
        support(
            dev,
            cache,
            &format!("gb_max_abs_{}", suffix(dtype)),
            &[dev.ptr(a), dev.ptr(&out)],
            len as i64,
            len,
        )?;
    }
    Ok(dev.download(&out)?.get_f64(0))
}

/// A fresh device copy of `a`.
pub(crate) fn copy(dev: &Device, a: &CudaBuf) -> Result<CudaBuf> {
    let mut c = dev.pool.alloc(a.len(), a.dtype())?;
    let bytes = a.len() * a.dtype().size_bytes();
    if bytes > 0 {
        let src = a.block().slice(0..bytes);
        let mut dst = c.block_mut().slice_mut(0..bytes);
        dev.stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(|e| fault("copy", e))?;
    }
    Ok(c)
}
