//! The acceleration runtime against a simulated device: status gates, probe
//! isolation (crash, hang, wrong numbers), dispatch gates and explain reasons,
//! precision rules, residency, fallback, metrics and calibration files.
//!
//! The registry and options are process-wide, so every test takes one lock
//! and leaves the runtime as it found it.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use common::{assert_close, TestRng};
use gearbox_core::runtime::backend::Capabilities;
use gearbox_core::runtime::registry::{declare_backend, probe_backend, unregister_backend};
use gearbox_core::runtime::testing::{FailPoint, SimulatedBackend};
use gearbox_core::runtime::{
    backend_plan, fallback_log, fallback_log_reset, gpu_status, metrics, metrics_reset, options,
    set_options, use_gpu, DataPath, Gate, Health, RuntimeOptions, Threshold, UseGpuOptions,
    WorkClass,
};
use gearbox_core::{Array, DType, DeviceErrorKind, Precision};

static LOCK: Mutex<()> = Mutex::new(());

/// Holds the lock; on drop, removes test backends and restores options.
struct Fixture {
    _guard: MutexGuard<'static, ()>,
    saved: RuntimeOptions,
    names: Vec<&'static str>,
}

impl Fixture {
    fn new() -> Self {
        let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let saved = options();
        set_options(RuntimeOptions {
            quiet: true,
            ..RuntimeOptions::default()
        });
        fallback_log_reset();
        metrics_reset();
        Fixture {
            _guard: guard,
            saved,
            names: Vec::new(),
        }
    }

    fn sim(&mut self, sim: SimulatedBackend) -> Arc<SimulatedBackend> {
        let s = sim.register();
        self.names
            .push(gearbox_core::runtime::Backend::name(s.as_ref()));
        s
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for n in &self.names {
            unregister_backend(n);
        }
        set_options(self.saved.clone());
        std::env::remove_var("GEARBOX_PROBE_INJECT");
    }
}

fn thresholds(cold: f64, resident: f64) -> Vec<Threshold> {
    [
        WorkClass::Elementwise,
        WorkClass::Reduction,
        WorkClass::Gemm,
        WorkClass::Factorization,
    ]
    .into_iter()
    .flat_map(|class| {
        [DType::F32, DType::F64].map(|dtype| Threshold::from(class, dtype, cold, resident))
    })
    .collect()
}

fn random(shape: [usize; 2], seed: u64, precision: Precision) -> Array {
    let mut rng = TestRng::new(seed);
    let n = shape[0] * shape[1];
    Array::from_vec(shape, rng.vec(n, -2.0, 2.0))
        .unwrap()
        .with_precision(precision)
        .unwrap()
}

fn chain(x: &Array, y: &Array) -> Array {
    (x.exp().unwrap() * y + &x.sin().unwrap() - &(2.0 * y).unwrap()).unwrap()
}

fn reference_chain(x: &Array, y: &Array) -> Vec<f64> {
    let (xv, yv) = (x.to_vec::<f64>().unwrap(), y.to_vec::<f64>().unwrap());
    xv.iter()
        .zip(&yv)
        .map(|(a, b)| a.exp() * b + a.sin() - 2.0 * b)
        .collect()
}

