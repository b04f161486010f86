//! many_lm over a design that lives on a device (or is large) factors it as
//! array work: `Q` is computed where the design is and never downloaded,
//! and every result, error and rank report equals the host path's. Checked
//! on a simulated device against the same fit of a host design.

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use gearbox_core::runtime::registry::{probe_backend, unregister_backend};
use gearbox_core::runtime::testing::{uniform_thresholds, SimulatedBackend};
use gearbox_core::runtime::{metrics, set_options, Health, RuntimeOptions};
use gearbox_core::{Array, DType};
use gearbox_stats::lm::{many_lm, LmOptions, ManyLm, SMALL_FIT_DOWNLOAD, SMALL_FIT_FLOPS};

static LOCK: Mutex<()> = Mutex::new(());
const SIM: &str = "simlm";

/// Registers a device that takes resident work of any size and cold work
/// never; unregisters it (and restores the options) when dropped.
struct Device {
    saved: RuntimeOptions,
    _guard: std::sync::MutexGuard<'static, ()>,
}

impl Device {
    fn new() -> (Device, std::sync::Arc<SimulatedBackend>) {
        let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let saved = set_options(RuntimeOptions {
            quiet: true,
            ..RuntimeOptions::default()
        });
        let thresholds = uniform_thresholds(f64::INFINITY, 0.0);
        let sim = SimulatedBackend::new(SIM)
            .with_thresholds(thresholds)
            .register();
        assert_eq!(probe_backend(SIM, false), Health::Healthy);
        (
            Device {
                saved,
                _guard: guard,
            },
            sim,
        )
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        unregister_backend(SIM);
        set_options(self.saved.clone());
    }
}

fn design(n: usize, q: usize, seed: u64) -> Vec<f64> {
    let x = Array::randn([n, q], seed).unwrap().to_vec::<f64>().unwrap();
    // Columns of very different scales, as real covariates have.
    x.iter()
        .enumerate()
        .map(|(at, v)| v * 10f64.powi((at / n) as i32 % 7 - 3))
        .collect()
}

fn results(fit: &ManyLm) -> Vec<Vec<f64>> {
    [
        &fit.coefficients,
        &fit.std_errors,
        &fit.t_values,
        &fit.p_values,
        &fit.sigma,
        &fit.r_squared,
    ]
    .iter()
    .map(|a| a.to_vec::<f64>().unwrap())
    .collect()
}

fn assert_same_fit(got: &ManyLm, want: &ManyLm, what: &str) {
    for (k, (g, w)) in results(got).iter().zip(results(want)).enumerate() {
        for (a, b) in g.iter().zip(&w) {
            assert!(
                (a - b).abs() <= 1e-10 * b.abs().max(1e-300) || (a - b).abs() < 1e-14,
                "{what}: result {k}: {a} vs {b}"
            );
        }
    }
}

#[test]
fn a_resident_design_is_factored_where_it_lives() {
    let (_device, sim) = Device::new();
    // Each fit above SMALL_FIT_FLOPS, which would run on the host.
    for (n, q, k, intercept) in [
        (2000, 7, 200, true),
        (1500, 12, 120, false),
        (64, 1, 20000, true),
    ] {
        assert!(n * (q + 1) * (q + 1 + k) > SMALL_FIT_FLOPS);
        let x = Array::from_vec([n, q], design(n, q, n as u64)).unwrap();
        let y = Array::randn([n, k], 7).unwrap();
        let opts = LmOptions {
            intercept,
            ..LmOptions::default()
        };
        let host = many_lm(&x, &y, &opts).unwrap();
        let xd = Array::from_vec([n, q], design(n, q, n as u64))
            .unwrap()
            .to_device(SIM)
            .unwrap();
        let yd = y.to_device(SIM).unwrap();
        let before = metrics().of(SIM);
        let factored = sim.counters.library_calls.load(Ordering::Relaxed);
        let fit = many_lm(&xd, &yd, &opts).unwrap();
        let after = metrics().of(SIM);
        // The factorization ran on the device, and what went up from the
        // host is p-sized (R⁻¹, scales, a mask), never the n x p Q.
        let p = q + usize::from(intercept);
        assert!(sim.counters.library_calls.load(Ordering::Relaxed) > factored);
        let up = after.uploads.bytes - before.uploads.bytes;
        assert!(
            up < (n * p * 8) as u64,
            "{up} bytes uploaded for a {n} x {p} design"
        );
        assert_same_fit(&fit, &host, &format!("{n} x {p}"));
    }
}

