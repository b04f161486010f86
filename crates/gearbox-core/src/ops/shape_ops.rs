//! Operations that move or reinterpret data: identity, reshape, squeeze,
//! broadcasting, slicing, concatenation and casting (transposes and flips
//! live in [`crate::ops::permute`], re-exported here).
//!
//! Reshape and squeeze share the input buffer (storage is column-major, so
//! they only reinterpret it); the others copy. `squeeze` is a reshape (and
//! differentiates as one). Slice and concat are also
//! library calls ([`LibraryCall::Slice`], [`LibraryCall::Concat`]): on a
//! device-resident input they copy on that device instead of visiting the host.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::KernelOp;
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::memory;
use crate::ops::library::LibraryCall;
use crate::shape::Shape;

pub use crate::ops::permute::{Flip, Transpose};

/// Passes its input through unchanged: to re-tag precision or mark a
/// traced argument ([`Identity::PASS`], the cotangent passes through), or
/// to stop gradients ([`Identity::STOP_GRADIENT`]: no vjp, so autodiff
/// treats the value as a constant; a softmax's row maximum, whose gradient
/// cancels exactly, then needs no argmax).
#[derive(Debug, Clone, Copy)]
pub struct Identity {
    /// Whether the cotangent passes through (false: a constant to autodiff).
    pub gradient: bool,
}

impl Identity {
    /// The identity gradients flow through.
    pub const PASS: Identity = Identity { gradient: true };
    /// The identity that stops gradients.
    pub const STOP_GRADIENT: Identity = Identity { gradient: false };
}

impl Primitive for Identity {
    fn name(&self) -> &'static str {
        if self.gradient {
            "identity"
        } else {
            "stop_gradient"
        }
    }
    fn kernel_op(&self) -> Option<KernelOp> {
        Some(KernelOp::Identity)
    }
    fn is_view(&self) -> bool {
        true
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        Ok(inputs[0].clone())
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _out: &Spec) -> Result<Arc<HostBuffer>> {
        Ok(Arc::clone(inputs[0].buf))
    }
    fn vjp(&self, _: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        Ok(vec![self.gradient.then(|| g.clone())])
    }
}

/// Reinterprets the column-major data under a new shape with the same count.
#[derive(Debug, Clone)]
pub struct Reshape(pub Shape);

impl Primitive for Reshape {
    fn name(&self) -> &'static str {
        "reshape"
    }
    fn is_view(&self) -> bool {
        true
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let from = &inputs[0].shape;
        // First, so that a count that overflows is named as such rather
        // than compared.
        self.0.check_size("reshape", inputs[0].dtype)?;
        if from.numel() != self.0.numel() {
            return Err(Error::ShapeMismatch {
                op: "reshape",
                lhs: from.clone(),
                rhs: self.0.clone(),
                why: format!("{} elements cannot become {}", from.numel(), self.0.numel()),
            });
        }
        Ok(Spec::new(self.0.clone(), inputs[0].dtype))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _out: &Spec) -> Result<Arc<HostBuffer>> {
        Ok(Arc::clone(inputs[0].buf))
    }
    /// The cotangent in the input's shape.
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        Ok(vec![Some(g.reshape(inputs[0].dims().to_vec())?)])
    }
}

/// Broadcasts the input to a shape (MATLAB's implicit expansion, see
/// [`Shape`]): an elementwise op, so it fuses with the work around it (a
/// fused kernel loads the input with broadcasting; nothing is stored at
/// the larger shape unless asked for).
#[derive(Debug, Clone)]
pub struct BroadcastTo(pub Shape);

