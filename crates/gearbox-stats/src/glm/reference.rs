//! The reference evaluation of a GLM log-posterior grid: one grid point at
//! a time, in f64 on the host, exactly as the definition reads (glmbayes's
//! `f2_*` / `f3_*` loops). It is the oracle the fast path is tested against.

use rayon::prelude::*;

use super::dense::{mat_t_vec, mat_vec};
use super::family::{dloglik_deta, loglik_term};
use super::validate::GlmProblem;

/// The negative log-posterior and its gradient at one point `b` (length
/// `l2`): returns `qf` and writes the gradient into `grad`.
///
/// `qf = 0.5 (b - mu)' P (b - mu) - sum_i loglik_term(y_i, wt_i, eta_i)`
/// with `eta = X b + alpha`, and `grad = P (b - mu) - X' d`, `d_i` the
/// derivative of term `i` in `eta_i`.
pub fn glm_point_reference(problem: &GlmProblem, b: &[f64], grad: &mut [f64]) -> f64 {
    let data = &problem.data;
    let (l1, l2) = (data.l1, data.l2);
    let (family, link, phi) = (problem.spec.family, problem.spec.link, problem.dispersion);
    let centred: Vec<f64> = b.iter().zip(&problem.mu).map(|(b, m)| b - m).collect();
    let p_centred = mat_vec(&problem.p, l2, l2, &centred);
    let quadratic = 0.5
        * centred
            .iter()
            .zip(&p_centred)
            .map(|(c, pc)| c * pc)
            .sum::<f64>();
    let eta = data.linear_predictor(b);
    let mut loglik = 0.0;
    let mut slope = vec![0.0; l1];
    for i in 0..l1 {
        let (y, wt) = (data.y[i], data.wt[i]);
        loglik += loglik_term(family, link, y, wt, eta[i], phi);
        slope[i] = dloglik_deta(family, link, y, wt, eta[i], phi);
    }
    let xt_slope = mat_t_vec(&data.x, l1, l2, &slope);
    for ((g, pc), xs) in grad.iter_mut().zip(&p_centred).zip(&xt_slope) {
        *g = pc - xs;
    }
    quadratic - loglik
}

/// The negative log-posterior `qf` (length `m1`) and its gradient (`l2 x
/// m1`, column-major) at every column of the grid `b` (`l2 x m1`,
/// column-major), one point at a time (rayon over points).
///
/// # Panics
///
/// If `b.len() != l2 * m1`; [`glm_grid`](super::glm_grid) checks its input.
pub fn glm_grid_reference(problem: &GlmProblem, b: &[f64], m1: usize) -> (Vec<f64>, Vec<f64>) {
    let l2 = problem.data.l2;
    assert_eq!(b.len(), l2 * m1, "grid must hold l2 * m1 values");
    let mut qf = vec![0.0; m1];
    let mut grad = vec![0.0; l2 * m1];
    if l2 == 0 || m1 == 0 {
        return (qf, grad);
    }
    qf.par_iter_mut()
        .zip(grad.par_chunks_mut(l2))
        .zip(b.par_chunks(l2))
        .for_each(|((q, g), point)| *q = glm_point_reference(problem, point, g));
    (qf, grad)
}
