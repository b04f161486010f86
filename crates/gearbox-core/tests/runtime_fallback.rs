//! Failures on a simulated device: the work reruns on the CPU with a log
//! entry, a device fault marks the backend unhealthy, an error about the
//! data does not, and work too big for both is a clear error.

mod common;

use common::assert_close;
use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::testing::{FailPoint, SimulatedBackend};
use gearbox_core::runtime::{
    backend_plan, fallback_log, fallback_log_reset, gpu_status, metrics, options, set_options,
    Health, RuntimeOptions,
};
use gearbox_core::{Array, DeviceErrorKind, Precision};

use common::runtime::{chain, random, reference_chain, Fixture};

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
    // The advice names the calls of where the library is called from.
    use gearbox_core::runtime::config::{set_surface, Surface};
    for (surface, status, again) in [
        (Surface::Rust, "gpu_status()", "use_gpu()"),
        (Surface::Cli, "`gearbox status`", "the next `gearbox` run"),
        (Surface::R, "gb_gpu_status()", "gb_use_gpu()"),
    ] {
        set_surface(surface);
        let advice = backend_plan(&x.exp().unwrap()).unwrap().suggestions[0].clone();
        assert!(
            advice.contains(status)
                && advice.contains(again)
                && (surface != Surface::Rust || !advice.contains("gb_")),
            "{surface:?}: {advice}"
        );
    }
    set_surface(Surface::Rust);
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
