//! Input checks for GLM work: each argument's dtype, shape and values,
//! with errors that name the argument. A check passes only input on which
//! every family term is finite and meaningful; what passes is copied to
//! host vectors ([`GlmData`], [`GlmProblem`]).

use gearbox_core::{Array, DType, Error, Result, Shape};

use super::dense::cholesky_lower;
use super::family::{r_nonint, Family, GlmSpec};

/// Relative tolerance of the symmetry check of the prior precision:
/// `|P[i,j] - P[j,i]| <= SYMMETRY_TOLERANCE * max |P|`.
pub const SYMMETRY_TOLERANCE: f64 = 1e-10;

fn invalid(op: &'static str, name: &'static str, value: String, why: String) -> Error {
    Error::InvalidArgument {
        op,
        name,
        value,
        why,
    }
}

/// The values of `a` as f64, after checking its dtype.
fn f64_values(op: &'static str, name: &'static str, a: &Array) -> Result<Vec<f64>> {
    if a.dtype() != DType::F64 {
        return Err(invalid(
            op,
            name,
            format!("an array of dtype {}", a.dtype()),
            "must be f64 (convert with astype(DType::F64))".to_string(),
        ));
    }
    a.to_vec::<f64>()
}

/// Checks that every value of `values` is finite.
fn check_finite(op: &'static str, name: &'static str, shape: &Shape, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(invalid(
            op,
            name,
            format!("{} at linear index {i} (shape {shape})", values[i]),
            "NaN and infinite values are not accepted".to_string(),
        )),
    }
}

/// A vector of `len` values: shape `[len]` or `[len, 1]`.
fn vector(
    op: &'static str,
    name: &'static str,
    a: &Array,
    len: usize,
    what: &str,
) -> Result<Vec<f64>> {
    let dims = a.dims();
    let fits = (dims.len() == 1 && dims[0] == len) || (dims.len() == 2 && dims == [len, 1]);
    if !fits {
        return Err(Error::BadShape {
            op,
            shape: a.shape().clone(),
            why: format!("{name} must be a vector of length {len} ({what})"),
        });
    }
    let v = f64_values(op, name, a)?;
    check_finite(op, name, a.shape(), &v)?;
    Ok(v)
}

/// A matrix of `rows x cols` (`None`: any).
fn matrix(
    op: &'static str,
    name: &'static str,
    a: &Array,
    rows: Option<usize>,
    cols: Option<usize>,
    what: &str,
) -> Result<(Vec<f64>, usize, usize)> {
    let dims = a.dims();
    let ok =
        dims.len() == 2 && rows.is_none_or(|r| dims[0] == r) && cols.is_none_or(|c| dims[1] == c);
    if !ok {
        return Err(Error::BadShape {
            op,
            shape: a.shape().clone(),
            why: format!("{name} must be a matrix {what}"),
        });
    }
    let v = f64_values(op, name, a)?;
    check_finite(op, name, a.shape(), &v)?;
    Ok((v, dims[0], dims[1]))
}

/// The data of a GLM, checked: design, response, weights and offsets.
#[derive(Debug, Clone, PartialEq)]
pub struct GlmData {
    /// Design matrix `X`, `l1 x l2`, column-major.
    pub x: Vec<f64>,
    /// Number of observations (rows of `X`).
    pub l1: usize,
    /// Number of coefficients (columns of `X`).
    pub l2: usize,
    /// Response (binomial: proportion of successes).
    pub y: Vec<f64>,
    /// Prior weights (binomial: number of trials).
    pub wt: Vec<f64>,
    /// Offsets, added to `X b`.
    pub alpha: Vec<f64>,
}

impl GlmData {
    /// Checks and copies the data: `x` an f64 `l1 x l2` matrix with
    /// `l1, l2 >= 1`; `y`, `wt`, `alpha` f64 vectors of length `l1`; every
    /// value finite; weights non-negative; `y` in the family's support
    /// ([`GlmData::from_parts`]). `op` names the operation in errors.
    pub fn from_arrays(
        op: &'static str,
        x: &Array,
        y: &Array,
        wt: &Array,
        alpha: &Array,
        family: Family,
    ) -> Result<GlmData> {
        let (xv, l1, l2) = matrix(op, "x", x, None, None, "(observations x coefficients)")?;
        let per_row = format!("one per row of x, l1 = {l1}");
        let yv = vector(op, "y", y, l1, &per_row)?;
        let wtv = vector(op, "wt", wt, l1, &per_row)?;
        let alphav = vector(op, "alpha", alpha, l1, &per_row)?;
        GlmData::from_parts(op, xv, l1, l2, yv, wtv, alphav, family)
    }