#[test]
fn status_table_walks_every_gate() {
    let mut fx = Fixture::new();
    declare_backend("ghost", "ghost-gpu", false);
    fx.names.push("ghost");
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
        table
            .iter()
            .any(|e| e.backend == "sima" && e.bytes == 100 * 100 * 8 && !e.host_copy),
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

    // Host-only operations never go to a device.
    let p = backend_plan(&big.var().unwrap()).unwrap();
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
fn device_results_match_the_cpu_and_stay_resident() {
    let mut fx = Fixture::new();
    let sim = fx.sim(SimulatedBackend::new("sime"));
    let x = random([300, 200], 10, Precision::Fast);
    let y = random([300, 200], 11, Precision::Fast);
    let z = chain(&x, &y);
    let s = z.col_means().unwrap();
    let w = z.matmul(&z.t().unwrap()).unwrap().sum().unwrap();
    Array::eval_all(&[&s, &w]).unwrap();
    assert_eq!(z.device(), "sime");
    assert_eq!(
        sim.counters.downloads.load(Ordering::Relaxed),
        0,
        "a chain of device regions never visits the host"
    );
    let uploads = sim.counters.uploads.load(Ordering::Relaxed);
    assert!(uploads >= 2, "x and y were uploaded");
    assert!(sim.counters.kernels.load(Ordering::Relaxed) >= 2);
    assert!(sim.counters.library_calls.load(Ordering::Relaxed) >= 1);
    assert_close(
        &z.to_vec::<f64>().unwrap(),
        &reference_chain(&x, &y),
        1e-14,
        "chain on device",
    );
    assert_eq!(
        sim.counters.downloads.load(Ordering::Relaxed),
        1,
        "the host sink downloaded once"
    );
    let m = metrics().of("sime");
    assert_eq!(m.uploads.count, uploads);
    assert_eq!(m.downloads.count, 1);
    assert!(m.compute.count >= 3 && m.uploads.bytes >= 2 * 300 * 200 * 8);
    // gather brings it home and drops the device copy
    let g = z.gather().unwrap();
    assert_eq!(g.device(), "cpu");
}

#[test]
fn a_failing_device_falls_back_to_the_cpu_with_a_log_entry() {
    let mut fx = Fixture::new();
    let sim = fx.sim(SimulatedBackend::new("simx"));
    // Probe first: the probe exercises kernels too, and would meet the fault.
    assert_eq!(probe_backend("simx", false), Health::Healthy);
    let x = random([100, 50], 12, Precision::Fast);
    let y = random([100, 50], 13, Precision::Fast);

    // Out of memory: fall back, stay healthy.
    sim.fail(FailPoint::Kernel, 1, DeviceErrorKind::OutOfMemory);
    let z = chain(&x, &y);
    assert_close(
        &z.to_vec::<f64>().unwrap(),
        &reference_chain(&x, &y),
        1e-14,
        "after OOM",
    );
    assert_eq!(z.device(), "cpu");
    let log = fallback_log();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].from_backend.as_str(), log[0].to_backend.as_str()),
        ("simx", "cpu")
    );
    assert!(
        log[0].op.contains("exp") && log[0].reason.contains("out of memory"),
        "{:?}",
        log[0]
    );
    assert_eq!(
        gpu_status()
            .rows
            .into_iter()
            .find(|r| r.backend == "simx")
            .unwrap()
            .health,
        Health::Healthy
    );

    // A launch failure: fall back and mark unhealthy; later work stays on the CPU.
    sim.fail(FailPoint::Kernel, 1, DeviceErrorKind::Fault);
    let z = chain(&y, &x);
    assert_close(
        &z.to_vec::<f64>().unwrap(),
        &reference_chain(&y, &x),
        1e-14,
        "after a fault",
    );
    let row = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "simx")
        .unwrap();
    assert_eq!(row.health, Health::Unhealthy);
    assert!(
        row.reason.contains("failed at run time") && row.reason.contains("kernel launch failed")
    );
    assert_eq!(fallback_log().len(), 2);
    assert_eq!(metrics().of("simx").fallbacks, 2);
    let p = backend_plan(&x.exp().unwrap()).unwrap();
    assert_eq!(p.chosen, "cpu");
    assert!(
        p.suggestions[0].contains("'simx' unhealthy: failed at run time"),
        "{p}"
    );
    fallback_log_reset();
    assert!(fallback_log().is_empty());
}

#[test]
fn library_call_failure_falls_back() {
    let mut fx = Fixture::new();
    let sim = fx.sim(SimulatedBackend::new("siml"));
    assert_eq!(probe_backend("siml", false), Health::Healthy);
    sim.fail(FailPoint::Library, 1, DeviceErrorKind::Fault);
    let a = random([40, 30], 14, Precision::Fast);
    let b = random([30, 20], 15, Precision::Fast);
    let c = a.matmul(&b).unwrap();
    let mut want = vec![0.0; 40 * 20];
    let (av, bv) = (a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    for j in 0..20 {
        for k in 0..30 {
            for i in 0..40 {
                want[i + 40 * j] += av[i + 40 * k] * bv[k + 30 * j];
            }
        }
    }
    assert_close(
        &c.to_vec::<f64>().unwrap(),
        &want,
        1e-13,
        "matmul after fallback",
    );
    assert!(fallback_log()
        .iter()
        .any(|e| e.op == "matmul" && e.from_backend == "siml"));
}

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
fn a_data_error_on_the_device_reruns_on_the_cpu_and_keeps_the_backend_healthy() {
    let mut fx = Fixture::new();
    fx.sim(SimulatedBackend::new("simn"));
    assert_eq!(probe_backend("simn", false), Health::Healthy);
    let singular = Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 4.0]])
        .unwrap()
        .with_precision(Precision::Fast)
        .unwrap();
    let err = singular.inv().unwrap().eval().unwrap_err();
    assert!(matches!(err, gearbox_core::Error::Singular { .. }), "{err}");
    assert_eq!(
        gpu_status()
            .rows
            .into_iter()
            .find(|r| r.backend == "simn")
            .unwrap()
            .health,
        Health::Healthy
    );
    assert!(fallback_log()
        .iter()
        .any(|e| e.from_backend == "simn" && e.reason.contains("singular")));
}

