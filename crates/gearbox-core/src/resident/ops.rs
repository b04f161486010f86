//! The in-place operations of a [`ResidentHandle`]: each builds the new
//! value as array work over a view of the handle and writes it into the
//! handle's buffer (see `storage`).

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::Array;
use crate::ops::binary::BinaryOp;
use crate::ops::library::LibraryCall;
use crate::ops::reduce::ReduceOp;
use crate::ops::unary::UnaryOp;

use super::ResidentHandle;

/// The other operand of an elementwise update: an array broadcast to the
/// handle's shape (same dtype), or a scalar.
#[derive(Debug, Clone, Copy)]
pub enum Rhs<'a> {
    /// An array of the handle's dtype whose shape broadcasts to the handle's.
    Array(&'a Array),
    /// A number, taken in the handle's dtype.
    Scalar(f64),
}

impl From<f64> for Rhs<'_> {
    fn from(v: f64) -> Self {
        Rhs::Scalar(v)
    }
}

impl<'a> From<&'a Array> for Rhs<'a> {
    fn from(a: &'a Array) -> Self {
        Rhs::Array(a)
    }
}

impl ResidentHandle {
    /// `h <- value`: `value` (same shape and dtype) written into the
    /// buffer. Pending elementwise work over views of handles runs as one
    /// fused kernel writing the buffer (like PyTorch's `out=`); anything
    /// else is computed, then copied in.
    pub fn assign(&self, value: &Array) -> Result<()> {
        let _busy = self.enter("assign")?;
        self.check_same("assign", "value", value)?;
        self.write("assign", value)
    }

