//! The std operators (`+ - * /` and unary `-`) on arrays.
//!
//! Each returns `Result<Array>`, since shapes may not broadcast; operators are
//! also defined on `Result<Array>` so expressions chain and `?` comes once:
//!
//! ```
//! use gearbox_core::Array;
//! let x = Array::from_vec([3], vec![1.0, 2.0, 3.0])?;
//! let y = Array::from_vec([3], vec![10.0, 20.0, 30.0])?;
//! let z = (&x * 2.0 + &y)?;
//! assert_eq!(z.to_vec::<f64>()?, vec![12.0, 24.0, 36.0]);
//! let w = (&z - 1.0)?;   // `Result<Array> op f64` is not allowed by Rust's orphan rule
//! assert_eq!(w.to_vec::<f64>()?, vec![11.0, 23.0, 35.0]);
//! # Ok::<(), gearbox_core::Error>(())
//! ```

use std::ops::{Add, Div, Mul, Neg, Sub};

use crate::error::Result;
use crate::graph::Array;
use crate::ops::binary::BinaryOp;

macro_rules! operator {
    ($trait:ident, $method:ident, $op:ident) => {
        impl $trait<&Array> for &Array {
            type Output = Result<Array>;
            fn $method(self, rhs: &Array) -> Result<Array> {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        impl $trait<Array> for Array {
            type Output = Result<Array>;
            fn $method(self, rhs: Array) -> Result<Array> {
                self.binary(BinaryOp::$op, &rhs)
            }
        }
        impl $trait<&Array> for Array {
            type Output = Result<Array>;
            fn $method(self, rhs: &Array) -> Result<Array> {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        impl $trait<f64> for &Array {
            type Output = Result<Array>;
            fn $method(self, rhs: f64) -> Result<Array> {
                self.binary_scalar(BinaryOp::$op, rhs)
            }
        }
        impl $trait<f64> for Array {
            type Output = Result<Array>;
            fn $method(self, rhs: f64) -> Result<Array> {
                self.binary_scalar(BinaryOp::$op, rhs)
            }
        }
        impl $trait<&Array> for f64 {
            type Output = Result<Array>;
            fn $method(self, rhs: &Array) -> Result<Array> {
                rhs.scalar_like(self).binary(BinaryOp::$op, rhs)
            }
        }
        impl $trait<&Array> for Result<Array> {
            type Output = Result<Array>;
            fn $method(self, rhs: &Array) -> Result<Array> {
                self?.binary(BinaryOp::$op, rhs)
            }
        }
        impl $trait<Array> for Result<Array> {
            type Output = Result<Array>;
            fn $method(self, rhs: Array) -> Result<Array> {
                self?.binary(BinaryOp::$op, &rhs)
            }
        }
        impl $trait<Result<Array>> for &Array {
            type Output = Result<Array>;
            fn $method(self, rhs: Result<Array>) -> Result<Array> {
                self.binary(BinaryOp::$op, &rhs?)
            }
        }
    };
}

operator!(Add, add, Add);
operator!(Sub, sub, Sub);
operator!(Mul, mul, Mul);
operator!(Div, div, Div);

impl Neg for &Array {
    type Output = Result<Array>;
    fn neg(self) -> Result<Array> {
        Array::neg(self)
    }
}
