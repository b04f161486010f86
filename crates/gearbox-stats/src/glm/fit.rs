//! Maximum likelihood for the GLMs of this module (Fisher scoring, i.e.
//! IRLS, in f64 for a small number of coefficients), and random grids
//! around the estimate for [`glm_grid`](super::glm_grid).
//!
//! The estimate is R's `glm(y ~ X - 1 + offset(alpha), weights = wt,
//! family = family(link))`: the same likelihood (binomial with `wt`
//! trials, poisson/gaussian/Gamma with prior weights `wt`), R's starting
//! values (`mustart` of each family), and steps
//! `b <- b + (X' W X)^-1 X' s` with `s` the score ([`dloglik_deta`]) and
//! `W` the expected information ([`expected_information`]), halved while
//! they do not increase the log-likelihood. It stops when no coefficient
//! moves by more than `1e-12 (1 + |b|)`, which is tighter than R's default
//! (`epsilon = 1e-8` on the deviance).

use gearbox_core::{Array, Error, Result, Shape};

use super::dense::{cholesky_inverse, cholesky_lower, mat_vec};
use super::family::{
    dloglik_deta, expected_information, link_function, loglik_term, mean, variance, Family, GlmSpec,
};
use super::validate::GlmData;

const OP: &str = "glm_mle";

/// Most Fisher scoring iterations before giving up (`converged = false`).
pub const MAX_ITERATIONS: usize = 100;

/// Relative coefficient change below which the iteration has converged.
pub const COEFFICIENT_TOLERANCE: f64 = 1e-12;

/// A maximum-likelihood fit.
#[derive(Debug, Clone)]
pub struct MleFit {
    /// The estimate `beta_hat` (length `l2`).
    pub beta: Array,
    /// Its estimated covariance, `dispersion * (X' W X)^-1` at the estimate
    /// (`l2 x l2`): R's `vcov(fit)`.
    pub cov: Array,
    /// The dispersion in `cov`: 1 for binomial and poisson, the spec's when
    /// given, else R's Pearson estimate `sum(wt (y - m)^2 / V(m)) / (n - l2)`
    /// over the `n` observations of positive weight.
    pub dispersion: f64,
    /// The log-likelihood at the estimate, with `dispersion` (for gaussian
    /// and Gamma) as given or estimated.
    pub loglik: f64,
    /// Fisher scoring iterations taken.
    pub iterations: usize,
    /// Whether the coefficients settled within [`MAX_ITERATIONS`] (no: the
    /// estimate may not exist, e.g. separated binomial data).
    pub converged: bool,
}

/// The maximum-likelihood estimate and its covariance (module docs) for
/// data `x` (`l1 x l2`), `y`, `wt`, `alpha` (length `l1`), checked as
/// [`GlmData::from_arrays`] does. `spec.dispersion` may be absent for every
/// family (it does not change the estimate; see [`MleFit::dispersion`]).
///
/// Errors: the data checks; a design whose information matrix is not
/// positive definite (collinear columns, all weights 0); an information
/// matrix that overflows float64 (a column of values near 1e154 or more, or
/// weights that overflow), named as such; too few observations to estimate
/// a needed dispersion.
pub fn mle(x: &Array, y: &Array, wt: &Array, alpha: &Array, spec: &GlmSpec) -> Result<MleFit> {
    spec.check()?;
    let data = GlmData::from_arrays(OP, x, y, wt, alpha, spec.family)?;
    mle_data(&data, spec)
}

