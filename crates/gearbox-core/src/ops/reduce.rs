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
//!   fixed-size chunks whose partial sums combine pairwise, so the result does
//!   not depend on the number of threads;
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
//! - empty inputs: `sum` is 0, `prod` is 1, `mean`, `var`, `sd` are NaN, `any`
//!   is false, `all` is true; `min`, `max`, `argmin` and `argmax` are an error;
//! - `cumsum`/`cumprod` without an axis run over the column-major flattening,
//!   as R does, and return a vector.

use std::sync::Arc;

use rayon::prelude::*;

use crate::buffer::HostBuffer;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::memory;
use crate::ops::binary::BinaryOp;
use crate::ops::integer;
use crate::ops::product::{self, Scaled};
use crate::shape::Shape;

mod grad;

use grad::{cumulative_vjp, reduce_vjp};

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
        }
    }

    /// How the reduction accumulates when its accumulator is one value
    /// (`None` for those whose accumulator holds several: `var` and `sd`
    /// a count, mean and sum of squared deviations merged by Chan's rule,
    /// `argmin` and `argmax` a value and its position). The CPU
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
            Var | Sd | ArgMin | ArgMax => return None,
        };
        Some(Monoid {
            combine,
            identity,
            divides_by_count: self == Mean,
        })
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
            Prod | Mean | Var | Sd => input.float_of(),
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

    fn needs_elements(self) -> bool {
        matches!(
            self,
            ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMin | ReduceOp::ArgMax
        )
    }

    /// Reduces one lane (`len` values read through `at`) to f64.
    fn lane(self, len: usize, at: &dyn Fn(usize) -> f64) -> f64 {
        use ReduceOp::*;
        match self {
            Sum => pairwise(0, len, at),
            Prod => product::product((0..len).map(at)),
            Mean => mean(len, at),
            Var => variance(len, at),
            Sd => variance(len, at).sqrt(),
            Min | Max => {
                let mut best = at(0);
                for i in 1..len {
                    let v = at(i);
                    if v.is_nan() {
                        return v;
                    }
                    if (self == Min && below(v, best)) || (self == Max && below(best, v)) {
                        best = v;
                    }
                }
                best
            }
            ArgMin | ArgMax => {
                let (mut best, mut arg) = (at(0), 0);
                if best.is_nan() {
                    return 0.0;
                }
                for i in 1..len {
                    let v = at(i);
                    if v.is_nan() {
                        return i as f64;
                    }
                    if (self == ArgMin && v < best) || (self == ArgMax && v > best) {
                        best = v;
                        arg = i;
                    }
                }
                arg as f64
            }
            Any => (0..len).any(|i| at(i) != 0.0) as u8 as f64,
            All => (0..len).all(|i| at(i) != 0.0) as u8 as f64,
        }
    }
}

/// `a < b`, with `-0.0` below `+0.0` (IEEE 754-2019 `minimum`/`maximum`),
/// so that the min or max of a lane holding both zeros does not depend on
/// the order the lane is read in (the fused kernels read it in another).
pub(crate) fn below(a: f64, b: f64) -> bool {
    a < b || (a == 0.0 && b == 0.0 && a.is_sign_negative() && b.is_sign_positive())
}

/// Values summed directly before pairwise combination.
const PAIRWISE_BLOCK: usize = 128;
/// Lanes longer than this are split into chunks summed in parallel.
const PAR_LANE: usize = 1 << 16;

/// Pairwise sum of `at(lo..hi)`. Each block starts from `+0.0`, as R's
/// `sum` does (and the fused kernels): the sum of nothing, or of negative
/// zeros only, is `+0.0` (`Iterator::sum` starts from `-0.0`).
fn pairwise(lo: usize, hi: usize, at: &dyn Fn(usize) -> f64) -> f64 {
    if hi - lo <= PAIRWISE_BLOCK {
        return (lo..hi).map(at).fold(0.0, |s, x| s + x);
    }
    let mid = lo + (hi - lo) / 2;
    pairwise(lo, mid, at) + pairwise(mid, hi, at)
}

