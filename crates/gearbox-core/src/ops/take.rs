//! Gathering positions along an axis ([`Array::take`], R's `x[i, ]` with
//! scattered `i`) and its transpose, adding positions back
//! ([`ScatterAdd`], the gradient of a take).
//!
//! A take is a library call ([`LibraryCall::Take`]) with two inputs, the
//! array and its positions as an `i64` vector: on a device-resident array
//! it gathers on that device (data movement: it runs where its inputs
//! are), with no visit to the host. Positions are checked when the take is
//! made, so no backend ever reads outside the array; the host path checks
//! them again (an `i64` array of positions can come from anywhere inside
//! the crate). The scatter runs on the host: it exists for gradients.

use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::memory;
use crate::ops::library::LibraryCall;
use crate::shape::Shape;
use crate::{BinaryOp, ReduceOp};
use rayon::prelude::*;

/// Positions `indices` (the second input, `i64`) along an axis of the
/// first input, in the order given (repeats allowed). Made only where the
/// positions were checked against the axis ([`Array::take`], the gradient
/// of a [`ScatterAdd`]), so a device gathers without checking them again.
#[derive(Debug, Clone, Copy)]
pub struct Take {
    axis: usize,
}

impl Take {
    /// The take along `axis` (its positions checked by the caller, or by
    /// the host evaluation).
    pub(crate) fn new(axis: usize) -> Take {
        Take { axis }
    }
}

/// `op` on `values` at the positions `idx`, with `values`' precision:
/// positions are integers, so their own precision says nothing about the
/// result.
fn at_positions(op: impl Primitive + 'static, values: &Array, idx: &Array) -> Result<Array> {
    Array::from_op_with_precision(
        Arc::new(op),
        vec![values.clone(), idx.clone()],
        values.precision(),
    )
}

/// The positions of an `i64` operand, each checked against `len` (an
/// error names the first outside `0..len`).
fn positions<'a>(
    op: &'static str,
    idx: &'a HostBuffer,
    len: usize,
    shape: &Shape,
) -> Result<&'a [i64]> {
    let HostBuffer::I64(v) = idx else {
        return Err(not_positions(op, idx.dtype()));
    };
    match first_outside(v, len) {
        Some(bad) => Err(Error::IndexOutOfBounds {
            op,
            index: bad.to_string(),
            shape: shape.clone(),
        }),
        None => Ok(v),
    }
}

/// The error of `op` given positions of `dtype` (they are `i64`).
fn not_positions(op: &'static str, dtype: DType) -> Error {
    Error::InvalidArgument {
        op,
        name: "indices",
        value: format!("{dtype} array"),
        why: "positions are an i64 array".into(),
    }
}

/// The first of `positions` outside `0..len`, if any (looked for in
/// parallel, read only).
fn first_outside(positions: &[i64], len: usize) -> Option<i64> {
    let outside = |p: &i64| usize::try_from(*p).map_or(true, |p| p >= len);
    positions
        .par_chunks(crate::ops::loops::CHUNK)
        .any(|c| c.iter().any(outside))
        .then(|| positions.iter().copied().find(outside))
        .flatten()
}

/// The output spec of a take or a scatter: `x` with `axis` resized to
/// `n`, checked.
fn resized(op: &'static str, x: &Spec, idx: &Spec, axis: usize, n: usize) -> Result<Spec> {
    x.shape.check_axis(op, axis)?;
    if idx.dtype != DType::I64 || idx.shape.ndim() > 1 {
        return Err(Error::InvalidArgument {
            op,
            name: "indices",
            value: format!("{} {} array", idx.shape, idx.dtype),
            why: "positions are an i64 vector".into(),
        });
    }
    Ok(Spec::new(x.shape.with_dim(axis, n), x.dtype))
}

