//! Reductions over all elements or along one axis, and cumulative sums and
//! products.
//!
//! An axis reduction keeps the reduced axis with length 1 (MATLAB's `sum(X, 1)`
//! convention), so its result broadcasts back against the input:
//! `x - x.mean_axis(0)` centres each column. The R-style `col_sums`,
//! `col_means`, `row_sums` and `row_means` return plain vectors.
//!
//! Accuracy and semantics:
//! - sums accumulate in f64 by pairwise summation (error `O(log n · ε)`), in
//!   a tree fixed by the lane's length alone (the same for a contiguous lane
//!   and a strided one, see `reduce/sums.rs`), so the result does not depend
//!   on the number of threads;
//! - i64 `sum`, `mean`, `min`, `max`, `argmin`, `argmax` and `cumsum` are
//!   exact integer arithmetic (sums in i128); a sum outside i64 is an error
//!   ([`crate::ops::integer`]);
//! - `prod` and `cumprod` accumulate with an unbounded exponent
//!   ([`crate::ops::product`]): partial products never overflow or underflow,
//!   so `prod([1e300, 1e300, 0])` is 0, as in R;
//! - `mean` adds R's second refinement pass, `mean + Σ(x - mean)/n`;
//! - `var` and `sd` are the sample versions (divisor `n - 1`), computed in two
//!   passes; fewer than two values give NaN, as in R;
//! - NaN propagates through every float reduction, including `min`/`max`; the
//!   `argmin`/`argmax` of a lane with a NaN is the index of its first NaN;
//! - `min` and `max` order `-0.0` below `+0.0` (IEEE 754-2019), so a lane
//!   holding both zeros gives the same zero whatever order it is read in;
//! - a sum starts from `+0.0`, as R's does: the sum of an empty lane, or of
//!   negative zeros only, is `+0.0`;
//! - `logsumexp` is `log(sum(exp(x)))` without overflow: `m + log(sum(exp(x -
//!   m)))` with `m` the lane's maximum (`+Inf` when the lane holds `+Inf`,
//!   NaN when it holds NaN); on the CPU an f32 lane's terms `exp(x - m)`
//!   are f32 (within 2 ulps each, twice the vector lanes) and their sum f64;
//! - empty inputs: `sum` is 0, `prod` is 1, `mean`, `var`, `sd` are NaN, `any`
//!   is false, `all` is true, `logsumexp` is `-Inf`; `min`, `max`, `argmin`
//!   and `argmax` are an error;
//! - `cumsum`/`cumprod` without an axis run over the column-major flattening,
//!   as R does, and return a vector.

use std::sync::Arc;

use crate::buffer::{CastTo, HostBuffer};
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::memory;
use crate::ops::binary::BinaryOp;
use crate::ops::integer;
use crate::ops::loops::worth_parallel;
use crate::ops::product::Scaled;
use crate::shape::Shape;

mod extremes;
mod grad;
mod lanes;
mod logical;
mod native;
mod scan;
mod sums;
#[cfg(test)]
mod tests;

use grad::{cumulative_vjp, reduce_vjp};
use lanes::reduce_lanes;
use scan::scan;

/// Every reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[allow(missing_docs)]
pub enum ReduceOp {
    Sum,
    Prod,
    Mean,
    Var,
    Sd,
    Min,
    Max,
    ArgMin,
    ArgMax,
    Any,
    All,
    LogSumExp,
}

/// How a fused reduction accumulates ([`ReduceOp::monoid`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Monoid {
    /// The combination of two accumulators.
    pub combine: BinaryOp,
    /// The accumulator of no values.
    pub identity: Identity,
    /// Whether the result is the total divided by the count (a mean).
    pub divides_by_count: bool,
}

/// The identity of a [`Monoid`], in whatever type accumulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// 0.
    Zero,
    /// 1.
    One,
    /// The highest value (+infinity, or the largest integer).
    Highest,
    /// The lowest value (-infinity, or the smallest integer).
    Lowest,
}

