//! Library calls on the device: GEMM variants through cuBLAS (column-major,
//! transposes as cuBLAS operation flags, never materialized), Cholesky, LU
//! solve and inverse through cuSOLVER. Float32 and float64; TF32 only when
//! `GEARBOX_CUDA_TF32=1` (never under `fast` precision by default).
//!
//! The checks match the CPU path's: Cholesky rejects an input whose largest
//! asymmetry exceeds `sqrt(eps) * max|A|` or that is not positive definite;
//! solve and inverse reject an exactly zero pivot or a smallest-to-largest
//! pivot magnitude ratio below `eps`.

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cusolver::sys as sol;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use gearbox_core::runtime::LibraryCall;
use gearbox_core::{DType, DeviceErrorKind, Error, HostBuffer, Result, Shape};

use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

fn matrix_dims(s: &Shape) -> (usize, usize) {
    (s.dim(0), if s.ndim() >= 2 { s.dim(1) } else { 1 })
}

fn unsupported(why: String) -> Error {
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
        LibraryCall::Cholesky => cholesky(dev, cache, inputs[0].0, inputs[0].1, dtype),
        LibraryCall::Solve => lu_solve(
            dev,
            cache,
            inputs[0].0,
            inputs[0].1,
            Some(inputs[1].0),
            out_shape,
            dtype,
        ),
        LibraryCall::Inv => lu_solve(dev, cache, inputs[0].0, inputs[0].1, None, out_shape, dtype),
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
    let mut c = dev.pool.alloc(out_shape.numel(), dtype)?;
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
    let _ = &mut c;
    Ok(c)
}

/// Launches one support kernel over `items` items with pointer args and `n`.
fn support(
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

fn suffix(dtype: DType) -> &'static str {
    if dtype == DType::F32 {
        "s"
    } else {
        "d"
    }
}

/// Runs a (max-asymmetry | diagonal-range) support kernel and reads its two results.
fn two_values(
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

fn solver_status(op: &str, s: sol::cusolverStatus_t) -> Result<()> {
    if s == sol::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(fault(op, format!("{s:?}")))
    }
}

fn read_info(dev: &Device, info: &CudaBuf) -> Result<i64> {
    let host = dev.download(info)?;
    // cuSOLVER writes a 32-bit int into the first four bytes.
    Ok(match host {
        HostBuffer::I64(v) => (v[0] as u64 & 0xffff_ffff) as u32 as i32 as i64,
        other => other.get_f64(0) as i64,
    })
}

