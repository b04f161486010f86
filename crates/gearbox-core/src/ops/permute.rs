//! Axis permutations and reversals ([`Array::transpose`], [`Array::t`],
//! [`Array::flip`]): their primitives ([`Transpose`], [`Flip`] and the
//! general [`Permute`]), the one library call they all make
//! ([`LibraryCall::Permute`], described by an [`AxisOrder`]), and the copy
//! that call is, as plain data ([`StridedCopy`]) with its host evaluation.
//!
//! Output axis `i` is input axis `perm[i]`, its positions reversed where
//! the order flips it. Storage is column-major, so with `s` the input's
//! strides and `d` the output's dimensions, output element `o = (o_0, ...,
//! o_{n-1})` reads input element
//!
//! ```text
//! base + sum_i o_i * stride_i,   stride_i = ±s[perm[i]] (− where flipped),
//! base = sum over flipped i of (d_i − 1) * s[perm[i]].
//! ```
//!
//! [`StridedCopy`] keeps that form with axes of length 1 dropped and
//! neighbours that the input walks as one axis merged, so every backend
//! sees the fewest axes (a flip of every axis is one reversed run; a
//! permutation that keeps neighbours together is a 2-D transpose). On a
//! device-resident input the call copies on that device (data movement:
//! it runs where its input is), with no visit to the host; see
//! [`crate::runtime::copies::permute_launch`] for the kernels' plan. The
//! host evaluation is parallel and blocked, so a 2-D transpose reads and
//! writes whole cache lines.

use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::buffer::HostBuffer;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::memory;
use crate::ops::library::LibraryCall;
use crate::shape::Shape;

/// A permutation of up to [`AxisOrder::MAX_AXES`] axes with some output
/// axes reversed, as plain data (a [`LibraryCall::Permute`] carries it):
/// output axis `i` is input axis `axis(i)`, reversed when `flipped(i)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AxisOrder {
    len: u8,
    axes: [u8; AxisOrder::MAX_AXES],
    flips: u16,
}

impl AxisOrder {
    /// The most axes an order holds; arrays of more dimensions are
    /// permuted on the host only.
    pub const MAX_AXES: usize = 16;

    /// The order of no axes (a placeholder, as in [`LibraryCall::ALL`]).
    pub const EMPTY: AxisOrder = AxisOrder {
        len: 0,
        axes: [0; AxisOrder::MAX_AXES],
        flips: 0,
    };

    /// Output axis `i` is input axis `perm[i]`, reversed where
    /// `flipped[i]`; `None` when `perm` has more than
    /// [`AxisOrder::MAX_AXES`] axes, is not a permutation of `0..len`, or
    /// `flipped` has another length.
    pub fn new(perm: &[usize], flipped: &[bool]) -> Option<AxisOrder> {
        if perm.len() > Self::MAX_AXES || flipped.len() != perm.len() || !is_permutation(perm) {
            return None;
        }
        let mut order = AxisOrder {
            len: perm.len() as u8,
            ..Self::EMPTY
        };
        for (i, (&p, &f)) in perm.iter().zip(flipped).enumerate() {
            order.axes[i] = p as u8;
            order.flips |= u16::from(f) << i;
        }
        Some(order)
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.len as usize
    }

    /// The input axis output axis `i` reads.
    pub fn axis(&self, i: usize) -> usize {
        self.axes[i] as usize
    }

    /// Whether output axis `i` is reversed.
    pub fn flipped(&self, i: usize) -> bool {
        self.flips >> i & 1 == 1
    }

    /// The permutation, output axis by output axis.
    pub fn perm(&self) -> Vec<usize> {
        (0..self.ndim()).map(|i| self.axis(i)).collect()
    }

    /// Which output axes are reversed.
    pub fn flips(&self) -> Vec<bool> {
        (0..self.ndim()).map(|i| self.flipped(i)).collect()
    }

    /// The op's name: `flip` when it only reverses axes, `transpose` when
    /// it only permutes them (or does nothing), `permute` when both.
    pub fn op_name(&self) -> &'static str {
        if self.flips == 0 {
            "transpose"
        } else if (0..self.ndim()).all(|i| self.axis(i) == i) {
            "flip"
        } else {
            "permute"
        }
    }
}

