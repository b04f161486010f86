//! The CUDA backend's runtime behaviour on a real GPU: the probe and its
//! crash isolation, residency, fallback on a launch failure, the memory
//! pool, staged transfers, out-of-memory, the kernel cache across
//! processes, the precision contract and the work the device declines. Every test prints
//! `SKIP: <reason>` and passes without a device.

mod gpu_common;

use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::{
    backend_plan, fallback_log, fallback_log_reset, gpu_status, metrics, set_options, Health,
    RuntimeOptions,
};
use gearbox_core::{Array, DType, Error, Precision};
use gpu_common::*;

#[test]
fn the_probe_reports_the_device() {
    let Some(_g) = gpu() else { return };
    let row = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "cuda")
        .unwrap();
    let d = row.device.expect("device info after the probe");
    println!(
        "device: {} ({} GiB, compute {:?}, driver {:?}, full-rate f64 {})",
        d.name,
        d.memory_bytes >> 30,
        d.compute_capability,
        d.driver,
        d.full_rate_f64
    );
    assert!(row.f64_conformant, "float64 probe checks pass");
    assert!(d.memory_bytes > 1 << 30);
}

#[test]
fn a_chain_of_gpu_regions_never_visits_the_host() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(23);
    let x = array(
        &[512, 512],
        rng.vec(512 * 512, -1.0, 1.0),
        DType::F32,
        Precision::Fast,
    );
    x.eval().unwrap();
    let before = metrics().of("cuda");
    let y = x
        .exp()
        .unwrap()
        .matmul(&x.t().unwrap())
        .unwrap()
        .tanh()
        .unwrap()
        .col_means()
        .unwrap()
        .sum()
        .unwrap();
    y.eval().unwrap();
    let mid = metrics().of("cuda");
    assert_eq!(y.device(), "cuda");
    assert_eq!(
        x.device(),
        "cuda",
        "x was cast on the GPU, so it is resident already"
    );
    assert_eq!(
        mid.downloads.count, before.downloads.count,
        "no download between GPU regions"
    );
    assert_eq!(mid.uploads.count, before.uploads.count, "no upload either");
    let v = y.item().unwrap();
    assert!(v.is_finite());
    assert_eq!(
        metrics().of("cuda").downloads.count,
        before.downloads.count + 1,
        "one download at the sink"
    );
}

#[test]
fn an_injected_launch_failure_falls_back_to_the_cpu() {
    let Some(_g) = gpu() else { return };
    fallback_log_reset();
    let mut rng = Rng(29);
    let v = rng.vec(10_000, -1.0, 1.0);
    gearbox_cuda::shared()
        .expect("registered")
        .inject_launch_failure();
    let z = array(&[10_000], v.clone(), DType::F64, Precision::Strict)
        .sin()
        .unwrap()
        .add_scalar(1.0)
        .unwrap();
    let got = z.to_vec::<f64>().unwrap();
    let want: Vec<f64> = v.iter().map(|a| a.sin() + 1.0).collect();
    close(&got, &want, 1e-15, "after fallback");
    let log = fallback_log();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].from_backend.as_str(), log[0].to_backend.as_str()),
        ("cuda", "cpu")
    );
    assert!(log[0].reason.contains("injected"), "{:?}", log[0]);
    let row = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "cuda")
        .unwrap();
    assert_eq!(row.health, Health::Unhealthy);
    assert_eq!(
        probe_backend("cuda", true),
        Health::Healthy,
        "a fresh probe restores it"
    );
}

#[test]
#[ignore]
fn child_probes_with_a_crash_injected() {
    gearbox_cuda::register();
    set_options(RuntimeOptions {
        quiet: true,
        ..RuntimeOptions::from_env()
    });
    std::env::set_var("GEARBOX_PROBE_INJECT", "crash");
    let crashed = probe_backend("cuda", true);
    let reason = gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == "cuda")
        .map(|r| r.reason)
        .unwrap_or_default();
    std::env::remove_var("GEARBOX_PROBE_INJECT");
    let again = probe_backend("cuda", true);
    println!("GEARBOX_PROBE crashed={crashed:?} again={again:?} reason={reason}");
}

#[test]
fn a_crashing_probe_is_contained() {
    let Some(_g) = gpu() else { return };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_probes_with_a_crash_injected",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = marker_line(&text, "GEARBOX_PROBE");
    println!("{line}");
    assert!(line.contains("crashed=Unhealthy"), "{line}");
    assert!(line.contains("isolated GPU probe crashed"), "{line}");
    assert!(
        line.contains("again=Healthy"),
        "the process that asked survived and a clean probe passes: {line}"
    );
}

