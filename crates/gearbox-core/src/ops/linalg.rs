//! Dense linear algebra on matrices, computed by faer: the products
//! (`matmul`, `crossprod`, `tcrossprod`, `dot`, `outer`, defined here) and the
//! factorizations (`solve`, `inv`, `det`, `logdet`, `cholesky`, `qr`,
//! `inv_upper`, in [`factor`]).
//!
//! Like every op, these are lazy: building one checks shapes and dtypes and
//! returns an error naming the op and the shapes; faer runs at evaluation.
//!
//! Conventions:
//! - matrices are 2-D and column-major, so faer wraps the buffers without
//!   copying. The products also take 1-D operands, which are **column
//!   vectors** (`[k]` means `[k, 1]`, as in MATLAB); factorizations need
//!   2-D matrices.
//! - dtype: the work runs in f32 when every operand is f32 and in f64
//!   otherwise (i64 and bool promote to f64; f32 mixed with anything else is
//!   f64). The result has that dtype.
//! - empty matrices are valid: a product with inner dimension 0 is all zeros
//!   (`[m, 0] x [0, n]` is an `m x n` zero matrix), `dot` of two empty vectors
//!   is 0, `det` of a `0 x 0` matrix is 1, and `inv`, `solve`, `cholesky` and
//!   `qr` of empty matrices give empty results of the matching shapes.
//! - derivatives ([`crate::autodiff`]): every product and factorization
//!   has a vector-Jacobian product beside its definition, built from these
//!   same ops (so gradients are lazy, run on any backend, and can be
//!   differentiated again): see [`Product`]'s and [`factor::Factor`]'s
//!   `vjp`. The rules assume what the op does: `solve`, `inv`, `det` and
//!   `logdet` need a nonsingular `A` (their gradients solve with it),
//!   `cholesky`'s gradient is the symmetric one, `qr`'s needs full rank.
//! - `solve` and `inv` report [`Error::Singular`] rather than return
//!   infinities; see [`Array::solve`] for the rule.
//! - the factorizations refuse NaN and Inf with [`Error::NonFinite`], naming
//!   the entry (see [`factor`]); the products propagate them, as BLAS does.

use std::borrow::Cow;
use std::sync::Arc;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

use crate::buffer::HostBuffer;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::memory;
use crate::ops::library::LibraryCall;
use crate::shape::Shape;

pub mod factor;

/// A float type that faer computes in (f32 or f64).
trait Scalar: faer::traits::RealField + Element + Copy {
    /// Machine epsilon, as f64.
    const EPS: f64;
}

impl Scalar for f32 {
    const EPS: f64 = f32::EPSILON as f64;
}

impl Scalar for f64 {
    const EPS: f64 = f64::EPSILON;
}

/// The dtype linear algebra on these operands runs in: f32 when all are f32,
/// else f64.
fn compute_dtype(dtypes: &[DType]) -> DType {
    if dtypes.iter().all(|&d| d == DType::F32) {
        DType::F32
    } else {
        DType::F64
    }
}

/// Runs `$f::<f32>` or `$f::<f64>` for a compute dtype.
macro_rules! dispatch {
    ($dtype:expr, $f:ident($($arg:expr),*)) => {
        match $dtype {
            $crate::DType::F32 => {
                ::std::sync::Arc::new($crate::HostBuffer::from_vec($f::<f32>($($arg),*)?))
            }
            _ => ::std::sync::Arc::new($crate::HostBuffer::from_vec($f::<f64>($($arg),*)?)),
        }
    };
}
use dispatch;

/// The values of `buf` as `T`: borrowed when the dtype matches, else
/// converted once (memory for the conversion is charged to `op`).
fn values<'a, T: Scalar>(op: &str, buf: &'a HostBuffer) -> Result<Cow<'a, [T]>> {
    Ok(match buf.as_slice::<T>() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(crate::with_buffer!(buf, v => memory::collect(
            op,
            v.iter().map(|x| T::from_f64(x.to_f64()))
        )?)),
    })
}

/// The values of `buf` as `T` in a vector of their own, for `op`.
fn owned_values<T: Scalar>(op: &str, buf: &HostBuffer) -> Result<Vec<T>> {
    match values::<T>(op, buf)? {
        Cow::Borrowed(s) => memory::copy_of(op, s),
        Cow::Owned(v) => Ok(v),
    }
}