impl Primitive for BroadcastTo {
    fn name(&self) -> &'static str {
        "broadcast_to"
    }
    fn kernel_op(&self) -> Option<KernelOp> {
        Some(KernelOp::Identity)
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let s = &inputs[0].shape;
        if Shape::broadcast_for("broadcast_to", s, &self.0)? != self.0 {
            return Err(Error::ShapeMismatch {
                op: "broadcast_to",
                lhs: s.clone(),
                rhs: self.0.clone(),
                why: "the input does not broadcast to this shape (it would grow it)".into(),
            });
        }
        Ok(Spec::new(self.0.clone(), inputs[0].dtype))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let from = &inputs[0].spec.shape;
        if from.numel() == out.shape.numel() {
            return Ok(Arc::clone(inputs[0].buf));
        }
        fn spread<T: crate::dtype::Element>(v: &[T], from: &Shape, to: &Shape) -> Result<Vec<T>> {
            crate::ops::loops::fill_chunks("broadcast_to", to.numel(), |start, chunk| {
                let mut w = crate::shape::BroadcastWalker::new(from, to, start);
                for o in chunk.iter_mut() {
                    *o = v[w.offset()];
                    w.advance();
                }
            })
        }
        Ok(Arc::new(
            crate::map_buffer!(inputs[0].buf.as_ref(), v => spread(v, from, &out.shape)?),
        ))
    }
    /// The cotangent summed back over the broadcast axes
    /// ([`crate::autodiff::sum_to`]).
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let x = &inputs[0];
        if !x.dtype().is_float() {
            return Ok(vec![None]);
        }
        Ok(vec![Some(crate::autodiff::sum_to(g, x.shape())?)])
    }
}

/// Takes `range` along `axis`.
#[derive(Debug, Clone)]
pub struct Slice {
    /// The axis sliced.
    pub axis: usize,
    /// The half-open range of positions kept.
    pub range: Range<usize>,
}

impl Primitive for Slice {
    fn name(&self) -> &'static str {
        "slice"
    }
    fn library_call(&self) -> Option<LibraryCall> {
        Some(LibraryCall::Slice {
            axis: self.axis,
            start: self.range.start,
            end: self.range.end,
        })
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let s = &inputs[0].shape;
        s.check_axis("slice", self.axis)?;
        if self.range.start > self.range.end || self.range.end > s.dims()[self.axis] {
            return Err(Error::IndexOutOfBounds {
                op: "slice",
                index: format!("{:?} on axis {}", self.range, self.axis),
                shape: s.clone(),
            });
        }
        Ok(Spec::new(
            s.with_dim(self.axis, self.range.len()),
            inputs[0].dtype,
        ))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _out: &Spec) -> Result<Arc<HostBuffer>> {
        let s = &inputs[0].spec.shape;
        let (inner, len, outer) = s.split_at_axis(self.axis);
        let (a, b) = (self.range.start, self.range.end);
        fn pick<T: Copy>(
            v: &[T],
            inner: usize,
            len: usize,
            outer: usize,
            a: usize,
            b: usize,
        ) -> Result<Vec<T>> {
            let mut o = memory::with_capacity("slice", outer * (b - a) * inner)?;
            for k in 0..outer {
                let base = k * inner * len;
                o.extend_from_slice(&v[base + a * inner..base + b * inner]);
            }
            Ok(o)
        }
        Ok(Arc::new(
            crate::map_buffer!(inputs[0].buf.as_ref(), v => pick(v, inner, len, outer, a, b)?),
        ))
    }
    /// The cotangent scattered back into the input's shape: zeros before
    /// and after the range along the axis, joined to it ([`Concat`]).
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let x = &inputs[0];
        if !x.dtype().is_float() {
            return Ok(vec![None]);
        }
        let len = x.dims()[self.axis];
        let zeros = |n: usize| Array::zeros(x.shape().with_dim(self.axis, n), g.dtype());
        let mut parts = Vec::with_capacity(3);
        if self.range.start > 0 {
            parts.push(zeros(self.range.start)?);
        }
        parts.push(g.clone());
        if self.range.end < len {
            parts.push(zeros(len - self.range.end)?);
        }
        let d = if parts.len() == 1 {
            g.clone()
        } else {
            Array::from_op(Concat(self.axis), parts)?
        };
        Ok(vec![Some(d)])
    }
}

/// Joins arrays along `axis`; all other dimensions must agree.
#[derive(Debug, Clone, Copy)]
pub struct Concat(pub usize);

