//! Factorizations: `solve` and `inv` (LU with partial pivoting), `det` and
//! `logdet` (LU),
//! `cholesky` (LLᵀ), `qr` (Householder) and `inv_upper` (a triangular
//! solve on the identity), all through faer.
//!
//! Singularity rule for `solve` and `inv`: the LU factorization of `A` has an
//! exactly zero pivot, or the reciprocal condition number in the 1-norm,
//! `rcond = 1 / (‖A‖₁ · ‖A⁻¹‖₁)`, is below the machine epsilon of the dtype
//! the work runs in (`f64::EPSILON` or `f32::EPSILON`). `‖A⁻¹‖₁` is estimated
//! with Higham's refinement of Hager's method (LAPACK's `xLACON`, as `xGECON`
//! uses), a few extra triangular solves. This is R's rule for `solve`
//! ("computationally singular") and MATLAB's warning threshold.
//!
//! `inv_upper` (an upper triangular matrix; the lower triangle is not read)
//! is singular where a diagonal entry is zero or the diagonal's magnitudes
//! span more than `1 / epsilon` (`min |r_ii| < epsilon max |r_ii|`), the
//! rule a GPU applies to LU pivots; its inverse costs a third of `inv`'s
//! flops and no pivoting.
//!
//! Non-finite rule: every factorization refuses a matrix holding NaN or
//! ±Inf with [`Error::NonFinite`], naming the first such entry (row,
//! column, value), and so does `solve` for its right-hand side. R refuses
//! them too (`qr` and `lm`: "NA/NaN/Inf in foreign function call"). LU and
//! Householder steps turn an Inf into finite numbers that mean nothing
//! (`solve([Inf 1; 1 1], [1, 1])` gives `[0, 1]`) and a NaN into a half-NaN
//! `qr` factor, so there is no honest result. `det` refuses them as well:
//! R's LAPACK determinant gives NaN or 0 depending on where the value sits.
//! A right-hand side is checked because LU makes NaN of entries an Inf in
//! it never reaches (`solve(I, [Inf, 1])` would be `[NaN, NaN]`, not
//! `[Inf, 1]`). The check runs before any backend factors:
//! [`require_finite`] here, on the device a reduction before cuSOLVER
//! (which reports the same entry). Products (`matmul`, `crossprod`, ...)
//! need no rule: NaN and Inf propagate through them as through R's BLAS.

use std::sync::Arc;

use faer::linalg::solvers::{DenseSolveCore as _, Llt, LltError, PartialPivLu, Solve as _};
use faer::{MatMut, MatRef, Side};

use super::{
    arity, col_major, compute_dtype, dispatch, ensure_faer_room, owned_values, values, Scalar,
};
use crate::buffer::HostBuffer;
use crate::error::{Error, Result};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::memory;
use crate::ops::library::LibraryCall;
use crate::shape::Shape;

mod grad;

use grad::{cholesky_vjp, qr_vjp, triangle, Triangle};

/// [`Error::NonFinite`] naming the first NaN or infinite entry (column-major
/// order) of `buf`, an operand of `op` of shape `shape` (a matrix, or a
/// vector: the right-hand side of `solve`); `Ok` when every value is finite.
/// Integer and boolean buffers are always finite. Shared by the CPU and the
/// device paths, so both name the same entry.
pub fn require_finite(
    op: &'static str,
    operand: &'static str,
    buf: &HostBuffer,
    shape: &Shape,
) -> Result<()> {
    let first = match buf {
        HostBuffer::F64(v) => v.iter().position(|x| !x.is_finite()),
        HostBuffer::F32(v) => v.iter().position(|x| !x.is_finite()),
        _ => None,
    };
    let Some(at) = first else {
        return Ok(());
    };
    let rows = shape.dims().first().copied().unwrap_or(1).max(1);
    let index = if shape.ndim() == 1 {
        vec![at]
    } else {
        vec![at % rows, at / rows]
    };
    Err(Error::NonFinite {
        op,
        operand,
        index,
        value: buf.get_f64(at),
    })
}