/// Copies a faer matrix (any strides) into a new column-major vector for `op`.
fn col_major<T: Scalar>(op: &str, src: MatRef<'_, T>) -> Result<Vec<T>> {
    let mut out = memory::zeroed(op, src.nrows() * src.ncols())?;
    MatMut::from_column_major_slice_mut(&mut out, src.nrows(), src.ncols()).copy_from(src);
    Ok(out)
}

/// Checks that `count` values of `T` can be allocated now, before faer
/// (which aborts when an allocation of its own fails) allocates about that
/// much for `op`.
fn ensure_faer_room<T: Scalar>(op: &str, count: usize) -> Result<()> {
    memory::ensure_available(op, count.saturating_mul(std::mem::size_of::<T>()))
}

/// The `N` input specs of `op`, or an error if a caller passed another count.
fn arity<'a, const N: usize>(op: &'static str, inputs: &[&'a Spec]) -> Result<[&'a Spec; N]> {
    inputs.try_into().map_err(|_| Error::InvalidArgument {
        op,
        name: "inputs",
        value: inputs.len().to_string(),
        why: format!("{op} takes {N} input(s)"),
    })
}

/// Rows and columns of a product operand: a vector `[k]` is the column `[k, 1]`.
fn matrix_dims(op: &'static str, s: &Spec) -> Result<(usize, usize)> {
    match *s.shape.dims() {
        [k] => Ok((k, 1)),
        [m, n] => Ok((m, n)),
        _ => Err(Error::BadShape {
            op,
            shape: s.shape.clone(),
            why: "expected a vector (1-D, read as a column) or a matrix (2-D)".into(),
        }),
    }
}

/// Clears the upper halves of the AVX registers on every rayon thread and
/// this one (`vzeroupper`).
///
/// faer's AVX GEMM and factorization kernels can return with the upper halves
/// dirty. Every later SSE instruction on that thread then pays an AVX-SSE
/// transition penalty: measured here, the libm `exp`/`sin` calls of a fused
/// elementwise chain over 10^7 values went from 0.23 s to 3.6 s after one
/// 1024 x 1024 GEMM, and stayed there. Each dense-kernel primitive calls this
/// when faer returns; the cost is one rayon broadcast (microseconds).
pub(crate) fn clear_simd_upper_state() {
    clear_simd_upper_state_on(true);
}

/// [`clear_simd_upper_state`] on this thread only, or (`all_threads`) on
/// every rayon thread too: a kernel run sequentially (a small product) only
/// dirtied this thread, and skipping the broadcast saves most of its cost.
pub(crate) fn clear_simd_upper_state_on(all_threads: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            fn zeroupper() {
                // SAFETY: AVX support was detected just above.
                unsafe { std::arch::x86_64::_mm256_zeroupper() }
            }
            if all_threads {
                rayon::broadcast(|_| zeroupper());
            }
            zeroupper();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = all_threads;
}

/// Products below this many multiply-adds run on the calling thread: the
/// cost of waking the pool exceeds the work.
const SEQUENTIAL_PRODUCT_FMAS: usize = 1 << 18;

/// The matrix under a pending 2-D transpose (`m.t()`), if `a` is one.
fn pending_transpose_of(a: &Array) -> Option<Array> {
    let op = a.op()?;
    let is_t = op.name() == "transpose" && a.ndim() == 2 && op.is_matrix_transpose();
    is_t.then(|| a.inputs().into_iter().next()).flatten()
}

/// Which product a [`Product`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProductKind {
    /// `A · B`.
    MatMul,
    /// `Aᵀ · B` (R's `crossprod`).
    CrossProd,
    /// `A · Bᵀ` (R's `tcrossprod`).
    TCrossProd,
    /// `uᵀ v` of two vectors of one length: a 0-d result.
    Dot,
    /// `u vᵀ` of two vectors.
    Outer,
}

impl ProductKind {
    /// The op's name, as the `Array` method is called.
    pub fn name(self) -> &'static str {
        match self {
            ProductKind::MatMul => "matmul",
            ProductKind::CrossProd => "crossprod",
            ProductKind::TCrossProd => "tcrossprod",
            ProductKind::Dot => "dot",
            ProductKind::Outer => "outer",
        }
    }

    /// Whether the left and the right operand enter transposed.
    fn transposes(self) -> (bool, bool) {
        match self {
            ProductKind::MatMul => (false, false),
            ProductKind::CrossProd | ProductKind::Dot => (true, false),
            ProductKind::TCrossProd | ProductKind::Outer => (false, true),
        }
    }
}

/// A matrix product `op(A) · op(B)` where `op` is the identity or a transpose
/// (never materialized: faer reads the transposed view). One GEMM call on all
/// cores.
#[derive(Debug, Clone, Copy)]
pub struct Product(pub ProductKind);

