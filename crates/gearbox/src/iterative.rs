//! Two iterative algorithms written both ways: with immutable arrays (a
//! new array, and on a GPU a new device buffer, every step) and with
//! [`ResidentHandle`]s (every step writes buffers made once). The pairs
//! give the same numbers; the handle versions make no device buffer per
//! iteration once warm. They are the worked examples of
//! [`crate::resident`], and what `examples/iterative_bench.rs` times.

use gearbox_core::resident::ResidentHandle;
use gearbox_core::{Array, DType, Error, Result, Shape, UnaryOp};

/// Logistic regression by iteratively reweighted least squares, with
/// immutable arrays: `iterations` Newton steps from zero coefficients for
/// the design `x` (n x p) and 0/1 responses `y` (n x 1). Returns the p x 1
/// coefficients.
pub fn irls_logistic(x: &Array, y: &Array, iterations: usize) -> Result<Array> {
    let p = design_columns(x, y)?;
    let mut beta = Array::zeros([p, 1], x.dtype())?;
    for _ in 0..iterations {
        let eta = x.matmul(&beta)?;
        let mu = eta.unary(UnaryOp::Sigmoid)?;
        let w = (&mu * &(1.0 - &mu)?)?;
        let z = (&eta + &((y - &mu)? / &w)?)?;
        let xw = (x * &w)?;
        beta = x.crossprod(&xw)?.solve(&xw.crossprod(&z)?)?;
        beta.eval()?;
    }
    Ok(beta)
}

/// [`irls_logistic`] with resident handles on `backend` ("cpu" or a GPU
/// backend's name): `x` and `y` are put there once, and every step writes
/// the same buffers: the linear predictor by GEMM into its handle, the
/// mean, weights and working response by one fused kernel each, the
/// weighted design in place, the normal equations by GEMM into their
/// handles, and their solution (p x p, on the host) into the coefficients.
pub fn irls_logistic_resident(
    x: &Array,
    y: &Array,
    iterations: usize,
    backend: &str,
) -> Result<Array> {
    let p = design_columns(x, y)?;
    let n = x.dims()[0];
    let (x, y) = (place(x, backend)?, place(y, backend)?);
    let dtype = x.dtype();
    let handle = |dims: [usize; 2]| ResidentHandle::zeros(dims, dtype, backend);
    let (beta, eta, mu, w, z) = (
        handle([p, 1])?,
        handle([n, 1])?,
        handle([n, 1])?,
        handle([n, 1])?,
        handle([n, 1])?,
    );
    let (xw, xtwx, xtwz) = (handle([n, p])?, handle([p, p])?, handle([p, 1])?);
    let one = place(&Array::scalar(1.0).astype(dtype)?, backend)?;
    let (beta_v, eta_v, mu_v, w_v, z_v) = (
        beta.as_array(),
        eta.as_array(),
        mu.as_array(),
        w.as_array(),
        z.as_array(),
    );
    let (xw_v, xtwx_v, xtwz_v) = (xw.as_array(), xtwx.as_array(), xtwz.as_array());
    for _ in 0..iterations {
        eta.gemm_inplace(&x, &beta_v, 1.0, 0.0, false, false)?;
        mu.assign(&eta_v.unary(UnaryOp::Sigmoid)?)?;
        w.assign(&(&mu_v * &(&one - &mu_v)?)?)?;
        z.assign(&(&eta_v + &((&y - &mu_v)? / &w_v)?)?)?;
        xw.assign(&(&x * &w_v)?)?;
        xtwx.gemm_inplace(&x, &xw_v, 1.0, 0.0, true, false)?;
        xtwz.gemm_inplace(&xw_v, &z_v, 1.0, 0.0, true, false)?;
        // The p x p solve runs on the host: tiny, and a device solve would
        // make its result and workspace anew every step.
        beta.assign(&on_host(&xtwx_v)?.solve(&on_host(&xtwz_v)?)?)?;
    }
    beta.snapshot()
}