impl ReduceOp {
    /// Every reduction (the conformance suite iterates it).
    pub const ALL: &'static [ReduceOp] = &[
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Mean,
        ReduceOp::Var,
        ReduceOp::Sd,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::ArgMin,
        ReduceOp::ArgMax,
        ReduceOp::Any,
        ReduceOp::All,
        ReduceOp::LogSumExp,
    ];

    /// The op's place in [`ReduceOp::ALL`]; exhaustive, so a new variant
    /// cannot compile without a place (and a test checks the list has it).
    pub fn position(self) -> usize {
        use ReduceOp::*;
        match self {
            Sum => 0,
            Prod => 1,
            Mean => 2,
            Var => 3,
            Sd => 4,
            Min => 5,
            Max => 6,
            ArgMin => 7,
            ArgMax => 8,
            Any => 9,
            All => 10,
            LogSumExp => 11,
        }
    }

    /// How the reduction accumulates when its accumulator is one value
    /// (`None` for those whose accumulator holds several: `var` and `sd`
    /// a count, mean and sum of squared deviations merged by Chan's rule,
    /// `argmin` and `argmax` a value and its position, `logsumexp` the
    /// running maximum and the sum of `exp(x - max)`). The CPU
    /// interpreter's accumulators and every renderer's follow it: the
    /// combination is a binary op (so a renderer spells it as it spells
    /// that op), the identity is that op's, and a mean divides by the
    /// count at the end. `any` and `all` are the maximum and minimum of
    /// their bools (false and true over nothing).
    pub fn monoid(self) -> Option<Monoid> {
        use ReduceOp::*;
        let (combine, identity) = match self {
            Sum | Mean => (BinaryOp::Add, Identity::Zero),
            Prod => (BinaryOp::Mul, Identity::One),
            Min => (BinaryOp::Minimum, Identity::Highest),
            Max => (BinaryOp::Maximum, Identity::Lowest),
            Any => (BinaryOp::Maximum, Identity::Zero),
            All => (BinaryOp::Minimum, Identity::One),
            Var | Sd | ArgMin | ArgMax | LogSumExp => return None,
        };
        Some(Monoid {
            combine,
            identity,
            divides_by_count: self == Mean,
        })
    }

    /// The reductions whose result the accumulator of `self` also holds,
    /// so that one pass can produce both (a kernel's
    /// [`companion`](crate::fusion::ir::IrReduce::companion)): the
    /// accumulator of `var` and `sd` carries its lane's mean.
    pub fn companions(self) -> &'static [ReduceOp] {
        match self {
            ReduceOp::Var | ReduceOp::Sd => &[ReduceOp::Mean],
            _ => &[],
        }
    }

    /// The op's name, as the `Array` method is called.
    pub fn name(self) -> &'static str {
        use ReduceOp::*;
        match self {
            Sum => "sum",
            Prod => "prod",
            Mean => "mean",
            Var => "var",
            Sd => "sd",
            Min => "min",
            Max => "max",
            ArgMin => "argmin",
            ArgMax => "argmax",
            Any => "any",
            All => "all",
            LogSumExp => "logsumexp",
        }
    }

    /// The result dtype for an input dtype, or an error naming it.
    pub fn result_dtype(self, input: DType) -> Result<DType> {
        use ReduceOp::*;
        Ok(match self {
            Sum | Min | Max => match input {
                DType::Bool => DType::I64,
                d => d,
            },
            Prod | Mean | Var | Sd | LogSumExp => input.float_of(),
            ArgMin | ArgMax => DType::I64,
            Any | All => {
                if input != DType::Bool {
                    return Err(Error::DType {
                        op: self.name(),
                        got: input,
                        expected: "bool",
                    });
                }
                DType::Bool
            }
        })
    }

    /// Work per value, in [`crate::ops::loops::worth_parallel`]'s units
    /// (an add is 1): what decides whether a lane's values are shared out.
    pub(crate) fn cost(self) -> usize {
        use ReduceOp::*;
        match self {
            LogSumExp => 12,
            Var | Sd => 4,
            Prod => 3,
            _ => 1,
        }
    }

    fn needs_elements(self) -> bool {
        matches!(
            self,
            ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMin | ReduceOp::ArgMax
        )
    }
}

