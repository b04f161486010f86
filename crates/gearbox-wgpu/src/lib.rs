//! Gearbox's wgpu backend: fused kernels written in WGSL by the shared
//! renderer ([`gearbox_codegen`]), run through wgpu on Vulkan, Metal or
//! DX12, headless.
//!
//! - [`wgsl`]: the WGSL dialect (declarations, loops, bindings, the
//!   functions WGSL lacks) and its launch ABI;
//! - [`wgsl_f64`]: f64 math written in WGSL from correctly rounded
//!   operations (drivers' own f64 transcendentals are f32-accurate);
//! - [`device`]: the adapter (chosen as `gearbox_core::runtime::choice`
//!   says), device and queue, transfers, and wgpu's
//!   errors as Gearbox errors;
//! - [`buffer`]: device buffers and their storage layout;
//! - [`program`]: WGSL modules and pipelines, cached by the shared
//!   program cache;
//! - [`kept`]: values made once per key and kept (uniforms, small uploads);
//! - [`launch`]: the runtime the shared launch driver dispatches through;
//! - [`library`]: library calls (copies, scans, random streams, GEMM) as
//!   hand-written WGSL modules;
//! - [`raw_memory`]: buffers on Vulkan memory the backend allocates
//!   itself (an experiment knob);
//! - [`cuda_memory`]: memory from the CUDA driver for [`raw_memory`];
//! - [`params`]: the knobs read from the environment;
//! - [`timing`]: compute passes timed on the device's clock (profiling);
//! - [`pipeline_cache`]: the driver's compiled pipelines kept on disk;
//! - [`prelude`]: the items of a function library a kernel reaches;
//! - [`backend`]: [`WgpuBackend`], registered with the runtime by
//!   [`register`].
//!
//! What it runs: fused elementwise chains with broadcasting, full and axis
//! reductions and multi-output kernels in f32 and bool, and in f64 and i64
//! on adapters with SHADER_F64 and SHADER_INT64 (f64 math through
//! [`wgsl_f64`]); GEMM, scans, Philox random streams and the copies of
//! slices and joins ([`library`]). Declined, with the gates saying why:
//! kernels calling device-library scalar functions
//! (R's nmath is C source, for CUDA and OpenCL C), f64 and i64 on adapters without the
//! features.
#![warn(missing_docs)]

pub mod backend;
pub mod buffer;
pub mod cuda_memory;
pub mod device;
pub mod kept;
pub mod launch;
pub mod library;
pub mod params;
pub mod pipeline_cache;
pub mod prelude;
pub mod program;
pub mod raw_memory;
pub mod timing;
pub mod wgsl;
pub mod wgsl_f64;

pub use backend::{register, shared, WgpuBackend};
pub use wgsl::{Wgsl, WGSL};