impl Primitive for Product {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn library_call(&self) -> Option<LibraryCall> {
        match self.0 {
            ProductKind::MatMul => Some(LibraryCall::Matmul),
            ProductKind::CrossProd => Some(LibraryCall::Crossprod),
            ProductKind::TCrossProd => Some(LibraryCall::Tcrossprod),
            ProductKind::Dot | ProductKind::Outer => None,
        }
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let op = self.name();
        let [a, b] = arity(op, inputs)?;
        let dtype = compute_dtype(&[a.dtype, b.dtype]);
        let mismatch = |why: String| Error::ShapeMismatch {
            op,
            lhs: a.shape.clone(),
            rhs: b.shape.clone(),
            why,
        };
        if matches!(self.0, ProductKind::Dot | ProductKind::Outer) {
            if let Some(s) = [a, b].into_iter().find(|s| s.shape.ndim() != 1) {
                return Err(Error::BadShape {
                    op,
                    shape: s.shape.clone(),
                    why: format!("{op} takes two 1-D vectors; use matmul for matrices"),
                });
            }
            let (m, n) = (a.shape.numel(), b.shape.numel());
            return match self.0 {
                ProductKind::Dot if m != n => Err(mismatch(format!(
                    "the vectors must have one length, not {m} and {n}"
                ))),
                ProductKind::Dot => Ok(Spec::new(Shape::scalar(), dtype)),
                _ => product_spec(op, Shape::new(vec![m, n]), dtype),
            };
        }
        let (ar, ac) = matrix_dims(op, a)?;
        let (br, bc) = matrix_dims(op, b)?;
        let (ta, tb) = self.0.transposes();
        let (m, ka) = if ta { (ac, ar) } else { (ar, ac) };
        let (kb, n) = if tb { (bc, br) } else { (br, bc) };
        if ka != kb {
            return Err(mismatch(match self.0 {
                ProductKind::CrossProd => format!(
                    "crossprod computes Aᵀ·B, so A and B need the same number of rows, not {ar} and {br}"
                ),
                ProductKind::TCrossProd => format!(
                    "tcrossprod computes A·Bᵀ, so A and B need the same number of columns, not {ac} and {bc}"
                ),
                _ => format!(
                    "the left operand has {ka} column(s) but the right has {kb} row(s) (a 1-D operand is a column)"
                ),
            }));
        }
        // A vector on the right that is not transposed gives a vector, as the
        // right-hand side of `solve` does.
        let shape = if b.shape.ndim() == 1 && !tb {
            Shape::new(vec![m])
        } else {
            Shape::new(vec![m, n])
        };
        product_spec(op, shape, dtype)
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        // Multiply-adds: output elements times the inner dimension.
        let k = {
            let (ar, ac) = matrix_dims(self.0.name(), inputs[0].spec)?;
            if self.0.transposes().0 {
                ar
            } else {
                ac
            }
        };
        let parallel = out.shape.numel().saturating_mul(k) >= SEQUENTIAL_PRODUCT_FMAS;
        let par = if parallel { Par::rayon(0) } else { Par::Seq };
        let run = || -> Result<Arc<HostBuffer>> {
            Ok(dispatch!(
                out.dtype,
                product(self.0, &inputs[0], &inputs[1], par)
            ))
        };
        let out = run();
        clear_simd_upper_state_on(parallel);
        out
    }
    /// For `C = op(A) op(B)` and the cotangent `G` of `C` (operands and
    /// `G` read as matrices, a vector as a column):
    /// `matmul` `Ā = G Bᵀ`, `B̄ = Aᵀ G`; `crossprod` (`Aᵀ B`) `Ā = B Gᵀ`,
    /// `B̄ = A G`; `tcrossprod` (`A Bᵀ`) `Ā = G B`, `B̄ = Gᵀ A`; `dot` as
    /// `crossprod` of two columns and `outer` as `tcrossprod`. Each is a
    /// product op itself, reshaped to the operand's shape.
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let op = self.name();
        let (a, b) = (&inputs[0], &inputs[1]);
        let (ar, ac) = matrix_dims(op, a.spec())?;
        let (br, bc) = matrix_dims(op, b.spec())?;
        let (ta, tb) = self.0.transposes();
        let m = if ta { ac } else { ar };
        let n = if tb { br } else { bc };
        let a2 = a.reshape([ar, ac])?;
        let b2 = b.reshape([br, bc])?;
        let g2 = g.reshape([m, n])?;
        let (da, db) = match (ta, tb) {
            (false, false) => (g2.tcrossprod(&b2)?, a2.crossprod(&g2)?),
            (true, false) => (b2.tcrossprod(&g2)?, a2.matmul(&g2)?),
            (false, true) => (g2.matmul(&b2)?, g2.crossprod(&a2)?),
            (true, true) => unreachable!("no product transposes both operands"),
        };
        Ok(vec![
            Some(da.reshape(a.dims().to_vec())?),
            Some(db.reshape(b.dims().to_vec())?),
        ])
    }
}