/// `a < b`, with `-0.0` below `+0.0` (IEEE 754-2019 `minimum`/`maximum`),
/// so that the min or max of a lane holding both zeros does not depend on
/// the order the lane is read in (the fused kernels read it in another).
pub(crate) fn below(a: f64, b: f64) -> bool {
    a < b || (a == 0.0 && b == 0.0 && a.is_sign_negative() && b.is_sign_positive())
}

/// A reduction over all elements (`axis: None`, giving a 0-d array) or along
/// one axis (kept with length 1).
#[derive(Debug, Clone, Copy)]
pub struct Reduce {
    /// Which reduction.
    pub op: ReduceOp,
    /// The axis reduced, or `None` for all elements.
    pub axis: Option<usize>,
}

impl Primitive for Reduce {
    fn name(&self) -> &'static str {
        self.op.name()
    }
    fn as_reduction(&self) -> Option<(ReduceOp, Option<usize>)> {
        Some((self.op, self.axis))
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let s = &inputs[0].shape;
        let dtype = self.op.result_dtype(inputs[0].dtype)?;
        let (shape, len) = match self.axis {
            None => (Shape::scalar(), s.numel()),
            Some(a) => {
                s.check_axis(self.op.name(), a)?;
                (s.with_dim(a, 1), s.dims()[a])
            }
        };
        if len == 0 && shape.numel() > 0 && self.op.needs_elements() {
            return Err(Error::Empty {
                op: self.op.name(),
                shape: s.clone(),
                why: "it has no element to return",
            });
        }
        Ok(Spec::new(shape, dtype))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let done = reduce_buffer(
            self.op,
            self.axis,
            inputs[0].buf,
            &inputs[0].spec.shape,
            out.dtype,
        )?;
        Ok(Arc::new(done))
    }
    /// Each reduction's vector-Jacobian product, with `n` the count reduced
    /// and `m` the mean of the lane:
    /// - `sum`: `g` spread over the lane ([`Array::broadcast_to`], which fuses);
    /// - `mean`: `g / n` spread;
    /// - `var` (divisor `n - 1`, as R's): `g · 2 (x - m) / (n - 1)`; `sd`:
    ///   `g · (x - m) / ((n - 1) sd)`. Below two values both are NaN, as the
    ///   values are; a lane of equal values has `sd = 0` and a NaN gradient
    ///   (the square root's derivative at 0);
    /// - `prod`: the product of the *other* elements, computed without dividing
    ///   by zero: with `z` the lane's count of zeros and `p` the product of its
    ///   nonzero elements, `p / x` where `z = 0`; where `z = 1`, `p` at the zero
    ///   and 0 elsewhere; 0 everywhere when `z >= 2`;
    /// - `min` and `max`: all of `g` to the *first* minimal (maximal) element of
    ///   the lane, the one `argmin` (`argmax`) names, as R's `which.min` picks
    ///   it; ties get nothing else. A lane holding NaN sends it to its first NaN;
    /// - `argmin`, `argmax`, `any`, `all`, and every reduction of integers or
    ///   bools: no gradient (`None`).
    fn vjp(&self, inputs: &[Array], y: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        reduce_vjp(self.op, self.axis, &inputs[0], y, g)
    }
}

/// Reduction `op` over all of `values` (`axis: None`) or along `axis`, of
/// values laid out in `shape`: what [`Reduce::eval_cpu`] computes (an error
/// where its output spec is one), for callers holding a buffer rather than
/// an operand (the CPU interpreter, closing a fused pass or reducing an
/// input as it is).
pub(crate) fn reduce_host(
    op: ReduceOp,
    axis: Option<usize>,
    values: &HostBuffer,
    shape: &Shape,
) -> Result<HostBuffer> {
    let spec = Spec::new(shape.clone(), values.dtype());
    let out = Reduce { op, axis }.output_spec(&[&spec])?;
    reduce_buffer(op, axis, values, shape, out.dtype)
}

