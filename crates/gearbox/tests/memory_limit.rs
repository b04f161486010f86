//! `GEARBOX_MEMORY_LIMIT`: a device pool holds no more than the limit;
//! elementwise passes and full reductions that would pass it run on the
//! device in pieces (same values as the CPU), work that cannot be split
//! is rerun on the CPU with a fallback log entry naming the limit (the
//! right answer, never an out-of-memory crash), and work under it runs on
//! the device as before. Forced onto OpenCL (pocl in CI, CPU devices
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

#[test]
fn work_past_the_limit_runs_in_pieces_or_on_the_cpu_with_a_log_entry() {
    let _g = lock();
    // 1 MiB: a 2^16-element f64 chain (512 KiB a buffer) fits, 2^18 does not.
    std::env::set_var("GEARBOX_MEMORY_LIMIT", "1MiB");
    gearbox::init();
    gearbox::opencl::allow_cpu_devices(true);
    if !OPENCL.forced_and_healthy() {
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
