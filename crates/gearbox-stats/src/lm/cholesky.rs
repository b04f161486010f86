//! The Cholesky QR of a design's unit-norm columns `U`: `G = Uᵀ U = Rᵀ R`,
//! `Q = U R⁻¹`, about a quarter of the flops of Householder QR with `Q`
//! formed, and all of them matrix products. Its coefficients are those of
//! the normal equations, `G⁻¹ Uᵀ y`, with a relative error near
//! `κ(U)² u` where Householder's carry about `κ(U) u` (plus the same
//! `κ² u` times the residual-to-signal ratio). So it is taken only where a
//! rigorous bound keeps `κ(U)²` at most [`MAX_GRAM_CONDITION`] (2^12),
//! where the coefficients, standard errors and t values stay within about
//! `2^12 u ≈ 5e-13` (relative) of Householder's; otherwise the caller
//! factors by Householder QR. On the calling thread designs wider than
//! [`MAX_TERMS`] go straight to Householder QR without paying for the
//! Gram matrix; as array work (large or device designs,
//! [`cholesky_qr_arrays`]) a design past the bound takes the two-pass
//! Cholesky QR instead, whose limit on the bound is in the millions.
//!
//! The bound: `κ₂(G) = λmax(G) / λmin(G) ≤ ‖G‖∞ ‖G⁻¹‖∞`, with
//! `G⁻¹ = R⁻¹ R⁻ᵀ`: first from `‖G⁻¹‖∞ ≤ ‖R⁻¹‖∞ ‖R⁻¹‖₁`, which costs
//! nothing more, and where that exceeds the limit from `G⁻¹` formed (a
//! `p³` product), several times tighter for random designs (at 20,000 x
//! 1,024: 385 and 57, where `κ₂(G)` is 2.5).

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::{Accum, Mat, MatRef, Par, Side};
use gearbox_core::{Array, Error, Result};

use super::rank::UnitInverse;
use super::upper_triangular_inverse;

/// The largest bound on `κ₂(Uᵀ U)` for which the Cholesky QR is used.
pub(super) const MAX_GRAM_CONDITION: f64 = 4096.0;

/// The widest design the Cholesky QR is tried on.
pub(super) const MAX_TERMS: usize = 128;

/// `R⁻¹` of the Cholesky factor `r` (`p x p`, on the host) of a Gram
/// matrix whose largest row sum of magnitudes is `gram_inf_norm`, and the
/// condition bound (module docs; infinite where it does not come out
/// finite).
fn host_inverse_and_bound(r: &[f64], p: usize, gram_inf_norm: f64) -> (Vec<f64>, f64) {
    let r_inverse = upper_triangular_inverse(r, p);
    let inverse = MatRef::from_column_major_slice(&r_inverse, p, p);
    let mut bound = gram_inf_norm * inf_norm(inverse) * inf_norm(inverse.transpose());
    if bound > MAX_GRAM_CONDITION {
        let mut gram_inverse = Mat::<f64>::zeros(p, p);
        matmul(
            gram_inverse.as_mut(),
            Accum::Replace,
            inverse,
            inverse.transpose(),
            1.0,
            Par::Seq,
        );
        bound = bound.min(gram_inf_norm * inf_norm(gram_inverse.as_ref()));
    }
    (r_inverse, finite_or_infinite(bound))
}

/// `bound`, or infinity where it is not finite (a NaN fails every
/// comparison with a limit as infinity does).
fn finite_or_infinite(bound: f64) -> f64 {
    if bound.is_finite() {
        bound
    } else {
        f64::INFINITY
    }
}

/// `R⁻¹` of the Cholesky factor `r` of a Gram matrix whose largest row sum
/// of magnitudes is `gram_inf_norm`, if the condition bound (module docs)
/// is at most [`MAX_GRAM_CONDITION`].
fn inverse_within_bound(r: &[f64], p: usize, gram_inf_norm: f64) -> Option<Vec<f64>> {
    let (r_inverse, bound) = host_inverse_and_bound(r, p, gram_inf_norm);
    (bound <= MAX_GRAM_CONDITION).then_some(r_inverse)
}

