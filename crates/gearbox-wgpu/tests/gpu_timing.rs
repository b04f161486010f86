//! Compute passes timed on the device's clock (`GEARBOX_WGPU_TIMESTAMPS=1`,
//! set before the backend reads its knobs): the metrics report the device's
//! seconds, more than zero and no more than the host waited. Adapters
//! without TIMESTAMP_QUERY report none. Without an adapter the test prints
//! `SKIP` and passes, unless `GEARBOX_REQUIRE_WGPU=1`.

use gearbox_core::runtime::metrics;
use gearbox_core::{Array, DType, Precision};

mod common;

#[test]
fn passes_timed_on_the_device_clock_add_up_to_the_work() {
    // SAFETY: the first statement of the only test of this binary: no
    // other thread reads the environment yet.
    unsafe { std::env::set_var("GEARBOX_WGPU_TIMESTAMPS", "1") };
    let Some(_g) = common::adapter() else { return };
    let x = Array::randn(vec![1 << 20], 5)
        .and_then(|a| a.astype(DType::F32))
        .and_then(|a| a.with_precision(Precision::Fast))
        .unwrap();
    x.eval().unwrap();
    x.to_device("wgpu").unwrap();
    let start = std::time::Instant::now();
    for _ in 0..20 {
        ((x.exp().unwrap() * &x).unwrap() + 1.0)
            .unwrap()
            .sum()
            .unwrap()
            .eval()
            .unwrap();
    }
    let host = start.elapsed().as_secs_f64();
    let timed = gearbox_wgpu::shared()
        .expect("registered")
        .device()
        .unwrap()
        .features
        .contains(wgpu::Features::TIMESTAMP_QUERY);
    let device = metrics().of("wgpu").device_compute_seconds;
    println!("device seconds {device:?} over {host:.4} s of host time (timestamps: {timed})");
    match device {
        Some(s) => {
            assert!(timed);
            assert!(
                s > 0.0 && s <= host,
                "{s} s on the device, {host} s on the host"
            );
        }
        None => assert!(!timed, "timestamps on but no device time"),
    }
}
