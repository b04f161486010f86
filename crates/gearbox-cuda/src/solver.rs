//! Factorizations on the device through cuSOLVER: thin QR (packed as the
//! CPU packs it), Cholesky (upper factor,
//! as R's `chol`), and LU with partial pivoting for solve and inverse, in
//! float32 and float64.
//!
//! The checks match the CPU path's: Cholesky rejects an input with NaN or
//! infinite entries, one whose largest asymmetry exceeds `sqrt(eps) * max|A|`,
//! or one that is not positive definite; solve and inverse reject an exactly
//! zero pivot or a smallest-to-largest pivot magnitude ratio below `eps`.

use cudarc::cusolver::sys as sol;
use gearbox_core::{DType, Error, HostBuffer, Result, Shape};

use crate::blas::{copy, suffix, support, two_values};
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

fn eps(dtype: DType) -> f64 {
    if dtype == DType::F32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    }
}

fn status(op: &str, s: sol::cusolverStatus_t) -> Result<()> {
    if s == sol::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(fault(op, format!("{s:?}")))
    }
}

/// cuSOLVER's status int, written to the first four bytes of `info`.
fn read_info(dev: &Device, info: &CudaBuf) -> Result<i64> {
    Ok(match dev.download(info)? {
        HostBuffer::I64(v) => (v[0] as u64 & 0xffff_ffff) as u32 as i32 as i64,
        other => other.get_f64(0) as i64,
    })
}

/// The dense cuSOLVER routines used here, each choosing its float32 or
/// float64 entry point once. Pointers are device addresses.
struct Dense<'a> {
    dev: &'a Device,
    h: sol::cusolverDnHandle_t,
    dtype: DType,
    op: &'static str,
}