#[test]
fn errors_from_a_resident_design_are_the_host_path_words() {
    let (_device, _sim) = Device::new();
    // Responses enough for the fit to stay on the device (SMALL_FIT_FLOPS).
    let (n, q) = (120, 5);
    let base = design(n, q, 3);
    let y = Array::randn([n, 4000], 4).unwrap();
    let cases: Vec<(&str, Vec<f64>)> = vec![
        ("a NaN", {
            let mut x = base.clone();
            x[2 * n + 17] = f64::NAN;
            x
        }),
        ("an Inf", {
            let mut x = base.clone();
            x[4 * n + 3] = f64::INFINITY;
            x
        }),
        ("a zero column", {
            let mut x = base.clone();
            x[n..2 * n].iter_mut().for_each(|v| *v = 0.0);
            x
        }),
        ("a dependent column", {
            let mut x = base.clone();
            for i in 0..n {
                x[3 * n + i] = 2.0 * x[i] - x[2 * n + i];
            }
            x
        }),
        ("a column too small to scale", {
            let mut x = base.clone();
            x[..n].iter_mut().for_each(|v| *v *= 1e-310);
            x
        }),
    ];
    for (what, values) in cases {
        let host = Array::from_vec([n, q], values.clone()).unwrap();
        let want = many_lm(&host, &y, &LmOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: the host path refuses it"))
            .to_string();
        let xd = Array::from_vec([n, q], values)
            .unwrap()
            .to_device(SIM)
            .unwrap();
        let got = many_lm(&xd, &y, &LmOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{what}: the device path refuses it"))
            .to_string();
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn a_large_host_design_takes_the_array_path_with_the_same_fit() {
    // n p² at the threshold: factored as array work on the CPU. The fit
    // solves the normal equations: the residuals are orthogonal to every
    // column of [1 x].
    use gearbox_stats::lm::LARGE_DESIGN_FLOPS;
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let q = 63;
    let p = q + 1;
    let n = LARGE_DESIGN_FLOPS / (p * p) + 1;
    let x = Array::from_vec([n, q], design(n, q, 9)).unwrap();
    let y = Array::randn([n, 2], 10).unwrap();
    let fit = many_lm(&x, &y, &LmOptions::default()).unwrap();
    let coef = fit.coefficients.to_vec::<f64>().unwrap();
    let ones = Array::ones([n, 1], DType::F64).unwrap();
    let full = Array::cbind(&[&ones, &x]).unwrap();
    let b = Array::from_vec([p, 2], coef).unwrap();
    let residuals = y.sub(&full.matmul(&b).unwrap()).unwrap();
    let normal = full.crossprod(&residuals).unwrap().to_vec::<f64>().unwrap();
    let scale = full.crossprod(&y).unwrap().to_vec::<f64>().unwrap();
    let worst = scale.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for v in normal {
        assert!(v.abs() <= 1e-10 * worst.max(1.0), "X'r = {v}");
    }
}

#[test]
fn a_wide_resident_design_gets_the_householder_fit_by_products() {
    // 199 covariates and an intercept: on the device the two-pass Cholesky
    // QR (the one-pass bound is loose by up to p); on the host, Householder.
    let (_device, _sim) = Device::new();
    let (n, q, k) = (420, 199, 4);
    let x = Array::from_vec([n, q], design(n, q, 21)).unwrap();
    let y = Array::randn([n, k], 22).unwrap();
    let host = many_lm(&x, &y, &LmOptions::default()).unwrap();
    let xd = x.to_device(SIM).unwrap();
    let yd = y.to_device(SIM).unwrap();
    let fit = many_lm(&xd, &yd, &LmOptions::default()).unwrap();
    assert_same_fit(&fit, &host, &format!("{n} x {}", q + 1));
}

/// `a` computed on the simulated device, so that it lives only there.
fn device_only(a: &Array) -> Array {
    let before = set_options(RuntimeOptions {
        force_backend: Some(SIM.into()),
        quiet: true,
        ..RuntimeOptions::default()
    });
    let d = a.astype(DType::F64).unwrap();
    d.eval().unwrap();
    set_options(before);
    assert!(d.host_value().is_none() && d.device() == SIM);
    d
}

#[test]
fn a_small_fit_of_device_data_runs_on_the_host() {
    // Two downloads (design and responses) and nothing on the device: the
    // results live on the host and equal the host fit's. A fit just past
    // either limit stays on the device.
    let (_device, sim) = Device::new();
    let (n, q, k) = (300, 6, 5);
    let x = Array::from_vec([n, q], design(n, q, 31)).unwrap();
    let y = Array::randn([n, k], 32).unwrap();
    let host = many_lm(&x, &y, &LmOptions::default()).unwrap();
    let (xd, yd) = (device_only(&x), device_only(&y));
    let before = metrics().of(SIM);
    let calls = sim.counters.library_calls.load(Ordering::Relaxed);
    let fit = many_lm(&xd, &yd, &LmOptions::default()).unwrap();
    let after = metrics().of(SIM);
    assert_eq!(after.downloads.count - before.downloads.count, 2);
    assert_eq!(after.uploads.count, before.uploads.count);
    assert_eq!(after.compute.count, before.compute.count);
    assert_eq!(sim.counters.library_calls.load(Ordering::Relaxed), calls);
    assert_eq!(fit.coefficients.device(), "cpu");
    assert_same_fit(&fit, &host, "small fit from the device");

    // Past the download limit (the design alone) or the flop limit: the
    // design is factored on the device.
    let wide_n = SMALL_FIT_DOWNLOAD / q + 1;
    let many_k = SMALL_FIT_FLOPS / (n * (q + 1)) + 1;
    for (n, k) in [(wide_n, 1), (n, many_k)] {
        let x = Array::from_vec([n, q], design(n, q, 33)).unwrap();
        let y = Array::randn([n, k], 34).unwrap();
        let host = many_lm(&x, &y, &LmOptions::default()).unwrap();
        let (xd, yd) = (device_only(&x), device_only(&y));
        let calls = sim.counters.library_calls.load(Ordering::Relaxed);
        let fit = many_lm(&xd, &yd, &LmOptions::default()).unwrap();
        assert!(
            sim.counters.library_calls.load(Ordering::Relaxed) > calls,
            "{n} x {k}: factored on the device"
        );
        assert_same_fit(&fit, &host, &format!("{n} x {q} x {k} on the device"));
    }
}