/// [`mle`] for data already checked.
pub fn mle_data(data: &GlmData, spec: &GlmSpec) -> Result<MleFit> {
    spec.check()?;
    let (family, link) = (spec.family, spec.link);
    let (l1, l2) = (data.l1, data.l2);
    let objective = |eta: &[f64]| -> f64 {
        (0..l1)
            .map(|i| -loglik_term(family, link, data.y[i], data.wt[i], eta[i], 1.0))
            .sum()
    };

    // R's starting means, and the first step from the linear predictor
    // they imply (which need not be X b + alpha for any b).
    let start_eta: Vec<f64> = (0..l1)
        .map(|i| link_function(link, start_mean(family, data.y[i], data.wt[i])))
        .collect();
    // From b = 0 at the starting eta, `scoring_step` is R's first IRLS
    // solve (X'WX)^-1 X'(W (eta0 - alpha) + s).
    let beta = scoring_step(data, spec, &start_eta, &vec![0.0; l2])?;
    let mut beta = beta;
    let mut eta = data.linear_predictor(&beta);
    let mut value = objective(&eta);
    if !value.is_finite() {
        return Err(Error::InvalidArgument {
            op: OP,
            name: "y",
            value: format!("log-likelihood {} after the first step", -value),
            why: "the starting values give a non-finite likelihood".to_string(),
        });
    }

    let mut iterations = 1;
    let mut converged = false;
    while iterations < MAX_ITERATIONS {
        iterations += 1;
        let step = scoring_step(data, spec, &eta, &beta)?;
        let mut scale = 1.0;
        let mut accepted = None;
        for _ in 0..60 {
            let trial: Vec<f64> = beta.iter().zip(&step).map(|(b, s)| b + scale * s).collect();
            let trial_eta = data.linear_predictor(&trial);
            let trial_value = objective(&trial_eta);
            // Accept any non-increase, allowing for rounding at the optimum.
            if trial_value.is_finite() && trial_value <= value + 1e-13 * (value.abs() + 1.0) {
                accepted = Some((trial, trial_eta, trial_value));
                break;
            }
            scale *= 0.5;
        }
        let Some((trial, trial_eta, trial_value)) = accepted else {
            // No step improves: at the optimum to rounding.
            converged = true;
            break;
        };
        let settled = trial
            .iter()
            .zip(&beta)
            .all(|(new, old)| (new - old).abs() <= COEFFICIENT_TOLERANCE * (1.0 + new.abs()));
        beta = trial;
        eta = trial_eta;
        value = trial_value;
        if settled {
            converged = true;
            break;
        }
    }

    let information = information_matrix(data, spec, &eta)?;
    let factor = cholesky_lower(&information, l2).map_err(|e| singular_design(l2, e.column))?;
    let dispersion = match spec.dispersion {
        Some(d) => d,
        None if family.has_unit_dispersion() => 1.0,
        None => pearson_dispersion(data, spec, &eta)?,
    };
    let mut cov = cholesky_inverse(&factor, l2);
    cov.iter_mut().for_each(|c| *c *= dispersion);
    let loglik = (0..l1)
        .map(|i| loglik_term(family, link, data.y[i], data.wt[i], eta[i], dispersion))
        .sum();
    Ok(MleFit {
        beta: Array::from_vec([l2], beta)?,
        cov: Array::from_vec([l2, l2], cov)?,
        dispersion,
        loglik,
        iterations,
        converged,
    })
}

/// R's `mustart` for one observation.
fn start_mean(family: Family, y: f64, wt: f64) -> f64 {
    match family {
        Family::Binomial | Family::QuasiBinomial => (wt * y + 0.5) / (wt + 1.0),
        Family::Poisson | Family::QuasiPoisson => y + 0.1,
        Family::Gaussian | Family::Gamma => y,
    }
}

fn singular_design(l2: usize, column: usize) -> Error {
    Error::Singular {
        op: OP,
        shape: Shape::new(vec![l2, l2]),
        detail: format!(
            "the information matrix X' W X is not positive definite at column {column}: \
             collinear columns of x, or too few observations of positive weight"
        ),
    }
}

