//! # gearbox-cuda
//!
//! The NVIDIA backend of Gearbox, loaded at run time: it builds and its tests
//! pass on machines with no CUDA SDK and no GPU, and finds libcuda, NVRTC,
//! cuBLAS and cuSOLVER when present ([`loader`]; `GEARBOX_CUDA_LIB_DIR`, then
//! the usual folders). A missing library makes the backend unavailable with a
//! reason naming it, never a crash.
//!
//! - [`codegen`] is the CUDA C++ dialect of the shared renderer
//!   (`gearbox-codegen`); [`compile`] is the NVRTC compiler of the shared
//!   program cache; [`run`] launches the kernels; [`params`] holds every
//!   knob, read once.
//! - [`blas`] runs GEMM variants through cuBLAS and [`solver`] the
//!   factorizations through cuSOLVER; [`scan`] runs `cumsum`/`cumprod`;
//!   [`movement`] runs `slice`/`concat` as device-to-device copies;
//!   [`take`] gathers positions along an axis;
//!   [`linear_grid`] runs the per-point grid call (a GLM grid's per-point
//!   strategy) as a kernel of its own; [`pool`] is the caching device
//!   allocator.
//! - [`backend::CudaBackend`] implements the runtime's backend trait; its
//!   probe and calibration are the shared ones
//!   (`gearbox_core::runtime::probe_checks`, `gearbox_core::runtime::sweep`).
//!
//! Call [`register`] (the `gearbox` facade's `init()` does) to make it a
//! dispatch candidate.
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

pub mod backend;
pub mod blas;
pub mod codegen;
pub mod compile;
pub mod device;
pub mod linear_grid;
pub mod loader;
pub mod movement;
pub mod params;
pub mod permute;
pub mod pool;
pub mod run;
pub mod scan;
pub mod solver;
pub mod staging;
pub mod support;
pub mod take;

pub use backend::{register, shared, CudaBackend};
pub use codegen::{render, KernelKind, Mapping, RenderedKernel};
