//! Per-stage GPU timings of one GLM grid chunk (l1 = 100,000, l2 = 32, 1,342
//! grid columns, as `glm_grid` takes them): the GEMM `X B`, the fused
//! term/column-sum/slope kernel and its parts, a plain column sum and a
//! copy-like pass for comparison, and `X' slopes`. Used to find where
//! `glm_grid`'s time goes (docs/perf/stats.md). Needs a CUDA device.

use gearbox_core::runtime::{set_options, Backend, RuntimeOptions};
use gearbox_core::{Array, Result};
use gearbox_stats::glm::{terms, GlmSpec};
use std::time::Instant;
fn sync() -> Result<()> {
    gearbox_cuda::shared().unwrap().synchronize()
}
fn t(label: &str, mut f: impl FnMut() -> Result<()>) -> Result<()> {
    f()?;
    sync()?;
    let s = Instant::now();
    for _ in 0..5 {
        f()?;
    }
    sync()?;
    eprintln!("{label}: {:.3} ms", s.elapsed().as_secs_f64() * 1e3 / 5.0);
    Ok(())
}
fn main() -> Result<()> {
    gearbox_cuda::register();
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: Some("cuda".into()),
        ..RuntimeOptions::from_env()
    });
    gearbox_core::runtime::use_gpu(Default::default());
    let (l1, l2, c) = (100_000usize, 32usize, 1342usize);
    let x = Array::randn([l1, l2], 1)?.to_device("cuda")?;
    let b = (Array::randn([l2, c], 2)? * 0.05)?;
    b.eval()?;
    let b = b.to_device("cuda")?;
    let big = Array::randn([l2, 10_000], 3)?.to_device("cuda")?;
    let y = Array::from_vec([l1, 1], (0..l1).map(|i| (i % 2) as f64).collect::<Vec<_>>())?
        .to_device("cuda")?;
    let wt = Array::from_vec([l1, 1], vec![1.0; l1])?.to_device("cuda")?;
    let alpha = Array::from_vec([l1, 1], vec![0.0; l1])?.to_device("cuda")?;
    let disp = Array::scalar(1.0);
    t("slice of B", || big.slice(1, 0..c)?.eval())?;
    t("gemm X B", || x.matmul(&b)?.eval())?;
    let g = x.matmul(&b)?;
    g.eval()?;
    for fam in [("binomial", "logit"), ("poisson", "log")] {
        let spec = GlmSpec::parse(fam.0, Some(fam.1), None)?;
        let (llf, llb) = terms::loglik_fn(&spec);
        let (sf, sb) = terms::slope_fn(&spec);
        t(&format!("{} fused (eta, ll colsum, slopes)", fam.0), || {
            let eta = (&g + &alpha)?;
            let obs = [&y, &wt, &eta, &disp];
            let ll = Array::call_fn(llf, &obs, llb)?.sum_axis(0)?;
            let sl = Array::call_fn(sf, &obs, sb)?;
            Array::eval_all(&[&ll, &sl])
        })?;
        t(&format!("{} ll colsum only", fam.0), || {
            let eta = (&g + &alpha)?;
            Array::call_fn(llf, &[&y, &wt, &eta, &disp], llb)?
                .sum_axis(0)?
                .eval()
        })?;
        t(&format!("{} slopes only", fam.0), || {
            let eta = (&g + &alpha)?;
            Array::call_fn(sf, &[&y, &wt, &eta, &disp], sb)?.eval()
        })?;
    }
    // The hoisted terms a GlmModel uses (terms::grid_calls): R's exact
    // path with the row constants as columns, then with the certified
    // closed forms; poisson also with counts 0..12 (y = i % 13).
    let y01: Vec<f64> = (0..l1).map(|i| (i % 2) as f64).collect();
    let y13: Vec<f64> = (0..l1).map(|i| (i % 13) as f64).collect();
    let ones = vec![1.0; l1];
    for (fam, link, yv, tag) in [
        ("binomial", "logit", &y01, "y 0/1"),
        ("poisson", "log", &y01, "y 0/1"),
        ("poisson", "log", &y13, "y 0..12"),
    ] {
        let spec = GlmSpec::parse(fam, Some(link), None)?;
        for fast in [false, true] {
            let (ll, sl) = terms::grid_calls(&spec, yv, &ones, fast);
            let columns = |call: &terms::TermCall| -> Result<Vec<Option<Array>>> {
                call.args
                    .iter()
                    .map(|a| match a {
                        terms::TermArg::Column(v) => Ok(Some(
                            Array::from_vec([l1, 1], v.clone())?.to_device("cuda")?,
                        )),
                        _ => Ok(None),
                    })
                    .collect()
            };
            let (llc, slc) = (columns(&ll)?, columns(&sl)?);
            let call = |c: &terms::TermCall, cols: &[Option<Array>], eta: &Array| {
                let args: Vec<&Array> = c
                    .args
                    .iter()
                    .zip(cols)
                    .map(|(a, col)| match a {
                        terms::TermArg::Eta => eta,
                        terms::TermArg::Dispersion => &disp,
                        terms::TermArg::Column(_) => col.as_ref().unwrap(),
                    })
                    .collect();
                Array::call_fn(c.f, &args, c.flags)
            };
            let what = if fast { "closed forms" } else { "exact" };
            t(
                &format!("{fam} hoisted {what}, {tag} (ll colsum, slopes)"),
                || {
                    let eta = (&g + &alpha)?;
                    let l = call(&ll, &llc, &eta)?.sum_axis(0)?;
                    let s = call(&sl, &slc, &eta)?;
                    Array::eval_all(&[&l, &s])
                },
            )?;
            t(
                &format!("{fam} hoisted {what}, {tag} (ll colsum only)"),
                || {
                    let eta = (&g + &alpha)?;
                    call(&ll, &llc, &eta)?.sum_axis(0)?.eval()
                },
            )?;
        }
    }
    t("plain colsum of G", || g.sum_axis(0)?.eval())?;
    t("G*2 (copy-like)", || (&g * 2.0)?.eval())?;
    let sl = (&g * 0.5)?;
    sl.eval()?;
    t("crossprod X slopes", || x.crossprod(&sl)?.eval())?;
    whole_grid(&x, &y, &wt, &alpha, &big)
}

