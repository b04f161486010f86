//! The GLM grid shape sweep of issue 11, Gearbox's side (PyTorch's is
//! `scripts/bench_glm_sweep_torch.py`; `scripts/gpu.sh run sweep` runs both
//! and `scripts/sweep_report.py` writes the table and heatmap): binomial
//! logit and poisson log over l1 x l2 x m1, float64, design resident on the device
//! and the grid there alone (no host copy), results left there. Each shape is timed by both
//! strategies (GEARBOX_GLM_STRATEGY aside) and by the cost model's choice,
//! so the choice can be checked against both. Shapes whose
//! observation-point pairs exceed `GEARBOX_SWEEP_MAX_PAIRS` (default 2e10)
//! are skipped; `GEARBOX_SWEEP_FAMILIES` (e.g. `poisson`) keeps some
//! families; `GEARBOX_SWEEP_PER_POINT_ONLY=1` times only the per-point
//! strategy (to compare its kernels, `GEARBOX_CUDA_GRID_MMA`). With `GEARBOX_SWEEP_CPU=1` the CPU path (all host cores)
//! runs the smaller shapes instead (pairs up to 3e8). No shape is started
//! after `GEARBOX_SWEEP_DEADLINE_S` seconds. Prints one JSON object per line.

use std::time::Instant;

use gearbox_core::{Array, Result};
use gearbox_stats::glm::{GlmModel, GlmSpec, Strategy};

mod support;

use support::{env_f64, env_list, median_ms, simulated_glm};

fn main() -> Result<()> {
    let gpu = support::sweep_on_gpu();
    let max_pairs = env_f64("GEARBOX_SWEEP_MAX_PAIRS", if !gpu { 3e8 } else { 2e10 });
    let l1s = env_list("GEARBOX_SWEEP_L1", &[300.0, 2000.0, 20000.0, 100000.0]);
    let l2s = env_list("GEARBOX_SWEEP_L2", &[4.0, 14.0, 32.0, 64.0]);
    let m1s = env_list("GEARBOX_SWEEP_M1", &[1e4, 1e5, 1e6, 5e6]);
    let deadline = env_f64("GEARBOX_SWEEP_DEADLINE_S", f64::INFINITY);
    let started = Instant::now();
    let wanted = std::env::var("GEARBOX_SWEEP_FAMILIES").unwrap_or_default();
    let per_point_only = std::env::var("GEARBOX_SWEEP_PER_POINT_ONLY").is_ok_and(|v| v == "1");
    let families = [("binomial", "logit"), ("poisson", "log")];
    for (family, link) in families {
        if !wanted.is_empty() && !wanted.contains(family) {
            continue;
        }
        for &l1 in &l1s {
            for &l2 in &l2s {
                let (l1, l2) = (l1 as usize, l2 as usize);
                let (x, y, beta) = simulated_glm(family, l1, l2)?;
                let x = Array::from_vec([l1, l2], x)?;
                let y = Array::from_vec([l1], y)?;
                if gpu {
                    x.to_device("cuda")?;
                }
                let spec = GlmSpec::parse(family, Some(link), None)?;
                let model = GlmModel::with_standard_prior(&x, &y, &spec)?;
                let beta = Array::from_vec([l2, 1], beta)?;
                for &m1 in &m1s {
                    let m1 = m1 as usize;
                    let pairs = l1 as f64 * m1 as f64;
                    if pairs > max_pairs {
                        continue;
                    }
                    if started.elapsed().as_secs_f64() > deadline {
                        eprintln!("deadline: stopped before {family} {l1} x {l2} x {m1}");
                        return Ok(());
                    }
                    let b = ((Array::randn([l2, m1], 2)? * 0.05)? + &beta)?;
                    let b = support::device_only(gpu, &b)?;
                    let reps = if pairs <= 2e9 { 3 } else { 1 };
                    let choice = model.choose_grid(&b, None)?;
                    let run = |s: Option<Strategy>| {
                        median_ms(gpu, reps, || model.grid_with(&b, s).map(|_| ()))
                    };
                    let (auto_ms, gemm_ms, per_point_ms) = if per_point_only {
                        (None, None, run(Some(Strategy::PerPoint))?)
                    } else {
                        let auto_ms = run(None)?;
                        let (gemm_ms, per_point_ms) = match choice.strategy {
                            Strategy::Gemm => (auto_ms, run(Some(Strategy::PerPoint))?),
                            Strategy::PerPoint => (run(Some(Strategy::Gemm))?, auto_ms),
                        };
                        (Some(auto_ms), Some(gemm_ms), per_point_ms)
                    };
                    let row = serde_json::json!({
                        "family": format!("{family}_{link}"), "l1": l1, "l2": l2, "m1": m1,
                        "device": if gpu { "cuda" } else { "cpu" },
                        "gemm_ms": gemm_ms, "per_point_ms": per_point_ms, "auto_ms": auto_ms,
                        "choice": choice.strategy.name(),
                        "est_gemm_ms": choice.gemm_seconds * 1e3,
                        "est_per_point_ms": choice.per_point_seconds * 1e3,
                    });
                    eprintln!("{row}");
                    println!("{row}");
                }
            }
        }
    }
    eprintln!("fallbacks: {:?}", gearbox_core::runtime::fallback_log());
    Ok(())
}