/// `X' W X` at `eta` (column-major `l2 x l2`), `W` the expected information
/// with dispersion 1; an error naming the overflow when an entry is not
/// finite (its Cholesky factorization would otherwise fail as if the
/// columns were collinear).
fn information_matrix(data: &GlmData, spec: &GlmSpec, eta: &[f64]) -> Result<Vec<f64>> {
    let (l1, l2) = (data.l1, data.l2);
    let w: Vec<f64> = (0..l1)
        .map(|i| expected_information(spec.family, spec.link, data.wt[i], eta[i], 1.0))
        .collect();
    let mut info = vec![0.0; l2 * l2];
    for j in 0..l2 {
        let xj = &data.x[j * l1..(j + 1) * l1];
        for k in 0..=j {
            let xk = &data.x[k * l1..(k + 1) * l1];
            let s: f64 = (0..l1).map(|i| xj[i] * w[i] * xk[i]).sum();
            info[j * l2 + k] = s;
            info[k * l2 + j] = s;
        }
    }
    match info.iter().position(|v| !v.is_finite()) {
        None => Ok(info),
        Some(at) => Err(information_overflow(data, eta, &w, at / l2)),
    }
}

/// The error for an information matrix `X' W X` with a non-finite entry in
/// column `j`: the working weights overflowed (the linear predictor grew too
/// large), or else the column's values are too large for their squares.
fn information_overflow(data: &GlmData, eta: &[f64], w: &[f64], j: usize) -> Error {
    let l1 = data.l1;
    let largest = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if w.iter().any(|v| !v.is_finite()) {
        return Error::InvalidArgument {
            op: OP,
            name: "x",
            value: format!("a linear predictor reaching {:e}", largest(eta)),
            why: "the working weights W of the fit overflow float64 there, and with them \
                  the information matrix X' W X; rescale x or the offset"
                .to_string(),
        };
    }
    Error::InvalidArgument {
        op: OP,
        name: "x",
        value: format!(
            "column {j} (counting from 0), largest |value| {:e}",
            largest(&data.x[j * l1..(j + 1) * l1])
        ),
        why: "the information matrix X' W X (sums of weighted squares of the columns) \
              overflows float64 in that column; rescale it"
            .to_string(),
    }
}

/// The IRLS solve at linear predictor `eta` and coefficients `beta`:
/// returns `(X'WX)^-1 X'(W (eta - alpha - X beta) + s)`, the increment to
/// `beta` (the Fisher scoring step when `eta = X beta + alpha`).
fn scoring_step(data: &GlmData, spec: &GlmSpec, eta: &[f64], beta: &[f64]) -> Result<Vec<f64>> {
    let (l1, l2) = (data.l1, data.l2);
    let fitted = data.linear_predictor(beta);
    let rhs_obs: Vec<f64> = (0..l1)
        .map(|i| {
            let (y, wt) = (data.y[i], data.wt[i]);
            let w = expected_information(spec.family, spec.link, wt, eta[i], 1.0);
            let s = dloglik_deta(spec.family, spec.link, y, wt, eta[i], 1.0);
            w * (eta[i] - fitted[i]) + s
        })
        .collect();
    let info = information_matrix(data, spec, eta)?;
    let factor = cholesky_lower(&info, l2).map_err(|e| singular_design(l2, e.column))?;
    let mut rhs: Vec<f64> = (0..l2)
        .map(|k| {
            data.x[k * l1..(k + 1) * l1]
                .iter()
                .zip(&rhs_obs)
                .map(|(x, r)| x * r)
                .sum()
        })
        .collect();
    super::dense::cholesky_solve(&factor, l2, &mut rhs);
    Ok(rhs)
}

/// R's Pearson estimate of the dispersion (`summary.glm`).
fn pearson_dispersion(data: &GlmData, spec: &GlmSpec, eta: &[f64]) -> Result<f64> {
    let positive = data.wt.iter().filter(|&&w| w > 0.0).count();
    if positive <= data.l2 {
        return Err(Error::InvalidArgument {
            op: OP,
            name: "dispersion",
            value: "none".to_string(),
            why: format!(
                "cannot be estimated from {positive} observation(s) of positive weight and {} coefficient(s); give one",
                data.l2
            ),
        });
    }
    let sum: f64 = (0..data.l1)
        .filter(|&i| data.wt[i] > 0.0)
        .map(|i| {
            let m = mean(spec.link, eta[i]);
            data.wt[i] * (data.y[i] - m).powi(2) / variance(spec.family, m)
        })
        .sum();
    Ok(sum / (positive - data.l2) as f64)
}