impl Dense<'_> {
    /// A workspace of `lwork` elements.
    fn work(&self, lwork: i32) -> Result<CudaBuf> {
        self.dev.pool.alloc(lwork.max(1) as usize, self.dtype)
    }

    /// Upper Cholesky factor of the `n x n` matrix at `a`, in place.
    fn potrf(&self, n: i32, a: u64, info: u64) -> Result<()> {
        let up = sol::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;
        let mut lwork = 0i32;
        // SAFETY: `a` holds n*n entries of the dtype; lwork and info are valid outputs.
        unsafe {
            if self.dtype == DType::F32 {
                status(
                    self.op,
                    sol::cusolverDnSpotrf_bufferSize(self.h, up, n, a as *mut f32, n, &mut lwork),
                )?;
                let w = self.work(lwork)?;
                status(
                    self.op,
                    sol::cusolverDnSpotrf(
                        self.h,
                        up,
                        n,
                        a as *mut f32,
                        n,
                        self.dev.ptr(&w) as *mut f32,
                        lwork,
                        info as *mut i32,
                    ),
                )?;
            } else {
                status(
                    self.op,
                    sol::cusolverDnDpotrf_bufferSize(self.h, up, n, a as *mut f64, n, &mut lwork),
                )?;
                let w = self.work(lwork)?;
                status(
                    self.op,
                    sol::cusolverDnDpotrf(
                        self.h,
                        up,
                        n,
                        a as *mut f64,
                        n,
                        self.dev.ptr(&w) as *mut f64,
                        lwork,
                        info as *mut i32,
                    ),
                )?;
            }
        }
        self.dev.synchronize()
    }

    /// LU with partial pivoting of the `n x n` matrix at `a`, in place.
    fn getrf(&self, n: i32, a: u64, ipiv: u64, info: u64) -> Result<()> {
        let mut lwork = 0i32;
        // SAFETY: `a` holds n*n entries, `ipiv` n ints; outputs are valid.
        unsafe {
            if self.dtype == DType::F32 {
                status(
                    self.op,
                    sol::cusolverDnSgetrf_bufferSize(self.h, n, n, a as *mut f32, n, &mut lwork),
                )?;
                let w = self.work(lwork)?;
                status(
                    self.op,
                    sol::cusolverDnSgetrf(
                        self.h,
                        n,
                        n,
                        a as *mut f32,
                        n,
                        self.dev.ptr(&w) as *mut f32,
                        ipiv as *mut i32,
                        info as *mut i32,
                    ),
                )?;
            } else {
                status(
                    self.op,
                    sol::cusolverDnDgetrf_bufferSize(self.h, n, n, a as *mut f64, n, &mut lwork),
                )?;
                let w = self.work(lwork)?;
                status(
                    self.op,
                    sol::cusolverDnDgetrf(
                        self.h,
                        n,
                        n,
                        a as *mut f64,
                        n,
                        self.dev.ptr(&w) as *mut f64,
                        ipiv as *mut i32,
                        info as *mut i32,
                    ),
                )?;
            }
        }
        self.dev.synchronize()
    }

    /// Householder QR of the `m x n` matrix at `a` in place; `tau` gets
    /// `min(m, n)` scalars.
    fn geqrf(&self, m: i32, n: i32, a: u64, tau: u64, info: u64) -> Result<()> {
        let mut lwork = 0i32;
        // SAFETY: `a` holds m*n entries, `tau` min(m, n); outputs are valid.
        unsafe {
            if self.dtype == DType::F32 {
                status(
                    self.op,
                    sol::cusolverDnSgeqrf_bufferSize(self.h, m, n, a as *mut f32, m, &mut lwork),
                )?;
                let w = self.work(lwork)?;
                status(
                    self.op,
                    sol::cusolverDnSgeqrf(
                        self.h,
                        m,
                        n,
                        a as *mut f32,
                        m,
                        tau as *mut f32,
                        self.dev.ptr(&w) as *mut f32,
                        lwork,
                        info as *mut i32,
                    ),
                )?;
            } else {
                status(
                    self.op,
                    sol::cusolverDnDgeqrf_bufferSize(self.h, m, n, a as *mut f64, m, &mut lwork),
                )?;
                let w = self.work(lwork)?;
                status(
                    self.op,
                    sol::cusolverDnDgeqrf(
                        self.h,
                        m,
                        n,
                        a as *mut f64,
                        m,
                        tau as *mut f64,
                        self.dev.ptr(&w) as *mut f64,
                        lwork,
                        info as *mut i32,
                    ),
                )?;
            }
        }
        self.dev.synchronize()
    }

    /// Forms the first `p` columns of Q from geqrf's reflectors at `a` (`m` rows).
    fn orgqr(&self, m: i32, p: i32, a: u64, tau: u64, info: u64) -> Result<()> {
        let mut lwork = 0i32;
        // SAFETY: `a` holds at least m*p entries, `tau` p; outputs are valid.
        unsafe {
            if self.dtype == DType::F32 {
                status(
                    self.op,
                    sol::cusolverDnSorgqr_bufferSize(
                        self.h,
                        m,
                        p,
                        p,
                        a as *const f32,
                        m,
                        tau as *const f32,
                        &mut lwork,
                    ),
                )?;
                let w = self.work(lwork)?;
                status(
                    self.op,
                    sol::cusolverDnSorgqr(
                        self.h,
                        m,
                        p,
                        p,
                        a as *mut f32,
                        m,
                        tau as *const f32,
                        self.dev.ptr(&w) as *mut f32,
                        lwork,
                        info as *mut i32,
                    ),
                )?;
            } else {
                status(
                    self.op,
                    sol::cusolverDnDorgqr_bufferSize(
                        self.h,
                        m,
                        p,
                        p,
                        a as *const f64,
                        m,
                        tau as *const f64,
                        &mut lwork,
                    ),
                )?;
                let w = self.work(lwork)?;
                status(
                    self.op,
                    sol::cusolverDnDorgqr(
                        self.h,
                        m,
                        p,
                        p,
                        a as *mut f64,
                        m,
                        tau as *const f64,
                        self.dev.ptr(&w) as *mut f64,
                        lwork,
                        info as *mut i32,
                    ),
                )?;
            }
        }
        self.dev.synchronize()
    }

    /// Solves with the LU at `lu` for the `n x nrhs` right side at `b`, in place.
    fn getrs(&self, n: i32, nrhs: i32, lu: u64, ipiv: u64, b: u64, info: u64) -> Result<()> {
        let t = sol::cublasOperation_t::CUBLAS_OP_N;
        // SAFETY: `lu` holds n*n entries, `b` n*nrhs, `ipiv` n ints.
        unsafe {
            if self.dtype == DType::F32 {
                status(
                    self.op,
                    sol::cusolverDnSgetrs(
                        self.h,
                        t,
                        n,
                        nrhs,
                        lu as *const f32,
                        n,
                        ipiv as *const i32,
                        b as *mut f32,
                        n,
                        info as *mut i32,
                    ),
                )
            } else {
                status(
                    self.op,
                    sol::cusolverDnDgetrs(
                        self.h,
                        t,
                        n,
                        nrhs,
                        lu as *const f64,
                        n,
                        ipiv as *const i32,
                        b as *mut f64,
                        n,
                        info as *mut i32,
                    ),
                )
            }
        }
    }
}