impl Primitive for Take {
    fn name(&self) -> &'static str {
        "take"
    }
    fn library_call(&self) -> Option<LibraryCall> {
        Some(LibraryCall::Take { axis: self.axis })
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        resized(
            "take",
            inputs[0],
            inputs[1],
            self.axis,
            inputs[1].shape.numel(),
        )
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _out: &Spec) -> Result<Arc<HostBuffer>> {
        let shape = &inputs[0].spec.shape;
        let (inner, len, outer) = shape.split_at_axis(self.axis);
        let at = positions("take", inputs[1].buf, len, shape)?;
        // Output value o is run j = (o / inner) % n of block k = o / (inner
        // n): input value (k len + at[j]) inner + o % inner. In parallel
        // chunks of the output, each walked run by run (one division per
        // chunk, not two per value: they took two thirds of the time).
        fn gather<T: crate::dtype::Element>(
            v: &[T],
            at: &[i64],
            inner: usize,
            len: usize,
            outer: usize,
        ) -> Result<Vec<T>> {
            let n = at.len();
            crate::ops::loops::fill_chunks("take", outer * n * inner, |start, chunk| {
                let (run, mut i) = (start / inner, start % inner);
                let (mut k, mut j) = (run / n, run % n);
                let mut out = chunk;
                while !out.is_empty() {
                    if inner == 1 {
                        // Single values: the rest of block k's positions.
                        let block = &v[k * len..(k + 1) * len];
                        let m = (n - j).min(out.len());
                        let (here, rest) = out.split_at_mut(m);
                        for (slot, &p) in here.iter_mut().zip(&at[j..j + m]) {
                            *slot = block[p as usize];
                        }
                        (out, j) = (rest, j + m);
                    } else {
                        // Runs of `inner` values: the rest of run j.
                        let m = (inner - i).min(out.len());
                        let from = (k * len + at[j] as usize) * inner + i;
                        let (here, rest) = out.split_at_mut(m);
                        here.copy_from_slice(&v[from..from + m]);
                        (out, i, j) = (rest, 0, j + 1);
                    }
                    if j == n {
                        (j, k) = (0, k + 1);
                    }
                }
            })
        }
        Ok(Arc::new(crate::map_buffer!(
            inputs[0].buf.as_ref(),
            v => gather(v, at, inner, len, outer)?
        )))
    }
    /// The cotangent added back at the positions taken ([`ScatterAdd`]);
    /// the positions get none.
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let x = &inputs[0];
        if !x.dtype().is_float() {
            return Ok(vec![None, None]);
        }
        let scatter = ScatterAdd {
            axis: self.axis,
            len: x.dims()[self.axis],
        };
        Ok(vec![Some(at_positions(scatter, g, &inputs[1])?), None])
    }
}

/// The transpose of a [`Take`]: an array with `len` positions along `axis`,
/// zero except that position `indices[j]` adds slice `j` of the first
/// input (repeated positions add up). A host op, made only as a take's
/// gradient (its positions are the take's, already checked).
#[derive(Debug, Clone, Copy)]
pub struct ScatterAdd {
    /// The axis scattered along.
    axis: usize,
    /// Positions along it in the result.
    len: usize,
}

impl Primitive for ScatterAdd {
    fn name(&self) -> &'static str {
        "scatter_add"
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let (g, idx) = (inputs[0], inputs[1]);
        if g.shape.ndim() > self.axis && g.shape.dims()[self.axis] != idx.shape.numel() {
            return Err(Error::ShapeMismatch {
                op: "scatter_add",
                lhs: g.shape.clone(),
                rhs: idx.shape.clone(),
                why: format!("axis {} must have one position per index", self.axis),
            });
        }
        if !g.dtype.is_float() {
            return Err(Error::InvalidArgument {
                op: "scatter_add",
                name: "values",
                value: g.dtype.to_string(),
                why: "sums are of floats".into(),
            });
        }
        resized("scatter_add", g, idx, self.axis, self.len)
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let (inner, n, outer) = inputs[0].spec.shape.split_at_axis(self.axis);
        let at = positions("scatter_add", inputs[1].buf, self.len, &out.shape)?;
        fn scatter<T: crate::dtype::Element + Default + std::ops::AddAssign>(
            v: &[T],
            at: &[i64],
            (inner, n, outer, len): (usize, usize, usize, usize),
        ) -> Result<Vec<T>> {
            let mut o = memory::filled("scatter_add", outer * len * inner, T::default())?;
            for k in 0..outer {
                for (j, &p) in at.iter().enumerate() {
                    let from = (k * n + j) * inner;
                    let to = (k * len + p as usize) * inner;
                    for i in 0..inner {
                        o[to + i] += v[from + i];
                    }
                }
            }
            Ok(o)
        }
        let dims = (inner, n, outer, self.len);
        Ok(Arc::new(match inputs[0].buf.as_ref() {
            HostBuffer::F32(v) => HostBuffer::F32(scatter(v, at, dims)?),
            HostBuffer::F64(v) => HostBuffer::F64(scatter(v, at, dims)?),
            other => {
                return Err(Error::InvalidArgument {
                    op: "scatter_add",
                    name: "values",
                    value: other.dtype().to_string(),
                    why: "sums are of floats".into(),
                })
            }
        }))
    }
    /// The cotangent taken back at the positions.
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        Ok(vec![
            Some(at_positions(Take::new(self.axis), g, &inputs[1])?),
            None,
        ])
    }
}