/// The order of a square matrix, or [`Error::BadShape`] naming `op`.
fn square(op: &'static str, s: &Spec) -> Result<usize> {
    match *s.shape.dims() {
        [m, n] if m == n => Ok(n),
        [m, n] => Err(Error::BadShape {
            op,
            shape: s.shape.clone(),
            why: format!("{op} needs a square matrix, not {m} x {n}"),
        }),
        _ => Err(Error::BadShape {
            op,
            shape: s.shape.clone(),
            why: format!("{op} needs a square 2-D matrix"),
        }),
    }
}

/// The order of the square matrix behind an evaluated operand.
fn order(a: &Operand<'_>) -> usize {
    a.spec.shape.dims().first().copied().unwrap_or(0)
}

/// The LU factorization of `A`, or [`Error::Singular`] by the module's rule.
fn checked_lu<T: Scalar>(op: &'static str, a: &Operand<'_>) -> Result<PartialPivLu<T>> {
    let n = order(a);
    let av = values::<T>(op, a.buf)?;
    ensure_faer_room::<T>(op, n * n)?; // the LU factors
    let lu = PartialPivLu::new(MatRef::from_column_major_slice(&av[..], n, n));
    let singular = |detail: String| Error::Singular {
        op,
        shape: a.spec.shape.clone(),
        detail,
    };
    let u = lu.U();
    if let Some(i) = (0..n).find(|&i| u[(i, i)].to_f64() == 0.0) {
        return Err(singular(format!(
            "pivot {i} of the LU factorization is exactly zero"
        )));
    }
    let norm_a = (0..n)
        .map(|j| {
            av[j * n..(j + 1) * n]
                .iter()
                .map(|x| x.to_f64().abs())
                .sum()
        })
        .fold(0.0, f64::max);
    let rcond = 1.0 / (norm_a * inverse_norm1(&lu, n));
    // NaN (an overflow inside the estimate) counts as singular too.
    if rcond.is_nan() || rcond < T::EPS {
        return Err(singular(format!(
            "reciprocal condition number estimate {rcond:.3e} is below the {} epsilon {:.3e}",
            T::DTYPE,
            T::EPS
        )));
    }
    Ok(lu)
}

/// An estimate of `‖A⁻¹‖₁` from the LU factors of `A` (Hager's method with
/// Higham's extra test vector; a lower bound that is almost always within a
/// factor of 3).
fn inverse_norm1<T: Scalar>(lu: &PartialPivLu<T>, n: usize) -> f64 {
    let apply = |mut x: Vec<T>, transpose: bool| {
        let m = MatMut::from_column_major_slice_mut(&mut x, n, 1);
        if transpose {
            lu.solve_transpose_in_place(m);
        } else {
            lu.solve_in_place(m);
        }
        x
    };
    let norm1 = |x: &[T]| x.iter().map(|v| v.to_f64().abs()).sum::<f64>();
    let mut x = vec![T::from_f64(1.0 / n as f64); n];
    let mut est = 0.0;
    let mut last = None;
    for iter in 0..5 {
        let y = apply(x.clone(), false);
        let y_norm = norm1(&y);
        if iter > 0 && y_norm <= est {
            break;
        }
        est = y_norm;
        let signs = y
            .iter()
            .map(|v| T::from_f64(if v.to_f64() < 0.0 { -1.0 } else { 1.0 }))
            .collect();
        let z = apply(signs, true);
        let ztx: f64 = z.iter().zip(&x).map(|(a, b)| a.to_f64() * b.to_f64()).sum();
        let (j, zj) = z
            .iter()
            .map(|v| v.to_f64().abs())
            .enumerate()
            .fold((0, f64::NEG_INFINITY), |b, c| if c.1 > b.1 { c } else { b });
        if zj <= ztx || last == Some(j) {
            break;
        }
        last = Some(j);
        x = vec![T::from_f64(0.0); n];
        x[j] = T::from_f64(1.0);
    }
    let alt: Vec<T> = (0..n)
        .map(|i| {
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            T::from_f64(sign * (1.0 + i as f64 / (n.max(2) - 1) as f64))
        })
        .collect();
    est.max(2.0 * norm1(&apply(alt, false)) / (3.0 * n as f64))
}

