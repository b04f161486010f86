//! # Gearbox
//!
//! Array and matrix computing that runs on the CPU by default and moves work
//! to a GPU where that pays off. This crate is the facade users depend on: it
//! re-exports the core ([`Array`], dtypes, precision, errors).
#![warn(missing_docs)]

pub use gearbox_core::*;

pub mod iterative;

/// The CUDA backend (feature `cuda`, on by default): for calibration and
/// device-level tools; ordinary code never needs to name it.
#[cfg(feature = "cuda")]
pub use gearbox_cuda as cuda;

/// The OpenCL backend (feature `opencl`, on by default): for tools that
/// need its device or counters.
#[cfg(feature = "opencl")]
pub use gearbox_opencl as opencl;

/// Statistics on arrays (feature `stats`, on by default; GPL-2.0-or-later):
/// R's nmath functions as scalars ([`stats::nmath`]) and on arrays
/// (`stats::dbinom(&x, &n, &p, false)`), fusable and GPU-capable.
#[cfg(feature = "stats")]
pub use gearbox_stats as stats;

/// Registers the backends compiled into this build with the runtime, in
/// preferred order. Idempotent; `gpu_status()` and dispatch work without it
/// (they then see only the CPU), so call it once at start-up.
///
/// ```
/// gearbox::init();
/// let status = gearbox::runtime::gpu_status();
/// assert_eq!(status.rows[0].backend, "cuda");
/// ```
pub fn init() {
    #[cfg(feature = "cuda")]
    gearbox_cuda::register();
    #[cfg(not(feature = "cuda"))]
    runtime::registry::declare_backend("cuda", "cuda", false);
    #[cfg(feature = "wgpu")]
    gearbox_wgpu::register();
    #[cfg(not(feature = "wgpu"))]
    runtime::registry::declare_backend("wgpu", "wgpu", false);
    #[cfg(feature = "opencl")]
    gearbox_opencl::register();
    #[cfg(not(feature = "opencl"))]
    runtime::registry::declare_backend("opencl", "opencl", false);
}

/// The README's tour, compiled and run as doc tests so it stays true.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