impl Primitive for Concat {
    fn name(&self) -> &'static str {
        "concat"
    }
    fn library_call(&self) -> Option<LibraryCall> {
        Some(LibraryCall::Concat { axis: self.0 })
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let axis = self.0;
        let first = inputs.first().ok_or_else(|| Error::InvalidArgument {
            op: "concat",
            name: "arrays",
            value: "[]".into(),
            why: "need at least one array".into(),
        })?;
        let ndim = inputs
            .iter()
            .map(|s| s.shape.ndim())
            .max()
            .unwrap_or(0)
            .max(axis + 1);
        let padded = |s: &Shape| Shape::new((0..ndim).map(|i| s.dim(i)).collect());
        let base = padded(&first.shape);
        let mut total: usize = 0;
        let mut dtype = first.dtype;
        for s in inputs {
            let p = padded(&s.shape);
            if (0..ndim).any(|i| i != axis && p.dims()[i] != base.dims()[i]) {
                return Err(Error::ShapeMismatch {
                    op: "concat",
                    lhs: first.shape.clone(),
                    rhs: s.shape.clone(),
                    why: format!("all dimensions but axis {axis} must agree"),
                });
            }
            total = total
                .checked_add(p.dims()[axis])
                .ok_or_else(|| Error::BadShape {
                    op: "concat",
                    shape: s.shape.clone(),
                    why: format!("the result's length along axis {axis} overflows"),
                })?;
            dtype = DType::promote(dtype, s.dtype);
        }
        let shape = base.with_dim(axis, total);
        shape.check_size("concat", dtype)?;
        Ok(Spec::new(shape, dtype))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let (inner, _, outer) = out.shape.split_at_axis(self.0);
        // `Array::concat` casts every part first, so these are borrowed, not copied.
        let parts: Vec<Cow<'_, HostBuffer>> = inputs
            .iter()
            .map(|o| {
                if o.buf.dtype() == out.dtype {
                    Ok(Cow::Borrowed(o.buf.as_ref()))
                } else {
                    o.buf.cast(out.dtype).map(Cow::Owned)
                }
            })
            .collect::<Result<_>>()?;
        let lens: Vec<usize> = inputs
            .iter()
            .map(|o| o.spec.shape.dim(self.0) * inner)
            .collect();
        macro_rules! join {
            ($variant:ident) => {{
                let mut o = memory::with_capacity("concat", out.shape.numel())?;
                for k in 0..outer {
                    for (p, &len) in parts.iter().zip(&lens) {
                        let HostBuffer::$variant(v) = p.as_ref() else {
                            unreachable!("cast to the output dtype")
                        };
                        o.extend_from_slice(&v[k * len..(k + 1) * len]);
                    }
                }
                HostBuffer::$variant(o)
            }};
        }
        Ok(Arc::new(match out.dtype {
            DType::F64 => join!(F64),
            DType::F32 => join!(F32),
            DType::I64 => join!(I64),
            DType::Bool => join!(Bool),
        }))
    }
    /// Each input's part of the cotangent: its range along the axis
    /// ([`Slice`]), reshaped to the input's shape where the input lacks
    /// trailing dimensions (they counted as 1).
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let mut start = 0;
        inputs
            .iter()
            .map(|x| {
                let len = x.shape().dim(self.0);
                let range = start..start + len;
                start += len;
                if !x.dtype().is_float() {
                    return Ok(None);
                }
                let part = g.slice(self.0, range)?;
                Ok(Some(if part.shape() == x.shape() {
                    part
                } else {
                    part.reshape(x.dims().to_vec())?
                }))
            })
            .collect()
    }
}

/// Converts to another dtype (see [`HostBuffer::cast`] for the rules; a float
/// that i64 cannot hold is an error, see [`crate::ops::integer`]).
#[derive(Debug, Clone, Copy)]
pub struct Cast(pub DType);

impl Primitive for Cast {
    fn name(&self) -> &'static str {
        "astype"
    }
    fn kernel_op(&self) -> Option<KernelOp> {
        Some(KernelOp::Cast(self.0))
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        Ok(Spec::new(inputs[0].shape.clone(), self.0))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        if inputs[0].buf.dtype() == out.dtype {
            return Ok(Arc::clone(inputs[0].buf));
        }
        Ok(Arc::new(crate::ops::integer::checked_cast(
            inputs[0].buf,
            out.dtype,
        )?))
    }
    /// The cotangent in the input's dtype; none into or out of integers
    /// and bools (they carry no gradient).
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let x = &inputs[0];
        if !x.dtype().is_float() || !self.0.is_float() {
            return Ok(vec![None]);
        }
        Ok(vec![Some(g.astype(x.dtype())?)])
    }
}

impl Array {
    /// The same values, treated by [`crate::autodiff`] as a constant (no
    /// gradient flows through it); free to evaluate (a view).
    pub fn stop_gradient(&self) -> Result<Array> {
        Array::from_op(Identity::STOP_GRADIENT, vec![self.clone()])
    }