/// Solves `A X = B` for a square `A`; `B` is `[n]` or `[n, k]`.
#[derive(Debug, Clone, Copy)]
pub struct Solve;

impl Primitive for Solve {
    fn name(&self) -> &'static str {
        "solve"
    }
    fn library_call(&self) -> Option<LibraryCall> {
        Some(LibraryCall::Solve)
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let [a, b] = arity("solve", inputs)?;
        let n = square("solve", a)?;
        if !matches!(b.shape.ndim(), 1 | 2) {
            return Err(Error::BadShape {
                op: "solve",
                shape: b.shape.clone(),
                why: "the right-hand side must be a vector [n] or a matrix [n, k]".into(),
            });
        }
        if b.shape.dims()[0] != n {
            return Err(Error::ShapeMismatch {
                op: "solve",
                lhs: a.shape.clone(),
                rhs: b.shape.clone(),
                why: format!(
                    "A is {n} x {n}, so B needs {n} rows, not {}",
                    b.shape.dims()[0]
                ),
            });
        }
        Ok(Spec::new(
            b.shape.clone(),
            compute_dtype(&[a.dtype, b.dtype]),
        ))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        for (operand, input) in ["A", "B"].into_iter().zip(inputs) {
            require_finite("solve", operand, input.buf, &input.spec.shape)?;
        }
        let run = || -> Result<Arc<HostBuffer>> {
            Ok(dispatch!(out.dtype, solve(&inputs[0], &inputs[1])))
        };
        let out = run();
        super::clear_simd_upper_state();
        out
    }
    /// For `X = A⁻¹ B`: `B̄ = A⁻ᵀ X̄` (a solve with `Aᵀ`) and `Ā = -B̄ Xᵀ`
    /// (an outer product for a vector right-hand side).
    fn vjp(&self, inputs: &[Array], x: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let db = inputs[0].t()?.solve(g)?;
        let da = db.tcrossprod(x)?.neg()?;
        Ok(vec![Some(da), Some(db)])
    }
}

fn solve<T: Scalar>(a: &Operand<'_>, b: &Operand<'_>) -> Result<Vec<T>> {
    let n = order(a);
    let mut x = owned_values::<T>("solve", b.buf)?;
    if n == 0 {
        return Ok(x);
    }
    // Factor (and check) even when B has no columns: a singular A is always an error.
    let lu = checked_lu::<T>("solve", a)?;
    let k = x.len() / n;
    if k > 0 {
        lu.solve_in_place(MatMut::from_column_major_slice_mut(&mut x, n, k));
    }
    Ok(x)
}

/// One of the one-input factorizations of a matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FactorOp {
    /// The inverse of a square matrix.
    Inv,
    /// The determinant of a square matrix (0-d).
    Det,
    /// The log of the absolute determinant of a square matrix (0-d).
    LogDet,
    /// The upper Cholesky factor `R` of a symmetric positive definite `A = RᵀR`.
    Cholesky,
    /// The inverse of an upper triangular matrix.
    InvUpper,
    /// Thin Q and R of `A = QR`, packed into one vector: Q (`m x p`, column
    /// major) then R (`p x n`), where `p = min(m, n)`. [`Array::qr`] splits it.
    QrPacked,
}

/// A one-input factorization; see [`FactorOp`].
#[derive(Debug, Clone, Copy)]
pub struct Factor(pub FactorOp);

