//! Building arrays from host data and reading values back (the sinks).
//!
//! Every sink evaluates the pending graph first. This module owns the
//! boundary between user data and arrays; operations live in [`crate::ops`].

use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::graph::Array;
use crate::memory;
use crate::ops::shape_ops::Identity;
use crate::precision::{default_precision, Precision};
use crate::shape::Shape;

impl Array {
    /// An array from column-major data (first index fastest, as in R).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// // the 2 x 3 matrix [1 3 5; 2 4 6]
    /// let m = Array::from_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// assert_eq!(m.get(&[1, 2])?, 6.0);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn from_vec<T: Element>(shape: impl Into<Shape>, data: Vec<T>) -> Result<Array> {
        let shape = shape.into();
        shape.check_size("from_vec", T::DTYPE)?;
        if shape.numel() != data.len() {
            return Err(Error::DataLength {
                op: "from_vec",
                len: data.len(),
                expected: shape.numel(),
                shape,
            });
        }
        Ok(Array::leaf(
            shape,
            Arc::new(HostBuffer::from_vec(data)),
            default_precision(),
        ))
    }

    /// A matrix from rows (row-major convenience); all rows must have one length.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let m = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]])?;
    /// assert_eq!(m.get(&[0, 1])?, 2.0);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn from_rows<T: Element>(rows: &[Vec<T>]) -> Result<Array> {
        let nrow = rows.len();
        let ncol = rows.first().map_or(0, |r| r.len());
        if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != ncol) {
            return Err(Error::InvalidArgument {
                op: "from_rows",
                name: "rows",
                value: format!("row {i} of length {}", r.len()),
                why: format!("every row must have the length of row 0 ({ncol})"),
            });
        }
        let mut data = memory::with_capacity("from_rows", nrow.saturating_mul(ncol))?;
        for j in 0..ncol {
            data.extend(rows.iter().map(|r| r[j]));
        }
        Array::from_vec([nrow, ncol], data)
    }

    /// A 0-d array holding one value.
    pub fn scalar<T: Element>(value: T) -> Array {
        Array::leaf(
            Shape::scalar(),
            Arc::new(HostBuffer::from_vec(vec![value])),
            default_precision(),
        )
    }

    /// A materialized array wrapping an existing buffer.
    pub fn from_buffer(shape: impl Into<Shape>, buf: HostBuffer) -> Result<Array> {
        let shape = shape.into();
        shape.check_size("from_buffer", buf.dtype())?;
        if shape.numel() != buf.len() {
            return Err(Error::DataLength {
                op: "from_buffer",
                len: buf.len(),
                expected: shape.numel(),
                shape,
            });
        }
        Ok(Array::leaf(shape, Arc::new(buf), default_precision()))
    }

    /// The same values under another precision (see [`Precision`]).
    ///
    /// ```
    /// use gearbox_core::{Array, Precision};
    /// let x = Array::from_vec([2], vec![1.0, 2.0])?.with_precision(Precision::Fast)?;
    /// assert_eq!(x.precision(), Precision::Fast);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn with_precision(&self, precision: Precision) -> Result<Array> {
        // Values on the host are shared as they are; values that live only
        // on a device go through the identity view below, which shares the
        // device buffer rather than downloading it.
        if let Some(host) = self.host_value() {
            return Ok(Array::leaf(self.shape().clone(), host, precision));
        }
        Array::from_op_with_precision(Arc::new(Identity::PASS), vec![self.clone()], precision)
    }

    /// The values as a `Vec<T>` in column-major order; `T` must be the dtype.
    ///
    /// Use [`Array::astype`] first to convert, or [`Array::to_f64_vec`].
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::DType {
                op: "to_vec",
                got: self.dtype(),
                expected: T::DTYPE.name(),
            });
        }
        self.buffer()?.to_vec()
    }

    /// The values converted to f64, column-major.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        self.buffer()?.to_f64_vec()
    }

    /// The single value of a one-element array, as f64.
    pub fn item(&self) -> Result<f64> {
        if self.numel() != 1 {
            return Err(Error::BadShape {
                op: "item",
                shape: self.shape().clone(),
                why: "item() needs exactly one element".into(),
            });
        }
        Ok(self.buffer()?.get_f64(0))
    }

    /// The column-major position of a multi-index, checked against the shape.
    fn linear_index(&self, op: &'static str, index: &[usize]) -> Result<usize> {
        let dims = self.dims();
        let bad = index.len() != dims.len() || index.iter().zip(dims).any(|(&i, &d)| i >= d);
        if bad {
            return Err(Error::IndexOutOfBounds {
                op,
                index: format!("{index:?}"),
                shape: self.shape().clone(),
            });
        }
        Ok(index
            .iter()
            .zip(self.shape().strides())
            .map(|(i, s)| i * s)
            .sum())
    }

    /// The element at a multi-index, as f64.
    pub fn get(&self, index: &[usize]) -> Result<f64> {
        let i = self.linear_index("get", index)?;
        Ok(self.buffer()?.get_f64(i))
    }

    /// Sets one element. Other handles to the same values are unaffected:
    /// this handle gets its own copy (copy on write). The value must fit the
    /// dtype as [`Array::full`]'s does (f32: no overflow to infinity; i64: a
    /// whole number; bool: 0 or 1), else [`Error::InvalidArgument`].
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let x = Array::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let mut y = x.clone();
    /// y.set(&[0, 0], 999.0)?;
    /// assert_eq!(x.get(&[0, 0])?, 1.0);
    /// assert_eq!(y.get(&[0, 0])?, 999.0);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn set(&mut self, index: &[usize], value: f64) -> Result<()> {
        let i = self.linear_index("set", index)?;
        let representable = match self.dtype() {
            DType::F64 => true,
            // Rounding is fine; overflow to infinity is not (as `full`).
            DType::F32 => !value.is_finite() || value.abs() <= f64::from(f32::MAX),
            DType::I64 => value.fract() == 0.0 && value.abs() < 9.2e18,
            DType::Bool => value == 0.0 || value == 1.0,
        };
        if !representable {
            return Err(Error::InvalidArgument {
                op: "set",
                name: "value",
                value: format!("{value:?}"),
                why: format!(
                    "cannot be stored in a {} array without changing it; astype() first",
                    self.dtype()
                ),
            });
        }
        let mut buf = self.buffer()?.try_clone("set")?;
        match &mut buf {
            HostBuffer::F64(v) => v[i] = value,
            HostBuffer::F32(v) => v[i] = value as f32,
            HostBuffer::I64(v) => v[i] = value as i64,
            HostBuffer::Bool(v) => v[i] = value != 0.0,
        }
        *self = Array::leaf(self.shape().clone(), Arc::new(buf), self.precision());
        Ok(())
    }
}

/// Asserts at compile time that arrays can cross threads.
const _: fn() = || {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Array>();
};
