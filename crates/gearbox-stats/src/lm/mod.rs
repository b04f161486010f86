//! Many linear regressions that share one design matrix, fitted at once
//! (amatrix's `many_lm`): for an `n x p` design `X` and `n x k` responses `Y`,
//! column `j` of every result is R's `summary(lm(Y[, j] ~ X))` coefficient
//! table, residual standard error and R².
//!
//! Method (float64 throughout, through Gearbox arrays, so the large steps run
//! wherever the runtime sends them, a GPU included; a small fit of data
//! that lives on a device is read to the host and runs there, see
//! [`SMALL_FIT_FLOPS`]):
//! 1. checks on the host: dtypes, shapes, at least one observation and one
//!    response, `n > p`, finite `X`, and the rank of `X` by a QR (faer) of
//!    `X` with unit-norm columns; a column whose remaining norm falls below
//!    `1e-7` (R's `lm` tolerance) makes the design rank deficient and is
//!    named in the error (by a column-pivoted QR);
//! 2. the thin QR `X = Q R_unit D`: the factorization of the unit-norm
//!    columns, with the column norms `D` kept apart, so that a column of any
//!    scale (1e300, 1e-300) fits without overflow, as in R; on the host for
//!    a small design, as array work where the design lives for a large or
//!    device-resident one (`large`, the same checks and errors);
//! 3. the effects `QᵀY` (`p x k`): the one large GEMM;
//! 4. the coefficients `B = R⁻¹ QᵀY`, with `R⁻¹ = D⁻¹ R_unit⁻¹` (`p x p`)
//!    from a triangular solve on the host;
//! 5. `RSS = colSums((Y - Q QᵀY)²)` in one fused pass over `Y`: the fitted
//!    values are a broadcast sum of `p` outer products (column `i` of `Q`,
//!    `n x 1`, times row `i` of the effects, `1 x k`), subtracted from `Y`
//!    term by term inside the kernel that squares and sums the columns, so
//!    neither fitted values nor residuals are ever stored (`Y` is read twice
//!    in all: by the GEMM and by this pass). Past
//!    [`FUSED_RESIDUAL_MAX_TERMS`] terms the per-element work outgrows the
//!    memory traffic, and the fitted values come from a second GEMM instead;
//! 6. `σ² = RSS / (n - p)`, standard errors `sqrt(diag((XᵀX)⁻¹)) σ` with
//!    `sqrt(diag((XᵀX)⁻¹))` the row norms of `R⁻¹`, `t = B / se` and
//!    two-sided p-values `2 P(T > |t|)` with `n - p` degrees of freedom.
//!
//! When `R⁻¹` is on the host and the `p x k` results are small (at most
//! [`HOST_TAIL_VALUES`]), steps 4 to 6 run on the host from the effects and
//! `colSums(Y²)`, read back together (`tail`): the same formulas, without
//! some twenty small array regions.
//!
//! Everything but the p-values is computed by one evaluation before
//! [`many_lm`] returns. The p-values are left lazy (an unevaluated
//! [`Array`], computed at their first read: `to_vec`, `eval`, ...): `p x k`
//! Student t tail probabilities are heavy float64 work, and a caller that
//! only wants estimates, standard errors or t statistics does not pay for
//! them. Reading them later gives the same values as an eager evaluation.
//!
//! QR rather than the normal equations: the error grows with `cond(X)`, not
//! `cond(X)²`, as in R (a covariate such as a calendar year next to an
//! intercept makes `XᵀX` lose about ten digits).
//!
//! R² is R's `mss / (mss + rss)`. With an intercept (the first column of the
//! QR), `mss` is the centred model sum of squares, the sum of the squared
//! effects after the first; without one it is uncentred, the sum of all
//! squared effects, as `summary.lm` does when the model has no intercept.
//!
//! Where each step lives: the checks and the orchestration here; `rank`,
//! the host QR and the rank report; `cholesky`, the Cholesky QR and its
//! condition bound; `large`, the factorization as array work; `small`,
//! small fits of device data on the host; `tail`, the last steps on the
//! host; `arrays`, the last steps as array work; `rss`, the residual sums
//! of squares.

mod arrays;
mod cholesky;
mod large;
mod rank;
mod rss;
mod small;
mod tail;

use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
use faer::{Mat, MatRef, Par};
use gearbox_core::{Array, DType, Error, Precision, Result};

