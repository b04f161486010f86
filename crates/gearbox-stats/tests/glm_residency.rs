//! A GLM grid over a design that lives on a device keeps every chunk's
//! work there: the model's small arrays (prior, offsets, dispersion, the
//! per-observation columns) follow the design to its device, so no chunk
//! downloads anything, even under thresholds that would send small host
//! work to the CPU. The one download is the finiteness verdict of a grid
//! that lives only on the device (its largest magnitude, one value).
//! Checked on a simulated device against the host result, by both
//! strategies.

use std::sync::atomic::Ordering;

use gearbox_core::runtime::registry::{probe_backend, unregister_backend};
use gearbox_core::runtime::testing::{uniform_thresholds, SimulatedBackend};
use gearbox_core::runtime::{options, set_options, Health, RuntimeOptions};
use gearbox_core::Array;
use gearbox_stats::glm::{GlmModel, GlmSpec, Strategy};

#[test]
fn a_grid_over_a_resident_design_never_downloads_a_chunk() {
    let saved = options();
    set_options(RuntimeOptions {
        quiet: true,
        ..RuntimeOptions::default()
    });
    // The device takes resident work of any size and cold work never.
    let thresholds = uniform_thresholds(f64::INFINITY, 0.0);
    let sim = SimulatedBackend::new("simglm")
        .with_thresholds(thresholds)
        .register();
    assert_eq!(probe_backend("simglm", false), Health::Healthy);

    let (l1, l2, m1) = (300, 4, 37);
    let x = Array::randn([l1, l2], 21).unwrap();
    let xs = x.to_vec::<f64>().unwrap();
    let y: Vec<f64> = (0..l1)
        .map(|i| ((xs[i] + 0.5 * xs[i + l1]).exp()).round())
        .collect();
    let y = Array::from_vec([l1], y).unwrap();
    let wt = Array::from_vec([l1], vec![1.0; l1]).unwrap();
    let alpha = Array::from_vec([l1], vec![0.1; l1]).unwrap();
    let mu = Array::from_vec([l2], vec![0.0, 0.1, -0.1, 0.2]).unwrap();
    let p = Array::eye(l2).unwrap();
    let b = (Array::randn([l2, m1], 22).unwrap() * 0.1).unwrap();
    b.eval().unwrap();
    let spec = GlmSpec::parse("poisson", Some("log"), None).unwrap();

    let host = GlmModel::new(&x, &y, &wt, &alpha, &mu, &p, &spec)
        .unwrap()
        .grid(&b)
        .unwrap();
    let want_qf = host.qf.to_vec::<f64>().unwrap();

    let xd = x.to_device("simglm").unwrap();
    let bd = b.to_device("simglm").unwrap();
    let model = GlmModel::new(&xd, &y, &wt, &alpha, &mu, &p, &spec).unwrap();
    for strategy in [Strategy::Gemm, Strategy::PerPoint] {
        let downloads = sim.counters.downloads.load(Ordering::Relaxed);
        let grid = model.grid_with(&bd, Some(strategy)).unwrap();
        Array::eval_all(&[&grid.qf, &grid.gradient]).unwrap();
        assert_eq!(
            sim.counters.downloads.load(Ordering::Relaxed),
            downloads + 1,
            "{strategy}: a chunk's work left the device"
        );
        assert_eq!(grid.qf.device(), "simglm");
        let got_qf = grid.qf.to_vec::<f64>().unwrap();
        for (g, w) in got_qf.iter().zip(&want_qf) {
            assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{g} vs {w}");
        }
    }
    // A grid on the device with a NaN: the host path's error, word for word.
    let mut bad = b.to_vec::<f64>().unwrap();
    bad[5] = f64::NAN;
    let bad = Array::from_vec([l2, m1], bad).unwrap();
    let host_error = GlmModel::new(&x, &y, &wt, &alpha, &mu, &p, &spec)
        .unwrap()
        .grid(&bad)
        .unwrap_err()
        .to_string();
    assert!(host_error.contains("NaN"), "{host_error}");
    let bad_on_device = bad.to_device("simglm").unwrap();
    let device_error = model.grid(&bad_on_device).unwrap_err().to_string();
    assert_eq!(device_error, host_error);
    unregister_backend("simglm");
    set_options(saved);
}
