//! Gearbox's wgpu backend: fused kernels written in WGSL by the shared
//! renderer ([`gearbox_codegen`]), run through wgpu on Vulkan, Metal or
//! DX12.
//!
//! [`wgsl`] is the WGSL dialect: the renderer's structure (grid-stride
//! loops, full and axis reductions, lane grouping, multi-output kernels)
//! written in WGSL's declarations, loops and bindings.
#![warn(missing_docs)]

pub mod wgsl;

pub use wgsl::{Wgsl, WGSL};