    /// The same values under a new shape (column-major order, so no copy).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let v = Array::from_vec([6], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let m = v.reshape([2, 3])?;
    /// assert_eq!(m.get(&[1, 0])?, 2.0);
    /// assert!(v.reshape([4, 2]).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Array> {
        Array::from_op(Reshape(shape.into()), vec![self.clone()])
    }

    /// Drops every axis of length 1 (a [`Reshape`]).
    pub fn squeeze(&self) -> Result<Array> {
        let dims: Vec<usize> = self.dims().iter().copied().filter(|&d| d != 1).collect();
        self.reshape(dims)
    }

    /// The values broadcast to `shape` (MATLAB's implicit expansion: each
    /// axis of length 1, or missing past the last, repeats); an error when
    /// the array does not broadcast to exactly `shape`.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let col = Array::from_vec([2, 1], vec![1.0, 2.0])?;
    /// let m = col.broadcast_to([2, 3])?;
    /// assert_eq!(m.to_vec::<f64>()?, vec![1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    /// assert!(m.broadcast_to([2, 1]).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn broadcast_to(&self, shape: impl Into<Shape>) -> Result<Array> {
        let shape = shape.into();
        if &shape == self.shape() {
            return Ok(self.clone());
        }
        Array::from_op(BroadcastTo(shape), vec![self.clone()])
    }

    /// Positions `range` along `axis`.
    pub fn slice(&self, axis: usize, range: Range<usize>) -> Result<Array> {
        Array::from_op(Slice { axis, range }, vec![self.clone()])
    }

    /// Rows `range` of a matrix.
    pub fn rows(&self, range: Range<usize>) -> Result<Array> {
        self.slice(0, range)
    }

    /// Columns `range` of a matrix.
    pub fn cols(&self, range: Range<usize>) -> Result<Array> {
        self.slice(1, range)
    }

    /// Joins arrays along `axis`; dimensions past an array's last count as 1.
    /// Mixed dtypes promote: each input is cast to the result dtype first, so
    /// the join itself is a plain copy (which a device runs where the parts are).
    pub fn concat(arrays: &[&Array], axis: usize) -> Result<Array> {
        let specs: Vec<&Spec> = arrays.iter().map(|a| a.spec()).collect();
        let dtype = Concat(axis).output_spec(&specs)?.dtype;
        let parts = arrays
            .iter()
            .map(|a| {
                if a.dtype() == dtype {
                    Ok((*a).clone())
                } else {
                    a.astype(dtype)
                }
            })
            .collect::<Result<Vec<Array>>>()?;
        Array::from_op(Concat(axis), parts)
    }

    /// Joins matrices (or column vectors) side by side, as R's `cbind`.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let a = Array::from_vec([2], vec![1.0, 2.0])?;
    /// let b = Array::from_vec([2], vec![3.0, 4.0])?;
    /// let m = Array::cbind(&[&a, &b])?;
    /// assert_eq!(m.dims(), &[2, 2]);
    /// assert_eq!(m.get(&[0, 1])?, 3.0);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn cbind(arrays: &[&Array]) -> Result<Array> {
        Self::concat(arrays, 1)
    }

    /// Stacks matrices on top of each other, as R's `rbind`; a vector is a row.
    pub fn rbind(arrays: &[&Array]) -> Result<Array> {
        let rows: Vec<Array> = arrays
            .iter()
            .map(|a| {
                if a.ndim() <= 1 {
                    a.t()
                } else {
                    Ok((*a).clone())
                }
            })
            .collect::<Result<_>>()?;
        Self::concat(&rows.iter().collect::<Vec<_>>(), 0)
    }

    /// Converts to `dtype`. Floats to integers truncate toward zero; a float
    /// that i64 cannot hold (NaN, ±Inf, outside `[-2^63, 2^63)`) is an error
    /// when the result is evaluated, naming its position.
    ///
    /// ```
    /// use gearbox_core::{Array, DType};
    /// let x = Array::from_vec([3], vec![2.7, -2.7, 1e15])?;
    /// assert_eq!(x.astype(DType::I64)?.to_vec::<i64>()?, vec![2, -2, 1_000_000_000_000_000]);
    /// let nan = Array::from_vec([2], vec![1.0, f64::NAN])?.astype(DType::I64)?;
    /// assert!(nan.to_vec::<i64>().is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn astype(&self, dtype: DType) -> Result<Array> {
        Array::from_op(Cast(dtype), vec![self.clone()])
    }
}
