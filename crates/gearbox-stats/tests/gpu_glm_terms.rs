//! The GLM term descriptors on a real GPU against the CPU: every base
//! (family, link), both values of the quasi flag, random and extreme
//! `(y, wt, eta, dispersion)`, compiled from the device files by NVRTC; and
//! a grid's log-likelihood (GEMM, then terms and column sums in one fused
//! kernel). NVRTC fuses multiply-adds and CUDA's `exp` and `log` may differ
//! from the host's by an ulp, so results agree to 1e-13 relative to the
//! quantities summed (`glm_rows::parts`), which is 1e-13 relative to the
//! result wherever nothing cancels. Prints `SKIP: <reason>` and passes
//! where no usable CUDA device is present.

mod common;
mod glm_rows;

use gearbox_core::fusion::ir::ScalarFn;
use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::{fallback_log, gpu_status, set_options, Health, RuntimeOptions};
use gearbox_core::{Array, Precision};
use gearbox_stats::glm::terms::{loglik_fn, ALL, ROW_ALL};
use gearbox_stats::glm::{loglik_term, Family, GlmSpec, Link};
use glm_rows::{agrees, parts, rows};

fn gpu() -> bool {
    gearbox_cuda::register();
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: Some("cuda".into()),
        ..RuntimeOptions::from_env()
    });
    if probe_backend("cuda", false) != Health::Healthy {
        let row = gpu_status().rows.into_iter().find(|r| r.backend == "cuda");
        println!(
            "SKIP: no usable CUDA device: {}",
            row.map_or("cuda not registered".into(), |r| r.reason)
        );
        return false;
    }
    true
}

fn column(rows: &[Vec<f64>], i: usize) -> Array {
    Array::from_vec(
        [rows.len()],
        rows.iter().map(|r| r[i]).collect::<Vec<f64>>(),
    )
    .unwrap()
    .with_precision(Precision::Strict)
    .unwrap()
}

/// `|got - want|` over the larger of `|want|` and `parts` (0 where both
/// are the same NaN or infinity, infinite where only one is).
fn scaled_error(got: f64, want: f64, parts: f64) -> f64 {
    if want.is_nan() || got.is_nan() || want.is_infinite() || got.is_infinite() {
        return if agrees(got, want, parts, 0.0) {
            0.0
        } else {
            f64::INFINITY
        };
    }
    (got - want).abs() / parts.max(want.abs()).max(f64::MIN_POSITIVE)
}

#[test]
fn every_glm_term_matches_the_cpu_on_the_device() {
    if !gpu() {
        return;
    }
    let mut worst: Vec<(f64, String)> = Vec::new();
    for f in ALL {
        let combo = f
            .name
            .strip_prefix("glm_ll_")
            .or_else(|| f.name.strip_prefix("glm_slope_"))
            .unwrap();
        let rows = rows(combo, 20_000, 0x9e37 ^ combo.len() as u64);
        let args: Vec<Array> = (0..4).map(|i| column(&rows, i)).collect();
        let refs: Vec<&Array> = args.iter().collect();
        for flags in 0..2u8 {
            worst.push(worst_on_device(f, &refs, &rows, flags, |row, want| {
                let mut full = row.to_vec();
                full.push(f64::from(flags));
                parts(f.name, &full, want, f.eval)
            }));
        }
    }
    assert_within_1e13(&worst);
}

#[test]
fn every_hoisted_glm_term_matches_the_cpu_on_the_device() {
    if !gpu() {
        return;
    }
    // Up to eight arguments per call (MAX_CALL_ARGS), the row constants as
    // columns; every combination of the quasi and fast flags.
    let mut worst: Vec<(f64, String)> = Vec::new();
    for combo in [
        "binomial_logit",
        "binomial_probit",
        "binomial_cloglog",
        "poisson_log",
    ] {
        let mut observations = rows(combo, 20_000, 0x7015 ^ combo.len() as u64);
        observations.extend(glm_rows::hoisted_edge_rows(combo));
        for (f, _, args) in glm_rows::grid_call_rows(combo, &observations, false) {
            if !ROW_ALL.iter().any(|g| g.name == f.name) {
                continue;
            }
            let columns: Vec<Array> = (0..f.arity).map(|i| column(&args, i)).collect();
            let refs: Vec<&Array> = columns.iter().collect();
            for flags in 0..(1u8 << f.flags) {
                worst.push(worst_on_device(f, &refs, &args, flags, |row, want| {
                    // Terms: relative to themselves; slopes: to the
                    // quantities they add.
                    let size = if f.name.starts_with("glm_row_slope_") {
                        let up = (f.eval)(&[row[0], row[1], 1.0, 1.0], 0).abs();
                        let down = (f.eval)(&[row[0], row[1], 0.0, 1.0], 0).abs();
                        row[2] * up + (row[3] - row[2]) * down
                    } else if f.name == "glm_row_ll_poisson_log" {
                        // The device's exp(eta) may differ from the host's
                        // by an ulp, which moves the term by about
                        // |eta| wt |k - exp(eta)| u: far above the term
                        // itself where k and exp(eta) are both ~1e307.
                        let (eta, wt, k) = (row[0], row[2], row[3]);
                        want.abs() + (eta * wt * (k - eta.exp())).abs()
                    } else {
                        want.abs()
                    };
                    if size.is_finite() {
                        size
                    } else {
                        want.abs()
                    }
                }));
            }
        }
    }
    assert_within_1e13(&worst);
}