/// Whether `perm` holds each of `0..perm.len()` once.
fn is_permutation(perm: &[usize]) -> bool {
    let mut seen = vec![false; perm.len()];
    perm.iter()
        .all(|&p| p < perm.len() && !std::mem::replace(&mut seen[p], true))
}

/// The copy a permutation with reversals makes, in its simplest form:
/// output element `o`, in column-major order over `dims`, reads input
/// element `base + sum_k o_k * strides[k]`. Axes of length 1 are dropped
/// and neighbours merged where `strides[k + 1] == strides[k] * dims[k]`, so
/// an empty list is a copy of one element (or of none, when `numel` is 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedCopy {
    /// Lengths of the output axes kept, in output order.
    pub dims: Vec<usize>,
    /// Input stride of each (negative where reversed).
    pub strides: Vec<isize>,
    /// The input element output element 0 reads.
    pub base: usize,
    /// Elements copied.
    pub numel: usize,
}

impl StridedCopy {
    /// The copy that permutes an input of `shape` by `perm` (output axis
    /// `i` is input axis `perm[i]`), reversing output axis `i` where
    /// `flipped[i]`. `perm` must be a permutation of the input's axes and
    /// `flipped` as long.
    pub fn new(shape: &Shape, perm: &[usize], flipped: &[bool]) -> StridedCopy {
        let (in_dims, in_strides) = (shape.dims(), shape.strides());
        let numel = shape.numel();
        let mut copy = StridedCopy {
            dims: Vec::with_capacity(perm.len()),
            strides: Vec::with_capacity(perm.len()),
            base: 0,
            numel,
        };
        if numel == 0 {
            return copy;
        }
        for (&p, &f) in perm.iter().zip(flipped) {
            let (d, s) = (in_dims[p], in_strides[p] as isize);
            if d == 1 {
                continue;
            }
            let stride = if f {
                copy.base += (d - 1) * s as usize;
                -s
            } else {
                s
            };
            match (copy.dims.last_mut(), copy.strides.last()) {
                (Some(last), Some(&ls)) if ls * *last as isize == stride => *last *= d,
                _ => {
                    copy.dims.push(d);
                    copy.strides.push(stride);
                }
            }
        }
        copy
    }

    /// The copy of a [`LibraryCall::Permute`] of an input of `shape`
    /// (`order` of as many axes).
    pub fn of_order(shape: &Shape, order: AxisOrder) -> StridedCopy {
        StridedCopy::new(shape, &order.perm(), &order.flips())
    }

    /// The output axis the input walks in order (stride ±1), if any: the
    /// one that reads contiguous runs.
    pub fn unit_axis(&self) -> Option<usize> {
        self.strides.iter().position(|s| s.unsigned_abs() == 1)
    }

    /// Carries out the copy on host values `v` (the input), in parallel
    /// chunks of whole output columns (runs along output axis 0). Where
    /// axis 0 is strided, each chunk moves blocks of `BLOCK x BLOCK`, so
    /// the input's lines are read whole while they are in cache.
    pub fn apply<T: Element>(&self, op: &str, v: &[T]) -> Result<Vec<T>> {
        let n = self.numel;
        let mut out: Vec<T> = memory::zeroed(op, n)?;
        if n == 0 {
            return Ok(out);
        }
        if self.dims.is_empty() {
            out[0] = v[self.base];
            return Ok(out);
        }
        let a = self.dims[0];
        let cols_per_chunk = (CHUNK / a).max(1);
        let fill = |(c, chunk): (usize, &mut [T])| self.fill_columns(v, c * cols_per_chunk, chunk);
        if crate::ops::loops::worth_parallel(n, 1) {
            out.par_chunks_mut(cols_per_chunk * a)
                .enumerate()
                .for_each(fill);
        } else {
            fill((0, &mut out));
        }
        Ok(out)
    }