/// `m1` points drawn from `N(beta_hat, cov)` as the columns of an `l2 x m1`
/// f64 array: `beta_hat + L Z`, `L` the lower Cholesky factor of `cov` and
/// `Z = Array::randn([l2, m1], seed)` (Philox4x32-10, so the grid depends
/// only on the inputs and `seed`).
///
/// Errors: `beta_hat` not an f64 vector, `cov` not an f64 `l2 x l2`
/// symmetric positive definite matrix, non-finite values.
///
/// ```
/// use gearbox_core::Array;
/// use gearbox_stats::glm::grid_around;
/// let beta = Array::from_vec([2], vec![1.0, -1.0])?;
/// let cov = Array::from_rows(&[vec![0.04, 0.01], vec![0.01, 0.09]])?;
/// let grid = grid_around(&beta, &cov, 5, 7)?;
/// assert_eq!(grid.dims(), &[2, 5]);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
pub fn grid_around(beta_hat: &Array, cov: &Array, m1: usize, seed: u64) -> Result<Array> {
    const OP: &str = "grid_around";
    let l2 = beta_hat.numel();
    if beta_hat.ndim() != 1 || l2 == 0 {
        return Err(Error::BadShape {
            op: OP,
            shape: beta_hat.shape().clone(),
            why: "beta_hat must be a non-empty vector".to_string(),
        });
    }
    if cov.dims() != [l2, l2] {
        return Err(Error::ShapeMismatch {
            op: OP,
            lhs: beta_hat.shape().clone(),
            rhs: cov.shape().clone(),
            why: format!("cov must be {l2} x {l2}, one row and column per coefficient"),
        });
    }
    let mut values = Vec::with_capacity(2);
    for (name, a) in [("beta_hat", beta_hat), ("cov", cov)] {
        if a.dtype() != gearbox_core::DType::F64 {
            return Err(Error::InvalidArgument {
                op: OP,
                name,
                value: format!("an array of dtype {}", a.dtype()),
                why: "must be f64".to_string(),
            });
        }
        let v = a.to_vec::<f64>()?;
        if let Some(bad) = v.iter().find(|v| !v.is_finite()) {
            return Err(Error::InvalidArgument {
                op: OP,
                name,
                value: bad.to_string(),
                why: "NaN and infinite values are not accepted".to_string(),
            });
        }
        values.push(v);
    }
    let (beta, cov) = (&values[0], &values[1]);
    let scale = cov.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for j in 0..l2 {
        for i in j + 1..l2 {
            if (cov[j * l2 + i] - cov[i * l2 + j]).abs() > 1e-10 * scale {
                return Err(Error::InvalidArgument {
                    op: OP,
                    name: "cov",
                    value: format!(
                        "cov[{i},{j}] = {}, cov[{j},{i}] = {}",
                        cov[j * l2 + i],
                        cov[i * l2 + j]
                    ),
                    why: "must be symmetric".to_string(),
                });
            }
        }
    }
    let factor = cholesky_lower(cov, l2).map_err(|e| Error::NotPositiveDefinite {
        op: OP,
        shape: Shape::new(vec![l2, l2]),
        detail: format!(
            "argument cov: Cholesky pivot {} at column {}",
            e.pivot, e.column
        ),
    })?;
    let z = Array::randn([l2, m1], seed)?.to_vec::<f64>()?;
    let mut grid = gearbox_core::memory::with_capacity(OP, l2 * m1)?;
    for column in z.chunks(l2) {
        let shifted = mat_vec(&factor, l2, l2, column);
        grid.extend(beta.iter().zip(&shifted).map(|(b, s)| b + s));
    }
    Array::from_vec([l2, m1], grid)
}
