//! The statistics benchmark of issue 5, Gearbox's side (PyTorch's is
//! `scripts/bench_stats_torch.py`; `scripts/gpu.sh run` runs both and
//! `scripts/stats_table.py` writes the table): the GLM log-posterior grid
//! (l1 = 100,000 observations, l2 = 32 coefficients, m1 = 10,000 grid
//! points; binomial logit and poisson log) and many_lm (n = 2,000, p = 10,
//! k = 100,000), float64. GPU timings have the model and grid resident on
//! the device and leave the results there (medians of repeats, synchronized);
//! the CPU path (GPU off, all host cores) is timed once. `many_lm` leaves
//! its p-values lazy, as PyTorch's function computes none; `many_lm_with_p`
//! times the fit with the p-values evaluated too. Prints JSON.
//!
//! Sizes can be scaled down for a quick check with `GEARBOX_STATS_BENCH_SCALE`
//! (a divisor of l1, m1 and k). `GEARBOX_STATS_BENCH_BACKEND=opencl` (or
//! `cuda`) forces the GPU work onto that backend, whose name then prefixes
//! every key (`opencl/glm/...`); by default the dispatcher's GPU runs it,
//! unprefixed.

use std::time::Instant;

use gearbox_core::runtime::{options, set_options, RuntimeOptions};
use gearbox_core::{Array, Result};
use gearbox_stats::glm::{GlmModel, GlmSpec};
use gearbox_stats::lm::{many_lm, LmOptions};

mod support;

use support::{median_ms, simulated_glm, sync};

/// Runs `f` with the GPU backends left out (the multithreaded CPU path).
fn on_cpu<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let saved = set_options(RuntimeOptions {
        optional_backends: false,
        ..options()
    });
    let out = f();
    set_options(saved);
    out
}

/// A simulated GLM data set ([`simulated_glm`]) with unit weights and a
/// grid of `m1` points within about 0.05 of the true coefficients.
fn glm_data(family: &str, l1: usize, l2: usize, m1: usize) -> Result<(Array, Array, Array, Array)> {
    let (x, y, beta) = simulated_glm(family, l1, l2)?;
    let noise = Array::randn([l2, m1], 2)?.to_vec::<f64>()?;
    let grid: Vec<f64> = noise
        .iter()
        .enumerate()
        .map(|(k, z)| beta[k % l2] + 0.05 * z)
        .collect();
    Ok((
        Array::from_vec([l1, l2], x)?,
        Array::from_vec([l1], y)?,
        Array::from_vec([l1], vec![1.0; l1])?,
        Array::from_vec([l2, m1], grid)?,
    ))
}