/// The Cholesky QR of `u` (`n x p`, unit-norm columns, column-major) on
/// the calling thread, in place: where the Gram matrix is numerically
/// positive definite and the bound holds, `u` becomes `Q` (by a triangular
/// solve `Q R = U`, which needs no second `n x p` buffer) and `R⁻¹` is
/// returned; else `None`, with `u` untouched.
pub(super) fn cholesky_qr(u: &mut [f64], n: usize, p: usize) -> Option<Vec<f64>> {
    if p > MAX_TERMS {
        return None;
    }
    // Small work is faster on one thread than synchronized on all.
    let par = if n.saturating_mul(p).saturating_mul(p) < PARALLEL_PRODUCT_FLOPS {
        Par::Seq
    } else {
        faer::get_global_parallelism()
    };
    let mut gram = Mat::<f64>::zeros(p, p);
    let u_ref = MatRef::from_column_major_slice(u, n, p);
    matmul(
        gram.as_mut(),
        Accum::Replace,
        u_ref.transpose(),
        u_ref,
        1.0,
        par,
    );
    let r = upper_cholesky(gram.as_ref())?;
    let r_inverse = inverse_within_bound(&r, p, inf_norm(gram.as_ref()))?;
    // Q R = U as Rᵀ Qᵀ = Uᵀ: a lower triangular solve on the transposed view.
    let r = MatRef::from_column_major_slice(&r, p, p);
    let q = faer::MatMut::from_column_major_slice_mut(u, n, p);
    solve_lower_triangular_in_place(r.transpose(), q.transpose_mut(), par);
    Some(r_inverse)
}

/// The upper Cholesky factor `R` (`gram = Rᵀ R`, column-major) of a Gram
/// matrix, read from its lower triangle; `None` where it is not
/// numerically positive definite.
fn upper_cholesky(gram: MatRef<'_, f64>) -> Option<Vec<f64>> {
    let p = gram.nrows();
    let llt = gram.llt(Side::Lower).ok()?;
    let upper = llt.L().transpose();
    Some((0..p * p).map(|at| upper[(at % p, at / p)]).collect())
}

/// Flops (`n p²`) below which [`cholesky_qr`]'s Gram matrix and solve stay on the
/// calling thread.
const PARALLEL_PRODUCT_FLOPS: usize = 1 << 24;

/// The Cholesky QR of `u` (`n x p`, unit-norm columns) as array work where
/// `u` lives: `Q`, which stays there, and `R⁻¹` (on the host up to
/// [`HOST_INVERSE_TERMS`] columns; above, a GPU factors, inverts and bounds
/// the `p x p` matrices itself and only three norms cross), or `None`
/// where Householder QR must be used instead. One pass where the
/// condition bound is at most [`MAX_GRAM_CONDITION`]; else, where it is at
/// most [`two_pass_limit`], two (CholeskyQR2: the first pass's `Q₁`
/// factored again, `Q = Q₁ R₂⁻¹`, `R = R₂ R₁`), which needs no width limit:
/// its `Q` is orthogonal, and its `Q R` equals `U`, to a few units of
/// rounding like Householder's, for any `κ₂(U)` within that limit
/// (Yamamoto, Nakatsukasa, Yanagisawa and Fukaya 2015), so a well
/// conditioned design of a thousand columns is factored by products alone.
pub(super) fn cholesky_qr_arrays(
    u: &Array,
    n: usize,
    p: usize,
) -> Result<Option<(Array, UnitInverse)>> {
    let Some(first) = gram_factor(u, p)? else {
        return Ok(None);
    };
    if first.bound <= MAX_GRAM_CONDITION {
        let q = u.matmul(&first.r_inverse)?;
        let r_inverse = match first.host {
            Some(host) => UnitInverse::Host(host),
            None => UnitInverse::Array(first.r_inverse),
        };
        return Ok(Some((q, r_inverse)));
    }
    if first.bound > two_pass_limit(n, p) {
        return Ok(None);
    }
    let q1 = u.matmul(&first.r_inverse)?;
    let Some(second) = gram_factor(&q1, p)? else {
        return Ok(None);
    };
    let q = q1.matmul(&second.r_inverse)?;
    // R⁻¹ = R₁⁻¹ R₂⁻¹.
    let r_inverse = match (first.host, second.host) {
        (Some(a), Some(b)) => {
            let (a, b) = (
                MatRef::from_column_major_slice(&a, p, p),
                MatRef::from_column_major_slice(&b, p, p),
            );
            let mut product = Mat::<f64>::zeros(p, p);
            matmul(product.as_mut(), Accum::Replace, a, b, 1.0, Par::Seq);
            UnitInverse::Host((0..p * p).map(|at| product[(at % p, at / p)]).collect())
        }
        _ => UnitInverse::Array(first.r_inverse.matmul(&second.r_inverse)?),
    };
    Ok(Some((q, r_inverse)))
}

