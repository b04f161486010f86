//! Gearbox's wgpu backend: fused kernels written in WGSL by the shared
//! renderer ([`gearbox_codegen`]), run through wgpu on Vulkan, Metal or
//! DX12, headless.
//!
//! - [`wgsl`]: the WGSL dialect (declarations, loops, bindings, the
//!   functions WGSL lacks) and its launch ABI;
//! - [`wgsl_f64`]: f64 math written in WGSL from correctly rounded
//!   operations (drivers' own f64 transcendentals are f32-accurate);
//! - [`device`]: the adapter, device and queue, transfers, and wgpu's
//!   errors as Gearbox errors;
//! - [`buffer`]: device buffers and their storage layout;
//! - [`program`]: WGSL modules and pipelines, cached by the shared
//!   program cache;
//! - [`launch`]: the runtime the shared launch driver dispatches through;
//! - [`library`]: library calls (copies, scans, random streams, GEMM) as
//!   hand-written WGSL modules;
//! - [`params`]: the knobs read from the environment;
//! - [`timing`]: compute passes timed on the device's clock (profiling);
//! - [`pipeline_cache`]: the driver's compiled pipelines kept on disk;
//! - [`prelude`]: the items of a function library a kernel reaches;
//! - [`backend`]: [`WgpuBackend`], registered with the runtime by
//!   [`register`].
//!
//! What it runs today: fused elementwise chains with broadcasting, full and
//! axis reductions and multi-output kernels, in f32 and bool. f64 (on
//! adapters with SHADER_F64, through WGSL polyfills of the math), i64,
//! GEMM, scans, random streams and copies are declined (the gates say so
//! and the CPU runs them).
#![warn(missing_docs)]

pub mod backend;
pub mod buffer;
pub mod device;
pub mod launch;
pub mod library;
pub mod params;
pub mod pipeline_cache;
pub mod prelude;
pub mod program;
pub mod timing;
pub mod wgsl;
pub mod wgsl_f64;

pub use backend::{register, shared, WgpuBackend};
pub use wgsl::{Wgsl, WGSL};