impl Primitive for Factor {
    fn name(&self) -> &'static str {
        match self.0 {
            FactorOp::Inv => "inv",
            FactorOp::Det => "det",
            FactorOp::LogDet => "logdet",
            FactorOp::Cholesky => "cholesky",
            FactorOp::InvUpper => "inv_upper",
            FactorOp::QrPacked => "qr",
        }
    }
    fn library_call(&self) -> Option<LibraryCall> {
        match self.0 {
            FactorOp::Inv => Some(LibraryCall::Inv),
            FactorOp::Cholesky => Some(LibraryCall::Cholesky),
            FactorOp::InvUpper => Some(LibraryCall::InvUpper),
            FactorOp::QrPacked => Some(LibraryCall::Qr),
            FactorOp::Det | FactorOp::LogDet => None,
        }
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let [a] = arity(self.name(), inputs)?;
        let dtype = compute_dtype(&[a.dtype]);
        let shape = match self.0 {
            FactorOp::Inv | FactorOp::Cholesky | FactorOp::InvUpper => {
                square(self.name(), a)?;
                a.shape.clone()
            }
            FactorOp::Det | FactorOp::LogDet => {
                square(self.name(), a)?;
                Shape::scalar()
            }
            FactorOp::QrPacked => match *a.shape.dims() {
                // Saturating: an overflow fails the size rule, not wraps.
                [m, n] => Shape::new(vec![m.min(n).saturating_mul(m.saturating_add(n))]),
                _ => {
                    return Err(Error::BadShape {
                        op: "qr",
                        shape: a.shape.clone(),
                        why: "qr needs a 2-D matrix".into(),
                    })
                }
            },
        };
        Ok(Spec::new(shape, dtype))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let a = &inputs[0];
        require_finite(self.name(), "A", a.buf, &a.spec.shape)?;
        let run = || -> Result<Arc<HostBuffer>> {
            Ok(match self.0 {
                FactorOp::Inv => dispatch!(out.dtype, inv(a)),
                FactorOp::Det => dispatch!(out.dtype, det(a)),
                FactorOp::LogDet => dispatch!(out.dtype, logdet(a)),
                FactorOp::Cholesky => dispatch!(out.dtype, cholesky(a)),
                FactorOp::InvUpper => dispatch!(out.dtype, inv_upper(a)),
                FactorOp::QrPacked => dispatch!(out.dtype, qr_packed(a)),
            })
        };
        let out = run();
        super::clear_simd_upper_state();
        out
    }
    /// The rules, for `Y = f(A)` and the cotangent `Ȳ` (see
    /// [`crate::autodiff`]; each is built from differentiable ops):
    /// - `inv`: `Ā = -Yᵀ Ȳ Yᵀ`;
    /// - `det`: `Ā = ȳ y A⁻ᵀ` (so a singular `A` is [`Error::Singular`]);
    /// - `logdet`: `Ā = ȳ A⁻ᵀ`;
    /// - `inv_upper` (the lower triangle is not read): `Ā = -triu(Yᵀ Ȳ Yᵀ)`;
    /// - `cholesky` (`A = RᵀR`): `Ā = sym(R⁻¹ Φ(R R̄ᵀ) R⁻ᵀ)`, where `Φ` keeps
    ///   the lower triangle and halves the diagonal and `sym(X) = (X + Xᵀ)/2`
    ///   (Murray 2016, for `L = Rᵀ`): the symmetric gradient, since `A` is
    ///   symmetric (a perturbation of `A` is one of both triangles);
    /// - `qr` (`A = QR`, `A` of full rank): for `m >= n`,
    ///   `Ā = (Q̄ + Q copyltu(M)) R⁻ᵀ` with `M = R R̄ᵀ - Q̄ᵀ Q` and
    ///   `copyltu(M) = tril(M) + tril(M, -1)ᵀ` (Walter & Lehmann 2018; the
    ///   form of PyTorch's `linalg_qr_backward`); for `m < n`, with
    ///   `A = [X Y]` (`X` its first `m` columns) and `R = [U V]`, the same
    ///   rule for `X = QU` with `Q̄ + Y V̄ᵀ` in place of `Q̄`, and `Ȳ = Q V̄`.
    fn vjp(&self, inputs: &[Array], y: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let a = &inputs[0];
        let d = match self.0 {
            FactorOp::Inv => y.crossprod(g)?.tcrossprod(y)?.neg()?,
            FactorOp::Det => ((g * y)? * &a.inv()?.t()?)?,
            FactorOp::LogDet => (g * &a.inv()?.t()?)?,
            FactorOp::InvUpper => {
                let full = y.crossprod(g)?.tcrossprod(y)?;
                (full * &triangle(y, Triangle::Upper, 1.0)?)?.neg()?
            }
            FactorOp::Cholesky => cholesky_vjp(y, g)?,
            FactorOp::QrPacked => qr_vjp(a, y, g)?,
        };
        Ok(vec![Some(d)])
    }
}

