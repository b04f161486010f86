//! Where many_lm's time goes on a GPU (n = 2,000, p = 10, k = 100,000,
//! Y resident): the whole fit, the effects GEMM `Q'Y`, the one-pass
//! residual sum of squares, and the host-device traffic of one fit
//! (docs/perf/stats.md). Needs a CUDA device.

use std::time::Instant;

use gearbox_core::runtime::metrics::Counter;
use gearbox_core::runtime::{metrics, set_options, Backend, RuntimeOptions};
use gearbox_core::{Array, Result};
use gearbox_stats::lm::{many_lm, LmOptions};

fn sync() -> Result<()> {
    gearbox_cuda::shared().expect("a CUDA device").synchronize()
}

/// Median of 7 synchronized runs of `f`, in ms, after one warm-up.
fn median_ms(label: &str, mut f: impl FnMut() -> Result<()>) -> Result<()> {
    f()?;
    sync()?;
    let mut t: Vec<f64> = (0..7)
        .map(|_| {
            let s = Instant::now();
            f().and_then(|_| sync())
                .map(|_| s.elapsed().as_secs_f64() * 1e3)
        })
        .collect::<Result<_>>()?;
    t.sort_by(f64::total_cmp);
    eprintln!("{label}: {:.3} ms", t[3]);
    Ok(())
}

fn delta(a: &Counter, b: &Counter) -> String {
    format!(
        "{} x, {:.2} MB, {:.3} ms",
        b.count - a.count,
        (b.bytes - a.bytes) as f64 / 1e6,
        (b.seconds - a.seconds) * 1e3
    )
}

fn main() -> Result<()> {
    gearbox_cuda::register();
    set_options(RuntimeOptions {
        quiet: true,
        ..RuntimeOptions::from_env()
    });
    gearbox_core::runtime::use_gpu(Default::default());
    let (n, p, k) = (2_000usize, 10usize, 100_000usize);
    let x = Array::randn([n, p - 1], 3)?;
    let y = Array::randn([n, k], 4)?;
    y.eval()?;
    let y = y.to_device("cuda")?;
    let opts = LmOptions::default();
    // LM_DIAG_ONLY_RSS=1: only the residual pass, once (for a profiler).
    let only_rss = std::env::var("LM_DIAG_ONLY_RSS").is_ok_and(|v| v == "1");
    if !only_rss {
        median_ms("many_lm (p-values lazy)", || {
            many_lm(&x, &y, &opts).map(|_| ())
        })?;
        median_ms("many_lm with p-values", || {
            many_lm(&x, &y, &opts)?.p_values.eval()
        })?;
    }
    let q = Array::randn([n, p], 5)?.to_device("cuda")?;
    median_ms("effects GEMM Q'Y", || q.crossprod(&y)?.eval())?;
    let effects = q.crossprod(&y)?;
    effects.eval()?;
    let q_host = q.to_vec::<f64>()?;
    let columns: Vec<Array> = (0..p)
        .map(|i| Array::from_vec([n, 1], q_host[i * n..(i + 1) * n].to_vec()))
        .collect::<Result<_>>()?;
    let rows: Vec<Array> = (0..p)
        .map(|i| effects.slice(0, i..i + 1))
        .collect::<Result<_>>()?;
    if only_rss {
        let mut r = y.clone();
        for (c, e) in columns.iter().zip(&rows) {
            r = r.sub(&c.mul(e)?)?;
        }
        for a in columns.iter().chain(&rows) {
            a.eval()?;
        }
        sync()?;
        return r.mul(&r)?.col_sums()?.eval().and_then(|_| sync());
    }
    median_ms("residual sum of squares, one pass", || {
        let mut r = y.clone();
        for (c, e) in columns.iter().zip(&rows) {
            r = r.sub(&c.mul(e)?)?;
        }
        r.mul(&r)?.col_sums()?.eval()
    })?;
    median_ms("column sums of Y^2 (a plain pass)", || {
        y.mul(&y)?.col_sums()?.eval()
    })?;
    let before = metrics().of("cuda");
    let s = Instant::now();
    many_lm(&x, &y, &opts)?;
    sync()?;
    let wall = s.elapsed().as_secs_f64() * 1e3;
    let after = metrics().of("cuda");
    eprintln!(
        "one fit ({wall:.3} ms wall): uploads {}; downloads {}; compute {}",
        delta(&before.uploads, &after.uploads),
        delta(&before.downloads, &after.downloads),
        delta(&before.compute, &after.compute)
    );
    Ok(())
}
