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

mod cholesky;
mod large;
mod rank;
mod small;
mod tail;

use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
use faer::{Mat, MatRef, Par};
use gearbox_core::{Array, DType, Error, Precision, Result};

pub use large::LARGE_DESIGN_FLOPS;
use rank::{checked_qr, DesignQr, QFactor, UnitInverse};
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

/// Above this many terms the residual sum of squares takes the GEMM route
/// `colSums((Y - Q (QᵀY))²)`; up to it, the fitted values are a broadcast sum
/// of `p` outer products inside the one fused pass over `Y`.
///
/// The fused pass does `p` multiply-subtracts per element of `Y` and reads
/// one element of `Y` (8 bytes): on an H100 (3.35 TB/s, 34 TFLOP/s float64
/// without tensor cores) it stays bound by memory up to about 32 terms,
/// past which the tensor-core GEMM and its extra `n x k` write and read win.
pub const FUSED_RESIDUAL_MAX_TERMS: usize = 32;

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

/// The checks and host steps of [`many_lm`], then the graph of its results;
/// on the side of `Y` only the effects GEMM is queued.
fn lazy_fit(x: &Array, y: &Array, opts: &LmOptions) -> Result<LazyFit> {
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
    // Explained sum of squares: the effects after the intercept's. The
    // intercept's row is masked rather than sliced off, so the pass stays on
    // whichever device holds the effects.
    let mut parts: Vec<(Vec<f64>, [usize; 2])> = Vec::new();
    let q_array = match qr.q {
        QFactor::Host(q) => {
            parts.push((q, [n, p]));
            None
        }
        QFactor::Array(q) => Some(q),
    };
    // A host R_unit⁻¹ gives R⁻¹ and the standard errors' factors here; one
    // computed as array work stays where it is, and only the scales go.
    let array_inverse = match qr.r_unit_inverse {
        UnitInverse::Host(r_unit_inverse) => {
            let (r_inverse, unscaled_sd) = inverse_factors(&r_unit_inverse, &qr.inv_scale);
            parts.push((r_inverse, [p, p]));
            parts.push((unscaled_sd, [p, 1]));
            None
        }
        UnitInverse::Array(r_unit_inverse) => {
            parts.push((qr.inv_scale.clone(), [p, 1]));
            Some(r_unit_inverse)
        }
    };
    if opts.intercept {
        let mask: Vec<f64> = (0..p).map(|i| f64::from(u8::from(i > 0))).collect();
        parts.push((mask, [p, 1]));
    }
    let mut placed = place_parts(parts, &y.device(), precision)?.into_iter();
    let mut next = || placed.next().expect("one array per part");
    let q_factor = match q_array {
        Some(q) => q.with_precision(precision)?,
        None => next(),
    };
    // X = Q R_unit D, so R⁻¹ = D⁻¹ R_unit⁻¹: row i of R_unit⁻¹ (entries of
    // a well-scaled factor) divided by d_i, so that no step overflows for
    // columns of any scale.
    let (r_inverse, unscaled_sd) = match array_inverse {
        None => (next(), next()),
        Some(r_unit_inverse) => {
            let inv_scale = next();
            let norms = r_unit_inverse
                .mul(&r_unit_inverse)?
                .sum_axis(1)?
                .sqrt()?
                .reshape([p, 1])?;
            (r_unit_inverse.mul(&inv_scale)?, norms.mul(&inv_scale)?)
        }
    };
    let mask = opts.intercept.then(&mut next);
    // The one large GEMM, queued now: the rest of the graph is built and
    // planned while it runs.
    let effects = q_factor.crossprod(&y)?;
    effects.eval()?;
    let coefficients = r_inverse.matmul(&effects)?;
    let rss = match certified_difference(&y, &effects, precision)? {
        Some(rss) => rss,
        None => residual_sum_of_squares(&y, &q_factor, &effects, precision)?,
    };
    let explained = match &mask {
        Some(mask) => effects.mul(mask)?,
        None => effects.clone(),
    };
    let mss = explained.mul(&explained)?.col_sums()?;
    let df = (n - p) as f64;
    let sigma = rss.div_scalar(df)?.sqrt()?;
    let r_squared = mss.div(&mss.add(&rss)?)?;
    // sqrt(diag((X'X)^-1)) (p x 1) times sigma (1 x k), by broadcasting: an
    // elementwise pass that fuses and runs where sigma is.
    let std_errors = unscaled_sd.mul(&sigma.reshape([1, k])?)?;
    let t_values = coefficients.div(&std_errors)?;
    let p_values = two_sided_p(&t_values, df)?;
    let health = rss.sum()?.add(
        &coefficients
            .mul_scalar(0.0)?
            .add(&std_errors.mul_scalar(0.0)?)?
            .sum()?,
    )?;
    Ok(LazyFit {
        term_names,
        y,
        k,
        df_residual: n - p,
        coefficients,
        std_errors,
        t_values,
        p_values,
        sigma,
        r_squared,
        rss,
        health,
    })
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

/// The small host arrays of a fit (`Q`, `R⁻¹`, the standard errors'
/// factors, the R² mask), each of the shape given, as arrays where `device`
/// is: on the host each its own array (no copy); on a device one upload of
/// them all, before any of the fit's work is queued there, cut apart there
/// (each copy from pageable host memory holds the host until it is done,
/// and one queued after the GEMM would wait for it).
fn place_parts(
    parts: Vec<(Vec<f64>, [usize; 2])>,
    device: &str,
    precision: Precision,
) -> Result<Vec<Array>> {
    if device == "cpu" {
        return parts
            .into_iter()
            .map(|(values, shape)| Array::from_vec(shape, values)?.with_precision(precision))
            .collect();
    }
    let shapes: Vec<[usize; 2]> = parts.iter().map(|(_, shape)| *shape).collect();
    let packed: Vec<f64> = parts.into_iter().flat_map(|(values, _)| values).collect();
    let packed = Array::from_vec([packed.len()], packed)?.with_precision(precision)?;
    packed.to_device(device)?;
    let mut offset = 0;
    shapes
        .into_iter()
        .map(|[rows, cols]| {
            let part = packed
                .slice(0, offset..offset + rows * cols)?
                .reshape([rows, cols]);
            offset += rows * cols;
            part
        })
        .collect()
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
    let mut design = gearbox_core::memory::with_capacity(OP, n.saturating_mul(names.len()))?;
    if intercept {
        design.resize(n, 1.0);
    }
    design.extend_from_slice(x_values);
    checked_qr(&design, n, names)
}

/// The middle and half width of `[1, CERTIFIED_RATIO]`: a ratio is in the
/// interval when its distance from the middle is at most the half width.
const CERTIFIED_MIDDLE: f64 = (CERTIFIED_RATIO + 1.0) / 2.0;
const CERTIFIED_HALF_WIDTH: f64 = (CERTIFIED_RATIO - 1.0) / 2.0;

/// Whether `‖y‖² - ‖Qᵀy‖²` is kept for a column with `‖y‖²` of `total` and
/// that difference (see [`CERTIFIED_RATIO`]; NaN fails).
fn certified(total: f64, difference: f64) -> bool {
    (total / difference - CERTIFIED_MIDDLE).abs() <= CERTIFIED_HALF_WIDTH
}

/// `colSums(Y²)`, at the fit's precision whatever `Y`'s own tag says (a
/// Strict one in the pass).
fn sums_of_squares(y: &Array, precision: Precision) -> Result<Array> {
    let y = y.mul(&Array::scalar(1.0).with_precision(precision)?)?;
    y.mul(&y)?.col_sums()
}

/// `colSums((Y - Q E)²)` for the effects `E = QᵀY`, from the residuals
/// themselves: the fused pass up to [`FUSED_RESIDUAL_MAX_TERMS`] terms,
/// else the fitted values by a GEMM.
fn residual_sum_of_squares(
    y: &Array,
    q_factor: &Array,
    effects: &Array,
    precision: Precision,
) -> Result<Array> {
    let p = q_factor.dims()[1];
    if p <= FUSED_RESIDUAL_MAX_TERMS {
        let q_columns: Vec<Array> = (0..p)
            .map(|i| q_factor.slice(1, i..i + 1))
            .collect::<Result<_>>()?;
        return fused_residual_sum_of_squares(y, &q_columns, effects, precision);
    }
    let residuals = y.sub(&q_factor.matmul(effects)?)?;
    residuals.mul(&residuals)?.col_sums()
}

/// Largest `‖y‖² / RSS` of any column for which `many_lm`
/// keeps `‖y‖² - ‖Qᵀy‖²`: the difference then loses at most 9 bits, so
/// with both sums accurate to about `12u` (tiled sums over at most a few
/// thousand rows) it is within about `2 · 12u · 512 ≈ 1.4e-12` relative.
pub const CERTIFIED_RATIO: f64 = 512.0;

/// The residual sums of squares as `‖y‖² - ‖Qᵀy‖²` per column (Pythagoras:
/// `Q` has orthonormal columns), one plain pass over `Y` for the column sums
/// of squares, evaluated now; `None` when any column's `‖y‖² / RSS` is
/// outside `[1, CERTIFIED_RATIO]` (a fit with R² near 1, a zero or
/// non-finite column), for which the residuals themselves are summed
/// ([`fused_residual_sum_of_squares`]). Random or noisy responses (R² below
/// about 0.998) take this path: the pass costs what summing a matrix costs,
/// 0.55 ms for 2,000 x 100,000 on an H100 against 0.93 ms for the residual
/// pass.
fn certified_difference(y: &Array, effects: &Array, precision: Precision) -> Result<Option<Array>> {
    let total = sums_of_squares(y, precision)?;
    let difference = total.sub(&effects.mul(effects)?.col_sums()?)?;
    let ratio = total.div(&difference)?;
    // Every ratio in [1, CERTIFIED_RATIO] exactly when the largest distance
    // from the interval's middle is at most its half width (to within an
    // ulp at the ends, where nothing changes): one value to download. NaN
    // (a zero or non-finite column) propagates and fails the comparison.
    let distance = ratio.sub_scalar(CERTIFIED_MIDDLE)?.abs()?.max()?;
    Array::eval_all(&[&difference, &distance])?;
    let certified = distance.item()? <= CERTIFIED_HALF_WIDTH;
    Ok(certified.then_some(difference))
}

/// `colSums((Y - Q E)²)` for the columns of the `n x p` `Q` (`q_columns`,
/// each `n x 1`) and the `p x k` effects `E = QᵀY`, as one fused pass over `Y`: the residuals
/// are `Y - q₁ e₁ - q₂ e₂ - ...`, each term an `n x 1` column of `Q` times a
/// `1 x k` row of `E` by broadcasting, so no `n x k` temporary (neither the
/// fitted values nor the residuals) is ever stored. The terms are taken off
/// in column order, the intercept's first, as a GEMM accumulates them.
fn fused_residual_sum_of_squares(
    y: &Array,
    q_columns: &[Array],
    effects: &Array,
    precision: Precision,
) -> Result<Array> {
    let mut residuals = if q_columns.is_empty() {
        // No term to take off: multiply by a Strict one, so that the pass
        // still runs at the fit's precision (it fuses, costing nothing).
        y.mul(&Array::scalar(1.0).with_precision(precision)?)?
    } else {
        y.clone()
    };
    for (i, q_column) in q_columns.iter().enumerate() {
        let effect_row = effects.slice(0, i..i + 1)?;
        residuals = residuals.sub(&q_column.mul(&effect_row)?)?;
    }
    residuals.mul(&residuals)?.col_sums()
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
mod tests {
    use super::*;

    /// The regions that evaluating the eager results of a fit plans.
    fn planned_regions(fit: &LazyFit) -> Vec<gearbox_core::fusion::plan::Region> {
        let roots = fit.eager();
        let mut seen = std::collections::HashSet::new();
        let pending: Vec<Array> = roots
            .iter()
            .flat_map(|r| r.pending_in_order())
            .filter(|a| seen.insert(a.node_id()))
            .collect();
        gearbox_core::fusion::plan::plan(&pending, &roots, true)
            .unwrap()
            .regions
    }

    /// Responses that the design explains almost exactly (R² about
    /// 1 - 1e-8), so that `‖y‖² - ‖Qᵀy‖²` cannot be certified.
    fn nearly_exact_responses(x: &Array, k: usize, seed: u64) -> Array {
        let (n, q) = (x.dims()[0], x.dims()[1]);
        let b = Array::randn([q, k], seed).unwrap();
        let noise = (Array::randn([n, k], seed + 1).unwrap() * 1e-4).unwrap();
        let y = ((x.matmul(&b).unwrap() + &noise).unwrap() + 1.0).unwrap();
        y.eval().unwrap();
        y
    }

    #[test]
    fn noisy_responses_take_the_certified_difference_and_match_the_residuals() {
        // Results past HOST_TAIL_VALUES: the array path.
        let (n, q) = (60, 3);
        let k = HOST_TAIL_VALUES / (q + 1) + 1;
        let x = Array::randn([n, q], 31).unwrap();
        let y = Array::randn([n, k], 32).unwrap();
        y.eval().unwrap();
        let fit = lazy_fit(&x, &y, &LmOptions::default()).unwrap();
        // Nothing pending reads Y: its one pass already ran.
        assert!(planned_regions(&fit)
            .iter()
            .all(|r| !r.reads().iter().any(|a| a.same_node(&fit.y))));
        // Against the residuals summed one column at a time.
        let got = fit.rss.to_vec::<f64>().unwrap();
        let design: Vec<f64> = std::iter::repeat_n(1.0, n)
            .chain(x.to_vec::<f64>().unwrap())
            .collect();
        let d = MatRef::from_column_major_slice(&design, n, q + 1);
        let (qm, _) = gearbox_core::ops::linalg::factor::thin_qr(d);
        let ys = y.to_vec::<f64>().unwrap();
        for (j, g) in got.iter().enumerate() {
            let col = MatRef::from_column_major_slice(&ys[j * n..(j + 1) * n], n, 1);
            let r = col - &qm * (qm.transpose() * col);
            let want: f64 = (0..n).map(|i| r[(i, 0)].powi(2)).sum();
            assert!(
                (g - want).abs() <= 1e-12 * want,
                "column {j}: {g} vs {want}"
            );
        }
        // One column the design explains almost exactly sends every column
        // through the residuals.
        let mut mixed = ys.clone();
        let exact = nearly_exact_responses(&x, 1, 33).to_vec::<f64>().unwrap();
        mixed[..n].copy_from_slice(&exact);
        let mixed = Array::from_vec([n, k], mixed).unwrap();
        let fit = lazy_fit(&x, &mixed, &LmOptions::default()).unwrap();
        assert!(planned_regions(&fit)
            .iter()
            .any(|r| r.reads().iter().any(|a| a.same_node(&fit.y))));
    }

    #[test]
    fn the_residual_sum_of_squares_is_one_fused_pass_over_y() {
        use gearbox_core::fusion::plan::Region;
        let (n, q) = (60, 3);
        let k = HOST_TAIL_VALUES / (q + 1) + 1;
        let x = Array::randn([n, q], 11).unwrap();
        let y = nearly_exact_responses(&x, k, 12);
        let fit = lazy_fit(&x, &y, &LmOptions::default()).unwrap();
        let regions = planned_regions(&fit);
        // No region stores an n x k array: neither fitted values nor residuals.
        for r in &regions {
            for a in r.produces() {
                assert!(a.numel() < n * k, "{} stores {}", r.describe(), a.shape());
            }
        }
        // Y is read twice: by the effects' GEMM, queued (and here run)
        // before the rest was built, so no longer pending, and by one fused
        // kernel that takes the p = 4 terms off Y, squares and sums the
        // columns.
        let readers: Vec<&Region> = regions
            .iter()
            .filter(|r| r.reads().iter().any(|a| a.same_node(&fit.y)))
            .collect();
        assert_eq!(
            readers.len(),
            1,
            "{:?}",
            readers.iter().map(|r| r.describe()).collect::<Vec<_>>()
        );
        assert!(regions.iter().all(|r| r.describe() != "crossprod"));
        let Region::Fused(pass) = readers[0] else {
            panic!("the residual pass is not fused: {}", readers[0].describe());
        };
        assert_eq!(
            pass.ops.join("+"),
            "mul+sub+mul+sub+mul+sub+mul+sub+mul+sum"
        );
        assert!(
            pass.outputs.is_empty(),
            "the pass stores no full-size output"
        );
        assert!(pass.reduced.is_some());
        // Its inputs: Y, the 4 columns of Q (n x 1) and the 4 rows of the
        // effects (1 x k), loaded by broadcasting.
        let mut dims: Vec<Vec<usize>> = pass.inputs.iter().map(|a| a.dims().to_vec()).collect();
        dims.sort();
        let mut want = vec![vec![n, k]];
        want.extend(std::iter::repeat_n(vec![n, 1], 4));
        want.extend(std::iter::repeat_n(vec![1, k], 4));
        want.sort();
        assert_eq!(dims, want);
    }

    #[test]
    fn many_terms_take_the_gemm_route() {
        let (n, q) = (80, FUSED_RESIDUAL_MAX_TERMS);
        let k = HOST_TAIL_VALUES / (q + 1) + 1;
        let x = Array::randn([n, q], 13).unwrap();
        let y = nearly_exact_responses(&x, k, 14);
        let fit = lazy_fit(&x, &y, &LmOptions::default()).unwrap();
        let names: Vec<String> = planned_regions(&fit)
            .iter()
            .filter(|r| r.reads().iter().any(|a| a.same_node(&fit.y)))
            .map(|r| r.describe())
            .collect();
        // The effects' GEMM already ran; the residuals go through a second
        // GEMM (Q times the effects), then one pass.
        assert_eq!(names, ["sub+mul+sum"]);
    }

    /// Every result of `fit` for response columns `0..k`, by result.
    fn first_columns(fit: &ManyLm, k: usize) -> Vec<Vec<f64>> {
        let p = fit.term_names.len();
        [
            (&fit.coefficients, p),
            (&fit.std_errors, p),
            (&fit.t_values, p),
            (&fit.p_values, p),
            (&fit.sigma, 1),
            (&fit.r_squared, 1),
        ]
        .iter()
        .map(|(a, rows)| a.to_vec::<f64>().unwrap()[..rows * k].to_vec())
        .collect()
    }

    #[test]
    fn a_small_fit_finishes_on_the_host_with_the_array_path_results() {
        // The same responses as the first columns of a fit past
        // HOST_TAIL_VALUES (the array path): the same results, for noisy
        // responses (the certified difference) and with one the design
        // explains almost exactly (the residuals), with and without an
        // intercept.
        let (n, q, k) = (90, 4, 6);
        let x = Array::randn([n, q], 41).unwrap();
        let wide = HOST_TAIL_VALUES / (q + 1) + 1;
        let noisy = Array::randn([n, wide], 42)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let mut mixed = noisy.clone();
        let exact = nearly_exact_responses(&x, 1, 43).to_vec::<f64>().unwrap();
        mixed[..n].copy_from_slice(&exact);
        for (values, intercept) in [(noisy, true), (mixed.clone(), true), (mixed, false)] {
            let opts = LmOptions {
                intercept,
                ..LmOptions::default()
            };
            let all = Array::from_vec([n, wide], values.clone()).unwrap();
            let few = Array::from_vec([n, k], values[..n * k].to_vec()).unwrap();
            let lazy = lazy_fit(&x, &few, &opts).unwrap();
            assert!(
                planned_regions(&lazy).is_empty(),
                "the host tail leaves nothing but the p-values pending"
            );
            let (got, want) = (
                many_lm(&x, &few, &opts).unwrap(),
                many_lm(&x, &all, &opts).unwrap(),
            );
            for (r, (g, w)) in first_columns(&got, k)
                .iter()
                .zip(first_columns(&want, k))
                .enumerate()
            {
                for (a, b) in g.iter().zip(&w) {
                    assert!(
                        (a - b).abs() <= 1e-12 * b.abs().max(1e-3),
                        "result {r} (intercept {intercept}): {a} vs {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn p_values_are_twice_the_upper_tail() {
        let t = Array::from_vec([2, 2], vec![0.0, -2.0, f64::INFINITY, f64::NAN]).unwrap();
        let p = two_sided_p(&t, 7.0).unwrap();
        assert_eq!(p.dims(), &[2, 2]);
        let p = p.to_vec::<f64>().unwrap();
        assert_eq!(p[0], 1.0);
        assert_eq!(p[1], 2.0 * crate::nmath::pt(2.0, 7.0, false, false));
        assert_eq!(p[2], 0.0);
        assert!(p[3].is_nan());
    }
}
