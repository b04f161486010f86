//! GLM log-posterior grids, as glmbayes evaluates them: for a design `X`
//! (`l1 x l2`), response `y`, prior weights `wt`, offsets `alpha` and a
//! normal prior `N(mu, P^-1)` on the coefficients, the negative
//! log-posterior (up to a constant) and its gradient at every column `b_j`
//! of a grid `B` (`l2 x m1`):
//!
//! ```text
//! qf_j   = 0.5 (b_j - mu)' P (b_j - mu) - sum_i loglik(y_i | eta_ij),   eta_j = X b_j + alpha
//! grad_j = P (b_j - mu) - X' dloglik/deta(eta_j)
//! ```
//!
//! - [`glm_grid`] and [`GlmModel`] (check a model once, evaluate many
//!   grids): `X B` by GEMM, the terms of [`terms`] with their column sums and
//!   eta-slopes in one fused kernel, `X' slopes` by GEMM, on the CPU or the
//!   GPU by the usual dispatch;
//! - [`family`]: [`Family`], [`Link`], [`GlmSpec`] and the per-observation
//!   [`loglik_term`] / [`dloglik_deta`] (their definitions, and where they
//!   differ from glmbayes, are documented there);
//! - [`validate`]: argument checks ([`GlmProblem`]);
//! - [`reference`](mod@reference): the one-point-at-a-time host evaluation, the oracle;
//! - [`fit`]: maximum likelihood by IRLS and random grids around the MLE;
//! - [`terms`]: the per-observation terms as kernel-callable scalar
//!   functions ([`terms::loglik_fn`], [`terms::slope_fn`]), and the calls a
//!   grid makes ([`terms::grid_calls`]);
//! - [`rows`]: the binomial and poisson constants that depend only on
//!   `(y, wt)`, computed once per model and passed to the kernel as
//!   columns; [`hoisted`]: the terms that read them, R's exact evaluation
//!   bit for bit or a closed form certified within `2^-46` relative (its
//!   accuracy contract).
//!
//! The gradient layout is `l2 x m1` (one column per grid point); glmbayes's
//! `f3_*` return its transpose.

mod dense;
pub mod family;
pub mod fit;
pub mod hoisted;
mod link;
pub mod reference;
pub mod rows;
pub mod terms;
pub mod validate;

use gearbox_core::{Array, Error, Result};

pub use family::{dloglik_deta, loglik_term, Family, GlmSpec, Link};
pub use fit::{grid_around, mle, MleFit};
pub use reference::{glm_grid_reference, glm_point_reference};
pub use validate::{GlmData, GlmProblem};

/// The result of [`glm_grid`].
#[derive(Debug, Clone)]
pub struct GlmGrid {
    /// The negative log-posterior at each grid point (length `m1`).
    pub qf: Array,
    /// Its gradient, one column per grid point (`l2 x m1`).
    pub gradient: Array,
}

/// The negative log-posterior and its gradient over a grid (module docs).
///
/// Arguments, all f64 and finite: `x` (`l1 x l2`), `y`, `wt`, `alpha`
/// (length `l1`; shape `[l1]` or `[l1, 1]`), `mu` (length `l2`), `p`
/// (`l2 x l2`, symmetric positive definite), `b` (`l2 x m1`, or a vector
/// of length `l2` for one point). The checks of [`GlmProblem::from_arrays`]
/// apply (response support, non-negative weights, dispersion).
///
/// ```
/// use gearbox_core::Array;
/// use gearbox_stats::glm::{glm_grid, GlmSpec};
/// let x = Array::from_rows(&[vec![1.0, 0.5], vec![1.0, -1.0], vec![1.0, 2.0]])?;
/// let y = Array::from_vec([3], vec![0.5, 0.25, 1.0])?;
/// let wt = Array::from_vec([3], vec![2.0, 4.0, 1.0])?;
/// let alpha = Array::zeros([3], gearbox_core::DType::F64)?;
/// let mu = Array::zeros([2], gearbox_core::DType::F64)?;
/// let p = Array::eye(2)?;
/// let b = Array::from_rows(&[vec![0.0, 0.1, -0.3], vec![0.0, 0.2, 0.4]])?;
/// let spec = GlmSpec::parse("binomial", Some("logit"), None)?;
/// let grid = glm_grid(&x, &y, &wt, &alpha, &mu, &p, &b, &spec)?;
/// assert_eq!(grid.qf.dims(), &[3]);
/// assert_eq!(grid.gradient.dims(), &[2, 3]);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn glm_grid(
    x: &Array,
    y: &Array,
    wt: &Array,
    alpha: &Array,
    mu: &Array,
    p: &Array,
    b: &Array,
    spec: &GlmSpec,
) -> Result<GlmGrid> {
    GlmModel::new(x, y, wt, alpha, mu, p, spec)?.grid(b)
}

