//! Shapes, column-major strides and the broadcasting rule.
//!
//! Storage is column-major (first index fastest), as in R, MATLAB and BLAS.
//! Broadcasting is MATLAB's implicit expansion: two shapes are aligned from
//! the first dimension, missing trailing dimensions count as 1, and each pair
//! of sizes must be equal or contain a 1.
//!
//! ```
//! use gearbox_core::Shape;
//! let a = Shape::new(vec![3, 4]);
//! let col = Shape::new(vec![3]);          // a column: same as [3, 1]
//! let row = Shape::new(vec![1, 4]);
//! assert_eq!(Shape::broadcast(&a, &col).unwrap(), a);
//! assert_eq!(Shape::broadcast(&col, &row).unwrap(), Shape::new(vec![3, 4]));
//! assert!(Shape::broadcast(&a, &Shape::new(vec![4])).is_err());
//! ```

use std::fmt;

use crate::error::{Error, Result};

/// The extent of an array along each axis. A 0-d shape (`[]`) is a scalar.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Shape(Vec<usize>);

impl Shape {
    /// A shape from its dimensions.
    pub fn new(dims: Vec<usize>) -> Self {
        Shape(dims)
    }

    /// The 0-d shape of a scalar.
    pub fn scalar() -> Self {
        Shape(Vec::new())
    }

    /// The dimensions.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.0.len()
    }

    /// Number of elements (1 for a scalar).
    pub fn numel(&self) -> usize {
        self.0.iter().product()
    }

    /// Size along `axis`, 1 past the last dimension (MATLAB convention).
    pub fn dim(&self, axis: usize) -> usize {
        self.0.get(axis).copied().unwrap_or(1)
    }

    /// Column-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        let mut s = Vec::with_capacity(self.0.len());
        let mut acc = 1;
        for &d in &self.0 {
            s.push(acc);
            acc *= d;
        }
        s
    }

    /// Checks that `axis` exists, naming `op` in the error.
    pub fn check_axis(&self, op: &'static str, axis: usize) -> Result<()> {
        if axis < self.ndim() {
            Ok(())
        } else {
            Err(Error::AxisOutOfRange {
                op,
                axis,
                ndim: self.ndim(),
                shape: self.clone(),
            })
        }
    }

    /// Splits the shape around `axis` into `(inner, len, outer)`: the product of
    /// the dimensions before it, its length, and the product of those after it.
    pub fn split_at_axis(&self, axis: usize) -> (usize, usize, usize) {
        let inner = self.0[..axis].iter().product();
        let outer = self.0[axis + 1..].iter().product();
        (inner, self.0[axis], outer)
    }

    /// The shape with `axis` set to `len`.
    pub fn with_dim(&self, axis: usize, len: usize) -> Shape {
        let mut d = self.0.clone();
        d[axis] = len;
        Shape(d)
    }

    /// The broadcast shape of `a` and `b` (see the module docs).
    pub fn broadcast(a: &Shape, b: &Shape) -> Result<Shape> {
        Self::broadcast_for("broadcast", a, b)
    }

    /// [`Shape::broadcast`], naming `op` in the error.
    pub fn broadcast_for(op: &'static str, a: &Shape, b: &Shape) -> Result<Shape> {
        if a == b {
            return Ok(a.clone());
        }
        let n = a.ndim().max(b.ndim());
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (x, y) = (a.dim(i), b.dim(i));
            out.push(match (x, y) {
                _ if x == y => x,
                (1, _) => y,
                (_, 1) => x,
                _ => {
                    return Err(Error::ShapeMismatch {
                        op,
                        lhs: a.clone(),
                        rhs: b.clone(),
                        why: format!(
                            "axis {i} has sizes {x} and {y}; they must match or one must be 1"
                        ),
                    })
                }
            });
        }
        Ok(Shape(out))
    }
}

impl From<&[usize]> for Shape {
    fn from(d: &[usize]) -> Self {
        Shape(d.to_vec())
    }
}

impl From<Vec<usize>> for Shape {
    fn from(d: Vec<usize>) -> Self {
        Shape(d)
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(d: [usize; N]) -> Self {
        Shape(d.to_vec())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" x ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// Maps consecutive output positions of a broadcast to offsets in one input.
///
/// Walks the output in column-major order like an odometer, so each step costs
/// an increment rather than a division per dimension.
#[derive(Debug, Clone)]
pub struct BroadcastWalker {
    out_dims: Vec<usize>,
    in_strides: Vec<usize>,
    index: Vec<usize>,
    offset: usize,
}

impl BroadcastWalker {
    /// A walker for input shape `input` inside output shape `out`, starting at
    /// output position `start`. `input` must broadcast to `out`.
    pub fn new(input: &Shape, out: &Shape, start: usize) -> Self {
        let n = out.ndim();
        let mut in_strides = Vec::with_capacity(n);
        let mut acc = 1;
        for i in 0..n {
            let d = input.dim(i);
            in_strides.push(if d == 1 { 0 } else { acc });
            acc *= d;
        }
        let out_dims = out.dims().to_vec();
        let mut index = vec![0; n];
        let mut rem = start;
        let mut offset = 0;
        for i in 0..n {
            if out_dims[i] == 0 {
                break;
            }
            index[i] = rem % out_dims[i];
            rem /= out_dims[i];
            offset += index[i] * in_strides[i];
        }
        BroadcastWalker {
            out_dims,
            in_strides,
            index,
            offset,
        }
    }

    /// The input offset of the current output position.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Moves to the next output position.
    #[inline]
    pub fn advance(&mut self) {
        for i in 0..self.out_dims.len() {
            self.index[i] += 1;
            self.offset += self.in_strides[i];
            if self.index[i] < self.out_dims[i] {
                return;
            }
            self.offset -= self.in_strides[i] * self.index[i];
            self.index[i] = 0;
        }
    }
}
