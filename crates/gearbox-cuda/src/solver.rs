//! Factorizations on the device through cuSOLVER: thin QR (packed as the
//! CPU packs it), Cholesky (upper factor,
//! as R's `chol`), and LU with partial pivoting for solve and inverse, in
//! float32 and float64.
//!
//! The checks match the CPU path's: every factorization first rejects NaN
//! and infinite entries (and solve those of its right-hand side) with the
//! CPU's [`Error::NonFinite`] naming the same entry, found by a reduction
//! on the device, so that cuSOLVER never turns them into finite numbers;
//! Cholesky rejects an input whose largest asymmetry exceeds
//! `sqrt(eps) * max|A|` or that is not positive definite; solve and inverse
//! reject an exactly zero pivot or a smallest-to-largest pivot magnitude
//! ratio below `eps`.

use cudarc::cusolver::sys as sol;
use gearbox_core::{DType, Error, HostBuffer, Result, Shape};

use crate::blas::{copy, max_abs, suffix, support, two_values, unsupported};
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

/// [`Error::NonFinite`] naming the first NaN or infinite entry of `a` (an
/// operand of `op` of `shape`), as the CPU path names it: one reduction on
/// the device, and only when that finds one, a download to locate it.
fn require_finite(
    dev: &Device,
    cache: &KernelCache,
    (op, operand): (&'static str, &'static str),
    a: &CudaBuf,
    shape: &Shape,
    dtype: DType,
) -> Result<()> {
    if max_abs(dev, cache, a, shape.numel(), dtype)?.is_finite() {
        return Ok(());
    }
    locate_non_finite(dev, (op, operand), a, shape)
}

/// The CPU's error for a device operand known to hold a NaN or infinity.
fn locate_non_finite(
    dev: &Device,
    (op, operand): (&'static str, &'static str),
    a: &CudaBuf,
    shape: &Shape,
) -> Result<()> {
    let host = dev.download(a)?;
    gearbox_core::ops::linalg::factor::require_finite(op, operand, &host, shape)?;
    Err(fault(
        op,
        "the device found a NaN or infinite entry that the downloaded copy does not hold",
    ))
}

/// cuSOLVER's status int, written to the first four bytes of `info`.
fn read_info(dev: &Device, info: &CudaBuf) -> Result<i64> {
    Ok(match dev.download(info)? {
        HostBuffer::I64(v) => (v[0] as u64 & 0xffff_ffff) as u32 as i32 as i64,
        other => other.get_f64(0) as i64,
    })
}

/// A float type cuSOLVER works in, with its entry points (`S` or `D`).
trait Scalar {
    const DTYPE: DType;
    unsafe fn potrf_buffer(
        h: Handle,
        uplo: Fill,
        n: i32,
        a: *mut Self,
        lda: i32,
        lwork: *mut i32,
    ) -> St;
    #[allow(clippy::too_many_arguments)]
    unsafe fn potrf(
        h: Handle,
        uplo: Fill,
        n: i32,
        a: *mut Self,
        lda: i32,
        w: *mut Self,
        lwork: i32,
        info: *mut i32,
    ) -> St;
    unsafe fn getrf_buffer(
        h: Handle,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        lwork: *mut i32,
    ) -> St;
    #[allow(clippy::too_many_arguments)]
    unsafe fn getrf(
        h: Handle,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        w: *mut Self,
        ipiv: *mut i32,
        info: *mut i32,
    ) -> St;
    #[allow(clippy::too_many_arguments)]
    unsafe fn getrs(
        h: Handle,
        t: Op,
        n: i32,
        nrhs: i32,
        a: *const Self,
        lda: i32,
        ipiv: *const i32,
        b: *mut Self,
        ldb: i32,
        info: *mut i32,
    ) -> St;
    unsafe fn geqrf_buffer(
        h: Handle,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        lwork: *mut i32,
    ) -> St;
    #[allow(clippy::too_many_arguments)]
    unsafe fn geqrf(
        h: Handle,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        tau: *mut Self,
        w: *mut Self,
        lwork: i32,
        info: *mut i32,
    ) -> St;
    #[allow(clippy::too_many_arguments)]
    unsafe fn orgqr_buffer(
        h: Handle,
        m: i32,
        n: i32,
        k: i32,
        a: *const Self,
        lda: i32,
        tau: *const Self,
        lwork: *mut i32,
    ) -> St;
    #[allow(clippy::too_many_arguments)]
    unsafe fn orgqr(
        h: Handle,
        m: i32,
        n: i32,
        k: i32,
        a: *mut Self,
        lda: i32,
        tau: *const Self,
        w: *mut Self,
        lwork: i32,
        info: *mut i32,
    ) -> St;
}

