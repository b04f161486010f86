//! What the library-call tests share (`gpu_library.rs`, `gpu_scan.rs`):
//! the adapter with the registered backend; the CPU as reference,
//! reproducible values and a library call run on the backend directly come
//! from [`gearbox_core::runtime::testing::gpu`], shared with the OpenCL
//! backend's tests.

use std::sync::{Arc, MutexGuard};

use gearbox_wgpu::WgpuBackend;

use super::common;

/// The shared setup ([`common::adapter`]: the lock, the backend forced and
/// healthy) and the registered backend, to call directly.
pub fn adapter() -> Option<(MutexGuard<'static, ()>, Arc<WgpuBackend>)> {
    let guard = common::adapter()?;
    Some((guard, gearbox_wgpu::shared().expect("registered")))
}