/// [`Reduce::eval_cpu`] on a buffer: i64 exactly where
/// [`integer::reduce_i64`] takes it, otherwise the lane kernels
/// (`reduce/lanes.rs`), converted to `dtype`.
fn reduce_buffer(
    op: ReduceOp,
    axis: Option<usize>,
    buf: &HostBuffer,
    shape: &Shape,
    dtype: DType,
) -> Result<HostBuffer> {
    let (inner, len, outer) = match axis {
        None => (1, shape.numel(), 1),
        Some(a) => shape.split_at_axis(a),
    };
    if let HostBuffer::I64(v) = buf {
        if let Some(exact) = integer::reduce_i64(op, v, (inner, len, outer), axis)? {
            return Ok(exact);
        }
    }
    let values = crate::with_buffer!(buf, v => reduce_lanes(op, v, inner, len, outer)?);
    to_dtype(values, dtype)
}

/// f64 results in the output dtype. Fewer than [`PAR_MIN`] convert on this
/// thread: waking the pool for them costs more than converting (tens of
/// microseconds against a few for `any_axis(0)` of a 10^6 x 64 matrix).
fn to_dtype(values: Vec<f64>, dtype: DType) -> Result<HostBuffer> {
    fn each<D>(values: &[f64]) -> Result<Vec<D>>
    where
        f64: CastTo<D>,
    {
        memory::collect("astype", values.iter().map(|&v| v.cast_to()))
    }
    Ok(match dtype {
        DType::F64 => HostBuffer::F64(values),
        other if worth_parallel(values.len(), 1) => HostBuffer::F64(values).cast(other)?,
        DType::F32 => HostBuffer::F32(each(&values)?),
        DType::I64 => HostBuffer::I64(each(&values)?),
        DType::Bool => HostBuffer::Bool(each(&values)?),
    })
}

/// A cumulative sum or product along one axis (same shape), or over the
/// column-major flattening (a vector).
#[derive(Debug, Clone, Copy)]
pub struct Cumulative {
    /// `true` for products, `false` for sums.
    pub product: bool,
    /// The axis, or `None` for the flattening.
    pub axis: Option<usize>,
}

