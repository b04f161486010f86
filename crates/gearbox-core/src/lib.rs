//! # gearbox-core
//!
//! Lazy, column-major n-dimensional arrays with a CPU reference backend.
//!
//! - [`Array`] is a cheap handle to a node of a lazy graph ([`graph`]); each
//!   operation is a [`Primitive`] defined once in [`ops`].
//! - Work runs at sinks ([`Array::eval`], [`Array::to_vec`], [`Array::item`],
//!   printing); elementwise and reduction work uses all cores (rayon) and dense
//!   linear algebra uses faer.
//! - Creation ([`Array::zeros`], [`Array::arange`], [`Array::rand`], ...) is
//!   lazy too; random arrays come from the counter-based [`random`] generator,
//!   so element `i` depends only on the seed and `i`.
//! - Each array carries a [`Precision`] that later decides where its work may run.
//!
//! ```
//! use gearbox_core::Array;
//! let x = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]])?;
//! let y = (x.exp()? * 2.0 - &x)?;
//! assert!((y.get(&[0, 0])? - (2.0 * 1f64.exp() - 1.0)).abs() < 1e-15);
//! # Ok::<(), gearbox_core::Error>(())
//! ```
#![warn(missing_docs)]

pub mod array;
pub mod autodiff;
pub mod buffer;
pub mod conformance;
pub mod cpu;
pub mod display;
pub mod dtype;
pub mod error;
pub mod fusion;
pub mod graph;
pub mod memory;
pub mod nn;
pub mod ops;
pub mod precision;
pub mod random;
pub mod resident;
pub mod runtime;
pub mod shape;

pub use buffer::HostBuffer;
pub use dtype::{DType, Element};
pub use error::{DeviceErrorKind, Error, Result};
pub use graph::{Array, Operand, Primitive, Spec};
pub use ops::binary::BinaryOp;
pub use ops::creation::Distribution;
pub use ops::reduce::ReduceOp;
pub use ops::unary::UnaryOp;
pub use precision::{default_precision, set_default_precision, Precision};
pub use shape::Shape;