/// The upper Cholesky factor of `a`.
pub fn cholesky(
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
    let not_pd = |detail: String| Error::NotPositiveDefinite {
        op: "cholesky",
        shape: shape.clone(),
        detail,
    };
    let [worst, big] = two_values(dev, cache, "gb_asym", a, n, [0.0, 0.0], dtype)?;
    if !big.is_finite() || !worst.is_finite() {
        return Err(not_pd("it has NaN or infinite entries".into()));
    }
    if worst > eps(dtype).sqrt() * big {
        return Err(not_pd(format!(
            "it is not symmetric: entries differ by up to {worst:e}"
        )));
    }
    let info = dev.upload(&HostBuffer::I64(vec![0]))?;
    {
        let solver = dev.solver.lock().unwrap_or_else(|e| e.into_inner());
        let dense = Dense {
            dev,
            h: solver.cu(),
            dtype,
            op: "cholesky",
        };
        dense.potrf(n as i32, dev.ptr(&r), dev.ptr(&info))?;
    }
    let code = read_info(dev, &info)?;
    if code > 0 {
        return Err(not_pd(format!(
            "the leading minor of order {code} is not positive"
        )));
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
pub fn lu_solve(
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
    if n == 0 {
        return Ok(x);
    }
    let nrhs = out_shape.numel() / n;
    let lu = copy(dev, a)?;
    let ipiv = dev.pool.alloc(n, DType::F32)?; // n 32-bit ints
    let info = dev.upload(&HostBuffer::I64(vec![0]))?;
    let solver = dev.solver.lock().unwrap_or_else(|e| e.into_inner());
    let dense = Dense {
        dev,
        h: solver.cu(),
        dtype,
        op,
    };
    dense.getrf(n as i32, dev.ptr(&lu), dev.ptr(&ipiv), dev.ptr(&info))?;
    let code = read_info(dev, &info)?;
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
    let well_scaled = small >= eps(dtype) * large;
    if code > 0 || !well_scaled {
        let detail = if code > 0 {
            format!("pivot {code} is exactly zero")
        } else {
            format!("pivot magnitudes range from {small:e} to {large:e}")
        };
        return Err(Error::Singular {
            op,
            shape: shape.clone(),
            detail,
        });
    }
    if nrhs > 0 {
        dense.getrs(
            n as i32,
            nrhs as i32,
            dev.ptr(&lu),
            dev.ptr(&ipiv),
            dev.ptr(&x),
            dev.ptr(&info),
        )?;
    }
    Ok(x)
}

/// Thin QR of the `m x n` matrix `a`, packed as Q (`m x p`, column-major)
/// then R (`p x n`), `p = min(m, n)`: the layout of the CPU's `qr`.
pub fn qr(
    dev: &Device,
    cache: &KernelCache,
    a: &CudaBuf,
    shape: &Shape,
    dtype: DType,
) -> Result<CudaBuf> {
    let (m, n) = (shape.dim(0), shape.dim(1));
    let p = m.min(n);
    let out = dev.pool.alloc(p * (m + n), dtype)?;
    if p == 0 {
        return Ok(out);
    }
    let work = copy(dev, a)?;
    let tau = dev.pool.alloc(p, dtype)?;
    let info = dev.upload(&HostBuffer::I64(vec![0]))?;
    let solver = dev.solver.lock().unwrap_or_else(|e| e.into_inner());
    let dense = Dense {
        dev,
        h: solver.cu(),
        dtype,
        op: "qr",
    };
    dense.geqrf(
        m as i32,
        n as i32,
        dev.ptr(&work),
        dev.ptr(&tau),
        dev.ptr(&info),
    )?;
    let size = dtype.size_bytes() as u64;
    let r_at = dev.ptr(&out) + (m * p) as u64 * size;
    support(
        dev,
        cache,
        &format!("gb_extract_r_{}", suffix(dtype)),
        &[dev.ptr(&work), r_at, n as u64, p as u64],
        m as i64,
        p * n,
    )?;
    dense.orgqr(
        m as i32,
        p as i32,
        dev.ptr(&work),
        dev.ptr(&tau),
        dev.ptr(&info),
    )?;
    drop(solver);
    if read_info(dev, &info)? != 0 {
        return Err(fault("qr", "cuSOLVER reported an invalid argument"));
    }
    // Q is the first m * p values of the work matrix.
    let bytes = m * p * dtype.size_bytes();
    let mut out = out;
    {
        let src = work.slab().slice(0..bytes);
        let mut dst = out.slab_mut().slice_mut(0..bytes);
        dev.stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(|e| fault("qr", e))?;
    }
    Ok(out)
}