pub use large::LARGE_DESIGN_FLOPS;
use rank::{checked_qr, Design, DesignQr};
pub use rss::{CERTIFIED_RATIO, FUSED_RESIDUAL_MAX_TERMS};
pub use small::{SMALL_FIT_DOWNLOAD, SMALL_FIT_FLOPS};
pub use tail::HOST_TAIL_VALUES;

/// Relative tolerance of the rank check: a column whose norm, after removing
/// its projection on the columns chosen before it, is below this fraction
/// of its own norm counts as a linear combination of them (R's `lm` default).
pub const RANK_TOLERANCE: f64 = 1e-7;

/// The name R gives the intercept term.
pub const INTERCEPT_NAME: &str = "(Intercept)";

/// Options of [`many_lm`].
#[derive(Debug, Clone, PartialEq)]
pub struct LmOptions {
    /// Prepend a column of ones to the design (R's default intercept term).
    pub intercept: bool,
    /// Names of the columns of `X`, in order (without the intercept); `None`
    /// names them `x1`, `x2`, ...
    pub term_names: Option<Vec<String>>,
}

impl Default for LmOptions {
    /// An intercept (as in R's `lm`) and default term names.
    fn default() -> Self {
        LmOptions {
            intercept: true,
            term_names: None,
        }
    }
}

/// The fits of [`many_lm`]: `p` terms (the intercept first when there is
/// one) by `k` responses. Column `j` belongs to column `j` of `Y`.
#[derive(Debug, Clone)]
pub struct ManyLm {
    /// Term names, one per row of the `p x k` results.
    pub term_names: Vec<String>,
    /// Estimated coefficients, `p x k` float64.
    pub coefficients: Array,
    /// Standard errors of the coefficients, `p x k`.
    pub std_errors: Array,
    /// t statistics, `coefficients / std_errors`, `p x k`.
    pub t_values: Array,
    /// Two-sided p-values of the t statistics, `p x k`. Lazy: not computed
    /// when [`many_lm`] returns, but at the first read (`to_vec`, `eval`,
    /// ...), so that a caller who does not need them skips the `p x k`
    /// Student t tail probabilities.
    pub p_values: Array,
    /// Residual standard error of each regression, `[k]`.
    pub sigma: Array,
    /// R² of each regression, `[k]` (centred when there is an intercept).
    pub r_squared: Array,
    /// Residual degrees of freedom, `n - p`.
    pub df_residual: usize,
}

/// Fits one least-squares regression per column of `y` on the shared
/// design `x` (see the module documentation for the method).
///
/// `x` is `n x q` float64; with `opts.intercept` a column of ones goes
/// first, so the design has `p = q + 1` columns, else `p = q`. `y` is
/// `n x k` float64, or `[n]` for one response (results are then `p x 1`).
///
/// Errors: [`Error::DType`] for a non-float64 input; [`Error::BadShape`] for
/// an `x` that is not 2-D or a `y` that is not 1-D or 2-D;
/// [`Error::ShapeMismatch`] when the row counts differ; [`Error::Empty`]
/// for no rows or no responses; [`Error::InvalidArgument`] when `n <= p`
/// (no residual degrees of freedom), when the term names do not match the
/// columns of `x`, or for a NaN or infinite value in `x` or `y` (naming row
/// and column), a response whose sums of squares overflow, or a column so
/// small (below about 1e-308) that its coefficient would overflow, or a
/// coefficient or standard error that overflows float64 (a tiny column
/// with large responses), naming the term and the response column;
/// [`Error::Singular`] when the design is rank
/// deficient, naming each dependent term and the terms it is a combination
/// of.
///
/// ```
/// use gearbox_core::Array;
/// use gearbox_stats::lm::{many_lm, LmOptions};
/// // y1 = 1 + 2 x exactly; y2 = 3 - x plus a little noise
/// let x = Array::from_vec([5, 1], vec![0.0, 1.0, 2.0, 3.0, 4.0])?;
/// let y = Array::from_vec(
///     [5, 2],
///     vec![1.0, 3.0, 5.0, 7.0, 9.0, 3.1, 1.9, 1.0, 0.1, -1.1],
/// )?;
/// let fit = many_lm(&x, &y, &LmOptions::default())?;
/// assert_eq!(fit.term_names, ["(Intercept)", "x1"]);
/// assert!((fit.coefficients.get(&[1, 0])? - 2.0).abs() < 1e-12);
/// assert_eq!(fit.df_residual, 3);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
pub fn many_lm(x: &Array, y: &Array, opts: &LmOptions) -> Result<ManyLm> {
    let fit = lazy_fit(x, y, opts)?;
    // One evaluation of everything but the p-values, so that the pass over
    // Y for the residuals runs once and the statistics fuse behind it.
    Array::eval_all(&fit.eager())?;
    // One number downloaded: finite exactly when every RSS, estimate and
    // standard error is (or, rarely, when only the RSS total overflows);
    // the vectors only to name what is not.
    if !fit.health.item()?.is_finite() {
        let rss_values = fit.rss.to_vec::<f64>()?;
        if let Some(j) = rss_values.iter().position(|v| !v.is_finite()) {
            return Err(non_finite_response(&fit.y, j, fit.k));
        }
        // With finite X and Y an estimate or standard error can still
        // overflow (a column of 1e-300 with responses of 1e10 has estimates
        // near 1e310).
        if let Some(e) = overflowing_estimate(&fit)? {
            return Err(e);
        }
    }
    Ok(ManyLm {
        term_names: fit.term_names,
        coefficients: fit.coefficients,
        std_errors: fit.std_errors,
        t_values: fit.t_values,
        p_values: fit.p_values,
        sigma: fit.sigma,
        r_squared: fit.r_squared,
        df_residual: fit.df_residual,
    })
}

