//! Memory you can see, and memory that does not creep: the pool's bytes in
//! use, peak and cached move as device buffers are made and dropped, and
//! `trim_pool` gives the cache back; a million small evaluations on the
//! CPU leave the host's resident memory flat, and a hundred thousand
//! regions forced onto OpenCL (pocl in CI, with CPU devices allowed) ask
//! the driver for no new block after warm-up and end with the bytes in use
//! they started with. (A debug build runs 400,000 CPU evaluations, for
//! time.) Without an OpenCL device the device tests print
//! `SKIP: ...`; `GEARBOX_REQUIRE_OPENCL=1` makes its absence a failure.

use gearbox::runtime::testing::gpu::{assert_ran_on, lock, on_cpu, work_on, UnderTest};
use gearbox::runtime::{
    fallback_log, memory_stats, metrics, options, reset_peak, set_options, trim_pool, MemoryStats,
};
use gearbox::Array;

const OPENCL: UnderTest = UnderTest {
    backend: "opencl",
    kind: "OpenCL",
    noun: "device",
    require: "GEARBOX_REQUIRE_OPENCL",
};

/// Runs `f` with OpenCL forced, when it has a usable device.
fn on_opencl(f: impl FnOnce()) {
    let _g = lock();
    gearbox::init();
    gearbox::opencl::allow_cpu_devices(true);
    let saved = options();
    if OPENCL.forced_and_healthy() {
        let before = work_on("opencl");
        f();
        assert_ran_on("opencl", before, "the regions");
        assert!(fallback_log().is_empty(), "{:?}", fallback_log());
    }
    set_options(saved);
}

/// OpenCL's memory now.
fn opencl() -> MemoryStats {
    memory_stats()
        .into_iter()
        .find(|(name, _)| name == "opencl")
        .map(|(_, s)| s)
        .expect("the OpenCL device is open")
}

/// `(x * 2 + 1).sum()` as a number.
fn small_region(x: &Array) -> f64 {
    ((x * 2.0).unwrap() + 1.0)
        .unwrap()
        .sum()
        .unwrap()
        .item()
        .unwrap()
}

#[test]
fn in_use_peak_and_cached_follow_the_buffers_and_trimming_gives_the_cache_back() {
    on_opencl(|| {
        let x = Array::randn([1000, 100], 1).unwrap();
        x.eval().unwrap();
        reset_peak();
        let start = opencl();
        assert_eq!(start.peak, start.in_use, "{start:?}");
        assert_eq!(start.device_free, None);
        assert!(start.device_total.is_some_and(|t| t > 0), "{start:?}");
        let y = ((&x * 2.0).unwrap().exp().unwrap() + &x).unwrap();
        y.eval().unwrap();
        let live = opencl();
        println!("start {start}\nlive  {live}");
        assert!(
            live.in_use >= start.in_use + 1000 * 100 * 8,
            "{start:?} {live:?}"
        );
        assert!(live.peak >= live.in_use, "{live:?}");
        drop(y);
        let freed = opencl();
        println!("freed {freed}");
        assert!(freed.in_use < live.in_use, "{live:?} {freed:?}");
        assert_eq!(freed.peak, live.peak);
        assert!(
            freed.cached >= live.cached + (live.in_use - freed.in_use),
            "{live:?} {freed:?}"
        );
        let cached: u64 = memory_stats().iter().map(|(_, s)| s.cached).sum();
        assert_eq!(trim_pool(), cached);
        let trimmed = opencl();
        println!("trimmed {trimmed}");
        assert_eq!((trimmed.cached, trimmed.in_use), (0, freed.in_use));
        assert_eq!(trim_pool(), 0);
    });
}

#[test]
fn gpu_regions_take_no_new_blocks_after_warm_up() {
    const REGIONS: usize = 100_000;
    on_opencl(|| {
        let x = Array::randn([64], 2).unwrap();
        let want = small_region(&x);
        let fresh = || metrics().of("opencl").pool_fresh;
        for _ in 0..100 {
            small_region(&x);
        }
        let (start, fresh_start) = (opencl(), fresh());
        for _ in 0..REGIONS {
            assert_eq!(small_region(&x), want);
        }
        let (end, fresh_end) = (opencl(), fresh());
        println!("{REGIONS} regions: {start} -> {end}; fresh blocks {fresh_start} -> {fresh_end}");
        assert_eq!(fresh_end, fresh_start);
        assert_eq!(end.in_use, start.in_use);
    });
}

/// The process's resident memory in bytes (Linux).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn many_small_evaluations_leave_host_memory_flat() {
    // A debug build evaluates about 60 us apiece on a small CI machine:
    // 400,000 there keeps the test under half a minute.
    const EVALUATIONS: usize = if cfg!(debug_assertions) {
        400_000
    } else {
        1_000_000
    };
    let _g = lock();
    on_cpu(|| {
        let x = Array::from_vec([4], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
        for _ in 0..10_000 {
            small_region(&x);
        }
        let before = resident_bytes();
        for _ in 0..EVALUATIONS {
            assert_eq!(small_region(&x), 24.0);
        }
        let after = resident_bytes();
        println!("{EVALUATIONS} evaluations: resident {before:?} -> {after:?} bytes");
        if let (Some(b), Some(a)) = (before, after) {
            assert!(a <= b + (4 << 20), "resident memory grew {b} -> {a}");
        }
    });
}