#[test]
fn memory_stays_flat_over_ten_thousand_iterations() {
    let Some(_g) = gpu() else { return };
    let x = array(
        &[4096],
        Rng(31).vec(4096, -1.0, 1.0),
        DType::F32,
        Precision::Fast,
    );
    let mut pool_after_warmup = 0;
    for i in 0..10_000 {
        let y = x
            .mul_scalar(2.0)
            .unwrap()
            .add_scalar(1.0)
            .unwrap()
            .sum()
            .unwrap();
        y.eval().unwrap();
        if i == 99 {
            let m = metrics().of("cuda");
            pool_after_warmup = m.pool_bytes_in_use + m.pool_bytes_cached;
        }
    }
    let m = metrics().of("cuda");
    let (reused, fresh) = (m.pool_reused, m.pool_fresh);
    println!(
        "pool: {} bytes in use, {} cached; {reused} reused, {fresh} fresh allocations",
        m.pool_bytes_in_use, m.pool_bytes_cached
    );
    assert_eq!(
        m.pool_bytes_in_use + m.pool_bytes_cached,
        pool_after_warmup,
        "memory is flat"
    );
    assert!(reused > 10_000, "freed blocks are reused");
}

#[test]
fn out_of_memory_is_an_error_not_a_crash() {
    let Some(_g) = gpu() else { return };
    let b = gearbox_cuda::shared().unwrap();
    let dev = b.device().unwrap();
    match dev.pool.alloc(1 << 40, DType::F64) {
        Err(Error::Device { kind, reason, .. }) => {
            assert_eq!(kind, gearbox_core::DeviceErrorKind::OutOfMemory, "{reason}");
        }
        other => panic!("8 TiB allocated? {other:?}"),
    }
}

#[test]
#[ignore]
fn child_runs_a_chain() {
    let Some(_g) = gpu() else { return };
    let x = array(
        &[1000],
        Rng(37).vec(1000, -1.0, 1.0),
        DType::F32,
        Precision::Fast,
    );
    let y = x
        .exp()
        .unwrap()
        .mul(&x.cos().unwrap())
        .unwrap()
        .sum()
        .unwrap();
    y.eval().unwrap();
    assert_eq!(y.device(), "cuda");
    let m = metrics().of("cuda");
    println!(
        "GEARBOX_KERNELS hits={} misses={}",
        m.kernel_cache_hits, m.kernel_cache_misses
    );
}