/// A GLM with its prior, checked once and held as arrays, for evaluating
/// many grids (glmbayes evaluates the same model at the points of several
/// grids while it builds an envelope). Arrays the caller moved to a device
/// stay there: a resident design is used in place.
#[derive(Debug, Clone)]
pub struct GlmModel {
    x: Array,
    loglik: GridCall,
    slope: GridCall,
    alpha: Array,
    mu: Array,
    p: Array,
    dispersion: Array,
    l1: usize,
    l2: usize,
}

impl GlmModel {
    /// Checks the model as [`glm_grid`] does (dimensions, finiteness,
    /// response support, weights, dispersion, `P` symmetric positive
    /// definite) and keeps it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        x: &Array,
        y: &Array,
        wt: &Array,
        alpha: &Array,
        mu: &Array,
        p: &Array,
        spec: &GlmSpec,
    ) -> Result<GlmModel> {
        let problem = GlmProblem::from_arrays("glm_grid", x, y, wt, alpha, mu, p, spec)?;
        let (l1, l2) = (problem.data.l1, problem.data.l2);
        let column = |v: &[f64], n: usize| Array::from_vec([n, 1], v.to_vec());
        let (loglik, slope) =
            terms::grid_calls(&problem.spec, &problem.data.y, &problem.data.wt, true);
        Ok(GlmModel {
            x: as_matrix(x, l1, l2)?,
            loglik: GridCall::new(loglik, l1)?,
            slope: GridCall::new(slope, l1)?,
            alpha: column(&problem.data.alpha, l1)?,
            mu: column(&problem.mu, l2)?,
            p: Array::from_vec([l2, l2], problem.p.clone())?,
            dispersion: Array::scalar(problem.dispersion),
            l1,
            l2,
        })
    }

    /// Observations and coefficients: `(l1, l2)`.
    pub fn dims(&self) -> (usize, usize) {
        (self.l1, self.l2)
    }

    /// The model with the certified closed forms of the binomial logit and
    /// poisson terms on (the default) or off: off, every term is R's exact
    /// evaluation bit for bit; on, a term may instead be a closed form
    /// certified within `2^-46` relative ([`hoisted`]).
    pub fn with_fast_terms(mut self, on: bool) -> GlmModel {
        for call in [&mut self.loglik, &mut self.slope] {
            if call.f.flags >= 2 {
                call.flags = if on {
                    call.flags | terms::FAST
                } else {
                    call.flags & !terms::FAST
                };
            }
        }
        self
    }

    /// qf and the gradient at every column of `b` (`l2 x m1`, finite f64):
    /// `X B` by GEMM, the log-likelihood terms, their column sums and the
    /// eta-slopes in one fused pass, `X' slopes` by GEMM; on the GPU when
    /// the sizes pay for it. The grid is taken in column chunks of at most
    /// 2^27 `l1`-long columns' worth of elements, so memory stays bounded.
    /// A grid of no points is [`Error::Empty`].
    pub fn grid(&self, b: &Array) -> Result<GlmGrid> {
        let (_, m1) = validate::check_grid("glm_grid", b, self.l2)?;
        if m1 == 0 {
            return Err(Error::Empty {
                op: "glm_grid",
                shape: b.shape().clone(),
                why: "the grid B has no points (columns); give at least one coefficient vector",
            });
        }
        self.grid_in_chunks(b, grid_chunk(self.l1, m1))
    }

    /// Copies the model's small arrays (prior, offsets, dispersion, the
    /// per-observation columns) to the device that holds the design, if it
    /// is on one and they are not yet (idempotent; host copies stay). With
    /// them there, every chunk's work has its inputs resident: otherwise a
    /// 32 x 32 prior GEMM beside a resident grid chunk went to the CPU under
    /// the built-in thresholds and downloaded the chunk, stalling the
    /// device once per chunk (a 10,000-point grid took 39 ms instead of 29
    /// on an H100).
    fn follow_the_design(&self) -> Result<()> {
        let device = self.x.device();
        if device == "cpu" {
            return Ok(());
        }
        let columns = [&self.loglik, &self.slope]
            .into_iter()
            .flat_map(|call| call.args.iter())
            .filter_map(|arg| match arg {
                GridArg::Column(a) => Some(a),
                _ => None,
            });
        for a in [&self.alpha, &self.mu, &self.p, &self.dispersion]
            .into_iter()
            .chain(columns)
        {
            if a.device() != device {
                a.to_device(&device)?;
            }
        }
        Ok(())
    }

    /// [`GlmModel::grid`] taking `chunk` grid columns per pass.
    fn grid_in_chunks(&self, b: &Array, chunk: usize) -> Result<GlmGrid> {
        self.follow_the_design()?;
        let m1 = b.numel() / self.l2.max(1);
        let b = as_matrix(b, self.l2, m1)?;
        let chunk = chunk.max(1);
        let mut qf = Vec::new();
        let mut gradient = Vec::new();
        for start in (0..m1).step_by(chunk) {
            let cols = if chunk >= m1 {
                b.clone()
            } else {
                b.slice(1, start..(start + chunk).min(m1))?
            };
            let (q, g) = self.chunk_graph(&cols)?;
            Array::eval_all(&[&q, &g])?;
            qf.push(q);
            gradient.push(g);
        }
        let (qf, gradient) = if qf.len() == 1 {
            (qf.remove(0), gradient.remove(0))
        } else {
            (
                Array::concat(&qf.iter().collect::<Vec<_>>(), 1)?,
                Array::concat(&gradient.iter().collect::<Vec<_>>(), 1)?,
            )
        };
        Ok(GlmGrid {
            qf: qf.reshape([m1])?,
            gradient,
        })
    }

    /// qf (`1 x c`) and the gradient (`l2 x c`) for grid columns `b` as a
    /// lazy graph: `eta = X B + alpha` (GEMM), the per-observation terms
    /// summed per column and their eta-slopes (one fused kernel: one
    /// full-size output and one column reduction), then `X' slopes` (GEMM)
    /// and the prior terms.
    fn chunk_graph(&self, b: &Array) -> Result<(Array, Array)> {
        let eta = (self.x.matmul(b)? + &self.alpha)?;
        let loglik = self.loglik.call(&eta, &self.dispersion)?.sum_axis(0)?;
        let slopes = self.slope.call(&eta, &self.dispersion)?;
        let centred = (b - &self.mu)?;
        let prior = self.p.matmul(&centred)?;
        let quad = (&centred * &prior)?.sum_axis(0)?;
        let qf = ((0.5 * &quad)? - &loglik)?;
        let gradient = (&prior - &self.x.crossprod(&slopes)?)?;
        Ok((qf, gradient))
    }
}