type Handle = sol::cusolverDnHandle_t;
type Fill = sol::cublasFillMode_t;
type Op = sol::cublasOperation_t;
type St = sol::cusolverStatus_t;

macro_rules! scalar {
    ($t:ty, $dtype:expr, $potrf_b:ident, $potrf:ident, $getrf_b:ident, $getrf:ident, $getrs:ident, $geqrf_b:ident, $geqrf:ident, $orgqr_b:ident, $orgqr:ident) => {
        impl Scalar for $t {
            const DTYPE: DType = $dtype;
            unsafe fn potrf_buffer(
                h: Handle,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                lw: *mut i32,
            ) -> St {
                sol::$potrf_b(h, u, n, a, lda, lw)
            }
            unsafe fn potrf(
                h: Handle,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                w: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> St {
                sol::$potrf(h, u, n, a, lda, w, lw, info)
            }
            unsafe fn getrf_buffer(
                h: Handle,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                lw: *mut i32,
            ) -> St {
                sol::$getrf_b(h, m, n, a, lda, lw)
            }
            unsafe fn getrf(
                h: Handle,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                w: *mut Self,
                ipiv: *mut i32,
                info: *mut i32,
            ) -> St {
                sol::$getrf(h, m, n, a, lda, w, ipiv, info)
            }
            unsafe fn getrs(
                h: Handle,
                t: Op,
                n: i32,
                nrhs: i32,
                a: *const Self,
                lda: i32,
                ipiv: *const i32,
                b: *mut Self,
                ldb: i32,
                info: *mut i32,
            ) -> St {
                sol::$getrs(h, t, n, nrhs, a, lda, ipiv, b, ldb, info)
            }
            unsafe fn geqrf_buffer(
                h: Handle,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                lw: *mut i32,
            ) -> St {
                sol::$geqrf_b(h, m, n, a, lda, lw)
            }
            unsafe fn geqrf(
                h: Handle,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                tau: *mut Self,
                w: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> St {
                sol::$geqrf(h, m, n, a, lda, tau, w, lw, info)
            }
            unsafe fn orgqr_buffer(
                h: Handle,
                m: i32,
                n: i32,
                k: i32,
                a: *const Self,
                lda: i32,
                tau: *const Self,
                lw: *mut i32,
            ) -> St {
                sol::$orgqr_b(h, m, n, k, a, lda, tau, lw)
            }
            unsafe fn orgqr(
                h: Handle,
                m: i32,
                n: i32,
                k: i32,
                a: *mut Self,
                lda: i32,
                tau: *const Self,
                w: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> St {
                sol::$orgqr(h, m, n, k, a, lda, tau, w, lw, info)
            }
        }
    };
}

scalar!(
    f32,
    DType::F32,
    cusolverDnSpotrf_bufferSize,
    cusolverDnSpotrf,
    cusolverDnSgetrf_bufferSize,
    cusolverDnSgetrf,
    cusolverDnSgetrs,
    cusolverDnSgeqrf_bufferSize,
    cusolverDnSgeqrf,
    cusolverDnSorgqr_bufferSize,
    cusolverDnSorgqr
);
scalar!(
    f64,
    DType::F64,
    cusolverDnDpotrf_bufferSize,
    cusolverDnDpotrf,
    cusolverDnDgetrf_bufferSize,
    cusolverDnDgetrf,
    cusolverDnDgetrs,
    cusolverDnDgeqrf_bufferSize,
    cusolverDnDgeqrf,
    cusolverDnDorgqr_bufferSize,
    cusolverDnDorgqr
);

/// The dense cuSOLVER routines used here, in the precision `T`. Pointers are
/// device addresses; each routine sizes and allocates its own workspace.
struct Dense<'a, T> {
    dev: &'a Device,
    h: Handle,
    op: &'static str,
    _t: std::marker::PhantomData<T>,
}

impl<'a, T: Scalar> Dense<'a, T> {
    fn new(dev: &'a Device, h: Handle, op: &'static str) -> Self {
        Dense {
            dev,
            h,
            op,
            _t: std::marker::PhantomData,
        }
    }

    /// A workspace of `lwork` elements, as a device address.
    fn work(&self, lwork: i32) -> Result<CudaBuf> {
        self.dev.pool.alloc(lwork.max(1) as usize, T::DTYPE)
    }

    /// Lower Cholesky factor of the `n x n` matrix at `a`, in place (its
    /// lower triangle read and written): cuSOLVER takes about half as long
    /// for the lower factor as for the upper one.
    fn potrf(&self, n: i32, a: u64, info: u64) -> Result<()> {
        let lower = sol::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;
        let mut lwork = 0i32;
        // SAFETY: `a` holds n*n entries of T; lwork and info are valid outputs.
        unsafe {
            status(
                self.op,
                T::potrf_buffer(self.h, lower, n, a as *mut T, n, &mut lwork),
            )?;
            let w = self.work(lwork)?;
            status(
                self.op,
                T::potrf(
                    self.h,
                    lower,
                    n,
                    a as *mut T,
                    n,
                    self.dev.ptr(&w) as *mut T,
                    lwork,
                    info as *mut i32,
                ),
            )?;
        }
        self.dev.synchronize()
    }

    /// LU with partial pivoting of the `n x n` matrix at `a`, in place.
    fn getrf(&self, n: i32, a: u64, ipiv: u64, info: u64) -> Result<()> {
        let mut lwork = 0i32;
        // SAFETY: `a` holds n*n entries, `ipiv` n ints; outputs are valid.
        unsafe {
            status(
                self.op,
                T::getrf_buffer(self.h, n, n, a as *mut T, n, &mut lwork),
            )?;
            let w = self.work(lwork)?;
            status(
                self.op,
                T::getrf(
                    self.h,
                    n,
                    n,
                    a as *mut T,
                    n,
                    self.dev.ptr(&w) as *mut T,
                    ipiv as *mut i32,
                    info as *mut i32,
                ),
            )?;
        }
        self.dev.synchronize()
    }

    /// Solves with the LU at `lu` for the `n x nrhs` right side at `b`, in place.
    fn getrs(&self, n: i32, nrhs: i32, lu: u64, ipiv: u64, b: u64, info: u64) -> Result<()> {
        let t = sol::cublasOperation_t::CUBLAS_OP_N;
        // SAFETY: `lu` holds n*n entries, `b` n*nrhs, `ipiv` n ints.
        unsafe {
            status(
                self.op,
                T::getrs(
                    self.h,
                    t,
                    n,
                    nrhs,
                    lu as *const T,
                    n,
                    ipiv as *const i32,
                    b as *mut T,
                    n,
                    info as *mut i32,
                ),
            )
        }
    }

    /// Householder QR of the `m x n` matrix at `a` in place; `tau` gets
    /// `min(m, n)` scalars.
    fn geqrf(&self, m: i32, n: i32, a: u64, tau: u64, info: u64) -> Result<()> {
        let mut lwork = 0i32;
        // SAFETY: `a` holds m*n entries, `tau` min(m, n); outputs are valid.
        unsafe {
            status(
                self.op,
                T::geqrf_buffer(self.h, m, n, a as *mut T, m, &mut lwork),
            )?;
            let w = self.work(lwork)?;
            status(
                self.op,
                T::geqrf(
                    self.h,
                    m,
                    n,
                    a as *mut T,
                    m,
                    tau as *mut T,
                    self.dev.ptr(&w) as *mut T,
                    lwork,
                    info as *mut i32,
                ),
            )?;
        }
        self.dev.synchronize()
    }

    /// Forms the first `p` columns of Q from geqrf's reflectors at `a` (`m` rows).
    fn orgqr(&self, m: i32, p: i32, a: u64, tau: u64, info: u64) -> Result<()> {
        let mut lwork = 0i32;
        // SAFETY: `a` holds at least m*p entries, `tau` p; outputs are valid.
        unsafe {
            status(
                self.op,
                T::orgqr_buffer(
                    self.h,
                    m,
                    p,
                    p,
                    a as *const T,
                    m,
                    tau as *const T,
                    &mut lwork,
                ),
            )?;
            let w = self.work(lwork)?;
            status(
                self.op,
                T::orgqr(
                    self.h,
                    m,
                    p,
                    p,
                    a as *mut T,
                    m,
                    tau as *const T,
                    self.dev.ptr(&w) as *mut T,
                    lwork,
                    info as *mut i32,
                ),
            )?;
        }
        self.dev.synchronize()
    }
}

/// Runs `f` with the dense routines of `dtype` (float32 or float64).
macro_rules! with_dense {
    ($dev:expr, $h:expr, $op:expr, $dtype:expr, |$d:ident| $body:expr) => {
        if $dtype == DType::F32 {
            let $d = Dense::<f32>::new($dev, $h, $op);
            $body
        } else {
            let $d = Dense::<f64>::new($dev, $h, $op);
            $body
        }
    };
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
    // max|A| is finite exactly when every entry is.
    if !big.is_finite() {
        locate_non_finite(dev, ("cholesky", "A"), a, shape)?;
    }
    if worst > eps(dtype).sqrt() * big {
        return Err(not_pd(format!(
            "it is not symmetric: entries differ by up to {worst:e}"
        )));
    }
    let info = dev.upload(&HostBuffer::I64(vec![0]))?;
    {
        let solver = dev.solver.lock().unwrap_or_else(|e| e.into_inner());
        let h = solver.cu();
        with_dense!(dev, h, "cholesky", dtype, |d| d.potrf(
            n as i32,
            dev.ptr(&r),
            dev.ptr(&info)
        ))?;
    }
    let code = read_info(dev, &info)?;
    if code > 0 {
        return Err(not_pd(format!(
            "the leading minor of order {code} is not positive"
        )));
    }
    // R = Lᵀ, the lower triangle zeroed.
    fill_square(dev, cache, "gb_lower_to_upper", &r, n, dtype)?;
    Ok(r)
}

/// Runs support kernel `kernel` (for `dtype`) over the `n x n` matrix `x`
/// in place.
fn fill_square(
    dev: &Device,
    cache: &KernelCache,
    kernel: &str,
    x: &CudaBuf,
    n: usize,
    dtype: DType,
) -> Result<()> {
    let name = format!("{kernel}_{}", suffix(dtype));
    support(dev, cache, &name, &[dev.ptr(x)], n as i64, n * n)
}

/// The `n x n` identity.
fn identity(dev: &Device, cache: &KernelCache, n: usize, dtype: DType) -> Result<CudaBuf> {
    let x = dev.pool.alloc(n * n, dtype)?;
    if n > 0 {
        fill_square(dev, cache, "gb_eye", &x, n, dtype)?;
    }
    Ok(x)
}

/// The inverse of the upper triangular `a` (its lower triangle not read):
/// cuBLAS `trsm` on the identity, singular by the CPU's rule (a diagonal
/// spanning more than `1 / epsilon`, or a zero on it).
pub fn inv_upper(
    dev: &Device,
    cache: &KernelCache,
    a: &CudaBuf,
    shape: &Shape,
    dtype: DType,
) -> Result<CudaBuf> {
    let n = shape.dim(0);
    require_finite(dev, cache, ("inv_upper", "A"), a, shape, dtype)?;
    if n == 0 {
        return dev.pool.alloc(0, dtype);
    }
    let [small, large] = two_values(
        dev,
        cache,
        "gb_diag_range",
        a,
        n,
        [f64::INFINITY, 0.0],
        dtype,
    )?;
    if small < eps(dtype) * large || small == 0.0 || small.is_nan() {
        return Err(Error::Singular {
            op: "inv_upper",
            shape: shape.clone(),
            detail: format!("diagonal magnitudes range from {small:e} to {large:e}"),
        });
    }
    let x = identity(dev, cache, n, dtype)?;
    use cudarc::cublas::sys as cb;
    let side = cb::cublasSideMode_t::CUBLAS_SIDE_LEFT;
    let upper = cb::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;
    let trans = cb::cublasOperation_t::CUBLAS_OP_N;
    let diag = cb::cublasDiagType_t::CUBLAS_DIAG_NON_UNIT;
    let k = i32::try_from(n)
        .map_err(|_| unsupported(format!("order {n} exceeds cuBLAS's 32-bit limit")))?;
    let (pa, px) = (dev.ptr(a), dev.ptr(&x));
    let blas = dev.blas.lock().unwrap_or_else(|e| e.into_inner());
    let handle = *blas.handle();
    macro_rules! trsm {
        ($f:ident, $t:ty) => {{
            let alpha: $t = 1.0;
            let (a, x) = (pa as *const $t, px as *mut $t);
            cb::$f(handle, side, upper, trans, diag, k, k, &alpha, a, k, x, k)
        }};
    }
    // SAFETY: `a` and `x` are live device buffers of n * n elements of
    // `dtype` (leading dimension n); alpha points to a host scalar; trsm
    // overwrites `x` (the identity) with A⁻¹.
    let status = unsafe {
        if dtype == DType::F32 {
            trsm!(cublasStrsm_v2, f32)
        } else {
            trsm!(cublasDtrsm_v2, f64)
        }
    };
    drop(blas);
    status.result().map_err(|e| fault("inv_upper", e))?;
    Ok(x)
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
    require_finite(dev, cache, (op, "A"), a, shape, dtype)?;
    if let Some(b) = b {
        require_finite(dev, cache, (op, "B"), b, out_shape, dtype)?;
    }
    let x = match b {
        Some(b) => copy(dev, b)?,
        None => identity(dev, cache, n, dtype)?,
    };
    if n == 0 {
        return Ok(x);
    }
    let nrhs = out_shape.numel() / n;
    let lu = copy(dev, a)?;
    let ipiv = dev.pool.alloc(n, DType::F32)?; // n 32-bit ints
    let info = dev.upload(&HostBuffer::I64(vec![0]))?;
    let solver = dev.solver.lock().unwrap_or_else(|e| e.into_inner());
    let h = solver.cu();
    with_dense!(dev, h, op, dtype, |d| d.getrf(
        n as i32,
        dev.ptr(&lu),
        dev.ptr(&ipiv),
        dev.ptr(&info)
    ))?;
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
        let (a, piv, b, i) = (dev.ptr(&lu), dev.ptr(&ipiv), dev.ptr(&x), dev.ptr(&info));
        with_dense!(dev, h, op, dtype, |d| d.getrs(
            n as i32,
            nrhs as i32,
            a,
            piv,
            b,
            i
        ))?;
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
    require_finite(dev, cache, ("qr", "A"), a, shape, dtype)?;
    let work = copy(dev, a)?;
    let tau = dev.pool.alloc(p, dtype)?;
    let info = dev.upload(&HostBuffer::I64(vec![0]))?;
    let solver = dev.solver.lock().unwrap_or_else(|e| e.into_inner());
    let h = solver.cu();
    let (a, t, i) = (dev.ptr(&work), dev.ptr(&tau), dev.ptr(&info));
    with_dense!(dev, h, "qr", dtype, |d| d
        .geqrf(m as i32, n as i32, a, t, i))?;
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
    with_dense!(dev, h, "qr", dtype, |d| d
        .orgqr(m as i32, p as i32, a, t, i))?;
    drop(solver);
    if read_info(dev, &info)? != 0 {
        return Err(fault("qr", "cuSOLVER reported an invalid argument"));
    }
    // Q is the first m * p values of the work matrix.
    let bytes = m * p * dtype.size_bytes();
    let mut out = out;
    {
        let src = work.block().slice(0..bytes);
        let mut dst = out.block_mut().slice_mut(0..bytes);
        dev.stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(|e| fault("qr", e))?;
    }
    Ok(out)
}
