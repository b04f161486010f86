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
//! - [`family`]: [`Family`], [`Link`], [`GlmSpec`] and the per-observation
//!   [`loglik_term`] / [`dloglik_deta`] (their definitions, and where they
//!   differ from glmbayes, are documented there);
//! - [`validate`]: argument checks ([`GlmProblem`]);
//! - [`reference`]: the one-point-at-a-time host evaluation, the oracle;
//! - [`fit`]: maximum likelihood by IRLS and random grids around the MLE;
//! - [`terms`]: the per-observation terms as kernel-callable scalar
//!   functions ([`terms::loglik_fn`], [`terms::slope_fn`]).
//!
//! The gradient layout is `l2 x m1` (one column per grid point); glmbayes's
//! `f3_*` return its transpose.

mod dense;
pub mod family;
pub mod fit;
pub mod reference;
pub mod terms;
pub mod validate;

use gearbox_core::{Array, Result};

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
    const OP: &str = "glm_grid";
    let problem = GlmProblem::from_arrays(OP, x, y, wt, alpha, mu, p, spec)?;
    let l2 = problem.data.l2;
    let (grid, m1) = validate::check_grid(OP, b, l2)?;
    let (qf, gradient) = glm_grid_reference(&problem, &grid, m1);
    Ok(GlmGrid {
        qf: Array::from_vec([m1], qf)?,
        gradient: Array::from_vec([l2, m1], gradient)?,
    })
}