    /// `h <- h op other` for the arithmetic, power, min/max, atan2 and
    /// comparison ops (comparisons store 1 and 0 in the handle's dtype).
    pub fn ewise_inplace<'a>(&self, op: BinaryOp, other: impl Into<Rhs<'a>>) -> Result<()> {
        let _busy = self.enter("ewise_inplace")?;
        let other = self.operand("ewise_inplace", other.into())?;
        let value = self.as_array().binary(op, &other)?;
        self.write("ewise_inplace", &self.fit("ewise_inplace", value)?)
    }

    /// `h <- f(h)` for an elementwise math op (`exp`, `log`, `sqrt`,
    /// `abs`, `sigmoid`, ...; predicates store 1 and 0).
    pub fn map_inplace(&self, op: UnaryOp) -> Result<()> {
        let _busy = self.enter("map_inplace")?;
        let value = self.as_array().unary(op)?;
        self.write("map_inplace", &self.fit("map_inplace", value)?)
    }

    /// R's `sweep(x, MARGIN, STATS, FUN)` in place on a matrix handle:
    /// `stats` has one value per row (`axis` 0, R's `MARGIN = 1`) or per
    /// column (`axis` 1, `MARGIN = 2`), and `h[i, j] <- h[i, j] op
    /// stats[i]` (or `stats[j]`).
    pub fn sweep_inplace(&self, stats: &Array, axis: usize, op: BinaryOp) -> Result<()> {
        let dims = self.matrix_dims("sweep_inplace")?;
        if axis > 1 {
            return Err(Error::InvalidArgument {
                op: "sweep_inplace",
                name: "axis",
                value: axis.to_string(),
                why: "0 sweeps per row (R's MARGIN = 1), 1 per column (MARGIN = 2)".into(),
            });
        }
        if stats.numel() != dims[axis] {
            return Err(Error::InvalidArgument {
                op: "sweep_inplace",
                name: "stats",
                value: format!("{} values", stats.numel()),
                why: format!(
                    "sweeping a {} x {} handle along axis {axis} takes {} values, one per {}",
                    dims[0],
                    dims[1],
                    dims[axis],
                    if axis == 0 { "row" } else { "column" }
                ),
            });
        }
        let shaped = if axis == 0 {
            stats.reshape([dims[0], 1])?
        } else {
            stats.reshape([1, dims[1]])?
        };
        self.ewise_inplace(op, &shaped)
    }

    /// `h <- h + alpha * x` (BLAS's axpy; `x` of the handle's shape and dtype).
    pub fn axpy(&self, alpha: f64, x: &Array) -> Result<()> {
        let _busy = self.enter("axpy")?;
        self.check_same("axpy", "x", x)?;
        let value = self.as_array().add(&x.mul(&self.scalar(alpha))?)?;
        self.write("axpy", &value)
    }

    /// Sets every element to `value`.
    pub fn fill(&self, value: f64) -> Result<()> {
        let _busy = self.enter("fill")?;
        let filled = self.scalar(value).broadcast_to(self.shape().clone())?;
        self.write("fill", &filled)
    }

    /// `h <- src` (same shape and dtype): a device-side copy when `src`
    /// is resident on the handle's backend, an upload into the buffer
    /// when it is on the host.
    pub fn copy_from(&self, src: &Array) -> Result<()> {
        let _busy = self.enter("copy_from")?;
        self.check_same("copy_from", "src", src)?;
        self.write("copy_from", src)
    }

    /// `C <- alpha * op(A) op(B) + beta * C` (BLAS's GEMM), `op` the
    /// transpose where `trans_a` / `trans_b`. With `beta` 0 the handle's
    /// old values are not read (NaN in them does not leak), as in BLAS.
    pub fn gemm_inplace(
        &self,
        a: &Array,
        b: &Array,
        alpha: f64,
        beta: f64,
        trans_a: bool,
        trans_b: bool,
    ) -> Result<()> {
        let _busy = self.enter("gemm_inplace")?;
        let product = match (trans_a, trans_b) {
            (false, false) => a.matmul(b)?,
            (true, false) => a.crossprod(b)?,
            (false, true) => a.tcrossprod(b)?,
            (true, true) => b.matmul(a)?.t()?,
        };
        // The product's shape is the handle's; a matrix times a vector
        // ([m, 1]) also fills a vector handle ([m]). Equal counts are not
        // enough: a [3, 2] product in a [2, 3] handle would scramble it.
        if !same_but_trailing_ones(product.shape(), self.shape()) || product.dtype() != self.dtype()
        {
            return Err(Error::InvalidArgument {
                op: "gemm_inplace",
                name: "a, b",
                value: format!("a {} {} product", product.shape(), product.dtype()),
                why: format!("the handle holds {} {}", self.shape(), self.dtype()),
            });
        }
        let call = match (trans_a, trans_b) {
            (false, false) => Some(LibraryCall::Matmul),
            (true, false) => Some(LibraryCall::Crossprod),
            (false, true) => Some(LibraryCall::Tcrossprod),
            (true, true) => None,
        };
        if self.gemm_direct(call, a, b, alpha, beta)? {
            return Ok(());
        }
        product.eval()?;
        let product = product.reshape(self.shape().clone())?;
        let scaled = if alpha == 1.0 {
            product
        } else {
            product.mul(&self.scalar(alpha))?
        };
        let value = if beta == 0.0 {
            scaled
        } else {
            scaled.add(&self.as_array().mul(&self.scalar(beta))?)?
        };
        self.write("gemm_inplace", &value)
    }

    /// `target <- rowSums(h)` (one value per row of a matrix handle).
    pub fn row_sums_into(&self, target: &ResidentHandle) -> Result<()> {
        self.summary_into("row_sums_into", target, ReduceOp::Sum, 1)
    }

    /// `target <- colSums(h)` (one value per column).
    pub fn col_sums_into(&self, target: &ResidentHandle) -> Result<()> {
        self.summary_into("col_sums_into", target, ReduceOp::Sum, 0)
    }

    /// `target <- rowMeans(h)`.
    pub fn row_means_into(&self, target: &ResidentHandle) -> Result<()> {
        self.summary_into("row_means_into", target, ReduceOp::Mean, 1)
    }

    /// `target <- colMeans(h)`.
    pub fn col_means_into(&self, target: &ResidentHandle) -> Result<()> {
        self.summary_into("col_means_into", target, ReduceOp::Mean, 0)
    }

    /// `target <-` the `op` reduction of the matrix handle over `axis`.
    fn summary_into(
        &self,
        name: &'static str,
        target: &ResidentHandle,
        op: ReduceOp,
        axis: usize,
    ) -> Result<()> {
        if std::ptr::eq(self, target) {
            return Err(Error::InvalidArgument {
                op: name,
                name: "target",
                value: "the handle itself".into(),
                why: "the summary goes into another handle".into(),
            });
        }
        let dims = self.matrix_dims(name)?;
        let _busy = self.enter(name)?;
        let _target_busy = target.enter(name)?;
        let lanes = dims[1 - axis];
        if target.numel() != lanes || target.dtype() != self.dtype() {
            return Err(Error::InvalidArgument {
                op: name,
                name: "target",
                value: format!("a {} {} handle", target.shape(), target.dtype()),
                why: format!("the result holds {lanes} {} values", self.dtype()),
            });
        }
        if target.backend() != self.backend() {
            return Err(Error::InvalidArgument {
                op: name,
                name: "target",
                value: format!("a handle on {}", target.backend()),
                why: format!(
                    "the source is on {}; both handles must share a backend",
                    self.backend()
                ),
            });
        }
        let value = self.as_array().reduce(op, Some(axis))?;
        target.write(name, &value)
    }

    /// The dimensions of a matrix handle, or an error of `op`.
    fn matrix_dims(&self, op: &'static str) -> Result<[usize; 2]> {
        match self.shape().dims() {
            &[r, c] => Ok([r, c]),
            _ => Err(Error::BadShape {
                op,
                shape: self.shape().clone(),
                why: "this operation takes a matrix handle".into(),
            }),
        }
    }

    /// The operand as an array of the handle's dtype.
    fn operand(&self, op: &'static str, rhs: Rhs<'_>) -> Result<Array> {
        match rhs {
            Rhs::Scalar(v) => Ok(self.scalar(v)),
            Rhs::Array(a) if a.dtype() == self.dtype() => Ok(a.clone()),
            Rhs::Array(a) => Err(Error::InvalidArgument {
                op,
                name: "other",
                value: format!("a {} {} array", a.shape(), a.dtype()),
                why: format!(
                    "the handle holds {}; convert with astype first",
                    self.dtype()
                ),
            }),
        }
    }

    /// `value` as the handle's dtype (comparisons give bool), checked to
    /// have the handle's shape (broadcasting may not grow it).
    fn fit(&self, op: &'static str, value: Array) -> Result<Array> {
        let value = if value.dtype() == DType::Bool {
            value.astype(self.dtype())?
        } else {
            value
        };
        self.check_same(op, "other", &value)?;
        Ok(value)
    }
}

/// Whether `a` and `b` are one shape once trailing dimensions of 1 are
/// dropped (`[m, 1]` is `[m]`; `[2, 3]` is not `[3, 2]` or `[6, 1]`).
fn same_but_trailing_ones(a: &crate::shape::Shape, b: &crate::shape::Shape) -> bool {
    let trimmed = |d: &[usize]| {
        let keep = d.iter().rposition(|&n| n != 1).map_or(0, |i| i + 1);
        d[..keep].to_vec()
    };
    trimmed(a.dims()) == trimmed(b.dims())
}