/// One whole 10,000-point grid through `GlmModel::grid` (7.5 chunks), its
/// one-chunk equivalent, and the host-device traffic of one grid, to
/// separate per-chunk host work from kernel time.
fn whole_grid(x: &Array, y: &Array, wt: &Array, alpha: &Array, big: &Array) -> Result<()> {
    use gearbox_stats::glm::GlmModel;
    let l2 = x.dims()[1];
    let mu = Array::zeros([l2], gearbox_core::DType::F64)?;
    let p = Array::eye(l2)?;
    let spec = GlmSpec::parse("binomial", Some("logit"), None)?;
    let model = GlmModel::new(x, y, wt, alpha, &mu, &p, &spec)?;
    let one_chunk = big.slice(1, 0..1342)?;
    one_chunk.eval()?;
    t("grid: one chunk (1342 points)", || {
        model.grid(&one_chunk).map(|_| ())
    })?;
    t("grid: 10,000 points", || model.grid(big).map(|_| ()))?;
    let before = gearbox_core::runtime::metrics().of("cuda");
    let s = Instant::now();
    model.grid(big)?;
    sync()?;
    let wall = s.elapsed().as_secs_f64() * 1e3;
    let after = gearbox_core::runtime::metrics().of("cuda");
    let d = |a: &gearbox_core::runtime::metrics::Counter,
             b: &gearbox_core::runtime::metrics::Counter| {
        format!(
            "{} x, {:.2} MB, {:.3} ms",
            b.count - a.count,
            (b.bytes - a.bytes) as f64 / 1e6,
            (b.seconds - a.seconds) * 1e3
        )
    };
    eprintln!(
        "grid traffic ({wall:.3} ms wall): uploads {}; downloads {}; compute {}",
        d(&before.uploads, &after.uploads),
        d(&before.downloads, &after.downloads),
        d(&before.compute, &after.compute)
    );
    let parts: Vec<Array> = (0..8)
        .map(|k| (&one_chunk * (k as f64 + 1.0)).and_then(|a| a.eval().map(|_| a)))
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = parts.iter().collect();
    t("concat of 8 resident 32 x 1342 chunks", || {
        Array::concat(&refs, 1)?.eval()
    })?;
    near_the_truth(x)
}

/// Grids as the statistics benchmark draws them: responses simulated from
/// true coefficients, grid points within 0.05 of them (so eta stays near
/// each observation's mode), timed one synchronized grid at a time.
fn near_the_truth(x: &Array) -> Result<()> {
    use gearbox_stats::glm::GlmModel;
    let (l1, l2) = (x.dims()[0], x.dims()[1]);
    let xs = x.to_vec::<f64>()?;
    let beta: Vec<f64> = (0..l2)
        .map(|j| 0.5 / (l2 as f64).sqrt() * ((j % 3) as f64 - 1.0))
        .collect();
    let eta: Vec<f64> = (0..l1)
        .map(|i| (0..l2).map(|j| xs[i + j * l1] * beta[j]).sum())
        .collect();
    let noise = Array::randn([l2, 10_000], 9)?.to_vec::<f64>()?;
    let grid: Vec<f64> = noise
        .iter()
        .enumerate()
        .map(|(k, z)| beta[k % l2] + 0.05 * z)
        .collect();
    let b = Array::from_vec([l2, 10_000], grid)?.to_device("cuda")?;
    let mu = Array::zeros([l2], gearbox_core::DType::F64)?;
    let p = Array::eye(l2)?;
    let wt = Array::from_vec([l1], vec![1.0; l1])?;
    let alpha = Array::zeros([l1], gearbox_core::DType::F64)?;
    // Deterministic responses at the mean: round(exp(eta)) counts and
    // eta > 0 successes.
    for (family, link) in [("binomial", "logit"), ("poisson", "log")] {
        let y: Vec<f64> = eta
            .iter()
            .map(|e| match family {
                "binomial" => f64::from(*e > 0.0),
                _ => e.exp().round(),
            })
            .collect();
        let y = Array::from_vec([l1], y)?;
        let spec = GlmSpec::parse(family, Some(link), None)?;
        for fast in [true, false] {
            let model = GlmModel::new(x, &y, &wt, &alpha, &mu, &p, &spec)?.with_fast_terms(fast);
            model.grid(&b)?;
            sync()?;
            let mut times: Vec<f64> = (0..5)
                .map(|_| {
                    let s = Instant::now();
                    model
                        .grid(&b)
                        .and_then(|_| sync())
                        .map(|_| s.elapsed().as_secs_f64() * 1e3)
                })
                .collect::<Result<_>>()?;
            times.sort_by(f64::total_cmp);
            eprintln!(
                "{family} grid near the truth (fast terms {fast}), synchronized: {:.3} ms",
                times[2]
            );
        }
    }
    Ok(())
}
