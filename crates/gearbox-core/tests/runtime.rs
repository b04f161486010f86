//! The acceleration runtime against a simulated device: status gates, probe
//! isolation (crash, hang, wrong numbers), dispatch gates and explain
//! reasons, precision rules, capabilities, auto-probe and availability.
//! Fallback, calibration and device execution have files of their own
//! (`runtime_*.rs`); all share `common::runtime`'s fixture.

mod common;

use std::time::Duration;

use gearbox_core::runtime::backend::Capabilities;
use gearbox_core::runtime::registry::{declare_backend, probe_backend};
use gearbox_core::runtime::testing::SimulatedBackend;
use gearbox_core::runtime::{
    backend_plan, gpu_status, options, set_options, use_gpu, DataPath, Gate, Health,
    RuntimeOptions, UseGpuOptions,
};
use gearbox_core::{Array, DType, Precision};

use common::runtime::{random, thresholds, Fixture};

#[test]
fn devices_a_backend_does_not_drive_have_rows_of_their_own() {
    let mut fx = Fixture::new();
    let other = gearbox_core::runtime::backend::DeviceInfo {
        name: "second simulated device".into(),
        memory_bytes: 8 << 30,
        full_rate_f64: false,
        compute_capability: None,
        driver: None,
    };
    fx.sim(
        SimulatedBackend::new("simd")
            .with_other_devices(vec![(other, "not driven; SIM_DEVICE=1 picks it".into())]),
    );
    let rows: Vec<_> = gpu_status()
        .rows
        .into_iter()
        .filter(|r| r.backend == "simd")
        .collect();
    assert_eq!(rows.len(), 2);
    assert!(rows[0].available && rows[0].reason.contains("not probed yet"));
    let second = &rows[1];
    assert!(second.installed && second.registered && !second.available);
    assert_eq!(second.health, Health::Unprobed);
    assert_eq!(second.reason, "not driven; SIM_DEVICE=1 picks it");
    assert_eq!(
        second.device.as_ref().map(|d| d.name.as_str()),
        Some("second simulated device")
    );
    assert!(gpu_status().to_string().contains("second simulated device"));
}

#[test]
fn status_table_walks_every_gate() {
    let mut fx = Fixture::new();
    declare_backend("ghost", "ghost-gpu", false);
    fx.remove_on_drop("ghost");
    fx.sim(SimulatedBackend::new("sima"));
    let table = gpu_status();
    let ghost = table.rows.iter().find(|r| r.backend == "ghost").unwrap();
    assert!(!ghost.installed && !ghost.registered);
    assert_eq!(
        ghost.reason,
        "not compiled in; build gearbox with feature \"ghost-gpu\""
    );
    let sim = table.rows.iter().find(|r| r.backend == "sima").unwrap();
    assert!(sim.installed && sim.registered && sim.available);
    assert_eq!(sim.health, Health::Unprobed);
    assert!(sim.reason.contains("not probed yet"), "{}", sim.reason);
    assert_eq!(
        use_gpu(UseGpuOptions {
            backend: Some("sima".into()),
            quiet: true
        })
        .as_deref(),
        Some("sima")
    );
    let sim = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "sima")
        .unwrap();
    assert_eq!(sim.health, Health::Healthy);
    assert!(sim.f64_conformant && sim.reason.is_empty());
    let printed = gpu_status().to_string();
    let x = random([100, 100], 40, Precision::Fast);
    let sq = x.sqrt().unwrap();
    sq.eval().unwrap();
    let table = gearbox_core::runtime::residency_table();
    assert!(
        table.iter().any(|e| e.backend == "sima"
            && (e.node, e.op) == (sq.node_id(), "sqrt")
            && e.bytes == 100 * 100 * 8
            && !e.host_copy),
        "{table:?}"
    );
    drop(sq);
    assert!(!gearbox_core::runtime::residency_table()
        .iter()
        .any(|e| e.backend == "sima" && !e.host_copy));
    assert!(
        printed.contains("sima")
            && printed.contains("healthy")
            && printed.contains("simulated device")
    );

    set_options(RuntimeOptions {
        disabled: vec!["sima".into()],
        ..options()
    });
    let sim = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "sima")
        .unwrap();
    assert!(!sim.registered);
    assert_eq!(sim.reason, "disabled by GEARBOX_DISABLE_SIMA=1");
    set_options(RuntimeOptions {
        disabled: vec![],
        optional_backends: false,
        ..options()
    });
    let sim = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "sima")
        .unwrap();
    assert!(
        sim.reason.contains("GEARBOX_OPTIONAL_BACKENDS=0"),
        "{}",
        sim.reason
    );
}