/// A fresh device copy of `a`.
fn copy(dev: &Device, a: &CudaBuf) -> Result<CudaBuf> {
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

fn cholesky(
    dev: &Device,
    cache: &KernelCache,
    a: &CudaBuf,
    shape: &Shape,
    dtype: DType,
) -> Result<CudaBuf> {
    let n = shape.dim(0);
    let r = copy(dev, a)?;
    if n == 0 {
        return Ok(r);
    }
    let [worst, big] = two_values(dev, cache, "gb_asym", a, n, [0.0, 0.0], dtype)?;
    let eps = if dtype == DType::F32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    if !big.is_finite() || !worst.is_finite() {
        return Err(Error::NotPositiveDefinite {
            op: "cholesky",
            shape: shape.clone(),
            detail: "it has NaN or infinite entries".into(),
        });
    }
    if worst > eps.sqrt() * big {
        return Err(Error::NotPositiveDefinite {
            op: "cholesky",
            shape: shape.clone(),
            detail: format!("it is not symmetric: entries differ by up to {worst:e}"),
        });
    }
    let info = dev.upload(&HostBuffer::I64(vec![0]))?; // cuSOLVER's int status
    let solver = dev.solver.lock().unwrap_or_else(|e| e.into_inner());
    let h = solver.cu();
    let ni = n as i32;
    let upper = sol::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;
    let mut lwork = 0i32;
    // SAFETY: r holds n*n entries of `dtype`; lwork and info are valid outputs.
    unsafe {
        if dtype == DType::F32 {
            solver_status(
                "cholesky",
                sol::cusolverDnSpotrf_bufferSize(
                    h,
                    upper,
                    ni,
                    dev.ptr(&r) as *mut f32,
                    ni,
                    &mut lwork,
                ),
            )?;
            let work = dev.pool.alloc(lwork.max(1) as usize, DType::F32)?;
            solver_status(
                "cholesky",
                sol::cusolverDnSpotrf(
                    h,
                    upper,
                    ni,
                    dev.ptr(&r) as *mut f32,
                    ni,
                    dev.ptr(&work) as *mut f32,
                    lwork,
                    dev.ptr(&info) as *mut i32,
                ),
            )?;
            dev.synchronize()?;
        } else {
            solver_status(
                "cholesky",
                sol::cusolverDnDpotrf_bufferSize(
                    h,
                    upper,
                    ni,
                    dev.ptr(&r) as *mut f64,
                    ni,
                    &mut lwork,
                ),
            )?;
            let work = dev.pool.alloc(lwork.max(1) as usize, DType::F64)?;
            solver_status(
                "cholesky",
                sol::cusolverDnDpotrf(
                    h,
                    upper,
                    ni,
                    dev.ptr(&r) as *mut f64,
                    ni,
                    dev.ptr(&work) as *mut f64,
                    lwork,
                    dev.ptr(&info) as *mut i32,
                ),
            )?;
            dev.synchronize()?;
        }
    }
    drop(solver);
    let code = read_info(dev, &info)?;
    if code > 0 {
        return Err(Error::NotPositiveDefinite {
            op: "cholesky",
            shape: shape.clone(),
            detail: format!("the leading minor of order {code} is not positive"),
        });
    }
    support(
        dev,
        cache,
        &format!("gb_zero_lower_{}", suffix(dtype)),
        &[dev.ptr(&r)],
        n as i64,
        n * n,
    )?;
    Ok(r)
}

/// Solves `A X = B` (or inverts `A` when `b` is `None`) by LU with pivoting.
fn lu_solve(
    dev: &Device,
    cache: &KernelCache,
    a: &CudaBuf,
    shape: &Shape,
    b: Option<&CudaBuf>,
    out_shape: &Shape,
    dtype: DType,
) -> Result<CudaBuf> {
    let n = shape.dim(0);
    let op = if b.is_some() { "solve" } else { "inv" };
    let x = match b {
        Some(b) => copy(dev, b)?,
        None => {
            let x = dev.pool.alloc(n * n, dtype)?;
            if n > 0 {
                support(
                    dev,
                    cache,
                    &format!("gb_eye_{}", suffix(dtype)),
                    &[dev.ptr(&x)],
                    n as i64,
                    n * n,
                )?;
            }
            x
        }
    };
    let nrhs = out_shape.numel().checked_div(n).unwrap_or(0);
    if n == 0 {
        return Ok(x);
    }
    let lu = copy(dev, a)?;
    let ipiv = dev.pool.alloc(n, DType::F32)?; // n ints
    let info = dev.upload(&HostBuffer::I64(vec![0]))?;
    let solver = dev.solver.lock().unwrap_or_else(|e| e.into_inner());
    let h = solver.cu();
    let (ni, nr) = (n as i32, nrhs as i32);
    let mut lwork = 0i32;
    let trans = sol::cublasOperation_t::CUBLAS_OP_N;
    // SAFETY: lu holds n*n entries, x n*nrhs, ipiv n ints; outputs are valid.
    unsafe {
        if dtype == DType::F32 {
            solver_status(
                op,
                sol::cusolverDnSgetrf_bufferSize(
                    h,
                    ni,
                    ni,
                    dev.ptr(&lu) as *mut f32,
                    ni,
                    &mut lwork,
                ),
            )?;
            let work = dev.pool.alloc(lwork.max(1) as usize, DType::F32)?;
            solver_status(
                op,
                sol::cusolverDnSgetrf(
                    h,
                    ni,
                    ni,
                    dev.ptr(&lu) as *mut f32,
                    ni,
                    dev.ptr(&work) as *mut f32,
                    dev.ptr(&ipiv) as *mut i32,
                    dev.ptr(&info) as *mut i32,
                ),
            )?;
            dev.synchronize()?;
        } else {
            solver_status(
                op,
                sol::cusolverDnDgetrf_bufferSize(
                    h,
                    ni,
                    ni,
                    dev.ptr(&lu) as *mut f64,
                    ni,
                    &mut lwork,
                ),
            )?;
            let work = dev.pool.alloc(lwork.max(1) as usize, DType::F64)?;
            solver_status(
                op,
                sol::cusolverDnDgetrf(
                    h,
                    ni,
                    ni,
                    dev.ptr(&lu) as *mut f64,
                    ni,
                    dev.ptr(&work) as *mut f64,
                    dev.ptr(&ipiv) as *mut i32,
                    dev.ptr(&info) as *mut i32,
                ),
            )?;
            dev.synchronize()?;
        }
    }
    let code = read_info(dev, &info)?;
    let eps = if dtype == DType::F32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let [small, large] = if code > 0 {
        [0.0, 1.0]
    } else {
        two_values(
            dev,
            cache,
            "gb_diag_range",
            &lu,
            n,
            [f64::INFINITY, 0.0],
            dtype,
        )?
    };
    // NaN pivots compare false and count as singular.
    let well_scaled = small >= eps * large;
    if code > 0 || !well_scaled {
        return Err(Error::Singular {
            op: if b.is_some() { "solve" } else { "inv" },
            shape: shape.clone(),
            detail: if code > 0 {
                format!("pivot {code} is exactly zero")
            } else {
                format!("pivot magnitudes range from {small:e} to {large:e}")
            },
        });
    }
    if nrhs > 0 {
        // SAFETY: as above.
        unsafe {
            if dtype == DType::F32 {
                solver_status(
                    op,
                    sol::cusolverDnSgetrs(
                        h,
                        trans,
                        ni,
                        nr,
                        dev.ptr(&lu) as *const f32,
                        ni,
                        dev.ptr(&ipiv) as *const i32,
                        dev.ptr(&x) as *mut f32,
                        ni,
                        dev.ptr(&info) as *mut i32,
                    ),
                )?;
            } else {
                solver_status(
                    op,
                    sol::cusolverDnDgetrs(
                        h,
                        trans,
                        ni,
                        nr,
                        dev.ptr(&lu) as *const f64,
                        ni,
                        dev.ptr(&ipiv) as *const i32,
                        dev.ptr(&x) as *mut f64,
                        ni,
                        dev.ptr(&info) as *mut i32,
                    ),
                )?;
            }
        }
    }
    drop(solver);
    Ok(x)
}