/// The fit as lazy arrays, before evaluation (see [`many_lm`]).
struct LazyFit {
    term_names: Vec<String>,
    /// The responses as an `n x k` matrix.
    y: Array,
    k: usize,
    df_residual: usize,
    coefficients: Array,
    std_errors: Array,
    t_values: Array,
    p_values: Array,
    sigma: Array,
    r_squared: Array,
    /// Residual sums of squares, `[k]`.
    rss: Array,
    /// `Σ rss + Σ (0·b + 0·se)`, a scalar: finite when every RSS, estimate
    /// and standard error is (RSS values are >= 0, NaN or +inf; `0·v` is 0
    /// for a finite `v` and NaN otherwise), and when one is not.
    health: Array,
}

impl LazyFit {
    /// The results evaluated before [`many_lm`] returns, in one evaluation
    /// (everything but the lazy p-values).
    fn eager(&self) -> [&Array; 6] {
        [
            &self.coefficients,
            &self.std_errors,
            &self.t_values,
            &self.sigma,
            &self.r_squared,
            &self.health,
        ]
    }
}

/// [`many_lm`]'s inputs once their dtypes and shapes are checked.
struct Checked {
    /// The responses as an `n x k` matrix.
    y: Array,
    n: usize,
    k: usize,
    /// One per term, the intercept first when there is one.
    term_names: Vec<String>,
}

/// Checks the dtypes and shapes of [`many_lm`]'s inputs (the errors its
/// documentation lists, up to the values themselves).
fn checked_inputs(x: &Array, y: &Array, opts: &LmOptions) -> Result<Checked> {
    const OP: &str = "many_lm";
    for a in [x, y] {
        if a.dtype() != DType::F64 {
            return Err(Error::DType {
                op: OP,
                got: a.dtype(),
                expected: "f64 (convert with astype(DType::F64))",
            });
        }
    }
    let (n, q) = match *x.dims() {
        [n, q] => (n, q),
        _ => {
            return Err(Error::BadShape {
                op: OP,
                shape: x.shape().clone(),
                why: "the design x must be an n x q matrix".into(),
            })
        }
    };
    let y = match *y.dims() {
        [m] => y.reshape([m, 1])?,
        [_, _] => y.clone(),
        _ => {
            return Err(Error::BadShape {
                op: OP,
                shape: y.shape().clone(),
                why: "the responses y must be a vector [n] or an n x k matrix".into(),
            })
        }
    };
    let k = y.dims()[1];
    if y.dims()[0] != n {
        return Err(Error::ShapeMismatch {
            op: OP,
            lhs: x.shape().clone(),
            rhs: y.shape().clone(),
            why: format!("x has {n} rows (observations) but y has {}", y.dims()[0]),
        });
    }
    if n == 0 {
        return Err(Error::Empty {
            op: OP,
            shape: x.shape().clone(),
            why: "x and y have no rows (observations); a fit needs more observations than terms",
        });
    }
    if k == 0 {
        return Err(Error::Empty {
            op: OP,
            shape: y.shape().clone(),
            why: "y has no columns (responses); give at least one response to fit",
        });
    }
    let term_names = design_term_names(q, opts)?;
    let p = term_names.len();
    if n <= p {
        return Err(Error::InvalidArgument {
            op: OP,
            name: "x",
            value: format!("{n} rows for {p} terms"),
            why: "a fit with standard errors needs more observations than terms \
                  (n > p, so that n - p residual degrees of freedom remain)"
                .into(),
        });
    }
    Ok(Checked {
        y,
        n,
        k,
        term_names,
    })
}