#[test]
fn probe_crash_hang_and_wrong_answers_disable_the_backend() {
    let mut fx = Fixture::new();
    fx.sim(SimulatedBackend::new("simp"));
    for (inject, words) in [
        ("crash", "isolated GPU probe crashed"),
        ("hang", "hung for more than"),
        ("wrong", "probe check failed: float32 GEMM 64x64 (injected)"),
    ] {
        std::env::set_var("GEARBOX_PROBE_INJECT", inject);
        set_options(RuntimeOptions {
            probe_timeout: Duration::from_millis(1500),
            ..options()
        });
        assert_eq!(probe_backend("simp", true), Health::Unhealthy, "{inject}");
        let row = gpu_status()
            .rows
            .into_iter()
            .find(|r| r.backend == "simp")
            .unwrap();
        assert!(row.reason.contains(words), "{inject}: {}", row.reason);
        // The process that asked is alive and computing.
        assert_eq!(
            Array::from_vec([2], vec![1.0, 2.0])
                .unwrap()
                .sum()
                .unwrap()
                .item()
                .unwrap(),
            3.0
        );
    }
    std::env::remove_var("GEARBOX_PROBE_INJECT");
    assert_eq!(
        probe_backend("simp", true),
        Health::Healthy,
        "a clean probe passes again"
    );
}

#[test]
fn float64_probe_failure_keeps_strict_work_on_the_cpu() {
    let mut fx = Fixture::new();
    fx.sim(SimulatedBackend::new("simf").with_wrong_f64());
    assert_eq!(probe_backend("simf", true), Health::Unhealthy);
    let row = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "simf")
        .unwrap();
    assert!(row.reason.contains("float64 kernel"), "{}", row.reason);
}

#[test]
fn dispatch_gates_and_explain_reasons() {
    let mut fx = Fixture::new();
    fx.sim(SimulatedBackend::new("simd").with_thresholds(thresholds(10_000.0, 1_000.0)));
    assert_eq!(probe_backend("simd", false), Health::Healthy);

    // Large fast work passes every gate, cold.
    let big = random([200, 100], 1, Precision::Fast);
    let p = backend_plan(&big.exp().unwrap()).unwrap();
    assert_eq!((p.chosen.as_str(), p.path), ("simd", DataPath::Cold));
    assert_eq!(p.candidates[0].gates.len(), 6);
    assert!(p.to_string().contains("► CHOSEN simd"), "{p}");

    // Small work fails calibration with the threshold in the suggestion.
    let small = random([10, 10], 2, Precision::Fast);
    let p = backend_plan(&small.exp().unwrap()).unwrap();
    assert_eq!(p.chosen, "cpu");
    let calib = p.candidates[0].gates.last().unwrap();
    assert_eq!((calib.gate, calib.passed), (Gate::Calibration, false));
    assert!(
        p.suggestions[0].contains("skipped by calibration: 100 elements < threshold 10,000"),
        "{:?}",
        p.suggestions
    );
    assert!(p.suggestions[0].contains("re-run calibrate()"));

    // Forcing a backend skips the threshold, and says so.
    set_options(RuntimeOptions {
        force_backend: Some("simd".into()),
        ..options()
    });
    let p = backend_plan(&small.exp().unwrap()).unwrap();
    assert_eq!(p.chosen, "simd");
    assert!(
        p.candidates[0].gates[5]
            .detail
            .contains("GEARBOX_FORCE_BACKEND=simd"),
        "{p}"
    );
    set_options(RuntimeOptions {
        force_backend: None,
        ..options()
    });

    // Resident inputs use the lower resident threshold.
    let mid = random([50, 50], 3, Precision::Fast)
        .to_device("simd")
        .unwrap();
    assert_eq!(mid.device(), "simd");
    let p = backend_plan(&mid.exp().unwrap()).unwrap();
    assert_eq!((p.chosen.as_str(), p.path), ("simd", DataPath::Resident));
    assert!(p.residency.contains("resident on simd"));

    // Exact always stays on the CPU.
    let exact = random([200, 100], 4, Precision::Exact);
    let p = backend_plan(&exact.exp().unwrap()).unwrap();
    assert_eq!(p.chosen, "cpu");
    assert!(p.suggestions[0].contains("exact precision always runs on the CPU reference"));

    // Every reduction is device work (var has a fused kernel too).
    let p = backend_plan(&big.var().unwrap()).unwrap();
    assert_eq!(p.chosen, "simd");

    // Host-only operations never go to a device.
    let p = backend_plan(&Array::eye(300).unwrap()).unwrap();
    assert_eq!(p.chosen, "cpu");
    assert!(p.candidates[0]
        .gates
        .iter()
        .any(|g| g.gate == Gate::Supports && !g.passed && g.detail.contains("host-only")));

    // Scans are device work too, gated on elements.
    let p = backend_plan(&big.cumsum().unwrap()).unwrap();
    assert_eq!(
        (p.chosen.as_str(), p.size_unit, p.op.as_str()),
        ("simd", "elements", "cumsum")
    );

    // Library calls are gated on flops.
    let a = random([64, 64], 5, Precision::Fast);
    let p = backend_plan(&a.matmul(&a).unwrap()).unwrap();
    assert_eq!((p.chosen.as_str(), p.size_unit), ("simd", "flops"));
    assert_eq!(p.size, 2.0 * 64.0 * 64.0 * 64.0);
    // and the plan is data
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("\"chosen\":\"simd\""), "{json}");
}