fn mean(len: usize, at: &dyn Fn(usize) -> f64) -> f64 {
    if len == 0 {
        return f64::NAN;
    }
    let m = pairwise(0, len, at) / len as f64;
    if !m.is_finite() {
        return m;
    }
    m + pairwise(0, len, &|i| at(i) - m) / len as f64
}

fn variance(len: usize, at: &dyn Fn(usize) -> f64) -> f64 {
    if len < 2 {
        return f64::NAN;
    }
    let m = mean(len, at);
    let dev = pairwise(0, len, &|i| at(i) - m);
    let ss = pairwise(0, len, &|i| (at(i) - m) * (at(i) - m));
    (ss - dev * dev / len as f64) / (len - 1) as f64
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
        let s = &inputs[0].spec.shape;
        let (inner, len, outer) = match self.axis {
            None => (1, s.numel(), 1),
            Some(a) => s.split_at_axis(a),
        };
        if let HostBuffer::I64(v) = inputs[0].buf.as_ref() {
            if let Some(exact) = integer::reduce_i64(self.op, v, (inner, len, outer), self.axis)? {
                return Ok(Arc::new(exact));
            }
        }
        let values = crate::with_buffer!(inputs[0].buf.as_ref(), v => reduce_lanes(self.op, v, inner, len, outer)?);
        Ok(Arc::new(to_dtype(values, out.dtype)?))
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
/// values laid out in `shape`: what [`Reduce::eval_cpu`] computes, for
/// callers holding a buffer rather than an operand (the CPU interpreter,
/// closing a fused pass).
pub(crate) fn reduce_host(
    op: ReduceOp,
    axis: Option<usize>,
    values: HostBuffer,
    shape: &Shape,
) -> Result<HostBuffer> {
    let spec = Spec::new(shape.clone(), values.dtype());
    let r = Reduce { op, axis };
    let out = r.output_spec(&[&spec])?;
    let buf = Arc::new(values);
    let done = r.eval_cpu(
        &[Operand {
            buf: &buf,
            spec: &spec,
        }],
        &out,
    )?;
    Ok(Arc::try_unwrap(done).unwrap_or_else(|shared| (*shared).clone()))
}

/// Reduces the `inner * outer` lanes of a `(inner, len, outer)` layout.
fn reduce_lanes<T: Element>(
    op: ReduceOp,
    x: &[T],
    inner: usize,
    len: usize,
    outer: usize,
) -> Result<Vec<f64>> {
    if inner == 1 && outer == 1 && len >= PAR_LANE && matches!(op, ReduceOp::Sum | ReduceOp::Mean) {
        return Ok(vec![parallel_sum_or_mean(op, x)]);
    }
    if inner > 1 && matches!(op, ReduceOp::Sum | ReduceOp::Mean) {
        return strided_sums(op, x, inner, len, outer);
    }
    let lane = |l: usize| {
        let (i, o) = (l % inner, l / inner);
        let base = i + o * inner * len;
        op.lane(len, &|k| x[base + k * inner].to_f64())
    };
    let lanes = inner * outer;
    if lanes > 1 && lanes * len >= super::loops::PAR_MIN {
        memory::par_collect(op.name(), (0..lanes).into_par_iter().map(lane))
    } else {
        memory::collect(op.name(), (0..lanes).map(lane))
    }
}

/// Sum or mean of one long contiguous lane: chunks summed pairwise in
/// parallel, partial sums combined pairwise (independent of thread count).
fn parallel_sum_or_mean<T: Element>(op: ReduceOp, x: &[T]) -> f64 {
    let partial: Vec<f64> = x
        .par_chunks(PAR_LANE)
        .map(|c| pairwise(0, c.len(), &|i| c[i].to_f64()))
        .collect();
    let sum = pairwise(0, partial.len(), &|i| partial[i]);
    if op == ReduceOp::Sum {
        return sum;
    }
    let n = x.len() as f64;
    let m = sum / n;
    if !m.is_finite() {
        return m;
    }
    let dev: Vec<f64> = x
        .par_chunks(PAR_LANE)
        .map(|c| pairwise(0, c.len(), &|i| c[i].to_f64() - m))
        .collect();
    m + pairwise(0, dev.len(), &|i| dev[i]) / n
}

/// Sums (or means) along a non-leading axis: accumulates whole runs of
/// `inner` contiguous values at a time, in blocks of [`PAIRWISE_BLOCK`]
/// positions whose partial sums are then added (two-level summation).
fn strided_sums<T: Element>(
    op: ReduceOp,
    x: &[T],
    inner: usize,
    len: usize,
    outer: usize,
) -> Result<Vec<f64>> {
    // Slab `o`'s `inner` results, accumulated in place.
    let slab = |o: usize, total: &mut [f64]| -> Result<()> {
        let mut block = memory::zeroed::<f64>(op.name(), inner)?;
        for k0 in (0..len).step_by(PAIRWISE_BLOCK) {
            block.iter_mut().for_each(|b| *b = 0.0);
            for k in k0..(k0 + PAIRWISE_BLOCK).min(len) {
                let row = &x[(o * len + k) * inner..(o * len + k + 1) * inner];
                block
                    .iter_mut()
                    .zip(row)
                    .for_each(|(b, v)| *b += v.to_f64());
            }
            total.iter_mut().zip(&block).for_each(|(t, b)| *t += b);
        }
        if op == ReduceOp::Mean {
            let n = len as f64;
            total.iter_mut().for_each(|t| *t /= n);
        }
        Ok(())
    };
    let mut out = memory::zeroed::<f64>(op.name(), outer * inner)?;
    if outer > 1 && outer * inner * len >= super::loops::PAR_MIN {
        out.par_chunks_mut(inner)
            .enumerate()
            .try_for_each(|(o, total)| slab(o, total))?;
    } else {
        out.chunks_mut(inner)
            .enumerate()
            .try_for_each(|(o, total)| slab(o, total))?;
    }
    Ok(out)
}

/// f64 results in the output dtype.
fn to_dtype(values: Vec<f64>, dtype: DType) -> Result<HostBuffer> {
    match dtype {
        DType::F64 => Ok(HostBuffer::F64(values)),
        other => HostBuffer::F64(values).cast(other),
    }
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
        if let (false, HostBuffer::I64(v)) = (self.product, &buf.cast(out.dtype)?) {
            // Integer sums are exact: running totals in i128, an error where
            // one leaves i64.
            let totals = scan(
                self.name(),
                v,
                (inner, len, outer),
                0i128,
                |a, b| a + i128::from(b),
                |a| a,
            )?;
            return Ok(Arc::new(HostBuffer::I64(integer::narrow_running_sums(
                &totals,
            )?)));
        }
        let x = buf.to_f64_vec()?;
        let y = if self.product {
            let step = |p: Scaled, v: f64| p.times(Scaled::of(v));
            scan(
                self.name(),
                &x,
                (inner, len, outer),
                Scaled::ONE,
                step,
                Scaled::value,
            )?
        } else {
            scan(
                self.name(),
                &x,
                (inner, len, outer),
                0.0,
                |a, b| a + b,
                |a| a,
            )?
        };
        Ok(Arc::new(to_dtype(y, out.dtype)?))
    }
}

/// Inclusive scan of every lane of an `(inner, len, outer)` layout: running
/// accumulators `acc = f(acc, x)` from `init`, each position getting
/// `value(acc)`.
fn scan<T: Copy, A: Copy, U: Copy + Default>(
    op: &str,
    x: &[T],
    (inner, len, outer): (usize, usize, usize),
    init: A,
    f: impl Fn(A, T) -> A,
    value: impl Fn(A) -> U,
) -> Result<Vec<U>> {
    let mut y = memory::repeated(op, x.len(), U::default())?;
    for o in 0..outer {
        let mut acc = memory::repeated(op, inner, init)?;
        for k in 0..len {
            let base = (o * len + k) * inner;
            for i in 0..inner {
                acc[i] = f(acc[i], x[base + i]);
                y[base + i] = value(acc[i]);
            }
        }
    }
    Ok(y)
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
            vec![self.clone()],
        )
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
            vec![self.clone()],
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
}