/// The largest bound on `κ₂(Uᵀ U)` for which the two-pass Cholesky QR is
/// used on an `n x p` design: `1 / (64 (n p u + p (p + 1) u))`, the square
/// of the condition `8 κ₂(U) sqrt(n p u + p (p + 1) u) <= 1` under which
/// its orthogonality and backward error are proven `O(u)`.
pub(super) fn two_pass_limit(n: usize, p: usize) -> f64 {
    let u = f64::EPSILON / 2.0;
    let (n, p) = (n as f64, p as f64);
    1.0 / (64.0 * (n * p * u + p * (p + 1.0) * u))
}

/// One Cholesky pass over `u`'s Gram matrix: the factor's inverse where
/// `u` lives, its values when they were computed on the host, and the
/// condition bound (module docs).
struct GramFactor {
    r_inverse: Array,
    host: Option<Vec<f64>>,
    bound: f64,
}

/// Widths up to which [`gram_factor`] factors the Gram matrix on the host:
/// there a `p x p` download, a Cholesky, a triangular inverse and an upload
/// cost less than the device's factorization with its synchronizing checks
/// and norms; wider, the `p x p` copies cost more than the whole pass on
/// the device (docs/perf/stats.md).
const HOST_INVERSE_TERMS: usize = 128;

/// [`GramFactor`] of `u` (`p` columns), or `None` where the Gram matrix is
/// not numerically positive definite.
fn gram_factor(u: &Array, p: usize) -> Result<Option<GramFactor>> {
    let gram = u.crossprod(u)?;
    if p <= HOST_INVERSE_TERMS {
        return host_gram_factor(&gram.to_vec::<f64>()?, p, u);
    }
    let r = gram.cholesky()?;
    let r_inverse = r.inv_upper()?;
    match Array::eval_all(&[&r, &r_inverse]) {
        Ok(()) => {}
        Err(Error::NotPositiveDefinite { .. } | Error::Singular { .. }) => return Ok(None),
        Err(e) => return Err(e),
    }
    // The largest row sums of magnitudes of G and of G⁻¹ = R⁻¹ R⁻ᵀ (the
    // p³ product costs less than a second read of the norms would), read
    // back together.
    let inf_norm = |a: &Array| -> Result<Array> { a.abs()?.sum_axis(1)?.max()?.reshape([1, 1]) };
    let gram_inverse = r_inverse.tcrossprod(&r_inverse)?;
    let norms = Array::cbind(&[&inf_norm(&gram)?, &inf_norm(&gram_inverse)?])?.to_vec::<f64>()?;
    let bound = norms[0] * norms[1];
    Ok(Some(GramFactor {
        r_inverse,
        host: None,
        bound: finite_or_infinite(bound),
    }))
}