#[test]
fn precision_rules() {
    let mut fx = Fixture::new();
    fx.sim(SimulatedBackend::new("simr").with_full_rate_f64(false));
    assert_eq!(probe_backend("simr", false), Health::Healthy);
    let strict64 = random([100, 100], 6, Precision::Strict);
    let p = backend_plan(&strict64.exp().unwrap()).unwrap();
    assert_eq!(p.chosen, "cpu");
    assert!(
        p.suggestions[0].contains("strict float64 needs full-rate float64"),
        "{:?}",
        p.suggestions
    );
    let strict32 = strict64.astype(DType::F32).unwrap();
    strict32.eval().unwrap();
    let p = backend_plan(&strict32.exp().unwrap()).unwrap();
    assert_eq!(
        p.chosen, "simr",
        "strict float32 data computes in float32 anywhere"
    );
    let fast = random([100, 100], 7, Precision::Fast);
    assert_eq!(backend_plan(&fast.exp().unwrap()).unwrap().chosen, "simr");
}

#[test]
fn capabilities_gate_routes_unsupported_work_to_the_cpu() {
    let mut fx = Fixture::new();
    let caps = Capabilities {
        dtypes: vec![DType::F32],
        fused_kernels: true,
        fused_reductions: false,
        library: vec![],
        unsupported_ops: vec!["tanh".into()],
        integer_overflow_checks: true,
        scalar_fns: true,
    };
    fx.sim(SimulatedBackend::new("simc").with_capabilities(caps));
    let x = random([100, 100], 8, Precision::Fast)
        .astype(DType::F32)
        .unwrap();
    x.eval().unwrap();
    let reason = |a: &Array| backend_plan(a).unwrap().suggestions.join(" ");
    assert!(reason(&x.tanh().unwrap()).contains("tanh is on simc's unsupported list"));
    assert!(reason(&x.sum().unwrap()).contains("runs no fused reductions"));
    assert!(reason(&x.matmul(&x).unwrap()).contains("offers no matmul"));
    let x64 = random([100, 100], 9, Precision::Fast);
    assert!(reason(&x64.exp().unwrap()).contains("does not compute f64"));
    assert_eq!(backend_plan(&x.exp().unwrap()).unwrap().chosen, "simc");
}

#[test]
fn an_unsupported_entry_with_a_dtype_declines_that_dtype_only() {
    let mut fx = Fixture::new();
    let caps = Capabilities {
        unsupported_ops: vec!["exp:f32".into()],
        ..Capabilities::everything()
    };
    fx.sim(SimulatedBackend::new("simd").with_capabilities(caps));
    let x64 = random([100, 100], 11, Precision::Fast);
    x64.eval().unwrap();
    let x32 = x64.astype(DType::F32).unwrap();
    x32.eval().unwrap();
    let p32 = backend_plan(&x32.exp().unwrap()).unwrap();
    assert_eq!(p32.chosen, "cpu");
    assert!(
        p32.suggestions
            .join(" ")
            .contains("exp of f32 is on simd's unsupported list"),
        "{:?}",
        p32.suggestions
    );
    assert_eq!(backend_plan(&x64.exp().unwrap()).unwrap().chosen, "simd");
    assert_eq!(backend_plan(&x32.sin().unwrap()).unwrap().chosen, "simd");
}

fn no_source(_: &[&str]) -> gearbox_core::Result<String> {
    Ok(String::new())
}

