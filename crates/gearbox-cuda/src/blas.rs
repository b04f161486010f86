//! Library calls on the device: the dispatch of every [`LibraryCall`], GEMM
//! variants through cuBLAS (column-major, transposes as cuBLAS operation
//! flags, never materialized; TF32 only when `GEARBOX_CUDA_TF32=1`), random
//! arrays, and the helpers the factorizations ([`crate::solver`]) share.

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use gearbox_core::runtime::LibraryCall;
use gearbox_core::{DType, DeviceErrorKind, Error, HostBuffer, Result, Shape};

use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

fn matrix_dims(s: &Shape) -> (usize, usize) {
    (s.dim(0), if s.ndim() >= 2 { s.dim(1) } else { 1 })
}

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
    if !matches!(dtype, DType::F32 | DType::F64)
        || inputs.iter().any(|(b, _)| b.dtype_of() != dtype)
    {
        return Err(unsupported(format!(
            "cuBLAS/cuSOLVER need {dtype} operands of the result dtype"
        )));
    }
    match call {
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
        LibraryCall::Qr => crate::solver::qr(dev, cache, inputs[0].0, inputs[0].1, dtype),
        LibraryCall::Scan { product, axis } => {
            crate::scan::scan(dev, cache, inputs[0].0, inputs[0].1, product, axis, dtype)
        }
        LibraryCall::Random { seed, normal } => {
            random(dev, cache, seed, normal, out_shape.numel(), dtype)
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

fn gemm(
    dev: &Device,
    call: LibraryCall,
    inputs: &[(&CudaBuf, &Shape)],
    out_shape: &Shape,
    dtype: DType,
) -> Result<CudaBuf> {
    let ((a, sa), (b, sb)) = (inputs[0], inputs[1]);
    let (ar, ac) = matrix_dims(sa);
    let (br, bc) = matrix_dims(sb);
    let (transa, m, k) = match call {
        LibraryCall::Crossprod => (cublasOperation_t::CUBLAS_OP_T, ac, ar),
        _ => (cublasOperation_t::CUBLAS_OP_N, ar, ac),
    };
    let (transb, n) = match call {
        LibraryCall::Tcrossprod => (cublasOperation_t::CUBLAS_OP_T, br),
        _ => (cublasOperation_t::CUBLAS_OP_N, bc),
    };
    let c = dev.pool.alloc(out_shape.numel(), dtype)?;
    if m == 0 || n == 0 {
        return Ok(c);
    }
    let as_int = |v: usize| {
        i32::try_from(v)
            .map_err(|_| unsupported(format!("dimension {v} exceeds cuBLAS's 32-bit limit")))
    };
    let (mi, ni, ki) = (as_int(m)?, as_int(n)?, as_int(k)?);
    let (lda, ldb, ldc) = (as_int(ar.max(1))?, as_int(br.max(1))?, as_int(m.max(1))?);
    let (pa, pb, pc) = (dev.ptr(a), dev.ptr(b), dev.ptr(&c));
    let blas = dev.blas.lock().unwrap_or_else(|e| e.into_inner());
    let handle = *blas.handle();
    // k == 0: beta = 0 with alpha * (empty product) writes zeros.
    // SAFETY: a, b, c are live device buffers of at least lda*k, ldb*n, ldc*n
    // elements of `dtype`; alpha and beta point to host scalars.
    let status = unsafe {
        if dtype == DType::F32 {
            let (alpha, beta) = (1.0f32, 0.0f32);
            cudarc::cublas::result::sgemm(
                handle,
                transa,
                transb,
                mi,
                ni,
                ki,
                &alpha,
                pa as *const f32,
                lda,
                pb as *const f32,
                ldb,
                &beta,
                pc as *mut f32,
                ldc,
            )
        } else {
            let (alpha, beta) = (1.0f64, 0.0f64);
            cudarc::cublas::result::dgemm(
                handle,
                transa,
                transb,
                mi,
                ni,
                ki,
                &alpha,
                pa as *const f64,
                lda,
                pb as *const f64,
                ldb,
                &beta,
                pc as *mut f64,
                ldc,
            )
        }
    };
    status.map_err(|e| fault(call.name(), e))?;
    drop(blas);
    Ok(c)
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
    let compiled = cache.get(dev, crate::support::SOURCE, crate::support::ENTRIES)?;
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
    let back = dev.download(&out)?.to_f64_vec();
    Ok([back[0], back[1]])
}

/// A fresh device copy of `a`.
pub(crate) fn copy(dev: &Device, a: &CudaBuf) -> Result<CudaBuf> {
    let mut c = dev.pool.alloc(a.len_elems(), a.dtype_of())?;
    let bytes = a.len_elems() * a.dtype_of().size_bytes();
    if bytes > 0 {
        let src = a.slab().slice(0..bytes);
        let mut dst = c.slab_mut().slice_mut(0..bytes);
        dev.stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(|e| fault("copy", e))?;
    }
    Ok(c)
}