/// The spec of a product's result, after the size rule ([`Shape::check_size`]):
/// `[m, k] x [k, n]` can overflow even when both operands fit.
fn product_spec(op: &'static str, shape: Shape, dtype: DType) -> Result<Spec> {
    shape.check_size(op, dtype)?;
    Ok(Spec::new(shape, dtype))
}

/// `op(A) · op(B)` in `T`, column-major.
fn product<T: Scalar>(
    kind: ProductKind,
    a: &Operand<'_>,
    b: &Operand<'_>,
    par: Par,
) -> Result<Vec<T>> {
    let (ar, ac) = matrix_dims(kind.name(), a.spec)?;
    let (br, bc) = matrix_dims(kind.name(), b.spec)?;
    let (av, bv) = (
        values::<T>(kind.name(), a.buf)?,
        values::<T>(kind.name(), b.buf)?,
    );
    let am = MatRef::from_column_major_slice(&av[..], ar, ac);
    let bm = MatRef::from_column_major_slice(&bv[..], br, bc);
    let (ta, tb) = kind.transposes();
    let lhs = if ta { am.transpose() } else { am };
    let rhs = if tb { bm.transpose() } else { bm };
    let (m, k, n) = (lhs.nrows(), lhs.ncols(), rhs.ncols());
    // Zeros: also the answer when the inner dimension is 0.
    let mut out = memory::zeroed(kind.name(), m * n)?;
    if m > 0 && n > 0 && k > 0 {
        let mut dst = MatMut::from_column_major_slice_mut(&mut out, m, n);
        if kind == ProductKind::CrossProd && Arc::ptr_eq(a.buf, b.buf) && n >= GRAM_MIN_COLUMNS {
            gram(dst, rhs, par);
        } else {
            matmul(
                dst.as_mut(),
                Accum::Replace,
                lhs,
                rhs,
                T::from_f64(1.0),
                par,
            );
        }
    }
    Ok(out)
}

/// The fewest columns for which `crossprod(x, x)` takes [`gram`].
const GRAM_MIN_COLUMNS: usize = 256;

/// The Gram matrix `Xᵀ X` of the `n x p` matrix `x` into the `p x p` `dst`
/// (on `par`'s threads): the lower triangle by faer's triangular product,
/// then mirrored, so the result is exactly symmetric. Used from
/// [`GRAM_MIN_COLUMNS`] columns: with half the flops it is 7-10% faster
/// than the full product at 1,024 columns (4,096 and 20,000 rows, two
/// cores), and twice as slow at 50.
fn gram<T: Scalar>(mut dst: MatMut<'_, T>, x: MatRef<'_, T>, par: Par) {
    use faer::linalg::matmul::triangular::{matmul as triangular, BlockStructure};
    triangular(
        dst.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        x.transpose(),
        BlockStructure::Rectangular,
        x,
        BlockStructure::Rectangular,
        T::from_f64(1.0),
        par,
    );
    for j in 1..dst.ncols() {
        for i in 0..j {
            dst[(i, j)] = dst[(j, i)];
        }
    }
}

impl Array {
    fn product(&self, kind: ProductKind, other: &Array) -> Result<Array> {
        // Operands in the dtype the product computes in (f32 when both are,
        // else f64): every backend's GEMM then sees one float dtype, and an
        // integer or bool operand converts where it lives (on a device, a
        // fused cast) instead of sending the product to the host.
        let compute = if self.dtype() == DType::F32 && other.dtype() == DType::F32 {
            DType::F32
        } else {
            DType::F64
        };
        let operand = |a: &Array| -> Result<Array> {
            if a.dtype() == compute {
                Ok(a.clone())
            } else {
                a.astype(compute)
            }
        };
        Array::from_op(Product(kind), vec![operand(self)?, operand(other)?])
    }