/// A [`terms::TermCall`] with its per-observation columns made `[l1, 1]`
/// arrays once, so a model evaluated on many grids uploads them once.
#[derive(Debug, Clone)]
struct GridCall {
    f: &'static gearbox_core::fusion::ir::ScalarFn,
    flags: u8,
    /// Eta and the dispersion in their places, which each chunk supplies.
    args: Vec<GridArg>,
}

/// One argument of a [`GridCall`].
#[derive(Debug, Clone)]
enum GridArg {
    Eta,
    Dispersion,
    Column(Array),
}

impl GridCall {
    fn new(call: terms::TermCall, l1: usize) -> Result<GridCall> {
        let args = call
            .args
            .into_iter()
            .map(|a| match a {
                terms::TermArg::Eta => Ok(GridArg::Eta),
                terms::TermArg::Dispersion => Ok(GridArg::Dispersion),
                terms::TermArg::Column(v) => Array::from_vec([l1, 1], v).map(GridArg::Column),
            })
            .collect::<Result<_>>()?;
        Ok(GridCall {
            f: call.f,
            flags: call.flags,
            args,
        })
    }

    /// The call at `eta` (`l1 x c`) with `dispersion`: an `l1 x c` array.
    fn call(&self, eta: &Array, dispersion: &Array) -> Result<Array> {
        let args: Vec<&Array> = self
            .args
            .iter()
            .map(|a| match a {
                GridArg::Eta => eta,
                GridArg::Dispersion => dispersion,
                GridArg::Column(c) => c,
            })
            .collect();
        Array::call_fn(self.f, &args, self.flags)
    }
}

