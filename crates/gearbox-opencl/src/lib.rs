//! Gearbox's OpenCL backend: fused kernels written in OpenCL C by the
//! shared renderer ([`gearbox_codegen`]), R's nmath functions in float64
//! from the same device source as CUDA's, GEMM through CLBlast, on any
//! OpenCL 1.2 device (GPUs of every vendor; CPUs through pocl). The OpenCL
//! ICD loader and CLBlast are loaded at run time: the crate builds without
//! an SDK, and a missing library makes the backend unavailable with a
//! reason naming it.
//!
//! - [`opencl_c`]: the OpenCL C dialect;
//! - [`device`]: platforms and devices, the one driven
//!   (`gearbox_core::runtime::choice`), its context and queue, transfers,
//!   and OpenCL's error codes as Gearbox errors;
//! - [`buffer`]: device buffers and their storage layout;
//! - [`program`]: programs built from source, binaries kept on disk by the
//!   shared program cache, build logs in errors;
//! - [`launch`]: the runtime the shared launch driver enqueues through;
//! - [`library`]: library calls (GEMM, scans, random streams, copies);
//! - [`params`]: the knobs read from the environment;
//! - [`backend`]: [`OpenClBackend`], registered with the runtime by
//!   [`register`].
#![warn(missing_docs)]

pub mod backend;
pub mod buffer;
pub mod device;
pub mod launch;
pub mod library;
pub mod opencl_c;
pub mod params;
pub mod program;

pub use backend::{register, shared, OpenClBackend};
pub use device::allow_cpu_devices;