/// The dominant eigenvalue of the square matrix `a` by `steps` steps of
/// power iteration from `start` (n x 1), with immutable arrays: `v <- a v
/// / ||a v||`. Returns the Rayleigh quotient `v' a v` of the last vector
/// and the vector.
pub fn power_iteration(a: &Array, start: &Array, steps: usize) -> Result<(f64, Array)> {
    check_square(a, start)?;
    let mut v = start.clone();
    for _ in 0..steps {
        let av = a.matmul(&v)?;
        v = (&av / &(&av * &av)?.sum()?.sqrt()?)?;
        v.eval()?;
    }
    let lambda = v.crossprod(&a.matmul(&v)?)?.item()?;
    Ok((lambda, v))
}

/// [`power_iteration`] with resident handles on `backend`: the product by
/// GEMM into one handle, its squared norm by one fused reduction into a
/// 0-d handle, and the normalization by one fused kernel into the vector;
/// the norm never visits the host.
pub fn power_iteration_resident(
    a: &Array,
    start: &Array,
    steps: usize,
    backend: &str,
) -> Result<(f64, Array)> {
    check_square(a, start)?;
    let a = place(a, backend)?;
    let v = ResidentHandle::zeros(start.shape().clone(), start.dtype(), backend)?;
    v.copy_from(start)?;
    let av = ResidentHandle::zeros(start.shape().clone(), start.dtype(), backend)?;
    let norm2 = ResidentHandle::zeros(Shape::scalar(), start.dtype(), backend)?;
    let (v_v, av_v, norm2_v) = (v.as_array(), av.as_array(), norm2.as_array());
    for _ in 0..steps {
        av.gemm_inplace(&a, &v_v, 1.0, 0.0, false, false)?;
        norm2.assign(&(&av_v * &av_v)?.sum()?)?;
        v.assign(&(&av_v / &norm2_v.sqrt()?)?)?;
    }
    let v = v.snapshot()?;
    let lambda = v.crossprod(&a.matmul(&v)?)?.item()?;
    Ok((lambda, v))
}

/// A host copy of `a`'s values now (work on it runs on the CPU).
fn on_host(a: &Array) -> Result<Array> {
    Array::from_buffer(a.dims().to_vec(), a.buffer()?.try_clone("on_host")?)
}

/// `a` on `backend` (unchanged for "cpu").
fn place(a: &Array, backend: &str) -> Result<Array> {
    if backend == "cpu" {
        Ok(a.clone())
    } else {
        a.to_device(backend)
    }
}

/// The design's column count, after checking `x` (n x p float) against
/// `y` (n x 1).
fn design_columns(x: &Array, y: &Array) -> Result<usize> {
    let bad = |why: String| Error::InvalidArgument {
        op: "irls_logistic",
        name: "x, y",
        value: format!("{} and {}", x.shape(), y.shape()),
        why,
    };
    match (x.dims(), y.dims()) {
        (&[n, p], &[m, 1]) if n == m && p > 0 => {}
        _ => return Err(bad("x is n x p and y n x 1".into())),
    }
    if !matches!(x.dtype(), DType::F32 | DType::F64) || y.dtype() != x.dtype() {
        return Err(bad(format!(
            "x and y are float arrays of one dtype (got {} and {})",
            x.dtype(),
            y.dtype()
        )));
    }
    Ok(x.dims()[1])
}

/// Checks that `a` is square and `start` a matching column.
fn check_square(a: &Array, start: &Array) -> Result<()> {
    match (a.dims(), start.dims()) {
        (&[n, m], &[k, 1]) if n == m && n == k && a.dtype() == start.dtype() => Ok(()),
        _ => Err(Error::InvalidArgument {
            op: "power_iteration",
            name: "a, start",
            value: format!(
                "{} {} and {} {}",
                a.shape(),
                a.dtype(),
                start.shape(),
                start.dtype()
            ),
            why: "a is a square matrix and start a column of its size and dtype".into(),
        }),
    }
}