fn inv<T: Scalar>(a: &Operand<'_>) -> Result<Vec<T>> {
    let n = order(a);
    if n == 0 {
        return Ok(Vec::new());
    }
    let lu = checked_lu::<T>("inv", a)?;
    ensure_faer_room::<T>("inv", n * n)?; // the inverse faer makes
    col_major("inv", lu.inverse().as_ref())
}

fn inv_upper<T: Scalar>(a: &Operand<'_>) -> Result<Vec<T>> {
    let n = order(a);
    if n == 0 {
        return Ok(Vec::new());
    }
    let av = values::<T>("inv_upper", a.buf)?;
    let diagonal = (0..n).map(|i| av[i + i * n].to_f64().abs());
    let (small, large) = diagonal.fold((f64::INFINITY, 0.0f64), |(s, l), d| (s.min(d), l.max(d)));
    if small < T::EPS * large || small == 0.0 {
        return Err(Error::Singular {
            op: "inv_upper",
            shape: a.spec.shape.clone(),
            detail: format!("diagonal magnitudes range from {small:e} to {large:e}"),
        });
    }
    ensure_faer_room::<T>("inv_upper", n * n)?;
    let mut x = vec![T::from_f64(0.0); n * n];
    for i in 0..n {
        x[i + i * n] = T::from_f64(1.0);
    }
    let par = if n >= 256 {
        faer::get_global_parallelism()
    } else {
        faer::Par::Seq
    };
    faer::linalg::triangular_solve::solve_upper_triangular_in_place(
        MatRef::from_column_major_slice(&av[..], n, n),
        MatMut::from_column_major_slice_mut(&mut x, n, n),
        par,
    );
    Ok(x)
}

/// The LU factorization of `A` for `det` and `logdet` (`op`), without
/// the singularity check of [`checked_lu`]; `None` when a pivot is exactly
/// zero (faer then fills the rest with NaN, and the determinant is 0).
fn determinant_lu<T: Scalar>(op: &'static str, a: &Operand<'_>) -> Result<Option<PartialPivLu<T>>> {
    let n = order(a);
    let av = values::<T>(op, a.buf)?;
    ensure_faer_room::<T>(op, n * n)?; // the LU factors
    let lu = PartialPivLu::new(MatRef::from_column_major_slice(&av[..], n, n));
    let zero_pivot = (0..n).any(|i| lu.U()[(i, i)].to_f64() == 0.0);
    Ok((!zero_pivot).then_some(lu))
}

fn det<T: Scalar>(a: &Operand<'_>) -> Result<Vec<T>> {
    let n = order(a);
    let Some(lu) = determinant_lu::<T>("det", a)? else {
        return Ok(vec![T::from_f64(0.0)]);
    };
    let u = lu.U();
    // The sign of the row permutation: (-1)^(n - number of cycles).
    let perm = lu.P().arrays().0;
    let mut seen = vec![false; n];
    let mut swaps = 0;
    for start in 0..n {
        let mut i = start;
        let mut len = 0;
        while !seen[i] {
            seen[i] = true;
            i = perm[i];
            len += 1;
        }
        swaps += len.max(1) - 1;
    }
    // The product accumulates in f64, so f32 factors do not overflow midway.
    let prod: f64 = (0..n).map(|i| u[(i, i)].to_f64()).product();
    let sign = if swaps % 2 == 0 { 1.0 } else { -1.0 };
    Ok(vec![T::from_f64(sign * prod)])
}

fn logdet<T: Scalar>(a: &Operand<'_>) -> Result<Vec<T>> {
    let n = order(a);
    let Some(lu) = determinant_lu::<T>("logdet", a)? else {
        return Ok(vec![T::from_f64(f64::NEG_INFINITY)]);
    };
    let u = lu.U();
    // Summed in f64: no overflow where the determinant itself would.
    let sum: f64 = (0..n).map(|i| u[(i, i)].to_f64().abs().ln()).sum();
    Ok(vec![T::from_f64(sum)])
}