fn main() -> Result<()> {
    gearbox_cuda::register();
    gearbox_opencl::register();
    let forced = std::env::var("GEARBOX_STATS_BENCH_BACKEND").ok();
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: forced.clone(),
        ..RuntimeOptions::from_env()
    });
    let gpu = match &forced {
        Some(name) => gearbox_core::runtime::bench::healthy(name).is_some(),
        None => gearbox_core::runtime::use_gpu(Default::default()).is_some(),
    };
    let dev = forced.clone().unwrap_or_else(|| "cuda".into());
    let dev = dev.as_str();
    let prefix = forced.map(|f| format!("{f}/")).unwrap_or_default();
    let scale: usize = std::env::var("GEARBOX_STATS_BENCH_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let with_cpu = std::env::var("GEARBOX_STATS_BENCH_CPU").is_ok_and(|v| v == "1");
    let (l1, l2, m1) = (100_000 / scale, 32, 10_000 / scale);
    let mut out = serde_json::Map::new();
    let mut put = |k: String, v: f64| {
        eprintln!("{k}: {v:.3} ms");
        out.insert(k, serde_json::json!(v));
    };
    for (family, link) in [("binomial", "logit"), ("poisson", "log")] {
        let (x, y, wt, b) = glm_data(family, l1, l2, m1)?;
        let alpha = Array::zeros([l1], gearbox_core::DType::F64)?;
        let mu = Array::zeros([l2], gearbox_core::DType::F64)?;
        let p = Array::eye(l2)?;
        let spec = GlmSpec::parse(family, Some(link), None)?;
        let model = GlmModel::new(&x, &y, &wt, &alpha, &mu, &p, &spec)?;
        let key = format!("{prefix}glm/{family}_{link}");
        if gpu {
            x.to_device(dev)?;
            b.to_device(dev)?;
            put(
                key.clone(),
                median_ms(gpu, 5, || model.grid(&b).map(|_| ()))?,
            );
            // Evidence that a grid stays on the device: its traffic.
            let before = gearbox_core::runtime::metrics().of(dev);
            model.grid(&b)?;
            sync(gpu)?;
            let after = gearbox_core::runtime::metrics().of(dev);
            eprintln!(
                "{key}: one grid uploads {} ({} bytes), downloads {} ({} bytes), {} regions on {dev}",
                after.uploads.count - before.uploads.count,
                after.uploads.bytes - before.uploads.bytes,
                after.downloads.count - before.downloads.count,
                after.downloads.bytes - before.downloads.bytes,
                after.compute.count - before.compute.count
            );
        }
        if with_cpu || !gpu {
            let (xh, bh) = (x.gather()?, b.gather()?);
            let host_model = GlmModel::new(&xh, &y, &wt, &alpha, &mu, &p, &spec)?;
            let s = Instant::now();
            on_cpu(|| host_model.grid(&bh).map(|_| ()))?;
            put(format!("cpu/{key}"), s.elapsed().as_secs_f64() * 1e3);
        }
    }
    let (n, p, k) = (2_000, 10, 100_000 / scale);
    let xs = Array::randn([n, p - 1], 3)?;
    let ys = Array::randn([n, k], 4)?;
    ys.eval()?;
    let opts = LmOptions::default();
    // many_lm leaves the p-values lazy: "many_lm" times what PyTorch's
    // function computes (no p-values), "many_lm_with_p" also evaluates them.
    if gpu {
        ys.to_device(dev)?;
        put(
            format!("{prefix}many_lm"),
            median_ms(gpu, 21, || many_lm(&xs, &ys, &opts).map(|_| ()))?,
        );
        put(
            format!("{prefix}many_lm_with_p"),
            median_ms(gpu, 21, || many_lm(&xs, &ys, &opts)?.p_values.eval())?,
        );
    }
    // A large design that lives on the device (4096 x 1024, a few
    // responses): its QR runs there (cuSOLVER), and Q never visits the host.
    if gpu && dev == "cuda" {
        let xl = Array::randn([4096, 1023], 5)?;
        let yl = Array::randn([4096, 3], 6)?;
        xl.to_device("cuda")?;
        yl.to_device("cuda")?;
        put(
            "many_lm_large/4096x1024x3".into(),
            median_ms(gpu, 7, || many_lm(&xl, &yl, &opts)?.t_values.eval())?,
        );
        // Where one fit's work ran, and what crossed to the host.
        let m = || gearbox_core::runtime::metrics();
        let (before, s) = (m(), Instant::now());
        many_lm(&xl, &yl, &opts)?.t_values.eval()?;
        let after = m();
        for backend in ["cuda", "cpu"] {
            let (b, a) = (before.of(backend), after.of(backend));
            eprintln!(
                "many_lm_large: {backend}: {} regions, {:.1} ms compute; {} uploads ({} bytes), {} downloads ({} bytes) in {:.1} ms wall",
                a.compute.count - b.compute.count,
                (a.compute.seconds - b.compute.seconds) * 1e3,
                a.uploads.count - b.uploads.count,
                a.uploads.bytes - b.uploads.bytes,
                a.downloads.count - b.downloads.count,
                a.downloads.bytes - b.downloads.bytes,
                s.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    if with_cpu || !gpu {
        let yh = ys.gather()?;
        let s = Instant::now();
        on_cpu(|| {
            let fit = many_lm(&xs, &yh, &opts)?;
            put("cpu/many_lm".into(), s.elapsed().as_secs_f64() * 1e3);
            fit.p_values.eval()
        })?;
        put("cpu/many_lm_with_p".into(), s.elapsed().as_secs_f64() * 1e3);
    }
    // Evidence of where the work ran: fallbacks, and compute per backend.
    let metrics = gearbox_core::runtime::metrics();
    for backend in [dev, "cpu"] {
        let m = metrics.of(backend);
        eprintln!(
            "{backend}: {} regions, {:.1} GB moved, {:.3} s",
            m.compute.count,
            m.compute.bytes as f64 / 1e9,
            m.compute.seconds
        );
    }
    eprintln!("fallbacks: {:?}", gearbox_core::runtime::fallback_log());
    out.insert(
        "_sizes".into(),
        serde_json::json!({"l1": l1, "l2": l2, "m1": m1, "n": n, "p": p, "k": k}),
    );
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