/// The checks and host steps of [`many_lm`], then its results: finished
/// on the host where they are few ([`tail`]), else as a graph of arrays
/// ([`arrays`]).
fn lazy_fit(x: &Array, y: &Array, opts: &LmOptions) -> Result<LazyFit> {
    let Checked {
        y,
        n,
        k,
        term_names,
    } = checked_inputs(x, y, opts)?;
    let p = term_names.len();

    // A small fit of data that lives on a device runs on the host.
    let (x, y) = match small::on_host_if_small(x, &y, (n, p, k))? {
        Some((x, y)) => (x, y),
        None => (x.clone(), y),
    };
    let x = &x;

    // Finite values and full column rank, then Q R: as array work for a
    // large or device-resident design, else on the calling thread.
    let qr = if large::factor_as_arrays(x, n, p) {
        large::checked_qr_arrays(x, opts.intercept, &term_names, |x| {
            host_design_qr(x, n, opts.intercept, &term_names)
        })?
    } else {
        host_design_qr(x, n, opts.intercept, &term_names)?
    };

    // Work in float64 at no less than Strict precision, whatever the inputs
    // say. Only the small host arrays are tagged: an operation takes the
    // strictest precision of its inputs, and every one that reads Y also
    // reads one of them, so Y itself is never re-tagged (which would copy it
    // to the host when it lives on a device).
    let precision = Precision::Strict.max(x.precision()).max(y.precision());
    if tail::applies(&qr, p, k) {
        return tail::host_fit(qr, y, term_names, opts.intercept, precision);
    }
    arrays::array_fit(qr, y, term_names, opts.intercept, precision)
}

/// `R⁻¹ = D⁻¹ R_unit⁻¹` (`p x p`, column-major) and the standard errors'
/// factors `sqrt(diag((XᵀX)⁻¹))` from a host `R_unit⁻¹` and the scales
/// `1 / d_i`: row `i` of `R_unit⁻¹` (entries of a well-scaled factor)
/// divided by `d_i`, so that no step overflows for columns of any scale;
/// `diag((XᵀX)⁻¹) = diag(R⁻¹ R⁻ᵀ)`, the squared row norms of `R⁻¹`, taken
/// on `R_unit⁻¹` before the scale (1e300 squared would overflow).
fn inverse_factors(r_unit_inverse: &[f64], inv_scale: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let p = inv_scale.len();
    let r_inverse = (0..p * p)
        .map(|at| r_unit_inverse[at] * inv_scale[at % p])
        .collect();
    let unscaled_sd = (0..p)
        .map(|i| row_norm(r_unit_inverse, p, i) * inv_scale[i])
        .collect();
    (r_inverse, unscaled_sd)
}

/// The design `[1 x]` (with `intercept`) or `x` on the host, checked
/// finite, and its [`checked_qr`] on the calling thread.
fn host_design_qr(x: &Array, n: usize, intercept: bool, names: &[String]) -> Result<DesignQr> {
    const OP: &str = "many_lm";
    let buffer = x.buffer()?;
    let x_values = buffer.as_slice::<f64>().ok_or(Error::DType {
        op: OP,
        got: x.dtype(),
        expected: "f64",
    })?;
    if let Some(at) = x_values.iter().position(|v| !v.is_finite()) {
        let (row, col) = (at % n, at / n);
        return Err(Error::InvalidArgument {
            op: OP,
            name: "x",
            value: format!("{} at row {row}, column {col}", x_values[at]),
            why: "the design must be finite (remove or impute missing values first)".into(),
        });
    }
    // The unit-norm columns (n x p, which become Q) are the one large
    // allocation: one the host cannot hold is a clear error, not an abort.
    gearbox_core::memory::ensure_available(OP, n.saturating_mul(names.len()).saturating_mul(8))?;
    let design = Design {
        x: x_values,
        intercept,
        n,
    };
    checked_qr(design, names)
}