#[test]
fn a_second_process_compiles_nothing() {
    let Some(_g) = gpu() else { return };
    let dir = std::env::temp_dir().join(format!("gearbox-kcache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = || {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_runs_a_chain",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("GEARBOX_CACHE_DIR", &dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let line = marker_line(&text, "GEARBOX_KERNELS");
        let num = |key: &str| {
            line.split(key)
                .nth(1)
                .and_then(|s| s.split_whitespace().next())
                .unwrap()
                .parse::<u64>()
                .unwrap()
        };
        (num("hits="), num("misses="))
    };
    let (_, first_misses) = run();
    let (second_hits, second_misses) = run();
    println!("first process compiled {first_misses}; second: {second_hits} hits, {second_misses} compiled");
    assert!(first_misses > 0);
    assert_eq!(second_misses, 0, "the second process compiled nothing");
    assert!(second_hits > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn threads_sharing_a_device_graph_each_get_the_value() {
    let Some(_g) = gpu() else { return };
    const THREADS: usize = 8;
    let build = |x: &gearbox_core::Array, y: &gearbox_core::Array| {
        let a = x.mul(y).unwrap().add_scalar(0.5).unwrap();
        let b = a.exp().unwrap().tanh().unwrap();
        let p = a.crossprod(&b).unwrap();
        vec![
            b.col_sums().unwrap(),
            p.clone(),
            p.sum().unwrap(),
            b.sum().unwrap(),
        ]
    };
    for round in 0..40u64 {
        let mut rng = Rng(100 + round);
        let (rows, cols) = (1000 + 37 * round as usize, 64);
        let x = array(
            &[rows, cols],
            rng.vec(rows * cols, -1.0, 1.0),
            DType::F64,
            Precision::Strict,
        );
        let y = array(
            &[1, cols],
            rng.vec(cols, -1.0, 1.0),
            DType::F64,
            Precision::Strict,
        );
        let reference: Vec<Vec<f64>> = build(
            &x.with_precision(Precision::Exact).unwrap(),
            &y.with_precision(Precision::Exact).unwrap(),
        )
        .iter()
        .map(|r| r.to_f64_vec().unwrap())
        .collect();
        x.to_device("cuda").unwrap();
        let roots = std::sync::Arc::new(build(&x, &y));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (roots, barrier) = (roots.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let k = t % roots.len();
                    (k, roots[k].to_f64_vec())
                })
            })
            .collect();
        for h in handles {
            let (k, got) = h.join().expect("no thread panics");
            let got = got.unwrap_or_else(|e| panic!("round {round}, root {k}: {e}"));
            close(
                &got,
                &reference[k],
                1e-12,
                &format!("round {round}, root {k}"),
            );
        }
    }
    println!("{THREADS} threads x 40 rounds on one device graph: every value matched the CPU");
}

#[test]
fn work_that_the_device_declines_runs_on_the_cpu() {
    // i64 results that can overflow (an error on the CPU; the kernels would
    // wrap) and i64 means (the kernels total in f64, the CPU exactly) are
    // declined by the capabilities gate, even when the GPU is forced: they
    // run on the CPU, with no fallback, and explain says why. (Products
    // run on the device, never overflowing on the way: gpu.rs.)
    let Some(_g) = gpu() else { return };
    fallback_log_reset();
    let data = Rng(61).vec(60_000, -1.0, 1.0);
    let x = |p| array(&[300, 200], data.clone(), DType::F64, p);
    let int = |p| x(p).gt_scalar(0.0).unwrap().astype(DType::I64).unwrap();
    type Build<'a> = Box<dyn Fn(Precision) -> Array + 'a>;
    let cases: [(&str, &str, Build); 4] = [
        (
            "astype",
            "astype from f64 to i64 can overflow",
            Box::new(|p| x(p).mul_scalar(10.0).unwrap().astype(DType::I64).unwrap()),
        ),
        (
            "i64 mul",
            "i64 mul can overflow",
            Box::new(|p| int(p).mul(&int(p)).unwrap()),
        ),
        (
            "i64 sum",
            "i64 sum can overflow",
            Box::new(|p| int(p).sum().unwrap()),
        ),
        (
            "i64 mean",
            "i64 mean divides the exact integer total",
            Box::new(|p| int(p).mean_axis(0).unwrap()),
        ),
    ];
    for (name, why, build) in cases {
        let plan = backend_plan(&build(Precision::Strict)).unwrap();
        assert_eq!(plan.chosen, "cpu", "{name}");
        assert!(
            plan.suggestions.join(" ").contains(why),
            "{name}: {:?}",
            plan.suggestions
        );
        let g = build(Precision::Strict);
        g.eval().unwrap();
        assert_eq!(g.device(), "cpu", "{name}");
        // The CPU's own numbers: the same work with the GPU off, bit for bit.
        let saved = set_options(RuntimeOptions {
            optional_backends: false,
            ..gearbox_core::runtime::options()
        });
        let c = build(Precision::Strict).to_f64_vec().unwrap();
        set_options(saved);
        assert_eq!(g.to_f64_vec().unwrap(), c, "{name}");
    }
    let zero = array(&[3], vec![1e300, 1e300, 0.0], DType::F64, Precision::Strict);
    assert_eq!(
        zero.prod().unwrap().item().unwrap(),
        0.0,
        "R's prod(c(1e300, 1e300, 0))"
    );
    // The exact total: a float64 accumulator would give 0.
    let big = Array::from_vec([2], vec![(1i64 << 60) + 1, -(1i64 << 60)]).unwrap();
    assert_eq!(big.mean().unwrap().item().unwrap(), 0.5);
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

#[test]
fn large_uploads_and_downloads_arrive_intact_from_many_threads() {
    let Some(_g) = gpu() else { return };
    use gearbox_core::runtime::backend::Backend;
    use gearbox_core::HostBuffer;
    use gearbox_cuda::staging::{STAGED_MIN_BYTES, STAGE_BYTES};
    let b = gearbox_cuda::shared().expect("the CUDA backend is registered");
    // Below and at the staging threshold, and over three staging buffers
    // (the last one part-filled, the first one reused), each way: the
    // download of every upload is staged too.
    let sizes = [
        STAGED_MIN_BYTES / 8 - 1,
        STAGED_MIN_BYTES / 8,
        5 * STAGE_BYTES / 16 + 3,
    ];
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let b = &b;
            s.spawn(move || {
                let mut rng = Rng(40 + t);
                for &n in &sizes {
                    let host = HostBuffer::F64(rng.vec(n, -1e3, 1e3));
                    let on_device = b.upload(&host).unwrap();
                    let back = b.download(on_device.as_ref()).unwrap();
                    assert!(
                        back == host,
                        "{n} values from thread {t} came back different"
                    );
                }
            });
        }
    });
}
