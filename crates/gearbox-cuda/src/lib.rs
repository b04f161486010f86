//! # gearbox-cuda
//!
//! The CUDA backend of Gearbox. For now this crate holds the code generator:
//! [`codegen::render`] turns a fused [`KernelIr`](gearbox_core::fusion::ir::KernelIr)
//! into one complete CUDA C++17 translation unit that NVRTC compiles without
//! any header, together with what the backend needs to launch it (entry
//! names, vector width, how threads map to work, the type of the partials
//! buffer). The launch ABI is documented in [`codegen`].
//!
//! The generator is a pure function from IR to text; it does not link CUDA.
//!
//! ```
//! use gearbox_core::fusion::ir::{Expr, IrNode, KernelIr};
//! use gearbox_core::{DType, Shape, UnaryOp};
//! use gearbox_cuda::codegen::{render, KernelKind};
//!
//! let ir = KernelIr::new(
//!     Shape::new(vec![1000]),
//!     vec![(Shape::new(vec![1000]), DType::F32)],
//!     vec![
//!         IrNode { expr: Expr::Load(0), dtype: DType::F32 },
//!         IrNode { expr: Expr::Unary(UnaryOp::Exp, 0), dtype: DType::F32 },
//!     ],
//!     vec![1],
//!     None,
//! )?;
//! let k = render(&ir)?;
//! assert_eq!(k.kind, KernelKind::Elementwise);
//! assert_eq!(k.entry, "gb_main");
//! assert_eq!(k.vector_width, 4);
//! assert!(k.source.contains("expf("));
//! # Ok::<(), gearbox_core::Error>(())
//! ```
#![warn(missing_docs)]

pub mod codegen;

pub use codegen::{render, KernelKind, Mapping, RenderedKernel};
