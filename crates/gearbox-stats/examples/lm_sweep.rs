//! The many_lm shape sweep of issue 11, Gearbox's side (PyTorch's is
//! `scripts/bench_lm_sweep_torch.py`; `scripts/gpu.sh run sweep` runs both,
//! `scripts/lm_sweep_table.py` writes the table): n in {500, 4096, 20000},
//! p in {5, 50, 1024} (p < n, the intercept counted), k in {3, 1e3, 1e5,
//! 1e6}, float64, design and responses on the device alone (no host copy), the fit's
//! coefficients, standard errors, t values, sigma and R² evaluated (p-values
//! left lazy, as PyTorch computes none). Shapes whose Y exceeds
//! `GEARBOX_SWEEP_MAX_Y` values (default 2^30 on a GPU) are skipped; no shape
//! starts after `GEARBOX_SWEEP_DEADLINE_S` seconds. `GEARBOX_SWEEP_CPU=1`:
//! the CPU path (all host cores), Y up to 2^25 values. The lists can be
//! narrowed with `GEARBOX_SWEEP_N`, `_P`, `_K`. One JSON object per line.

mod support;

use std::time::Instant;

use gearbox_core::{Array, Result};
use gearbox_stats::lm::{many_lm, LmOptions};
use support::{env_f64, env_list, median_ms};

/// A shape list from the environment, as whole numbers.
fn sizes(var: &str, default: &[f64]) -> Vec<usize> {
    env_list(var, default)
        .into_iter()
        .map(|v| v as usize)
        .collect()
}

fn main() -> Result<()> {
    let gpu = support::sweep_on_gpu();
    let max_y = env_f64(
        "GEARBOX_SWEEP_MAX_Y",
        if gpu { 2f64.powi(30) } else { 2f64.powi(25) },
    );
    let deadline = env_f64("GEARBOX_SWEEP_DEADLINE_S", f64::INFINITY);
    let started = Instant::now();
    let opts = LmOptions::default();
    for n in sizes("GEARBOX_SWEEP_N", &[500.0, 4096.0, 20000.0]) {
        for p in sizes("GEARBOX_SWEEP_P", &[5.0, 50.0, 1024.0]) {
            if p >= n {
                continue;
            }
            let x = support::device_only(gpu, &Array::randn([n, p - 1], 3)?)?;
            for k in sizes("GEARBOX_SWEEP_K", &[3.0, 1e3, 1e5, 1e6]) {
                if (n * k) as f64 > max_y {
                    continue;
                }
                if started.elapsed().as_secs_f64() > deadline {
                    eprintln!("deadline: stopped before {n} x {p} x {k}");
                    return Ok(());
                }
                let y = support::device_only(gpu, &Array::randn([n, k], 4)?)?;
                let reps = if n * k <= 1 << 24 { 5 } else { 1 };
                let ms = median_ms(gpu, reps, || {
                    let fit = many_lm(&x, &y, &opts)?;
                    Array::eval_all(&[&fit.coefficients, &fit.std_errors, &fit.t_values])
                })?;
                let row = serde_json::json!({
                    "n": n, "p": p, "k": k, "device": if gpu { "cuda" } else { "cpu" }, "ms": ms,
                });
                eprintln!("{row}");
                println!("{row}");
            }
        }
    }
    eprintln!("fallbacks: {:?}", gearbox_core::runtime::fallback_log());
    Ok(())
}