    /// Fills `chunk`, whole output columns from column `first` on.
    fn fill_columns<T: Copy>(&self, v: &[T], first: usize, chunk: &mut [T]) {
        let (a, s0) = (self.dims[0], self.strides[0]);
        let cols = chunk.len() / a;
        // Each column's first input element, by an odometer over axes 1...
        let rest = &self.dims[1..];
        let mut idx = vec![0usize; rest.len()];
        let mut at = self.base as isize;
        let mut c = first;
        for (k, (i, &d)) in idx.iter_mut().zip(rest).enumerate() {
            *i = c % d;
            c /= d;
            at += *i as isize * self.strides[k + 1];
        }
        let mut starts = Vec::with_capacity(cols);
        for _ in 0..cols {
            starts.push(at);
            for (k, (i, &d)) in idx.iter_mut().zip(rest).enumerate() {
                *i += 1;
                at += self.strides[k + 1];
                if *i < d {
                    break;
                }
                at -= self.strides[k + 1] * d as isize;
                *i = 0;
            }
        }
        match s0 {
            1 => {
                for (col, &s) in chunk.chunks_exact_mut(a).zip(&starts) {
                    col.copy_from_slice(&v[s as usize..s as usize + a]);
                }
            }
            -1 => {
                for (col, &s) in chunk.chunks_exact_mut(a).zip(&starts) {
                    let run = &v[s as usize + 1 - a..=s as usize];
                    for (o, x) in col.iter_mut().zip(run.iter().rev()) {
                        *o = *x;
                    }
                }
            }
            _ => {
                for c0 in (0..cols).step_by(BLOCK) {
                    let c1 = (c0 + BLOCK).min(cols);
                    for i0 in (0..a).step_by(BLOCK) {
                        let i1 = (i0 + BLOCK).min(a);
                        for (c, &s) in (c0..c1).zip(&starts[c0..c1]) {
                            let col = &mut chunk[c * a + i0..c * a + i1];
                            let mut from = s + i0 as isize * s0;
                            for o in col {
                                *o = v[from as usize];
                                from += s0;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Output elements per parallel chunk of the host copy (about).
const CHUNK: usize = 1 << 14;
/// Side of the blocks the host copy moves where output axis 0 is strided.
const BLOCK: usize = 32;

/// The output spec of `perm` applied to `x`, checked.
fn permuted_spec(op: &'static str, x: &Spec, perm: &[usize]) -> Result<Spec> {
    let s = &x.shape;
    if perm.len() != s.ndim() || !is_permutation(perm) {
        return Err(Error::InvalidArgument {
            op,
            name: "perm",
            value: format!("{perm:?}"),
            why: format!("must be a permutation of 0..{} for shape {s}", s.ndim()),
        });
    }
    Ok(Spec::new(
        Shape::new(perm.iter().map(|&p| s.dims()[p]).collect()),
        x.dtype,
    ))
}

/// The values of `input` permuted by `perm`, reversed where `flipped`.
fn permuted(
    op: &str,
    input: &Operand<'_>,
    perm: &[usize],
    flipped: &[bool],
) -> Result<Arc<HostBuffer>> {
    let copy = StridedCopy::new(&input.spec.shape, perm, flipped);
    Ok(Arc::new(
        crate::map_buffer!(input.buf.as_ref(), v => copy.apply(op, v)?),
    ))
}

/// The library call of `perm` with reversals `flipped`, when the order
/// fits one (at most [`AxisOrder::MAX_AXES`] axes).
fn call_of(perm: &[usize], flipped: &[bool]) -> Option<LibraryCall> {
    AxisOrder::new(perm, flipped).map(|order| LibraryCall::Permute { order })
}

/// The inverse of `perm`.
fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}

/// Permutes the axes: output axis `i` is input axis `perm[i]`.
#[derive(Debug, Clone)]
pub struct Transpose(pub Vec<usize>);

impl Primitive for Transpose {
    fn name(&self) -> &'static str {
        "transpose"
    }
    fn is_matrix_transpose(&self) -> bool {
        self.0 == [1, 0]
    }
    fn library_call(&self) -> Option<LibraryCall> {
        call_of(&self.0, &vec![false; self.0.len()])
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        permuted_spec("transpose", inputs[0], &self.0)
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _out: &Spec) -> Result<Arc<HostBuffer>> {
        permuted("transpose", &inputs[0], &self.0, &vec![false; self.0.len()])
    }
    /// The cotangent through the inverse permutation.
    fn vjp(&self, _: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        Ok(vec![Some(Array::from_op(
            Transpose(inverse(&self.0)),
            vec![g.clone()],
        )?)])
    }
}

/// Reverses the order of the positions along an axis (R's `rev` along one
/// axis).
#[derive(Debug, Clone, Copy)]
pub struct Flip(pub usize);

impl Flip {
    /// The identity permutation of `ndim` axes and this flip's reversals.
    fn order(&self, ndim: usize) -> (Vec<usize>, Vec<bool>) {
        (
            (0..ndim).collect(),
            (0..ndim).map(|i| i == self.0).collect(),
        )
    }
}

impl Primitive for Flip {
    fn name(&self) -> &'static str {
        "flip"
    }
    fn library_call(&self) -> Option<LibraryCall> {
        // The call needs the input's rank, which the primitive does not
        // hold: `Array::flip` makes a [`Permute`] instead; this one stays
        // for graphs built by hand.
        None
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        inputs[0].shape.check_axis("flip", self.0)?;
        Ok(inputs[0].clone())
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _out: &Spec) -> Result<Arc<HostBuffer>> {
        let (perm, flipped) = self.order(inputs[0].spec.shape.ndim());
        permuted("flip", &inputs[0], &perm, &flipped)
    }
    /// The cotangent flipped back.
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        if !inputs[0].dtype().is_float() {
            return Ok(vec![None]);
        }
        Ok(vec![Some(g.flip(self.0)?)])
    }
}

/// A permutation with reversals ([`AxisOrder`]) as one primitive: what
/// [`Array::flip`] makes, and the host reference of
/// [`LibraryCall::Permute`]. Named `flip` when it only reverses axes,
/// `transpose` when it only permutes them, `permute` otherwise.
#[derive(Debug, Clone, Copy)]
pub struct Permute(pub AxisOrder);

impl Primitive for Permute {
    fn name(&self) -> &'static str {
        self.0.op_name()
    }
    fn library_call(&self) -> Option<LibraryCall> {
        Some(LibraryCall::Permute { order: self.0 })
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        permuted_spec(self.name(), inputs[0], &self.0.perm())
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _out: &Spec) -> Result<Arc<HostBuffer>> {
        permuted(self.name(), &inputs[0], &self.0.perm(), &self.0.flips())
    }
    /// The cotangent through the inverse: reversed back along the output
    /// axes flipped, then permuted back.
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        if !inputs[0].dtype().is_float() {
            return Ok(vec![None]);
        }
        let perm = self.0.perm();
        let inv = inverse(&perm);
        // Input axis p = perm[i] was output axis i: flipped when i was.
        let flipped: Vec<bool> = inv.iter().map(|&i| self.0.flipped(i)).collect();
        let back = AxisOrder::new(&inv, &flipped).ok_or_else(|| Error::Autodiff {
            op: self.name(),
            why: "the order has too many axes".into(),
        })?;
        Ok(vec![Some(Array::from_op(Permute(back), vec![g.clone()])?)])
    }
}

impl Array {
    /// The positions along `axis` in reverse order.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let m = Array::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// assert_eq!(m.flip(0)?.to_vec::<f64>()?, vec![2.0, 1.0, 4.0, 3.0]);
    /// assert_eq!(m.flip(1)?.to_vec::<f64>()?, vec![3.0, 4.0, 1.0, 2.0]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn flip(&self, axis: usize) -> Result<Array> {
        self.shape().check_axis("flip", axis)?;
        let flip = Flip(axis);
        let (perm, flipped) = flip.order(self.ndim());
        match AxisOrder::new(&perm, &flipped) {
            Some(order) => Array::from_op(Permute(order), vec![self.clone()]),
            None => Array::from_op(flip, vec![self.clone()]),
        }
    }

    /// Permutes the axes: output axis `i` is input axis `perm[i]`.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let x = Array::from_vec([2, 3, 4], (0..24).map(f64::from).collect())?;
    /// let y = x.transpose(&[2, 0, 1])?;
    /// assert_eq!(y.dims(), &[4, 2, 3]);
    /// assert_eq!(y.get(&[3, 1, 2])?, x.get(&[1, 2, 3])?);
    /// assert!(x.transpose(&[0, 0, 1]).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn transpose(&self, perm: &[usize]) -> Result<Array> {
        Array::from_op(Transpose(perm.to_vec()), vec![self.clone()])
    }