fn cholesky<T: Scalar>(a: &Operand<'_>) -> Result<Vec<T>> {
    let n = order(a);
    let av = values::<T>("cholesky", a.buf)?;
    let not_pd = |detail: String| Error::NotPositiveDefinite {
        op: "cholesky",
        shape: a.spec.shape.clone(),
        detail,
    };
    // Symmetry, to a relative tolerance: |A[i,j] - A[j,i]| <= sqrt(eps) max|A|.
    let at = |i: usize, j: usize| av[i + j * n].to_f64();
    let scale = av.iter().fold(0.0f64, |m, x| m.max(x.to_f64().abs()));
    let mut worst = (0.0, 0, 0);
    for j in 0..n {
        for i in 0..j {
            let d = (at(i, j) - at(j, i)).abs();
            if d > worst.0 {
                worst = (d, i, j);
            }
        }
    }
    let tol = T::EPS.sqrt() * scale;
    if worst.0 > tol {
        let (d, i, j) = worst;
        return Err(not_pd(format!(
            "not symmetric: |A[{i}, {j}] - A[{j}, {i}]| = {d:.3e} exceeds the tolerance {tol:.3e}"
        )));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    ensure_faer_room::<T>("cholesky", n * n)?; // the factor
                                               // Side::Upper reads the upper triangle (R's convention); faer gives L = Rᵀ.
    let llt = Llt::new(MatRef::from_column_major_slice(&av[..], n, n), Side::Upper).map_err(
        |LltError::NonPositivePivot { index }| {
            not_pd(format!(
                "the leading minor of order {} is not positive",
                index + 1
            ))
        },
    )?;
    col_major("cholesky", llt.L().transpose())
}

fn qr_packed<T: Scalar>(a: &Operand<'_>) -> Result<Vec<T>> {
    let (m, n) = match *a.spec.shape.dims() {
        [m, n] => (m, n),
        _ => (0, 0),
    };
    let p = m.min(n);
    let mut out = memory::zeroed("qr", p * (m + n))?;
    if p == 0 {
        return Ok(out);
    }
    let av = values::<T>("qr", a.buf)?;
    // thin_qr's copy of A, Q, R and the Householder basis.
    let count = m.saturating_mul(n.saturating_add(p));
    ensure_faer_room::<T>(
        "qr",
        count.saturating_add(p.saturating_mul(m.saturating_add(n))),
    )?;
    let (q_thin, r_thin) = thin_qr(MatRef::from_column_major_slice(&av[..], m, n));
    let (q, r) = out.split_at_mut(m * p);
    MatMut::from_column_major_slice_mut(q, m, p).copy_from(q_thin.as_ref());
    MatMut::from_column_major_slice_mut(r, p, n).copy_from(r_thin.as_ref());
    Ok(out)
}

/// Householder flops below which [`thin_qr`] stays on the calling thread.
const QR_PARALLEL_FLOPS: usize = 1 << 24;

/// The thin QR factorization `A = Q R` of an `m x n` matrix (Householder,
/// faer): `Q` is `m x min(m, n)` with orthonormal columns, `R` is
/// `min(m, n) x n` upper triangular. Small problems (under 2^24 flops) run
/// on the calling thread, where waking the thread pool would cost more
/// than the factorization itself.
pub fn thin_qr<T: faer::traits::RealField>(a: MatRef<'_, T>) -> (faer::Mat<T>, faer::Mat<T>) {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::householder;
    use faer::linalg::qr::no_pivoting::factor;
    let (m, n) = a.shape();
    let size = m.min(n);
    let par = if m.saturating_mul(n).saturating_mul(size) < QR_PARALLEL_FLOPS {
        faer::Par::Seq
    } else {
        faer::get_global_parallelism()
    };
    let mut qr = a.to_owned();
    let block = factor::recommended_block_size::<T>(m, n);
    let mut coeff = faer::Mat::<T>::zeros(block, size);
    factor::qr_in_place(
        qr.as_mut(),
        coeff.as_mut(),
        par,
        MemStack::new(&mut MemBuffer::new(factor::qr_in_place_scratch::<T>(
            m,
            n,
            block,
            par,
            Default::default(),
        ))),
        Default::default(),
    );
    let r = faer::Mat::<T>::from_fn(size, n, |i, j| {
        if i <= j {
            qr[(i, j)].clone()
        } else {
            T::zero_impl()
        }
    });
    // The Householder basis as faer's own solver keeps it: unit diagonal,
    // zeros above.
    let basis = faer::Mat::<T>::from_fn(m, size, |i, j| {
        if i > j {
            qr[(i, j)].clone()
        } else if i == j {
            T::one_impl()
        } else {
            T::zero_impl()
        }
    });
    let mut q = faer::Mat::<T>::identity(m, size);
    householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
        basis.as_ref(),
        coeff.as_ref(),
        faer::Conj::No,
        q.as_mut(),
        par,
        MemStack::new(&mut MemBuffer::new(
            householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
                m, block, size,
            ),
        )),
    );
    (q, r)
}