    /// Checks host data (`x` column-major `l1 x l2`) as
    /// [`GlmData::from_arrays`] does, and the response:
    ///
    /// - binomial, quasibinomial: `0 <= y <= 1`, `wt` and `y * wt` whole
    ///   numbers within R's tolerance `1e-7 max(1, |v|)`;
    /// - poisson, quasipoisson: `y` a non-negative whole number (same
    ///   tolerance);
    /// - Gamma: `y > 0`;
    /// - gaussian: any finite `y`.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        op: &'static str,
        x: Vec<f64>,
        l1: usize,
        l2: usize,
        y: Vec<f64>,
        wt: Vec<f64>,
        alpha: Vec<f64>,
        family: Family,
    ) -> Result<GlmData> {
        if l1 == 0 || l2 == 0 {
            return Err(Error::BadShape {
                op,
                shape: Shape::new(vec![l1, l2]),
                why: "x needs at least one observation and one coefficient".to_string(),
            });
        }
        let x_shape = Shape::new(vec![l1, l2]);
        if x.len() != l1 * l2 {
            return Err(Error::DataLength {
                op,
                len: x.len(),
                shape: x_shape,
                expected: l1 * l2,
            });
        }
        check_finite(op, "x", &x_shape, &x)?;
        for (name, v) in [("y", &y), ("wt", &wt), ("alpha", &alpha)] {
            if v.len() != l1 {
                return Err(Error::ShapeMismatch {
                    op,
                    lhs: x_shape.clone(),
                    rhs: Shape::new(vec![v.len()]),
                    why: format!("{name} must have one value per row of x (l1 = {l1})"),
                });
            }
            check_finite(op, name, &Shape::new(vec![l1]), v)?;
        }
        if let Some(i) = wt.iter().position(|&w| w < 0.0) {
            return Err(invalid(
                op,
                "wt",
                format!("{} at index {i}", wt[i]),
                "weights must be non-negative".to_string(),
            ));
        }
        for i in 0..l1 {
            check_response(op, family, y[i], wt[i], i)?;
        }
        Ok(GlmData {
            x,
            l1,
            l2,
            y,
            wt,
            alpha,
        })
    }

    /// The linear predictor `X b + alpha` at coefficients `b` (length `l2`).
    pub fn linear_predictor(&self, b: &[f64]) -> Vec<f64> {
        let mut eta = self.alpha.clone();
        for (k, &bk) in b.iter().enumerate() {
            for (e, &xik) in eta.iter_mut().zip(&self.x[k * self.l1..(k + 1) * self.l1]) {
                *e += xik * bk;
            }
        }
        eta
    }
}

/// Checks observation `i`'s response against `family`'s support.
fn check_response(op: &'static str, family: Family, y: f64, wt: f64, i: usize) -> Result<()> {
    let bad = |why: &str| {
        Err(invalid(
            op,
            "y",
            format!("{y} at index {i} (weight {wt})"),
            format!("{family}: {why}"),
        ))
    };
    match family {
        Family::Binomial | Family::QuasiBinomial => {
            if !(0.0..=1.0).contains(&y) {
                return bad("y is the proportion of successes and must lie in [0, 1]");
            }
            if r_nonint(wt) {
                return Err(invalid(
                    op,
                    "wt",
                    format!("{wt} at index {i}"),
                    format!("{family}: wt is the number of trials and must be a whole number"),
                ));
            }
            if r_nonint(y * wt) {
                return bad(&format!(
                    "the number of successes y * wt = {} must be a whole number",
                    y * wt
                ));
            }
        }
        Family::Poisson | Family::QuasiPoisson => {
            if y < 0.0 || r_nonint(y) {
                return bad("counts must be non-negative whole numbers");
            }
        }
        Family::Gamma => {
            if y <= 0.0 {
                return bad("the response must be positive");
            }
        }
        Family::Gaussian => {}
    }
    Ok(())
}

/// A checked GLM log-posterior problem: data, normal prior `N(mu, P^-1)`
/// and spec, with the dispersion resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct GlmProblem {
    /// The data.
    pub data: GlmData,
    /// Prior mean, length `l2`.
    pub mu: Vec<f64>,
    /// Prior precision, `l2 x l2`, column-major, symmetric positive definite.
    pub p: Vec<f64>,
    /// Family and link.
    pub spec: GlmSpec,
    /// The dispersion used in the terms (1 for binomial and poisson, and
    /// for the quasi families when none was given).
    pub dispersion: f64,
}

impl GlmProblem {
    /// Checks everything [`GlmData::from_arrays`] checks, and: `spec`
    /// ([`GlmSpec::check`]) with a dispersion given for gaussian and Gamma;
    /// `mu` an f64 vector of length `l2`; `p` an f64 `l2 x l2` matrix,
    /// finite, symmetric within [`SYMMETRY_TOLERANCE`] relative to its
    /// largest entry, and positive definite (its Cholesky factorization
    /// succeeds).
    #[allow(clippy::too_many_arguments)]
    pub fn from_arrays(
        op: &'static str,
        x: &Array,
        y: &Array,
        wt: &Array,
        alpha: &Array,
        mu: &Array,
        p: &Array,
        spec: &GlmSpec,
    ) -> Result<GlmProblem> {
        check_spec(op, spec)?;
        let data = GlmData::from_arrays(op, x, y, wt, alpha, spec.family)?;
        let l2 = data.l2;
        let per_column = format!("one per column of x, l2 = {l2}");
        let muv = vector(op, "mu", mu, l2, &per_column)?;
        let (pv, _, _) = matrix(
            op,
            "P",
            p,
            Some(l2),
            Some(l2),
            &format!("of {l2} x {l2} (l2 = columns of x)"),
        )?;
        GlmProblem::from_parts(op, data, muv, pv, spec)
    }

