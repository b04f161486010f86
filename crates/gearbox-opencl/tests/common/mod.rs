//! What every device test of the OpenCL backend starts with: the backend
//! registered, CPU devices allowed (pocl in CI), the backend forced, and
//! its health checked; without a usable device the test prints
//! `SKIP: <reason>` and passes, unless `GEARBOX_REQUIRE_OPENCL=1` (CI and
//! `scripts/gpu.sh` set it: there the device must be found).

use std::sync::MutexGuard;

use gearbox_core::runtime::testing::gpu::{self, UnderTest};

/// The OpenCL backend, as the shared checks name it.
#[allow(dead_code)]
pub const OPENCL: UnderTest = UnderTest {
    backend: "opencl",
    kind: "OpenCL",
    noun: "device",
    require: "GEARBOX_REQUIRE_OPENCL",
};

/// The test binary's lock (tests change process-wide options), with the
/// backend registered and CPU devices allowed.
pub fn lock() -> MutexGuard<'static, ()> {
    let guard = gpu::lock();
    gearbox_opencl::allow_cpu_devices(true);
    gearbox_opencl::register();
    guard
}

/// Holds the test binary's lock while the OpenCL backend is healthy and
/// forced; `None` (after printing why) when there is no usable device.
#[allow(dead_code)]
pub fn device() -> Option<MutexGuard<'static, ()>> {
    let guard = lock();
    OPENCL.forced_and_healthy().then_some(guard)
}