/// Two-sided p-values `2 P(T > |t|)` of t statistics with `df` degrees of
/// freedom, elementwise, in the shape of `t` (R's `2 * pt(abs(t), df,
/// lower.tail = FALSE)`). NaN stays NaN; an infinite `t` gives 0. Lazy and
/// fusable: `pt` runs where the t statistics are (on the GPU for a large fit).
pub fn two_sided_p(t: &Array, df: f64) -> Result<Array> {
    let df = Array::scalar(df).with_precision(t.precision())?;
    2.0 * &crate::elementwise::pt(&t.abs()?, &df, false, false)?
}

/// The names of the design's columns: the intercept, then those of `x`.
fn design_term_names(q: usize, opts: &LmOptions) -> Result<Vec<String>> {
    let given: Vec<String> = match &opts.term_names {
        Some(names) if names.len() != q => {
            return Err(Error::InvalidArgument {
                op: "many_lm",
                name: "term_names",
                value: format!("{} name(s)", names.len()),
                why: format!("x has {q} column(s); give one name per column"),
            })
        }
        Some(names) => names.clone(),
        None => (1..=q).map(|j| format!("x{j}")).collect(),
    };
    let mut names = Vec::with_capacity(q + 1);
    if opts.intercept {
        names.push(INTERCEPT_NAME.to_string());
    }
    names.extend(given);
    Ok(names)
}

/// The Euclidean norm of row `i` of the `p x p` column-major `m`, scaled
/// by its largest entry so that the squares neither overflow nor underflow.
fn row_norm(m: &[f64], p: usize, i: usize) -> f64 {
    let largest = (0..p).fold(0.0f64, |a, j| a.max(m[i + j * p].abs()));
    if largest == 0.0 {
        return 0.0;
    }
    let sum: f64 = (0..p).map(|j| (m[i + j * p] / largest).powi(2)).sum();
    largest * sum.sqrt()
}

/// Flops from which `R⁻¹` is computed on every core.
const PARALLEL_INVERSE_FLOPS: usize = 1 << 24;

/// `R⁻¹` of an upper triangular `p x p` column-major `R` with a nonzero
/// diagonal, column-major. About `p³ / 3` flops: on every core from
/// [`PARALLEL_INVERSE_FLOPS`] (a 1,024-term design's took most of a fit on
/// one thread), on the calling thread below.
pub(super) fn upper_triangular_inverse(r: &[f64], p: usize) -> Vec<f64> {
    let r = MatRef::from_column_major_slice(r, p, p);
    let mut inverse = Mat::<f64>::identity(p, p);
    let par = if p.saturating_pow(3) / 3 >= PARALLEL_INVERSE_FLOPS {
        faer::get_global_parallelism()
    } else {
        Par::Seq
    };
    solve_upper_triangular_in_place(r, inverse.as_mut(), par);
    let mut out = vec![0.0; p * p];
    for j in 0..p {
        for i in 0..=j {
            out[i + j * p] = inverse[(i, j)];
        }
    }
    out
}

/// The error for response column `j`, whose residual sum of squares is not
/// finite: the first NaN or infinite value of that column, else an overflow.
fn non_finite_response(y: &Array, j: usize, k: usize) -> Error {
    let column = y
        .slice(1, j..j + 1)
        .and_then(|c| c.to_vec::<f64>())
        .unwrap_or_default();
    match column.iter().position(|v| !v.is_finite()) {
        Some(row) => Error::InvalidArgument {
            op: "many_lm",
            name: "y",
            value: format!("{} at row {row}, column {j}", column[row]),
            why: "the responses must be finite (remove or impute missing values first)".into(),
        },
        None => Error::InvalidArgument {
            op: "many_lm",
            name: "y",
            value: format!("column {j} of {k}"),
            why: "its residual sum of squares overflows float64; rescale the response".into(),
        },
    }
}

/// The error for the first estimate, else standard error, of `fit` that is
/// not finite, naming its term and response column; `None` when all are
/// finite.
fn overflowing_estimate(fit: &LazyFit) -> Result<Option<Error>> {
    let p = fit.term_names.len();
    for (values, what) in [
        (&fit.coefficients, "coefficient"),
        (&fit.std_errors, "standard error"),
    ] {
        let values = values.to_vec::<f64>()?;
        if let Some(at) = values.iter().position(|v| !v.is_finite()) {
            return Ok(Some(Error::InvalidArgument {
                op: "many_lm",
                name: "x",
                value: format!(
                    "term {} for response column {} of {}",
                    fit.term_names[at % p],
                    at / p,
                    fit.k
                ),
                why: format!(
                    "its {what} overflows float64 to {}; rescale the column or the response",
                    values[at]
                ),
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