/// `a` (checked to hold `rows * cols` float64 values) as a `rows x cols`
/// matrix, without a new node when it already is one (so a device-resident
/// design stays on the device).
fn as_matrix(a: &Array, rows: usize, cols: usize) -> Result<Array> {
    if a.dims() == [rows, cols] {
        Ok(a.clone())
    } else {
        a.reshape([rows, cols])
    }
}

/// Grid columns per pass: an `l1 x chunk` float64 matrix stays within
/// 2^27 elements (1 GiB), so memory is bounded on the host and the device
/// whatever the grid size.
fn grid_chunk(l1: usize, m1: usize) -> usize {
    ((1usize << 27) / l1.max(1)).clamp(1, m1.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_grids_equal_one_pass() {
        let (l1, l2, m1) = (40, 3, 23);
        let x: Vec<f64> = (0..l1 * l2)
            .map(|k| ((k * 37) % 17) as f64 / 17.0 - 0.5)
            .collect();
        let y: Vec<f64> = (0..l1).map(|i| (i % 5) as f64).collect();
        let b: Vec<f64> = (0..l2 * m1)
            .map(|k| ((k * 11) % 13) as f64 / 40.0 - 0.15)
            .collect();
        let arr = |shape: &[usize], v: Vec<f64>| Array::from_vec(shape.to_vec(), v).unwrap();
        let model = GlmModel::new(
            &arr(&[l1, l2], x),
            &arr(&[l1], y),
            &arr(&[l1], vec![1.0; l1]),
            &arr(&[l1], vec![0.0; l1]),
            &arr(&[l2], vec![0.0; l2]),
            &Array::eye(l2).unwrap(),
            &GlmSpec::parse("poisson", Some("log"), None).unwrap(),
        )
        .unwrap();
        let b = arr(&[l2, m1], b);
        let whole = model.grid(&b).unwrap();
        let chunked = model.grid_in_chunks(&b, 7).unwrap();
        assert_eq!(chunked.qf.dims(), &[m1]);
        assert_eq!(chunked.gradient.dims(), &[l2, m1]);
        assert_eq!(
            whole.qf.to_vec::<f64>().unwrap(),
            chunked.qf.to_vec::<f64>().unwrap()
        );
        assert_eq!(
            whole.gradient.to_vec::<f64>().unwrap(),
            chunked.gradient.to_vec::<f64>().unwrap()
        );
    }
}
