//! The Cholesky QR of a design's unit-norm columns `U`: `G = Uᵀ U = Rᵀ R`,
//! `Q = U R⁻¹`, about a quarter of the flops of Householder QR with `Q`
//! formed, and all of them matrix products. Its results match Householder
//! QR's only for well-conditioned designs: its coefficients carry a
//! relative error near `κ(U)² u` where Householder's carry about `κ(U) u`
//! (plus the same `κ² u` times the residual-to-signal ratio), and a
//! strongly determined coefficient (a large t value) shows the difference
//! in units of its standard error. So it is taken only where a rigorous
//! bound keeps `κ(U)²` at most [`MAX_GRAM_CONDITION`] (64), where the fit
//! matches Householder's to about Householder's own rounding; otherwise
//! the caller factors by Householder QR. The bound is loose by up to about
//! `p`, so designs wider than [`MAX_TERMS`] exceed it even when well
//! conditioned and go straight to Householder QR without paying for the
//! Gram matrix.
//!
//! The bound: `κ₂(G) = λmax(G) / λmin(G) ≤ ‖G‖∞ ‖G⁻¹‖∞`, and
//! `G⁻¹ = R⁻¹ R⁻ᵀ`, so `‖G⁻¹‖∞ ≤ ‖R⁻¹‖∞ ‖R⁻¹‖₁`.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par, Side};
use gearbox_core::{Array, Error, Result};

use super::upper_triangular_inverse;

/// The largest bound on `κ₂(Uᵀ U)` for which the Cholesky QR is used.
pub(super) const MAX_GRAM_CONDITION: f64 = 64.0;

/// The widest design the Cholesky QR is tried on.
pub(super) const MAX_TERMS: usize = 128;

/// A Cholesky QR that passed the bound: `Q`, and `R` and `R⁻¹` (`p x p`,
/// column-major, upper triangular).
pub(super) struct CholeskyQr<Q> {
    pub q: Q,
    pub r: Vec<f64>,
    pub r_inverse: Vec<f64>,
}

/// `R⁻¹` of the Cholesky factor `r` of a Gram matrix whose largest row sum
/// of magnitudes is `gram_inf_norm`, if the condition bound (module docs)
/// is at most [`MAX_GRAM_CONDITION`].
fn inverse_within_bound(r: &[f64], p: usize, gram_inf_norm: f64) -> Option<Vec<f64>> {
    let r_inverse = upper_triangular_inverse(r, p);
    let inverse = MatRef::from_column_major_slice(&r_inverse, p, p);
    let bound = gram_inf_norm * inf_norm(inverse) * inf_norm(inverse.transpose());
    (bound.is_finite() && bound <= MAX_GRAM_CONDITION).then_some(r_inverse)
}

/// The Cholesky QR of `u` (`n x p`, unit-norm columns) on the calling
/// thread, or `None` where the Gram matrix is not numerically positive
/// definite or the bound fails.
pub(super) fn cholesky_qr(u: MatRef<'_, f64>) -> Option<CholeskyQr<Mat<f64>>> {
    let (n, p) = u.shape();
    if p > MAX_TERMS {
        return None;
    }
    // Small products are faster on one thread than synchronized on all.
    let par = if n.saturating_mul(p).saturating_mul(p) < PARALLEL_PRODUCT_FLOPS {
        Par::Seq
    } else {
        faer::get_global_parallelism()
    };
    let mut gram = Mat::<f64>::zeros(p, p);
    matmul(gram.as_mut(), Accum::Replace, u.transpose(), u, 1.0, par);
    let llt = gram.llt(Side::Lower).ok()?;
    let upper = llt.L().transpose();
    let r: Vec<f64> = (0..p * p).map(|at| upper[(at % p, at / p)]).collect();
    let r_inverse = inverse_within_bound(&r, p, inf_norm(gram.as_ref()))?;
    let mut q = Mat::<f64>::zeros(n, p);
    let r_inverse_ref = MatRef::from_column_major_slice(&r_inverse, p, p);
    matmul(q.as_mut(), Accum::Replace, u, r_inverse_ref, 1.0, par);
    Some(CholeskyQr { q, r, r_inverse })
}

/// Flops (`n p²`) below which [`cholesky_qr`]'s products stay on the
/// calling thread.
const PARALLEL_PRODUCT_FLOPS: usize = 1 << 24;

/// The Cholesky QR of `u` (`n x p`, unit-norm columns) as array work where
/// `u` lives (a GPU keeps `Q`; `R`, one norm and `p x p` values cross to
/// the host), or `None` as for [`cholesky_qr`]. `beside_u` places a host
/// array where `u`'s work runs.
pub(super) fn cholesky_qr_arrays(
    u: &Array,
    p: usize,
    beside_u: impl Fn(Array) -> Result<Array>,
) -> Result<Option<CholeskyQr<Array>>> {
    if p > MAX_TERMS {
        return Ok(None);
    }
    let gram = u.crossprod(u)?;
    let factor = gram.cholesky()?;
    match factor.eval() {
        Ok(()) => {}
        Err(Error::NotPositiveDefinite { .. }) => return Ok(None),
        Err(e) => return Err(e),
    }
    let r = factor.to_vec::<f64>()?;
    let gram_inf_norm = gram.abs()?.sum_axis(1)?.max()?.item()?;
    let Some(r_inverse) = inverse_within_bound(&r, p, gram_inf_norm) else {
        return Ok(None);
    };
    let q = u.matmul(&beside_u(Array::from_vec([p, p], r_inverse.clone())?)?)?;
    Ok(Some(CholeskyQr { q, r, r_inverse }))
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

    /// A reproducible uniform value on (-1, 1) for entry (i, j).
    fn noise(i: usize, j: usize) -> f64 {
        let mut z = (i as u64) << 32 | j as u64;
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    #[test]
    fn a_well_conditioned_design_gets_an_orthonormal_q_and_its_r() {
        let u = unit(400, 12, noise);
        let CholeskyQr { q, r, r_inverse } = cholesky_qr(u.as_ref()).expect("well conditioned");
        let r = MatRef::from_column_major_slice(&r, 12, 12).to_owned();
        let identity = &r * MatRef::from_column_major_slice(&r_inverse, 12, 12);
        for i in 0..12 {
            for j in 0..12 {
                let want = f64::from(u8::from(i == j));
                assert!((identity[(i, j)] - want).abs() < 1e-14);
            }
        }
        let qtq = q.transpose() * &q;
        for i in 0..12 {
            for j in 0..12 {
                let want = f64::from(u8::from(i == j));
                assert!(
                    (qtq[(i, j)] - want).abs() < 1e-13,
                    "QᵀQ[{i},{j}] = {}",
                    qtq[(i, j)]
                );
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
        // A design wider than MAX_TERMS, however well conditioned.
        let wide = unit(400, MAX_TERMS + 1, noise);
        assert!(cholesky_qr(wide.as_ref()).is_none());
        // A rank-deficient design too.
        let u = unit(50, 2, |i, _| noise(i, 0));
        assert!(cholesky_qr(u.as_ref()).is_none());
    }
}
