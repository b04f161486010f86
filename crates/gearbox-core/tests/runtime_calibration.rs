//! Calibrated thresholds on a simulated device: the calibration file over
//! the built-in thresholds, windows that send only middle sizes to the
//! device, and thresholds of "never".

mod common;

use gearbox_core::runtime::testing::SimulatedBackend;
use gearbox_core::runtime::{backend_plan, Threshold, WorkClass};
use gearbox_core::{DType, Precision};

use common::runtime::{random, thresholds, Fixture};

#[test]
fn calibration_file_overrides_built_in_thresholds() {
    let mut fx = Fixture::new();
    let dir = std::env::temp_dir().join(format!("gearbox-calib-{}", std::process::id()));
    std::env::set_var("GEARBOX_CACHE_DIR", &dir);
    gearbox_core::runtime::calibration::reload();
    fx.sim(SimulatedBackend::new("simk").with_thresholds(thresholds(1e12, 1e12)));
    let x = random([100, 100], 16, Precision::Fast);
    assert_eq!(backend_plan(&x.exp().unwrap()).unwrap().chosen, "cpu");
    let path = gearbox_core::runtime::calibration::store(
        "simk",
        "simulated device 'simk'",
        thresholds(10.0, 1.0),
    )
    .unwrap();
    assert!(path.starts_with(&dir));
    let p = backend_plan(&x.exp().unwrap()).unwrap();
    assert_eq!(p.chosen, "simk");
    assert!(
        p.candidates[0]
            .gates
            .last()
            .unwrap()
            .detail
            .contains("calibrated threshold 10"),
        "{p}"
    );
    // A file measured on another device does not apply.
    gearbox_core::runtime::calibration::store("simk", "some other device", thresholds(10.0, 1.0))
        .unwrap();
    assert_eq!(backend_plan(&x.exp().unwrap()).unwrap().chosen, "cpu");
    // A file that does not parse is ignored: the built-in thresholds apply.
    gearbox_core::runtime::calibration::store(
        "simk",
        "simulated device 'simk'",
        thresholds(10.0, 1.0),
    )
    .unwrap();
    std::fs::write(&path, "{ not json").unwrap();
    gearbox_core::runtime::calibration::reload();
    assert_eq!(backend_plan(&x.exp().unwrap()).unwrap().chosen, "cpu");
    std::env::remove_var("GEARBOX_CACHE_DIR");
    gearbox_core::runtime::calibration::reload();
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_calibrated_window_sends_only_middle_sizes_to_the_device() {
    let mut fx = Fixture::new();
    let window: Vec<Threshold> = thresholds(1_000.0, 1_000.0)
        .into_iter()
        .map(|t| Threshold {
            cold_max: 100_000.0,
            resident_max: 100_000.0,
            ..t
        })
        .collect();
    fx.sim(SimulatedBackend::new("simw").with_thresholds(window));
    let plan =
        |n: usize| backend_plan(&random([n, 1], 50, Precision::Fast).exp().unwrap()).unwrap();
    assert_eq!(plan(100).chosen, "cpu");
    assert_eq!(plan(10_000).chosen, "simw");
    let big = plan(200_000);
    assert_eq!(big.chosen, "cpu");
    assert!(
        big.suggestions[0].contains(">= upper bound 100,000"),
        "{big}"
    );
}

#[test]
fn thresholds_of_never_survive_the_calibration_file() {
    let t = Threshold {
        cold: f64::INFINITY,
        ..Threshold::from(WorkClass::Elementwise, DType::F32, 0.0, 4096.0)
    };
    let text = serde_json::to_string(&t).unwrap();
    let back: Threshold = serde_json::from_str(&text).unwrap();
    assert_eq!(back, t, "{text}");
    let old: Threshold =
        serde_json::from_str(r#"{"class":"Gemm","dtype":"F64","cold":65536.0,"resident":null}"#)
            .unwrap();
    assert_eq!(
        (old.cold, old.resident, old.cold_max),
        (65536.0, f64::INFINITY, f64::INFINITY)
    );
}
