//! What every GPU test of the wgpu backend starts with: the backend
//! registered, CPU adapters allowed (lavapipe in CI), the backend forced,
//! and its health checked; without a usable adapter the test prints
//! `SKIP: <reason>` and passes, unless `GEARBOX_REQUIRE_WGPU=1` (CI and
//! `scripts/gpu.sh` set it: there the adapter must be found).

use std::sync::{Mutex, MutexGuard};

use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::{gpu_status, set_options, Health, RuntimeOptions};

static LOCK: Mutex<()> = Mutex::new(());

/// The test binary's lock (tests change process-wide options), with the
/// backend registered and CPU adapters allowed.
pub fn lock() -> MutexGuard<'static, ()> {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    gearbox_wgpu::device::allow_cpu_adapters(true);
    gearbox_wgpu::register();
    guard
}

/// Holds the test binary's lock while the wgpu backend is healthy and
/// forced; `None` (after printing why) when there is no usable adapter.
#[allow(dead_code)]
pub fn adapter() -> Option<MutexGuard<'static, ()>> {
    let guard = lock();
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: Some("wgpu".into()),
        ..RuntimeOptions::from_env()
    });
    if probe_backend("wgpu", false) != Health::Healthy {
        let row = gpu_status().rows.into_iter().find(|r| r.backend == "wgpu");
        let why = row.map_or("wgpu not registered".into(), |r| r.reason);
        assert!(
            std::env::var("GEARBOX_REQUIRE_WGPU").as_deref() != Ok("1"),
            "GEARBOX_REQUIRE_WGPU=1 but no usable wgpu adapter: {why}"
        );
        println!("SKIP: no usable wgpu adapter: {why}");
        return None;
    }
    Some(guard)
}