#[test]
fn random_arrays_are_generated_on_the_device_with_the_cpu_stream() {
    let mut fx = Fixture::new();
    let sim = fx.sim(SimulatedBackend::new("simg"));
    set_options(RuntimeOptions {
        force_backend: Some("simg".into()),
        ..options()
    });
    for seed in [0u64, 7, u64::MAX] {
        let (u, z) = (
            Array::rand([1000], seed).unwrap(),
            Array::randn([1000], seed).unwrap(),
        );
        Array::eval_all(&[&u, &z]).unwrap();
        assert_eq!(
            (u.device(), z.device()),
            ("simg".to_string(), "simg".to_string()),
            "seed {seed}"
        );
        let want_u: Vec<f64> = (0..1000)
            .map(|i| gearbox_core::random::uniform_at(seed, i))
            .collect();
        let want_z: Vec<f64> = (0..1000)
            .map(|i| gearbox_core::random::normal_at(seed, i))
            .collect();
        assert_eq!(u.to_vec::<f64>().unwrap(), want_u);
        assert_eq!(z.to_vec::<f64>().unwrap(), want_z);
    }
    assert!(sim.counters.library_calls.load(Ordering::Relaxed) >= 6);
}

#[test]
fn work_too_big_for_the_device_and_the_host_is_a_clear_error() {
    let mut fx = Fixture::new();
    let sim = fx.sim(SimulatedBackend::new("simm"));
    assert_eq!(probe_backend("simm", false), Health::Healthy);
    set_options(RuntimeOptions {
        force_backend: Some("simm".into()),
        ..options()
    });
    sim.fail(FailPoint::Library, 1, DeviceErrorKind::OutOfMemory);
    // 2^42 f64 values: 32 TiB, more than any host here.
    let huge = Array::rand([1usize << 42], 1).unwrap();
    let err = huge.eval().unwrap_err().to_string();
    assert!(
        err.contains("out of memory")
            && err.contains("out of host memory")
            && err.contains("35184372088832 bytes")
            && err.contains("available"),
        "{err}"
    );
    assert_eq!(
        gpu_status()
            .rows
            .into_iter()
            .find(|r| r.backend == "simm")
            .unwrap()
            .health,
        Health::Healthy
    );
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

#[test]
fn independent_products_run_as_one_batched_device_call() {
    let mut fx = Fixture::new();
    let sim = fx.sim(SimulatedBackend::new("simb"));
    set_options(RuntimeOptions {
        force_backend: Some("simb".into()),
        ..options()
    });
    let b = random([24, 16], 40, Precision::Fast);
    let xs: Vec<Array> = (0..5)
        .map(|i| random([32, 24], 41 + i, Precision::Fast))
        .collect();
    let products: Vec<Array> = xs.iter().map(|x| x.matmul(&b).unwrap()).collect();
    Array::eval_all(&products.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!(sim.counters.batched_calls.load(Ordering::Relaxed), 1);
    assert_eq!(sim.counters.library_calls.load(Ordering::Relaxed), 5);
    for (x, p) in xs.iter().zip(&products) {
        assert_eq!(p.device(), "simb");
        let want = x.gather().unwrap().matmul(&b.gather().unwrap()).unwrap();
        set_options(RuntimeOptions {
            optional_backends: false,
            ..options()
        });
        assert_close(
            &p.to_vec::<f64>().unwrap(),
            &want.to_vec::<f64>().unwrap(),
            1e-6,
            "batched product",
        );
        set_options(RuntimeOptions {
            optional_backends: true,
            ..options()
        });
    }
}

#[test]
fn a_small_upload_beside_resident_data_takes_the_resident_path() {
    let mut fx = Fixture::new();
    // Cold never pays; resident does from 1,000 elements.
    fx.sim(SimulatedBackend::new("simr").with_thresholds(thresholds(f64::INFINITY, 1_000.0)));
    assert_eq!(probe_backend("simr", false), Health::Healthy);
    let big = random([400, 300], 60, Precision::Fast)
        .to_device("simr")
        .unwrap();
    let column = random([400, 1], 61, Precision::Fast);
    let plan = backend_plan(&(&big + &column).unwrap()).unwrap();
    assert_eq!(plan.chosen, "simr", "{plan}");
    assert_eq!(
        plan.path,
        gearbox_core::runtime::dispatch::DataPath::Resident
    );
    // The same column beside host data of the same size stays cold (CPU).
    let host = random([400, 300], 62, Precision::Fast);
    assert_eq!(
        backend_plan(&(&host + &column).unwrap()).unwrap().chosen,
        "cpu"
    );
    // Half the data on the host is not a small upload.
    let other = random([400, 300], 63, Precision::Fast);
    assert_eq!(
        backend_plan(&(&big + &other).unwrap()).unwrap().chosen,
        "cpu"
    );
}