    /// [`GlmProblem::from_arrays`] for data already checked and a host
    /// prior (`p` column-major `l2 x l2`).
    pub fn from_parts(
        op: &'static str,
        data: GlmData,
        mu: Vec<f64>,
        p: Vec<f64>,
        spec: &GlmSpec,
    ) -> Result<GlmProblem> {
        check_spec(op, spec)?;
        let l2 = data.l2;
        if mu.len() != l2 {
            return Err(Error::BadShape {
                op,
                shape: Shape::new(vec![mu.len()]),
                why: format!("mu must be a vector of length {l2} (one per column of x)"),
            });
        }
        check_finite(op, "mu", &Shape::new(vec![l2]), &mu)?;
        let p_shape = Shape::new(vec![l2, l2]);
        if p.len() != l2 * l2 {
            return Err(Error::DataLength {
                op,
                len: p.len(),
                shape: p_shape,
                expected: l2 * l2,
            });
        }
        check_finite(op, "P", &p_shape, &p)?;
        check_precision(op, &p, l2)?;
        Ok(GlmProblem {
            data,
            mu,
            p,
            spec: *spec,
            dispersion: spec.dispersion_or_one(),
        })
    }
}

/// The spec's own rules, and a dispersion for gaussian and Gamma.
fn check_spec(op: &'static str, spec: &GlmSpec) -> Result<()> {
    spec.check().map_err(|e| match e {
        Error::InvalidArgument {
            name, value, why, ..
        } => Error::InvalidArgument {
            op,
            name,
            value,
            why,
        },
        other => other,
    })?;
    if spec.family.needs_dispersion() && spec.dispersion.is_none() {
        return Err(invalid(
            op,
            "dispersion",
            "none".to_string(),
            format!(
                "family {} needs a dispersion (finite, positive)",
                spec.family
            ),
        ));
    }
    Ok(())
}

/// Symmetry (relative to the largest entry) and positive definiteness.
fn check_precision(op: &'static str, p: &[f64], l2: usize) -> Result<()> {
    let scale = p.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for j in 0..l2 {
        for i in j + 1..l2 {
            let (a, b) = (p[j * l2 + i], p[i * l2 + j]);
            if (a - b).abs() > SYMMETRY_TOLERANCE * scale {
                return Err(invalid(
                    op,
                    "P",
                    format!("P[{i},{j}] = {a}, P[{j},{i}] = {b}"),
                    format!(
                        "the prior precision must be symmetric (to {SYMMETRY_TOLERANCE:e} of its largest entry)"
                    ),
                ));
            }
        }
    }
    cholesky_lower(p, l2).map_err(|e| Error::NotPositiveDefinite {
        op,
        shape: Shape::new(vec![l2, l2]),
        detail: format!(
            "argument P: Cholesky pivot {} at column {} is not positive",
            e.pivot, e.column
        ),
    })?;
    Ok(())
}

/// Whether `b` has a grid's shape: `l2 x m1`, or a vector of length `l2`.
pub fn grid_shape(b: &Array, l2: usize) -> bool {
    match b.dims() {
        [n] => *n == l2,
        [r, _] => *r == l2,
        _ => false,
    }
}

/// Checks the grid `b` as [`check_grid`] does without copying its values
/// out: a grid that lives on a device is checked there (its largest
/// magnitude is finite exactly when every value is, since `max` propagates
/// NaN: one value comes back), a host grid in place on every core; only a
/// bad grid is copied, to name the bad value. Returns `m1`.
pub fn check_grid_in_place(op: &'static str, b: &Array, l2: usize) -> Result<usize> {
    if !grid_shape(b, l2) || b.dtype() != DType::F64 || b.numel() == 0 {
        return check_grid(op, b, l2).map(|(_, m1)| m1);
    }
    b.eval()?;
    let finite = if b.device() != "cpu" {
        b.abs()?.max()?.item()?.is_finite()
    } else {
        use rayon::prelude::*;
        b.host_value()
            .and_then(|h| {
                h.as_slice::<f64>()
                    .map(|v| v.par_iter().all(|x| x.is_finite()))
            })
            .unwrap_or(false)
    };
    if finite {
        Ok(b.numel() / l2)
    } else {
        check_grid(op, b, l2).map(|(_, m1)| m1)
    }
}

/// Checks the grid `b`: an f64 `l2 x m1` matrix (or a vector of length
/// `l2`, one point), finite. Returns its values and `m1`.
pub fn check_grid(op: &'static str, b: &Array, l2: usize) -> Result<(Vec<f64>, usize)> {
    if b.ndim() == 1 {
        let v = vector(
            op,
            "B",
            b,
            l2,
            &format!("one grid point of l2 = {l2} coefficients"),
        )?;
        return Ok((v, 1));
    }
    let (v, _, m1) = matrix(
        op,
        "B",
        b,
        Some(l2),
        None,
        &format!("with l2 = {l2} rows (one column per grid point)"),
    )?;
    Ok((v, m1))
}
