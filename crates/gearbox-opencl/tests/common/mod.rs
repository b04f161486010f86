//! What every device test of the OpenCL backend starts with: the backend
//! registered, CPU devices allowed (pocl in CI), the backend forced, and
//! its health checked; without a usable device the test prints
//! `SKIP: <reason>` and passes, unless `GEARBOX_REQUIRE_OPENCL=1` (CI and
//! `scripts/gpu.sh` set it: there the device must be found).

use std::sync::{Mutex, MutexGuard};

use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::{gpu_status, set_options, Health, RuntimeOptions};

static LOCK: Mutex<()> = Mutex::new(());

/// The test binary's lock (tests change process-wide options), with the
/// backend registered and CPU devices allowed.
pub fn lock() -> MutexGuard<'static, ()> {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    gearbox_opencl::allow_cpu_devices(true);
    gearbox_opencl::register();
    guard
}

/// Holds the test binary's lock while the OpenCL backend is healthy and
/// forced; `None` (after printing why) when there is no usable device.
#[allow(dead_code)]
pub fn device() -> Option<MutexGuard<'static, ()>> {
    let guard = lock();
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: Some("opencl".into()),
        ..RuntimeOptions::from_env()
    });
    if probe_backend("opencl", false) != Health::Healthy {
        let row = gpu_status()
            .rows
            .into_iter()
            .find(|r| r.backend == "opencl");
        let why = row.map_or("opencl not registered".into(), |r| r.reason);
        assert!(
            std::env::var("GEARBOX_REQUIRE_OPENCL").as_deref() != Ok("1"),
            "GEARBOX_REQUIRE_OPENCL=1 but no usable OpenCL device: {why}"
        );
        println!("SKIP: no usable OpenCL device: {why}");
        return None;
    }
    Some(guard)
}