    /// The matrix product `self · other`: `[m, k] x [k, n] -> [m, n]`.
    ///
    /// A 1-D operand is a column vector (`[k]` means `[k, 1]`, as in MATLAB),
    /// so `A.matmul(&v)` multiplies a matrix by a vector; when `other` is 1-D
    /// the result is 1-D (`[m]`). Runs faer's parallel GEMM; f32 operands
    /// compute in f32, anything else in f64. An inner dimension of 0 gives
    /// zeros. Mismatched inner dimensions are an [`Error::ShapeMismatch`]
    /// naming both shapes.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let a = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]])?;
    /// let b = Array::from_rows(&[vec![5.0, 6.0], vec![7.0, 8.0]])?;
    /// let c = a.matmul(&b)?;
    /// assert_eq!(c.to_vec::<f64>()?, vec![19.0, 43.0, 22.0, 50.0]); // column-major
    /// let v = Array::from_vec([2], vec![1.0, 1.0])?;
    /// assert_eq!(a.matmul(&v)?.to_vec::<f64>()?, vec![3.0, 7.0]);
    /// assert!(a.matmul(&Array::from_vec([3], vec![1.0; 3])?).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn matmul(&self, other: &Array) -> Result<Array> {
        // A pending matrix transpose on either side becomes a transposed
        // GEMM operand (crossprod / tcrossprod), so it is never materialized.
        match (pending_transpose_of(self), pending_transpose_of(other)) {
            (None, Some(b)) => self.product(ProductKind::TCrossProd, &b),
            (Some(a), None) => a.product(ProductKind::CrossProd, other),
            _ => self.product(ProductKind::MatMul, other),
        }
    }

    /// `selfᵀ · other` without forming the transpose (R's `crossprod`):
    /// `[k, m]` and `[k, n]` give `[m, n]`. 1-D operands are columns, and a
    /// 1-D `other` gives a 1-D result, as in [`Array::matmul`].
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let x = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]])?;
    /// let g = x.crossprod(&x)?; // the 2 x 2 Gram matrix XᵀX
    /// assert_eq!(g.to_vec::<f64>()?, vec![35.0, 44.0, 44.0, 56.0]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn crossprod(&self, other: &Array) -> Result<Array> {
        self.product(ProductKind::CrossProd, other)
    }

    /// `self · otherᵀ` without forming the transpose (R's `tcrossprod`):
    /// `[m, k]` and `[n, k]` give `[m, n]`. 1-D operands are columns.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let x = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]])?;
    /// let g = x.tcrossprod(&x)?; // the 3 x 3 matrix XXᵀ
    /// assert_eq!(g.dims(), &[3, 3]);
    /// assert_eq!(g.get(&[0, 2])?, 17.0);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn tcrossprod(&self, other: &Array) -> Result<Array> {
        self.product(ProductKind::TCrossProd, other)
    }

    /// The inner product of two 1-D vectors of one length, as a 0-d array
    /// (0 for two empty vectors).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let u = Array::from_vec([3], vec![1.0, 2.0, 3.0])?;
    /// let v = Array::from_vec([3], vec![4.0, 5.0, 6.0])?;
    /// assert_eq!(u.dot(&v)?.item()?, 32.0);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn dot(&self, other: &Array) -> Result<Array> {
        self.product(ProductKind::Dot, other)
    }

    /// The outer product `u vᵀ` of 1-D vectors `u` (`[m]`) and `v` (`[n]`): `[m, n]`,
    /// in f32 when both are f32, else f64.
    ///
    /// It is the broadcast product of `u` as an `[m, 1]` column and `v` as a
    /// `[1, n]` row (each element is one product, exactly as the GEMM gives
    /// it), so it fuses with its neighbours and runs wherever they do.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let u = Array::from_vec([2], vec![1.0, 2.0])?;
    /// let v = Array::from_vec([3], vec![1.0, 10.0, 100.0])?;
    /// let o = u.outer(&v)?;
    /// assert_eq!(o.dims(), &[2, 3]);
    /// assert_eq!(o.get(&[1, 2])?, 200.0);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn outer(&self, other: &Array) -> Result<Array> {
        // The product's own checks: 1-D operands, and the result dtype.
        let spec = Product(ProductKind::Outer).output_spec(&[self.spec(), other.spec()])?;
        let as_dtype = |a: &Array| {
            if a.dtype() == spec.dtype {
                Ok(a.clone())
            } else {
                a.astype(spec.dtype)
            }
        };
        let column = as_dtype(self)?.reshape([self.numel(), 1])?;
        let row = as_dtype(other)?.reshape([1, other.numel()])?;
        &column * &row
    }
}
