//! The wgpu backend on whatever adapter this machine has (Mesa's lavapipe
//! in CI, NVIDIA's Vulkan driver on the H100): its status row, the probe,
//! and the shared conformance suite forced onto it and compared with the
//! CPU. CPU adapters are allowed here (they are not by default). Without
//! an adapter the tests print `SKIP: <reason>` and pass,
//! unless `GEARBOX_REQUIRE_WGPU=1` (CI sets it: there the adapter must be
//! found).

use std::sync::{Mutex, MutexGuard};

use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::{gpu_status, metrics, set_options, Health, RuntimeOptions};

static LOCK: Mutex<()> = Mutex::new(());

/// Holds the lock while the wgpu backend is healthy and forced; `None`
/// (after printing why) when there is no usable adapter.
fn adapter() -> Option<MutexGuard<'static, ()>> {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    gearbox_wgpu::device::allow_cpu_adapters(true);
    gearbox_wgpu::register();
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

#[test]
fn the_status_row_names_the_adapter_or_what_is_missing() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    gearbox_wgpu::device::allow_cpu_adapters(true);
    gearbox_wgpu::register();
    let row = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "wgpu")
        .expect("a wgpu row");
    assert!(row.installed && row.registered, "{row:?}");
    if row.available {
        let device = row.device.as_ref().expect("the adapter");
        println!("device: {}", device.name);
        assert!(!device.name.is_empty());
    } else {
        println!("no adapter: {}", row.reason);
        assert!(
            row.reason.contains("Vulkan") || row.reason.contains("adapter"),
            "{}",
            row.reason
        );
    }
}

#[test]
fn the_conformance_suite_passes_on_the_adapter() {
    let Some(_g) = adapter() else { return };
    let before = metrics().of("wgpu").compute.count;
    let report =
        gearbox_core::conformance::check(gearbox_core::conformance::Target::Backend("wgpu"))
            .expect("the suite runs");
    let ran = metrics().of("wgpu").compute.count - before;
    let shown: Vec<String> = report
        .mismatches
        .iter()
        .take(40)
        .map(|m| format!("{}: {}", m.case, m.detail))
        .collect();
    println!(
        "conformance on wgpu: {} cases, {} differ, {ran} kernels ran on the adapter",
        report.cases,
        report.mismatches.len()
    );
    assert!(report.mismatches.is_empty(), "{}", shown.join("\n"));
    assert!(ran > 100, "only {ran} pieces of work ran on wgpu");
}