impl Primitive for Cumulative {
    fn name(&self) -> &'static str {
        if self.product {
            "cumprod"
        } else {
            "cumsum"
        }
    }
    fn library_call(&self) -> Option<crate::ops::library::LibraryCall> {
        Some(crate::ops::library::LibraryCall::Scan {
            product: self.product,
            axis: self.axis,
        })
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let s = &inputs[0].shape;
        let dtype = match (self.product, inputs[0].dtype) {
            (_, DType::F32) => DType::F32,
            (false, DType::I64 | DType::Bool) => DType::I64,
            _ => DType::F64,
        };
        let shape = match self.axis {
            None => Shape::new(vec![s.numel()]),
            Some(a) => {
                s.check_axis(self.name(), a)?;
                s.clone()
            }
        };
        Ok(Spec::new(shape, dtype))
    }
    /// The cotangent through the scan, written with `rev(v)` for the
    /// reversed cumulative sum `sum_{k >= j} v_k` along the lane
    /// ([`Array::flip`], cumsum, flip):
    /// - `cumsum`: `rev(g)`;
    /// - `cumprod` (result `y`): `rev(g y) / x` before the lane's first
    ///   zero; at the first zero, `rev(g y')` with `y'` the cumulative
    ///   product of the lane with that zero replaced by 1 (the products of
    ///   the other elements); after it, 0. Nothing divides by zero, so
    ///   lanes with zeros get the exact gradient.
    ///
    /// Without an axis the lane is the column-major flattening. Integers
    /// and bools carry no gradient.
    fn vjp(&self, inputs: &[Array], y: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let x = &inputs[0];
        if !x.dtype().is_float() {
            return Ok(vec![None]);
        }
        Ok(vec![Some(cumulative_vjp(
            self.product,
            self.axis,
            x,
            y,
            g,
        )?)])
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let s = &inputs[0].spec.shape;
        let (inner, len, outer) = match self.axis {
            None => (1, s.numel(), 1),
            Some(a) => s.split_at_axis(a),
        };
        let buf = inputs[0].buf.as_ref();
        let layout = (inner, len, outer);
        if !self.product && out.dtype == DType::I64 {
            // Integer sums are exact: running totals in i128, an error where
            // one leaves i64.
            if let HostBuffer::I64(v) = &buf.cast(DType::I64)? {
                let totals = scan(
                    self.name(),
                    v,
                    layout,
                    0i128,
                    |a, b| a + i128::from(b),
                    |a| a,
                )?;
                return Ok(Arc::new(HostBuffer::I64(integer::narrow_running_sums(
                    &totals,
                )?)));
            }
        }
        // Running values in f64 (products scaled), each rounded once into
        // the output dtype.
        macro_rules! float_scan {
            ($U:ty, $wrap:ident) => {
                crate::with_buffer!(buf, v => {
                    let y: Vec<$U> = if self.product {
                        let step = |p: Scaled, x| p.times(Scaled::of(Element::to_f64(x)));
                        scan(self.name(), v, layout, Scaled::ONE, step, |p| <$U>::from_f64(p.value()))?
                    } else {
                        let step = |a: f64, x| a + Element::to_f64(x);
                        scan(self.name(), v, layout, 0.0, step, <$U>::from_f64)?
                    };
                    HostBuffer::$wrap(y)
                })
            };
        }
        Ok(Arc::new(match out.dtype {
            DType::F32 => float_scan!(f32, F32),
            _ => float_scan!(f64, F64),
        }))
    }
}

impl Array {
    /// Reduces all elements (a 0-d result) or one axis (kept with length 1).
    pub fn reduce(&self, op: ReduceOp, axis: Option<usize>) -> Result<Array> {
        Array::from_op(Reduce { op, axis }, vec![self.clone()])
    }

    /// Reduces `axis` and drops it: the R-style vector results.
    fn reduce_drop(&self, op: ReduceOp, axis: usize) -> Result<Array> {
        if self.ndim() != 2 {
            return Err(Error::BadShape {
                op: op.name(),
                shape: self.shape().clone(),
                why: "column and row summaries need a matrix".into(),
            });
        }
        let r = self.reduce(op, Some(axis))?;
        r.reshape([r.numel()])
    }

