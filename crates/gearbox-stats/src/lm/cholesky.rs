//! The Cholesky QR of a design's unit-norm columns `U`: `G = Uᵀ U = Rᵀ R`,
//! `Q = U R⁻¹`, about a quarter of the flops of Householder QR with `Q`
//! formed, and all of them matrix products. Its results match Householder
//! QR's only for well-conditioned designs (the error of the fit grows as
//! `κ(U)² u` rather than `κ(U) u`), so it is taken only where a rigorous
//! bound keeps `κ(U)²` at most [`MAX_GRAM_CONDITION`]: then the fit is
//! within about `2^10 u ≈ 1e-13` of the Householder fit, a hundred times
//! inside what the tests allow. Otherwise the caller factors by
//! Householder QR.
//!
//! The bound: `κ₂(G) = λmax(G) / λmin(G) ≤ ‖G‖∞ ‖G⁻¹‖∞`, and
//! `G⁻¹ = R⁻¹ R⁻ᵀ`, so `‖G⁻¹‖∞ ≤ ‖R⁻¹‖∞ ‖R⁻¹‖₁`.

use faer::linalg::triangular_solve::solve_upper_triangular_in_place;
use faer::{Mat, MatRef, Par, Side};

/// The largest bound on `κ₂(Uᵀ U)` for which the Cholesky QR is used.
pub(super) const MAX_GRAM_CONDITION: f64 = 1024.0;

/// `(Q, R)` of `u` (`n x p`, unit-norm columns) by Cholesky QR, or `None`
/// where the Gram matrix is not numerically positive definite or its
/// condition bound exceeds [`MAX_GRAM_CONDITION`].
pub(super) fn cholesky_qr(u: MatRef<'_, f64>) -> Option<(Mat<f64>, Mat<f64>)> {
    let p = u.ncols();
    let gram = u.transpose() * u;
    let llt = gram.llt(Side::Lower).ok()?;
    let r = llt.L().transpose().to_owned();
    let mut r_inverse = Mat::<f64>::identity(p, p);
    solve_upper_triangular_in_place(r.as_ref(), r_inverse.as_mut(), Par::Seq);
    let bound = inf_norm(gram.as_ref())
        * inf_norm(r_inverse.as_ref())
        * inf_norm(r_inverse.transpose());
    if !(bound.is_finite() && bound <= MAX_GRAM_CONDITION) {
        return None;
    }
    let q = u * &r_inverse;
    Some((q, r))
}

/// The largest row sum of magnitudes.
fn inf_norm(a: MatRef<'_, f64>) -> f64 {
    (0..a.nrows())
        .map(|i| (0..a.ncols()).map(|j| a[(i, j)].abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(n: usize, p: usize, f: impl Fn(usize, usize) -> f64) -> Mat<f64> {
        let mut u = Mat::<f64>::from_fn(n, p, f);
        for j in 0..p {
            let norm = (0..n).map(|i| u[(i, j)].powi(2)).sum::<f64>().sqrt();
            for i in 0..n {
                u[(i, j)] /= norm;
            }
        }
        u
    }

    fn noise(i: usize, j: usize) -> f64 {
        (((i * 7919 + j * 104729) % 1013) as f64 / 1013.0 - 0.5) * 2.0
    }

    #[test]
    fn a_well_conditioned_design_gets_an_orthonormal_q_and_its_r() {
        let u = unit(400, 12, noise);
        let (q, r) = cholesky_qr(u.as_ref()).expect("well conditioned");
        let qtq = q.transpose() * &q;
        for i in 0..12 {
            for j in 0..12 {
                let want = f64::from(u8::from(i == j));
                assert!((qtq[(i, j)] - want).abs() < 1e-13, "QᵀQ[{i},{j}] = {}", qtq[(i, j)]);
            }
        }
        let back = &q * &r;
        for i in 0..400 {
            for j in 0..12 {
                assert!((back[(i, j)] - u[(i, j)]).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn nearly_collinear_columns_are_left_to_householder() {
        // Column 1 is column 0 plus 1e-3 of noise: κ(U) is about 1e3.
        let u = unit(400, 3, |i, j| match j {
            1 => noise(i, 0) + 1e-3 * noise(i, 5),
            _ => noise(i, j),
        });
        assert!(cholesky_qr(u.as_ref()).is_none());
        // A rank-deficient design too.
        let u = unit(50, 2, |i, _| noise(i, 0));
        assert!(cholesky_qr(u.as_ref()).is_none());
    }
}
