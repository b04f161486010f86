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
//!
//! Size rule: an array of shape `s` and dtype `d` exists only if the product
//! of `s`'s dimensions (zero-length ones counted as 1) times `d`'s size in
//! bytes is at most `isize::MAX`, the largest allocation Rust allows (numpy's
//! rule). Then the element count, the byte size and every column-major
//! stride fit in `usize`. [`Shape::check_size`] applies it; every array is
//! checked when it is made, so no count or stride computed for an array
//! can wrap.

use std::fmt;

use crate::dtype::DType;
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
    ///
    /// Exact for the shape of any array (arrays are checked when they are
    /// made: see [`Shape::check_size`]). For a shape too large for any array,
    /// the count saturates at `usize::MAX` rather than wrapping;
    /// [`Shape::checked_numel`] tells the two apart.
    pub fn numel(&self) -> usize {
        saturating_product(&self.0)
    }

    /// Number of elements, or `None` when the count does not fit in `usize`.
    ///
    /// ```
    /// use gearbox_core::Shape;
    /// assert_eq!(Shape::new(vec![3, 4]).checked_numel(), Some(12));
    /// assert_eq!(Shape::new(vec![usize::MAX, 2]).checked_numel(), None);
    /// assert_eq!(Shape::new(vec![usize::MAX, 2, 0]).checked_numel(), Some(0));
    /// ```
    pub fn checked_numel(&self) -> Option<usize> {
        if self.0.contains(&0) {
            return Some(0);
        }
        self.0
            .iter()
            .try_fold(1, |acc: usize, &d| acc.checked_mul(d))
    }

    /// Checks the size rule of the module docs for an array of this shape
    /// and `dtype`, naming `op` in the error; returns the element count.
    ///
    /// The error ([`Error::BadShape`]) says which size overflows: the
    /// element count, the byte size, or (for a shape with a zero-length
    /// axis) the product of the other dimensions, which the strides need.
    ///
    /// ```
    /// use gearbox_core::{DType, Shape};
    /// assert_eq!(Shape::new(vec![2, 3]).check_size("zeros", DType::F64)?, 6);
    /// let err = Shape::new(vec![1 << 63, 2]).check_size("zeros", DType::F64).unwrap_err();
    /// assert!(err.to_string().contains("element count"));
    /// assert!(Shape::new(vec![1 << 61]).check_size("zeros", DType::F64).is_err()); // 2^64 bytes
    /// assert!(Shape::new(vec![1 << 61]).check_size("zeros", DType::Bool).is_ok());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn check_size(&self, op: &'static str, dtype: DType) -> Result<usize> {
        let size = dtype.size_bytes();
        let spread = self
            .0
            .iter()
            .try_fold(size, |acc: usize, &d| acc.checked_mul(d.max(1)));
        if let (Some(numel), Some(bytes)) = (self.checked_numel(), spread) {
            if bytes <= isize::MAX as usize {
                return Ok(numel);
            }
        }
        // The exact sizes, as floats, for the message.
        let count: f64 = self.0.iter().map(|&d| d as f64).product();
        let spread: f64 = self.0.iter().map(|&d| d.max(1) as f64).product();
        let why = match self.checked_numel() {
            None => format!(
                "its element count, {count:.3e}, overflows: at most {} elements can be counted",
                usize::MAX
            ),
            Some(0) => format!(
                "it has no elements, but its nonzero dimensions span {:.3e} bytes of {dtype}: \
                 the size overflows the largest possible allocation, {} bytes, so its \
                 strides would too",
                spread * size as f64,
                isize::MAX
            ),
            Some(n) => format!(
                "its {n} {dtype} elements take {:.3e} bytes: the byte size overflows the \
                 largest possible allocation, {} bytes",
                count * size as f64,
                isize::MAX
            ),
        };
        Err(Error::BadShape {
            op,
            shape: self.clone(),
            why,
        })
    }

    /// Size along `axis`, 1 past the last dimension (MATLAB convention).
    pub fn dim(&self, axis: usize) -> usize {
        self.0.get(axis).copied().unwrap_or(1)
    }

    /// Column-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        let mut s = Vec::with_capacity(self.0.len());
        let mut acc: usize = 1;
        for &d in &self.0 {
            s.push(acc);
            // Exact for an array's shape (see the size rule); never wraps.
            acc = acc.saturating_mul(d);
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
        let inner = saturating_product(&self.0[..axis]);
        let outer = saturating_product(&self.0[axis + 1..]);
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

    /// [`Shape::broadcast`], naming `op` in the error. The result may be too
    /// large for any array (its count may overflow): the op that makes an
    /// array of it checks the size rule ([`Shape::check_size`]).
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

/// The product of `dims`, saturating at `usize::MAX` (exact whenever the
/// true product fits, including every product of an array's dimensions).
fn saturating_product(dims: &[usize]) -> usize {
    dims.iter().fold(1, |acc: usize, &d| acc.saturating_mul(d))
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
        let mut acc: usize = 1;
        for i in 0..n {
            let d = input.dim(i);
            in_strides.push(if d == 1 { 0 } else { acc });
            acc = acc.saturating_mul(d);
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
