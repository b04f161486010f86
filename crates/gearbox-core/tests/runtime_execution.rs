//! Work on a simulated device: results equal the CPU's and stay resident,
//! random streams are the CPU's, independent products go as one batched
//! call, and small uploads beside resident data take the resident path.

mod common;

use std::sync::atomic::Ordering;

use common::assert_close;
use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::testing::SimulatedBackend;
use gearbox_core::runtime::{backend_plan, metrics, options, set_options, Health, RuntimeOptions};
use gearbox_core::{Array, Precision};

use common::runtime::{chain, random, reference_chain, thresholds, Fixture};

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

/// Routing skips the plan's details, not its gates: every piece of work
/// runs where `explain` says it goes, on both sides of the thresholds, for
/// each precision, cold and resident, fused and library work.
#[test]
fn work_runs_where_explain_says_it_goes() {
    let mut fx = Fixture::new();
    let sim = fx.sim(SimulatedBackend::new("simr").with_thresholds(thresholds(5000.0, 2000.0)));
    assert_eq!(probe_backend("simr", false), Health::Healthy);
    let mut seen = std::collections::BTreeSet::new();
    for (k, rows) in [10usize, 30, 60, 100].into_iter().enumerate() {
        for precision in [Precision::Fast, Precision::Strict, Precision::Exact] {
            for resident in [false, true] {
                let x = random([rows, 40], 20 + k as u64, precision);
                let y = random([rows, 40], 30 + k as u64, precision);
                if resident {
                    x.to_device("simr").unwrap();
                    y.to_device("simr").unwrap();
                }
                for work in [
                    chain(&x, &y),
                    x.matmul(&y.t().unwrap()).unwrap(),
                    x.sum().unwrap(),
                ] {
                    let planned = backend_plan(&work).unwrap().chosen;
                    let calls = sim.counters.kernels.load(Ordering::Relaxed)
                        + sim.counters.library_calls.load(Ordering::Relaxed);
                    work.eval().unwrap();
                    let after = sim.counters.kernels.load(Ordering::Relaxed)
                        + sim.counters.library_calls.load(Ordering::Relaxed);
                    let ran = if after > calls { "simr" } else { "cpu" };
                    assert_eq!(
                        ran, planned,
                        "{rows} x 40 {precision:?} resident {resident}"
                    );
                    seen.insert(ran);
                }
            }
        }
    }
    assert_eq!(seen.len(), 2, "both outcomes were exercised: {seen:?}");
}

/// The residency list does not grow with every device result: a loop that
/// makes ten thousand and drops them keeps it within a small bound, and
/// the values still alive stay listed.
#[test]
fn the_residency_list_stays_bounded_in_a_loop() {
    let mut fx = Fixture::new();
    fx.sim(SimulatedBackend::new("simb"));
    assert_eq!(probe_backend("simb", false), Health::Healthy);
    let x = random([4, 4], 50, Precision::Fast);
    x.to_device("simb").unwrap();
    let keep: Vec<Array> = (0..5).map(|k| (&x * (k as f64 + 2.0)).unwrap()).collect();
    Array::eval_all(&keep.iter().collect::<Vec<_>>()).unwrap();
    let mut y = x.clone();
    for _ in 0..10_000 {
        y = (&y * 0.5).unwrap();
        y.eval().unwrap();
    }
    assert_eq!(y.device(), "simb");
    let listed = gearbox_core::graph::residency_list_len();
    assert!(
        listed <= 256,
        "{listed} entries after 10,000 device results"
    );
    let table = gearbox_core::runtime::residency_table();
    let here = table.iter().filter(|e| e.backend == "simb").count();
    // x, the five kept values and the loop's last value.
    assert_eq!(here, 7, "{table:?}");
}