impl Array {
    /// Solves `A X = B` for `X`, where `A` (`self`) is `n x n` and `B` is
    /// `[n]` (the result is `[n]`) or `[n, k]` (the result is `[n, k]`).
    ///
    /// LU with partial pivoting. A singular `A` is [`Error::Singular`], never
    /// a result full of Inf or NaN: an exactly zero pivot, or an estimated
    /// reciprocal condition number in the 1-norm below the machine epsilon of
    /// the working dtype (R's rule; see [`factor`](crate::ops::linalg::factor)). A non-square `A` is
    /// [`Error::BadShape`]; `B` without `n` rows is [`Error::ShapeMismatch`].
    /// A NaN or infinite entry of `A` or `B` is [`Error::NonFinite`] naming
    /// the operand, the entry and the value (the module's non-finite rule).
    /// A `0 x 0` system gives an empty result.
    ///
    /// ```
    /// use gearbox_core::{Array, Error};
    /// let a = Array::from_rows(&[vec![2.0, 1.0], vec![1.0, 3.0]])?;
    /// let b = Array::from_vec([2], vec![3.0, 5.0])?;
    /// let x = a.solve(&b)?.to_vec::<f64>()?;
    /// assert!((x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12);
    /// let s = Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 4.0]])?;
    /// assert!(matches!(s.solve(&b)?.eval(), Err(Error::Singular { .. })));
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn solve(&self, b: &Array) -> Result<Array> {
        Array::from_op(Solve, vec![self.clone(), b.clone()])
    }

    /// The inverse of a square matrix; [`Error::Singular`] by the rule of
    /// [`Array::solve`], [`Error::NonFinite`] for a NaN or infinite entry.
    /// The inverse of a `0 x 0` matrix is `0 x 0`.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let a = Array::from_rows(&[vec![4.0, 7.0], vec![2.0, 6.0]])?;
    /// let ai = a.inv()?.to_vec::<f64>()?;
    /// let want = [0.6, -0.2, -0.7, 0.4];
    /// assert!(ai.iter().zip(want).all(|(x, y)| (x - y).abs() < 1e-12));
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn inv(&self) -> Result<Array> {
        Array::from_op(Factor(FactorOp::Inv), vec![self.clone()])
    }