/// Runs `f` on the device over `columns` (one per argument, the values of
/// `rows`) with flag bits `flags`: the largest error against the CPU,
/// scaled by `size(row, want)`, and which row it was.
fn worst_on_device(
    f: &'static ScalarFn,
    columns: &[&Array],
    rows: &[Vec<f64>],
    flags: u8,
    size: impl Fn(&[f64], f64) -> f64,
) -> (f64, String) {
    let g = Array::call_fn(f, columns, flags).unwrap();
    g.eval().unwrap();
    assert_eq!(g.device(), "cuda", "{} ran on the GPU", f.name);
    let got = g.to_vec::<f64>().unwrap();
    let mut max = (0.0f64, String::new());
    for (row, &gv) in rows.iter().zip(&got) {
        let want = (f.eval)(row, flags);
        let e = scaled_error(gv, want, size(row, want));
        if e > max.0 {
            max = (
                e,
                format!("{}({row:?}; flags {flags}) gpu {gv:e} cpu {want:e}", f.name),
            );
        }
    }
    max
}

/// Prints each function's worst scaled error; all must be within 1e-13,
/// with nothing fallen back to the CPU.
fn assert_within_1e13(worst: &[(f64, String)]) {
    for (e, what) in worst {
        println!("max scaled err {e:.2e}: {what}");
    }
    let bad: Vec<_> = worst.iter().filter(|(e, _)| *e > 1e-13).collect();
    assert!(bad.is_empty(), "over 1e-13: {bad:#?}");
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

#[test]
fn a_grid_log_likelihood_runs_as_gemm_and_one_kernel_on_the_device() {
    if !gpu() {
        return;
    }
    // Binomial cloglog, 5000 observations x 4 coefficients, 256 grid points.
    let (l1, l2, m1) = (5000usize, 4usize, 256usize);
    let value = |k: usize, scale: f64| ((k * 7919 + 13) % 997) as f64 / 997.0 * scale - scale / 2.0;
    let x_data: Vec<f64> = (0..l1 * l2)
        .map(|k| if k < l1 { 1.0 } else { value(k, 2.0) })
        .collect();
    let b_data: Vec<f64> = (0..l2 * m1).map(|k| value(k + 5000, 2.0)).collect();
    let wt_data: Vec<f64> = (0..l1).map(|i| (i % 9) as f64).collect();
    let y_data: Vec<f64> = (0..l1)
        .map(|i| {
            let n = (i % 9) as f64;
            if n == 0.0 {
                0.0
            } else {
                ((i * 31) % (i % 9 + 1)) as f64 / n
            }
        })
        .collect();
    let strict = |a: Array| a.with_precision(Precision::Strict).unwrap();
    let x = strict(Array::from_vec([l1, l2], x_data.clone()).unwrap());
    let b = strict(Array::from_vec([l2, m1], b_data.clone()).unwrap());
    let y = strict(Array::from_vec([l1, 1], y_data.clone()).unwrap());
    let wt = strict(Array::from_vec([l1, 1], wt_data.clone()).unwrap());
    let spec = GlmSpec::parse("binomial", Some("cloglog"), None).unwrap();
    let phi = strict(Array::scalar(spec.dispersion_or_one()));
    let eta = x.matmul(&b).unwrap();
    let (ll, flags) = loglik_fn(&spec);
    let total = Array::call_fn(ll, &[&y, &wt, &eta, &phi], flags)
        .unwrap()
        .sum_axis(0)
        .unwrap();
    total.eval().unwrap();
    assert_eq!(total.device(), "cuda");
    let got = total.to_vec::<f64>().unwrap();
    let mut worst = 0.0f64;
    for j in 0..m1 {
        let mut want = 0.0;
        let mut size = 0.0;
        for i in 0..l1 {
            let eta: f64 = (0..l2)
                .map(|k| x_data[i + l1 * k] * b_data[k + l2 * j])
                .sum();
            let t = loglik_term(
                Family::Binomial,
                Link::Cloglog,
                y_data[i],
                wt_data[i],
                eta,
                1.0,
            );
            want += t;
            size += t.abs();
        }
        worst = worst.max((got[j] - want).abs() / size);
    }
    println!("grid log-likelihood: max error {worst:.2e} of the sum of |terms|");
    // Summation order (and GEMM rounding in eta) differ from the host's.
    assert!(worst < 1e-12, "{worst:e}");
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}