    /// The matrix transpose. A vector of length n becomes a 1 x n row; a
    /// scalar stays a scalar; more than two dimensions is an error (use
    /// [`Array::transpose`]).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let m = Array::from_rows(&[vec![1.0, 2.0, 3.0]])?;
    /// assert_eq!(m.t()?.dims(), &[3, 1]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn t(&self) -> Result<Array> {
        match self.ndim() {
            0 => Ok(self.clone()),
            1 => self.reshape([1, self.numel()]),
            2 => self.transpose(&[1, 0]),
            _ => Err(Error::BadShape {
                op: "t",
                shape: self.shape().clone(),
                why: "t() is for matrices; use transpose(perm) for more dimensions".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::permutes::all_perms;

    /// The reference: output element by element, through its multi-index.
    fn naive(shape: &Shape, perm: &[usize], flipped: &[bool]) -> Vec<i64> {
        let out = Shape::new(perm.iter().map(|&p| shape.dim(p)).collect());
        let strides = shape.strides();
        (0..out.numel())
            .map(|mut o| {
                let mut at = 0;
                for (i, &p) in perm.iter().enumerate() {
                    let d = out.dim(i);
                    let c = o % d;
                    o /= d;
                    at += if flipped[i] { d - 1 - c } else { c } * strides[p];
                }
                at as i64
            })
            .collect()
    }

    #[test]
    fn copies_read_what_the_multi_index_says() {
        let shapes: [&[usize]; 9] = [
            &[],
            &[7],
            &[1, 1],
            &[33, 31],
            &[200, 300],
            &[3, 1, 5],
            &[4, 0, 3],
            &[5, 6, 7],
            &[2, 3, 1, 4],
        ];
        for dims in shapes {
            let shape = Shape::new(dims.to_vec());
            let v: Vec<i64> = (0..shape.numel() as i64).collect();
            let n = dims.len();
            for perm in all_perms(n) {
                for flips in 0..1u32 << n {
                    let flipped: Vec<bool> = (0..n).map(|i| flips >> i & 1 == 1).collect();
                    let copy = StridedCopy::new(&shape, &perm, &flipped);
                    let got = copy.apply("test", &v).unwrap();
                    assert_eq!(
                        got,
                        naive(&shape, &perm, &flipped),
                        "{dims:?} {perm:?} {flipped:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn neighbours_merge_and_unit_axes_drop() {
        let s = Shape::new(vec![4, 1, 5, 6]);
        // Identity: one run.
        let c = StridedCopy::new(&s, &[0, 1, 2, 3], &[false; 4]);
        assert_eq!((c.dims, c.strides, c.base), (vec![120], vec![1], 0));
        // Everything flipped: one reversed run.
        let c = StridedCopy::new(&s, &[0, 1, 2, 3], &[true; 4]);
        assert_eq!((c.dims, c.strides, c.base), (vec![120], vec![-1], 119));
        // Axes (2, 3) before 0: a 2-D transpose of 30 x 4.
        let c = StridedCopy::new(&s, &[2, 3, 1, 0], &[false; 4]);
        assert_eq!(
            (c.dims.clone(), c.strides.clone()),
            (vec![30, 4], vec![4, 1])
        );
        assert_eq!(c.unit_axis(), Some(1));
        let order = AxisOrder::new(&[2, 0, 1], &[true, false, false]).unwrap();
        assert_eq!(
            (order.perm(), order.flips()),
            (vec![2, 0, 1], vec![true, false, false])
        );
        assert!(AxisOrder::new(&[0, 0], &[false, false]).is_none());
        assert!(AxisOrder::new(&(0..17).collect::<Vec<_>>(), &[false; 17]).is_none());
    }

    #[test]
    fn large_copies_split_into_parallel_chunks_alike() {
        let shape = Shape::new(vec![300, 7, 41]);
        let v: Vec<i64> = (0..shape.numel() as i64).collect();
        for perm in all_perms(3) {
            let flipped = [false, true, false];
            let got = StridedCopy::new(&shape, &perm, &flipped)
                .apply("test", &v)
                .unwrap();
            assert_eq!(got, naive(&shape, &perm, &flipped), "{perm:?}");
        }
    }
}