    /// The inverse of an upper triangular matrix (R's `backsolve(r,
    /// diag(n))`), by a triangular solve: a third of [`Array::inv`]'s
    /// flops. The lower triangle is not read; the result's is zero.
    /// [`Error::Singular`] when a diagonal entry is zero or the diagonal's
    /// magnitudes span more than `1 / epsilon`; [`Error::NonFinite`] for a
    /// NaN or infinite entry anywhere, as every factorization.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let r = Array::from_rows(&[vec![2.0, 1.0], vec![99.0, 4.0]])?; // 99 is not read
    /// assert_eq!(r.inv_upper()?.to_vec::<f64>()?, vec![0.5, 0.0, -0.125, 0.25]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn inv_upper(&self) -> Result<Array> {
        Array::from_op(Factor(FactorOp::InvUpper), vec![self.clone()])
    }

    /// The determinant of a square matrix, as a 0-d array (LU with partial
    /// pivoting). A singular matrix gives 0, not an error (a numerically
    /// singular one may give a tiny value instead, as in R and NumPy); the
    /// determinant of a `0 x 0` matrix is 1. A NaN or infinite entry is
    /// [`Error::NonFinite`] (R returns NaN or 0 there, depending on where
    /// the value sits).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let a = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]])?;
    /// assert!((a.det()?.item()? + 2.0).abs() < 1e-12);
    /// let s = Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 4.0]])?;
    /// assert_eq!(s.det()?.item()?, 0.0);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn det(&self) -> Result<Array> {
        Array::from_op(Factor(FactorOp::Det), vec![self.clone()])
    }

    /// The log of the absolute value of the determinant of a square matrix,
    /// as a 0-d array (R's `determinant(A)$modulus`, from the same LU
    /// factorization as [`Array::det`]): finite where the determinant
    /// would overflow or underflow. A singular matrix gives `-Inf`; the
    /// `0 x 0` matrix gives 0. A NaN or infinite entry is
    /// [`Error::NonFinite`]. The sign is `det`'s sign. Differentiable:
    /// the gradient is `A⁻ᵀ`.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let a = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]])?;
    /// assert!((a.logdet()?.item()? - 2f64.ln()).abs() < 1e-12);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn logdet(&self) -> Result<Array> {
        Array::from_op(Factor(FactorOp::LogDet), vec![self.clone()])
    }

    /// The Cholesky factor of a symmetric positive definite matrix: the
    /// **upper** triangular `R` with `A = RᵀR` (R's `chol` convention; NumPy
    /// returns the lower factor `Rᵀ`).
    ///
    /// `A` must be symmetric to a relative tolerance, `|A[i,j] - A[j,i]| <=
    /// sqrt(eps) · max|A|`; otherwise, or if a leading minor is not positive,
    /// the result is [`Error::NotPositiveDefinite`] naming the worst
    /// asymmetry or the failing minor. An entry that is NaN or Inf (in either
    /// triangle) is [`Error::NonFinite`] naming it. Only the upper triangle
    /// is read for the factor. A `0 x 0` matrix gives `0 x 0`.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let a = Array::from_rows(&[vec![4.0, 2.0], vec![2.0, 5.0]])?;
    /// let r = a.cholesky()?;
    /// assert_eq!(r.to_vec::<f64>()?, vec![2.0, 0.0, 1.0, 2.0]); // [2 1; 0 2]
    /// assert!(Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 1.0]])?.cholesky()?.eval().is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn cholesky(&self) -> Result<Array> {
        Array::from_op(Factor(FactorOp::Cholesky), vec![self.clone()])
    }

    /// The thin QR factorization `A = QR` of an `m x n` matrix: `Q` is
    /// `m x p` with orthonormal columns and `R` is `p x n` upper triangular
    /// (trapezoidal), where `p = min(m, n)`. Householder reflections, as
    /// LAPACK, so diagonal entries of `R` may be negative.
    ///
    /// The factorization runs once: one primitive computes Q and R into a
    /// packed buffer and the two results are cheap slices of it, so
    /// evaluating `Q` and then `R` (or both together) does not factor twice.
    /// An empty `A` gives empty `Q` and `R` of those shapes. A NaN or
    /// infinite entry is [`Error::NonFinite`] naming it, as R's `qr` refuses
    /// one.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let a = Array::from_rows(&[vec![3.0, 1.0], vec![4.0, 2.0], vec![0.0, 5.0]])?;
    /// let (q, r) = a.qr()?;
    /// assert_eq!((q.dims(), r.dims()), (&[3, 2][..], &[2, 2][..]));
    /// let back = q.matmul(&r)?.to_vec::<f64>()?;
    /// let want = a.to_vec::<f64>()?;
    /// assert!(back.iter().zip(&want).all(|(x, y)| (x - y).abs() < 1e-12));
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn qr(&self) -> Result<(Array, Array)> {
        let packed = Array::from_op(Factor(FactorOp::QrPacked), vec![self.clone()])?;
        // The packed spec was accepted, so `self` is a matrix.
        let (m, n) = match *self.dims() {
            [m, n] => (m, n),
            _ => (0, 0),
        };
        let p = m.min(n);
        let q = packed.slice(0, 0..m * p)?.reshape([m, p])?;
        let r = packed.slice(0, m * p..p * (m + n))?.reshape([p, n])?;
        Ok((q, r))
    }
}