    /// Sums of the columns of a matrix, as a vector (R's `colSums`).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let m = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]])?;
    /// assert_eq!(m.col_sums()?.to_vec::<f64>()?, vec![4.0, 6.0]);
    /// assert_eq!(m.row_means()?.to_vec::<f64>()?, vec![1.5, 3.5]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn col_sums(&self) -> Result<Array> {
        self.reduce_drop(ReduceOp::Sum, 0)
    }

    /// Means of the columns of a matrix, as a vector (R's `colMeans`).
    pub fn col_means(&self) -> Result<Array> {
        self.reduce_drop(ReduceOp::Mean, 0)
    }

    /// Sums of the rows of a matrix, as a vector (R's `rowSums`).
    pub fn row_sums(&self) -> Result<Array> {
        self.reduce_drop(ReduceOp::Sum, 1)
    }

    /// Means of the rows of a matrix, as a vector (R's `rowMeans`).
    pub fn row_means(&self) -> Result<Array> {
        self.reduce_drop(ReduceOp::Mean, 1)
    }

    /// Cumulative sum over the column-major flattening (a vector), as R's `cumsum`.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let m = Array::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// assert_eq!(m.cumsum()?.to_vec::<f64>()?, vec![1.0, 3.0, 6.0, 10.0]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn cumsum(&self) -> Result<Array> {
        Array::from_op(
            Cumulative {
                product: false,
                axis: None,
            },
            vec![self.clone()],
        )
    }

    /// Cumulative product over the column-major flattening (a vector).
    pub fn cumprod(&self) -> Result<Array> {
        Array::from_op(
            Cumulative {
                product: true,
                axis: None,
            },
            vec![self.product_operand()?],
        )
    }

    /// The operand of a cumulative product: i64 and bool data converted to
    /// f64 first (the product's dtype, each value rounded as the CPU's scan
    /// rounds it), so every backend's scan sees float data of the result
    /// dtype and the conversion runs where the data lives (on a device, a
    /// fused cast), as for matrix products.
    fn product_operand(&self) -> Result<Array> {
        match self.dtype() {
            DType::I64 | DType::Bool => self.astype(DType::F64),
            _ => Ok(self.clone()),
        }
    }

    /// Cumulative sum along `axis` (same shape).
    pub fn cumsum_axis(&self, axis: usize) -> Result<Array> {
        Array::from_op(
            Cumulative {
                product: false,
                axis: Some(axis),
            },
            vec![self.clone()],
        )
    }

    /// Cumulative product along `axis` (same shape).
    pub fn cumprod_axis(&self, axis: usize) -> Result<Array> {
        Array::from_op(
            Cumulative {
                product: true,
                axis: Some(axis),
            },
            vec![self.product_operand()?],
        )
    }
}

macro_rules! reduce_methods {
    ($($all:ident, $axis:ident => $op:ident, $doc:literal;)*) => {
        impl Array {
            $(
                #[doc = $doc]
                #[doc = "\n\nOver all elements: a 0-d array."]
                pub fn $all(&self) -> Result<Array> {
                    self.reduce(ReduceOp::$op, None)
                }
                #[doc = $doc]
                #[doc = "\n\nAlong `axis`, which is kept with length 1."]
                pub fn $axis(&self, axis: usize) -> Result<Array> {
                    self.reduce(ReduceOp::$op, Some(axis))
                }
            )*
        }
    };
}

reduce_methods! {
    sum, sum_axis => Sum, "Sum (pairwise, accumulated in f64; i64 exactly, an error outside i64).";
    prod, prod_axis => Prod, "Product (f64; partial products never overflow, see [`crate::ops::product`]).";
    mean, mean_axis => Mean, "Arithmetic mean (NaN when empty).";
    var, var_axis => Var, "Sample variance, divisor n - 1 (NaN below two values).";
    sd, sd_axis => Sd, "Sample standard deviation.";
    min, min_axis => Min, "Minimum (NaN if any value is NaN; error when empty).";
    max, max_axis => Max, "Maximum (NaN if any value is NaN; error when empty).";
    argmin, argmin_axis => ArgMin, "0-based position of the minimum (first NaN wins).";
    argmax, argmax_axis => ArgMax, "0-based position of the maximum (first NaN wins).";
    any, any_axis => Any, "Whether any element of a bool array is true.";
    all, all_axis => All, "Whether every element of a bool array is true.";
    logsumexp, logsumexp_axis => LogSumExp, "`log(sum(exp(x)))`, computed without overflow (one pass on the GPUs: a running maximum and the sum of `exp(x - max)`).";
}

impl Array {
    /// `exp(x) / sum(exp(x))` along `axis`: `exp(x - logsumexp_axis(axis))`,
    /// two passes over `x` (the log-sum-exp, then the result), never
    /// overflowing.
    pub fn softmax_axis(&self, axis: usize) -> Result<Array> {
        (self - &self.logsumexp_axis(axis)?)?.exp()
    }

    /// `log(softmax_axis(axis))`: `x - logsumexp_axis(axis)`, two passes.
    pub fn log_softmax_axis(&self, axis: usize) -> Result<Array> {
        self - &self.logsumexp_axis(axis)?
    }
}