static TEST_LIBRARY: gearbox_core::fusion::ir::DeviceLibrary =
    gearbox_core::fusion::ir::DeviceLibrary {
        name: "runtime_test",
        assemble: no_source,
    };

/// twice(x) = 2 x, a scalar function of a device library.
static TWICE: gearbox_core::fusion::ir::ScalarFn = gearbox_core::fusion::ir::ScalarFn {
    name: "test_twice",
    device_name: "test_twice",
    arity: 1,
    flags: 0,
    eval: |a, _| 2.0 * a[0],
    library: &TEST_LIBRARY,
    partials: None,
};

#[test]
fn kernels_calling_scalar_functions_avoid_backends_without_their_source() {
    let mut fx = Fixture::new();
    let caps = Capabilities {
        scalar_fns: false,
        ..Capabilities::everything()
    };
    fx.sim(SimulatedBackend::new("simf").with_capabilities(caps));
    let x = random([100, 100], 10, Precision::Fast);
    x.eval().unwrap();
    let called = Array::call_fn(&TWICE, &[&x], 0).unwrap();
    let plan = backend_plan(&called).unwrap();
    assert_eq!(plan.chosen, "cpu");
    assert!(
        plan.suggestions
            .join(" ")
            .contains("simf's kernels have no device source of test_twice"),
        "{:?}",
        plan.suggestions
    );
    let want: Vec<f64> = x.to_vec::<f64>().unwrap().iter().map(|v| 2.0 * v).collect();
    assert_eq!(called.to_vec::<f64>().unwrap(), want);
    assert_eq!(backend_plan(&x.exp().unwrap()).unwrap().chosen, "simf");
}

#[test]
fn auto_probe_off_needs_use_gpu() {
    let mut fx = Fixture::new();
    set_options(RuntimeOptions {
        auto_probe: false,
        ..options()
    });
    fx.sim(SimulatedBackend::new("simo"));
    let x = random([100, 100], 17, Precision::Fast);
    let z = x.exp().unwrap();
    z.eval().unwrap();
    assert_eq!(z.device(), "cpu");
    let row = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "simo")
        .unwrap();
    assert!(
        row.reason.contains("GEARBOX_AUTO_PROBE=0"),
        "{}",
        row.reason
    );
    assert_eq!(
        use_gpu(UseGpuOptions {
            backend: None,
            quiet: true
        })
        .as_deref(),
        Some("simo")
    );
    let z = x.sin().unwrap();
    z.eval().unwrap();
    assert_eq!(z.device(), "simo");
}

#[test]
fn a_backend_without_a_device_is_unavailable_with_the_reason() {
    let mut fx = Fixture::new();
    fx.sim(
        SimulatedBackend::new("simu")
            .unavailable("libcuda.so.1 not found in /usr/local/cuda/lib64"),
    );
    let row = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "simu")
        .unwrap();
    assert!(row.registered && !row.available);
    assert!(
        row.reason.contains("no usable device") && row.reason.contains("libcuda.so.1 not found"),
        "{}",
        row.reason
    );
    let x = random([100, 100], 41, Precision::Fast);
    let p = backend_plan(&x.exp().unwrap()).unwrap();
    assert_eq!(p.chosen, "cpu");
    let gates = &p.candidates[0].gates;
    assert_eq!(
        (gates.len(), gates[1].gate, gates[1].passed),
        (2, Gate::Available, false)
    );
    assert!(use_gpu(UseGpuOptions {
        backend: Some("simu".into()),
        quiet: true
    })
    .is_none());
}

#[test]
fn a_forced_backend_is_tried_before_backends_registered_earlier() {
    let mut f = Fixture::new();
    f.sim(SimulatedBackend::new("sima").with_thresholds(thresholds(100.0, 100.0)));
    f.sim(SimulatedBackend::new("simz").with_thresholds(thresholds(100.0, 100.0)));
    probe_backend("sima", false);
    probe_backend("simz", false);
    let x = random([100, 100], 7, Precision::Fast);
    // Registration order decides without a force...
    assert_eq!(backend_plan(&x.exp().unwrap()).unwrap().chosen, "sima");
    // ...and the forced backend comes first with one, though registered later.
    set_options(RuntimeOptions {
        force_backend: Some("simz".into()),
        ..options()
    });
    let p = backend_plan(&x.exp().unwrap()).unwrap();
    assert_eq!(p.chosen, "simz", "{p}");
    let y = x.exp().unwrap();
    y.eval().unwrap();
    assert_eq!(y.device(), "simz");
}