/// [`GramFactor`] of a `p x p` Gram matrix on the host (column-major), its
/// inverse factor sent to where `u` lives; `None` where the matrix is not
/// numerically positive definite.
fn host_gram_factor(gram: &[f64], p: usize, u: &Array) -> Result<Option<GramFactor>> {
    let gram = MatRef::from_column_major_slice(gram, p, p);
    let Some(r) = upper_cholesky(gram) else {
        return Ok(None);
    };
    let (host, bound) = host_inverse_and_bound(&r, p, inf_norm(gram));
    let inverse = Array::from_vec([p, p], host.clone())?.with_precision(u.precision())?;
    let device = u.device();
    if device != "cpu" {
        inverse.to_device(&device)?;
    }
    Ok(Some(GramFactor {
        r_inverse: inverse,
        host: Some(host),
        bound,
    }))
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
        let mut q = column_major(&u);
        let r_inverse = cholesky_qr(&mut q, 400, 12).expect("well conditioned");
        let q = MatRef::from_column_major_slice(&q, 400, 12).to_owned();
        // U = Q R, so R = Qᵀ U.
        let r = q.transpose() * &u;
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

    /// The values of `u`, column-major.
    fn column_major(u: &Mat<f64>) -> Vec<f64> {
        let (n, p) = u.shape();
        (0..n * p).map(|at| u[(at % n, at / n)]).collect()
    }

    /// `u` as a column-major array.
    fn array(u: &Mat<f64>) -> Array {
        Array::from_vec([u.nrows(), u.ncols()], column_major(u)).unwrap()
    }

    fn mat(a: &Array, rows: usize, cols: usize) -> Mat<f64> {
        MatRef::from_column_major_slice(&a.to_vec::<f64>().unwrap(), rows, cols).to_owned()
    }

    #[test]
    fn a_wide_design_as_arrays_takes_two_passes_and_stays_orthogonal() {
        // 400 x 100 and 400 x 200 with unit columns (R inverted on the host
        // and as array work), column 1 within 1e-2 of column 0: κ₂(UᵀU)
        // about 1e5, the bound above 2^12, well within the two-pass limit.
        for p in [100, 200] {
            two_passes_stay_orthogonal(400, p);
        }
    }

    #[test]
    fn a_well_conditioned_wide_design_as_arrays_takes_one_pass() {
        // 2,000 x 150 with unit columns, past the host's widths: κ₂(UᵀU)
        // about 3, its bound (G⁻¹ formed) about 19.
        let (n, p) = (2000, 150);
        let u = unit(n, p, noise);
        let first = gram_factor(&array(&u), p)
            .unwrap()
            .expect("positive definite");
        assert!(first.bound <= MAX_GRAM_CONDITION, "{}", first.bound);
        assert!(first.bound >= 1.0, "{}", first.bound);
    }

    fn two_passes_stay_orthogonal(n: usize, p: usize) {
        let u = unit(n, p, |i, j| match j {
            1 => noise(i, 0) + 1e-2 * noise(i, p + 1),
            _ => noise(i, j),
        });
        let ua = array(&u);
        let first = gram_factor(&ua, p).unwrap().expect("positive definite");
        assert!(first.bound > MAX_GRAM_CONDITION, "{}", first.bound);
        assert!(first.bound <= two_pass_limit(n, p), "{}", first.bound);
        let (q, r_inverse) = cholesky_qr_arrays(&ua, n, p).unwrap().expect("two passes");
        let r_inverse = match r_inverse {
            UnitInverse::Host(v) => MatRef::from_column_major_slice(&v, p, p).to_owned(),
            UnitInverse::Array(a) => mat(&a, p, p),
        };
        let q = mat(&q, n, p);
        // U = Q R, so R = Qᵀ U.
        let r = q.transpose() * &u;
        let worst = |m: Mat<f64>, want: &dyn Fn(usize, usize) -> f64| {
            let mut w = 0.0f64;
            for i in 0..m.nrows() {
                for j in 0..m.ncols() {
                    w = w.max((m[(i, j)] - want(i, j)).abs());
                }
            }
            w
        };
        let eye = |i: usize, j: usize| f64::from(u8::from(i == j));
        // Orthogonal to rounding (one pass would leave about κ² u = 1e-11
        // per entry here, and far more for worse designs).
        assert!(worst(q.transpose() * &q, &eye) < 2e-14);
        assert!(worst(&q * &r, &|i, j| u[(i, j)]) < 1e-14);
        assert!(worst(&r * &r_inverse, &eye) < 1e-13);
        // R is upper triangular with a positive diagonal, as Householder's
        // with its signs fixed, and so is R⁻¹.
        for j in 0..p {
            assert!(r[(j, j)] > 0.0 && r_inverse[(j, j)] > 0.0);
            for i in j + 1..p {
                assert!(r[(i, j)].abs() < 1e-14, "R[{i},{j}] = {}", r[(i, j)]);
                assert!(r_inverse[(i, j)].abs() < 1e-14, "R⁻¹[{i},{j}]");
            }
        }
    }

    #[test]
    fn a_design_beyond_the_two_pass_limit_is_left_to_householder() {
        // Column 1 is column 0 plus 1e-9 of noise: κ(U) is about 1e9, its
        // square past any float64 Cholesky QR.
        let u = unit(300, 4, |i, j| match j {
            1 => noise(i, 0) + 1e-9 * noise(i, 5),
            _ => noise(i, j),
        });
        assert!(cholesky_qr_arrays(&array(&u), 300, 4).unwrap().is_none());
    }

    #[test]
    fn nearly_collinear_columns_are_left_to_householder() {
        // Column 1 is column 0 plus 1e-3 of noise: κ(U) is about 1e3.
        let u = unit(400, 3, |i, j| match j {
            1 => noise(i, 0) + 1e-3 * noise(i, 5),
            _ => noise(i, j),
        });
        let untouched = |u: &Mat<f64>| {
            let mut values = column_major(u);
            let (n, p) = u.shape();
            let refused = cholesky_qr(&mut values, n, p).is_none();
            refused && values == column_major(u)
        };
        assert!(untouched(&u), "refused, and the design left as it was");
        // A design wider than MAX_TERMS, however well conditioned.
        assert!(untouched(&unit(400, MAX_TERMS + 1, noise)));
        // A rank-deficient design too.
        assert!(untouched(&unit(50, 2, |i, _| noise(i, 0))));
    }
}