impl Array {
    /// Positions `indices` along `axis`, in that order (repeats allowed):
    /// R's `x[i, ]` (axis 0) or `x[, j]` (axis 1), NumPy's `take`. On a
    /// device-resident array the gather runs on that device. The result
    /// keeps the array's precision. A position outside the axis is an
    /// error naming it.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let m = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]])?;
    /// let picked = m.take(0, &[2, 0, 2])?;
    /// assert_eq!(picked.dims(), &[3, 2]);
    /// assert_eq!(picked.to_vec::<f64>()?, vec![5.0, 1.0, 5.0, 6.0, 2.0, 6.0]);
    /// assert!(m.take(0, &[3]).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn take(&self, axis: usize, indices: &[usize]) -> Result<Array> {
        self.shape().check_axis("take", axis)?;
        let len = self.dims()[axis];
        // Checked and copied in one pass, in parallel chunks: a large
        // selection's copy (and the page faults of its fresh memory) is
        // most of a device take's host time (10^6 positions: about 1 ms
        // with a separate pass for the check).
        let out_of_range = std::sync::atomic::AtomicBool::new(false);
        let positions = crate::ops::loops::fill_chunks("take", indices.len(), |start, chunk| {
            let mut over = false;
            for (slot, &p) in chunk.iter_mut().zip(&indices[start..]) {
                over |= p >= len;
                *slot = p as i64;
            }
            if over {
                out_of_range.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        })?;
        if out_of_range.into_inner() {
            let bad = indices.iter().find(|&&p| p >= len).copied().unwrap_or(len);
            return Err(self.outside_axis(bad, axis));
        }
        let idx = Array::from_vec([indices.len()], positions)?;
        at_positions(Take::new(axis), self, &idx)
    }

    /// [`Array::take`] at the positions held by `positions`, an `i64`
    /// vector (zero-based), wherever it lives: NumPy's `take` or PyTorch's
    /// `index_select` with an index array. Positions the host holds are
    /// checked there (in parallel, read only); positions only a device
    /// holds are checked on it (a reduction and one value read back), so
    /// neither is copied. A position outside the axis is an error naming
    /// it.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let m = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]])?;
    /// let at = Array::from_vec([3], vec![2i64, 0, 2])?;
    /// assert_eq!(m.take_at(0, &at)?.to_vec::<f64>()?, vec![5.0, 1.0, 5.0, 6.0, 2.0, 6.0]);
    /// assert!(m.take_at(0, &Array::from_vec([1], vec![-1i64])?).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn take_at(&self, axis: usize, positions: &Array) -> Result<Array> {
        self.shape().check_axis("take", axis)?;
        resized(
            "take",
            self.spec(),
            positions.spec(),
            axis,
            positions.numel(),
        )?;
        let len = self.dims()[axis];
        positions.eval()?;
        let outside = match positions.host_value() {
            Some(host) => match host.as_ref() {
                HostBuffer::I64(v) => first_outside(v, len),
                other => return Err(not_positions("take", other.dtype())),
            },
            None => {
                let below = positions.binary_scalar(BinaryOp::Lt, 0.0)?;
                let above = positions.binary_scalar(BinaryOp::Ge, len as f64)?;
                let any = below
                    .binary(BinaryOp::Or, &above)?
                    .reduce(ReduceOp::Any, None)?;
                if any.item()? != 0.0 {
                    first_outside(&positions.to_vec::<i64>()?, len)
                } else {
                    None
                }
            }
        };
        if let Some(bad) = outside {
            return Err(self.outside_axis(bad, axis));
        }
        at_positions(Take::new(axis), self, positions)
    }

    /// The error of a take at position `bad`, outside `axis`.
    fn outside_axis(&self, bad: impl std::fmt::Display, axis: usize) -> Error {
        Error::IndexOutOfBounds {
            op: "take",
            index: format!("{bad} on axis {axis}"),
            shape: self.shape().clone(),
        }
    }
}
