//! `GEARBOX_MEMORY_LIMIT`: a device pool holds no more than the limit;
//! elementwise passes and full reductions that would pass it run on the
//! device in pieces (same values as the CPU), work that cannot be split
//! is rerun on the CPU with a fallback log entry naming the limit (the
//! right answer, never an out-of-memory crash), and work under it runs on
//! the device as before; a GLM grid keeps its chunks of points under it. Forced onto OpenCL (pocl in CI, CPU devices
//! allowed); without a device it prints `SKIP: ...`, and
//! `GEARBOX_REQUIRE_OPENCL=1` makes that a failure. The limit is read when
//! the device opens, so this binary sets it before anything else runs.

use gearbox::runtime::testing::gpu::{lock, on_cpu, work_on, UnderTest};
use gearbox::runtime::{fallback_log, fallback_log_reset, memory_stats};
use gearbox::Array;

const OPENCL: UnderTest = UnderTest {
    backend: "opencl",
    kind: "OpenCL",
    noun: "device",
    require: "GEARBOX_REQUIRE_OPENCL",
};

/// Sets a 1 MiB limit (before the device opens: it is read then) and
/// forces OpenCL with CPU devices allowed; whether it is usable.
fn opencl_under_the_limit() -> bool {
    std::env::set_var("GEARBOX_MEMORY_LIMIT", "1MiB");
    gearbox::init();
    gearbox::opencl::allow_cpu_devices(true);
    OPENCL.forced_and_healthy()
}

#[test]
fn work_past_the_limit_runs_in_pieces_or_on_the_cpu_with_a_log_entry() {
    let _g = lock();
    // 1 MiB: a 2^14-element f64 chain (128 KiB a buffer) fits, 2^18 does not.
    if !opencl_under_the_limit() {
        return;
    }
    let chain = |x: &Array| ((x * 2.0).unwrap().exp().unwrap() + x).unwrap();
    let held = || {
        memory_stats()
            .into_iter()
            .find(|(b, _)| b == "opencl")
            .map(|(_, s)| s.in_use + s.cached)
            .unwrap_or(0)
    };
    let cases: [(&str, usize); 3] = [
        ("fits", 1 << 14),
        ("in pieces", 1 << 18),
        ("summed in pieces", 1 << 18),
    ];
    for (what, n) in cases {
        let x = on_cpu(|| Array::randn([n], 5).unwrap().gather().unwrap());
        fallback_log_reset();
        let work = |x: &Array| {
            let y = chain(x);
            if what == "summed in pieces" {
                y.sum().unwrap()
            } else {
                y
            }
        };
        let want = on_cpu(|| work(&x).to_vec::<f64>().unwrap());
        let before = work_on("opencl");
        let got = work(&x).to_vec::<f64>().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "{what}: {g} vs {w}"
            );
        }
        let log = fallback_log();
        println!(
            "{what} (n = {n}): ran on opencl {}, fallbacks {log:?}",
            work_on("opencl") > before
        );
        assert!(log.is_empty(), "{what}: {log:?}");
        assert!(work_on("opencl") > before, "{what}: nothing ran on opencl");
        assert!(held() <= 1 << 20, "the pool holds {} bytes", held());
    }
    // A broadcast operand cannot be split into ranges: the CPU takes it.
    let x = on_cpu(|| Array::randn([512, 512], 6).unwrap().gather().unwrap());
    let row = on_cpu(|| Array::randn([1, 512], 7).unwrap().gather().unwrap());
    fallback_log_reset();
    let want = on_cpu(|| (&x * &row).unwrap().exp().unwrap().to_vec::<f64>().unwrap());
    let got = (&x * &row).unwrap().exp().unwrap().to_vec::<f64>().unwrap();
    assert_eq!(got, want);
    let log = fallback_log();
    assert!(
        log.iter()
            .any(|e| e.reason.contains("GEARBOX_MEMORY_LIMIT")),
        "no fallback naming the limit: {log:?}"
    );
    assert!(held() <= 1 << 20, "the pool holds {} bytes", held());
}

#[test]
fn a_glm_grid_takes_chunks_of_points_under_the_limit() {
    use gearbox::stats::glm::{glm_grid, glm_grid_reference, GlmProblem, GlmSpec};
    let _g = lock();
    if !opencl_under_the_limit() {
        return;
    }
    // 400 observations x 1500 points: 4.8 MB per l1 x m1 matrix in one piece.
    let (l1, l2, m1) = (400, 3, 1500);
    let arr = |shape: &[usize], v: Vec<f64>| Array::from_vec(shape.to_vec(), v).unwrap();
    let wave = |n: usize, k: f64| {
        (0..n)
            .map(|i| ((i as f64 + 1.0) * k).sin())
            .collect::<Vec<_>>()
    };
    let mut x = wave(l1 * l2, 0.37);
    x[..l1].fill(1.0);
    let y: Vec<f64> = (0..l1).map(|i| (i % 2) as f64).collect();
    let (xa, ya) = (arr(&[l1, l2], x), arr(&[l1], y));
    let (wa, aa) = (arr(&[l1], vec![1.0; l1]), arr(&[l1], vec![0.0; l1]));
    let b: Vec<f64> = wave(l2 * m1, 0.11).iter().map(|v| 0.3 * v).collect();
    let ba = arr(&[l2, m1], b.clone());
    let mu = arr(&[l2], vec![0.0; l2]);
    let p = arr(
        &[l2, l2],
        (0..l2 * l2)
            .map(|i| if i % (l2 + 1) == 0 { 1.0 } else { 0.0 })
            .collect(),
    );
    let spec = GlmSpec::parse("binomial", Some("logit"), None).unwrap();
    fallback_log_reset();
    let grid = glm_grid(&xa, &ya, &wa, &aa, &mu, &p, &ba, &spec).unwrap();
    let problem = GlmProblem::from_arrays("limit", &xa, &ya, &wa, &aa, &mu, &p, &spec).unwrap();
    let (qf, _) = glm_grid_reference(&problem, &b, m1);
    let got = grid.qf.to_vec::<f64>().unwrap();
    let worst = got
        .iter()
        .zip(&qf)
        .map(|(g, w)| (g - w).abs() / w.abs().max(1.0))
        .fold(0.0, f64::max);
    println!(
        "glm grid under a 1 MiB limit: worst {worst:.1e}, fallbacks {:?}",
        fallback_log()
    );
    assert!(worst < 1e-12, "worst {worst}");
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}
