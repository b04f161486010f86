//! What every GPU test of the wgpu backend starts with: the backend
//! registered, CPU adapters allowed (lavapipe in CI), the backend forced,
//! and its health checked; without a usable adapter the test prints
//! `SKIP: <reason>` and passes, unless `GEARBOX_REQUIRE_WGPU=1` (CI and
//! `scripts/gpu.sh` set it: there the adapter must be found).

use std::sync::MutexGuard;

use gearbox_core::runtime::testing::gpu::{self, UnderTest};

/// The wgpu backend, as the shared checks name it.
#[allow(dead_code)]
pub const WGPU: UnderTest = UnderTest {
    backend: "wgpu",
    kind: "wgpu",
    noun: "adapter",
    require: "GEARBOX_REQUIRE_WGPU",
};

/// The test binary's lock (tests change process-wide options), with the
/// backend registered and CPU adapters allowed.
pub fn lock() -> MutexGuard<'static, ()> {
    let guard = gpu::lock();
    gearbox_wgpu::device::allow_cpu_adapters(true);
    gearbox_wgpu::register();
    guard
}

/// Holds the test binary's lock while the wgpu backend is healthy and
/// forced; `None` (after printing why) when there is no usable adapter.
#[allow(dead_code)]
pub fn adapter() -> Option<MutexGuard<'static, ()>> {
    let guard = lock();
    WGPU.forced_and_healthy().then_some(guard)
}
