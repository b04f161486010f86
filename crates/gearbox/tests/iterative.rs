//! The iterative examples written both ways (`gearbox::iterative`): IRLS
//! for a logistic regression and power iteration give the same numbers
//! with resident handles as with immutable arrays, on the CPU and on each
//! usable GPU backend (OpenCL on pocl and wgpu on lavapipe in CI; CUDA,
//! wgpu and OpenCL on the H100); the IRLS solution zeroes the score (the
//! maximum-likelihood condition); and once warm, the handle version asks
//! the device for no new memory per iteration and takes fewer pool blocks
//! than the immutable one (none where the backend's GEMM writes into a
//! buffer).

use gearbox::iterative::{
    irls_logistic, irls_logistic_resident, power_iteration, power_iteration_resident,
};
use gearbox::runtime::testing::gpu::{lock, on_cpu};
use gearbox::runtime::{memory_stats, metrics, options, set_options};
use gearbox::{Array, DType, UnaryOp};

mod common;

/// The backends to run on: "cpu", then each usable GPU backend.
fn backends() -> Vec<&'static str> {
    let mut names = vec!["cpu"];
    names.extend(common::usable_devices().iter().map(|d| d.backend));
    names
}

/// A logistic design with an intercept (n x p) and 0/1 responses drawn
/// from it.
fn logistic_data(n: usize, p: usize) -> (Array, Array) {
    on_cpu(|| {
        let noise = Array::randn([n, p - 1], 21).unwrap();
        let ones = Array::ones([n, 1], DType::F64).unwrap();
        let x = Array::concat(&[&ones, &noise], 1).unwrap();
        let truth =
            Array::from_vec([p, 1], (0..p).map(|j| 0.5 - 0.3 * j as f64).collect()).unwrap();
        let prob = x.matmul(&truth).unwrap().unary(UnaryOp::Sigmoid).unwrap();
        let y = Array::rand([n, 1], 22)
            .unwrap()
            .lt(&prob)
            .unwrap()
            .astype(DType::F64)
            .unwrap();
        x.eval().unwrap();
        y.eval().unwrap();
        (x, y)
    })
}

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0, f64::max)
}

#[test]
fn irls_gives_the_same_coefficients_both_ways_and_zeroes_the_score() {
    let _g = lock();
    let (x, y) = logistic_data(3000, 5);
    let immutable = on_cpu(|| irls_logistic(&x, &y, 12).unwrap().to_vec::<f64>().unwrap());
    // The maximum-likelihood condition: X'(y - mu) = 0.
    let beta = Array::from_vec([5, 1], immutable.clone()).unwrap();
    let score = on_cpu(|| {
        let mu = x.matmul(&beta).unwrap().unary(UnaryOp::Sigmoid).unwrap();
        x.crossprod(&(&y - &mu).unwrap())
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    });
    assert!(score.iter().all(|s| s.abs() < 1e-8), "score {score:?}");
    for b in backends() {
        let resident = irls_logistic_resident(&x, &y, 12, b)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let err = max_rel(&resident, &immutable);
        println!("irls on {b}: {resident:?}, worst relative difference {err:.1e}");
        assert!(err < 1e-9, "{b}: {resident:?} vs {immutable:?}");
    }
}

#[test]
fn power_iteration_gives_the_same_eigenpair_both_ways() {
    let _g = lock();
    let n = 64;
    let (a, start) = on_cpu(|| {
        let m = Array::randn([n, n], 31).unwrap();
        // Symmetric, with a clear gap at the top: eigenvalue 20 + O(1).
        let mut diag = vec![0.0; n * n];
        diag[0] = 20.0;
        let a = ((&m + &m.t().unwrap()).unwrap() * 0.05)
            .unwrap()
            .add(&Array::from_vec([n, n], diag).unwrap())
            .unwrap();
        a.eval().unwrap();
        (a, Array::ones([n, 1], DType::F64).unwrap())
    });
    let (lambda, v) = on_cpu(|| power_iteration(&a, &start, 60).unwrap());
    let residual = on_cpu(|| {
        let r = (&a.matmul(&v).unwrap() - &(&v * lambda).unwrap()).unwrap();
        (&r * &r).unwrap().sum().unwrap().item().unwrap().sqrt()
    });
    assert!(residual < 1e-8, "residual {residual}");
    let v = on_cpu(|| v.to_vec::<f64>().unwrap());
    for b in backends() {
        let (l, w) = power_iteration_resident(&a, &start, 60, b).unwrap();
        let w = w.to_vec::<f64>().unwrap();
        println!("power iteration on {b}: lambda {l} (immutable {lambda})");
        assert!(
            (l - lambda).abs() < 1e-10 * lambda.abs(),
            "{b}: {l} vs {lambda}"
        );
        assert!(max_rel(&w, &v) < 1e-9, "{b}: eigenvector differs");
    }
}

/// Pool blocks taken (reused and fresh) and fresh ones on `b` so far.
fn takes(b: &str) -> (u64, u64) {
    let m = metrics();
    let s = m.of(b);
    (s.pool_reused + s.pool_fresh, s.pool_fresh)
}

fn in_use(b: &str) -> u64 {
    memory_stats()
        .into_iter()
        .find(|(name, _)| name == b)
        .map_or(0, |(_, s)| s.in_use)
}

#[test]
fn warm_handles_ask_the_device_for_nothing_per_iteration() {
    let _g = lock();
    let (x, y) = logistic_data(2000, 4);
    for b in backends().into_iter().filter(|b| *b != "cpu") {
        let x = x.to_device(b).unwrap();
        let y = y.to_device(b).unwrap();
        // Per-iteration counts: the difference between runs of 2 and 6
        // iterations, over 4 (setup and the result cancel).
        let per_iteration = |f: &dyn Fn(usize)| {
            f(2); // warm: programs built, pool blocks made
            let (t0, f0) = takes(b);
            let u0 = in_use(b);
            f(2);
            let (t1, f1) = takes(b);
            f(6);
            let (t2, f2) = takes(b);
            let u2 = in_use(b);
            let taken = ((t2 - t1) as f64 - (t1 - t0) as f64) / 4.0;
            let fresh = ((f2 - f1) as f64 - (f1 - f0) as f64) / 4.0;
            (taken, fresh, u0, u2)
        };
        let handles = per_iteration(&|k| {
            irls_logistic_resident(&x, &y, k, b)
                .unwrap()
                .eval()
                .unwrap();
        });
        let immutable = per_iteration(&|k| {
            let options = options();
            set_options(gearbox::runtime::RuntimeOptions {
                force_backend: Some(b.into()),
                ..options.clone()
            });
            irls_logistic(&x, &y, k).unwrap().eval().unwrap();
            set_options(options);
        });
        println!(
            "{b}: pool blocks per IRLS iteration: handles {:.1} (fresh {:.1}), immutable {:.1} (fresh {:.1}); in use {} -> {} bytes",
            handles.0, handles.1, immutable.0, immutable.1, handles.2, handles.3
        );
        assert_eq!(handles.1, 0.0, "{b}: fresh device memory per iteration");
        assert_eq!(handles.2, handles.3, "{b}: bytes in use grew");
        assert!(handles.0 < immutable.0, "{b}: handles take no fewer blocks");
        if b == "cuda" {
            assert_eq!(handles.0, 0.0, "cuda: a block per iteration");
        }
    }
}
