//! The nmath functions on a real GPU against the CPU: every function, every
//! flag combination, random and edge-case arguments, compiled from the
//! device source files by NVRTC.
//! Prints `SKIP: <reason>` and passes where no usable CUDA device is present.

mod common;

use common::{argument_rows, gpu};
use gearbox_core::runtime::fallback_log;
use gearbox_core::{Array, Precision};
use gearbox_stats::elementwise::ALL;
use gearbox_stats::nmath;

fn column(rows: &[Vec<f64>], i: usize, p: Precision) -> Array {
    Array::from_vec(
        [rows.len()],
        rows.iter().map(|r| r[i]).collect::<Vec<f64>>(),
    )
    .unwrap()
    .with_precision(p)
    .unwrap()
}

/// The size errors are measured against: the value itself, except where
/// the function is computed as a difference of larger terms that R's own
/// algorithm cancels (a one-ulp difference between CUDA's and glibc's `log`
/// or `lgamma` then shows up relative to those terms, not to the result):
/// `stirlerr(n)` for `n <= 15` is `lgamma(n + 1) - (n + 1/2) log n + n -
/// log sqrt(2 pi)`, and the lgamma family crosses zero at 1 and 2. A
/// density or probability far in a tail is `exp` of a log-scale value `L`,
/// which carries its few ulps of `L` into a relative error of about
/// `|L| * eps`: it is measured at four ulps of `L` where that is larger.
fn scale(name: &str, row: &[f64], want: f64) -> f64 {
    let n = row[0];
    let tail = want.abs() * (4.0 * f64::EPSILON * want.abs().ln().abs() / 1e-13).max(1.0);
    match name {
        "stirlerr" if n <= 15.0 => {
            nmath::lgamma(n + 1.0).abs() + ((n + 0.5) * n.ln()).abs() + n.abs()
        }
        "lgamma" | "lgamma1p" | "lbeta" | "log1pmx" | "digamma" => want.abs().max(1e-3),
        _ => tail,
    }
}

/// Difference relative to [`scale`].
fn rel_err(name: &str, row: &[f64], got: f64, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if want.is_infinite() || got.is_infinite() {
        return if want == got { 0.0 } else { f64::INFINITY };
    }
    (got - want).abs() / scale(name, row, want).max(1e-300)
}

#[test]
fn every_nmath_function_matches_the_cpu_on_the_device() {
    let _serial = common::serial();
    if gpu() {
        every_function_matches_on("cuda");
    }
}

#[test]
fn every_nmath_function_matches_the_cpu_on_opencl() {
    let _serial = common::serial();
    if common::opencl() {
        every_function_matches_on("opencl");
    }
}

/// Every nmath function on backend `backend` (forced) against the CPU, to
/// 1e-13 relative (R's scale for densities and tails, see `scale`).
fn every_function_matches_on(backend: &str) {
    let mut worst: Vec<(f64, String)> = Vec::new();
    for f in ALL {
        let rows = argument_rows(f.name, 2000, 23);
        for flags in 0..(1u8 << f.flags) {
            let dev_args: Vec<Array> = (0..f.arity)
                .map(|i| column(&rows, i, Precision::Strict))
                .collect();
            let refs: Vec<&Array> = dev_args.iter().collect();
            let g = Array::call_fn(f, &refs, flags).unwrap();
            g.eval().unwrap();
            assert_eq!(g.device(), backend, "{} ran on {backend}", f.name);
            let got = g.to_vec::<f64>().unwrap();
            let mut max = (0.0f64, String::new());
            for (row, gv) in rows.iter().zip(&got) {
                let want = (f.eval)(row, flags);
                let e = rel_err(f.name, row, *gv, want);
                if e > max.0 {
                    max = (
                        e,
                        format!("{}({row:?}; {flags:#b}) gpu {gv:e} cpu {want:e}", f.name),
                    );
                }
            }
            worst.push(max);
        }
    }
    for (e, what) in &worst {
        println!("max rel err {e:.2e}: {what}");
    }
    let bad: Vec<_> = worst.iter().filter(|(e, _)| *e > 1e-13).collect();
    assert!(bad.is_empty(), "over 1e-13: {bad:#?}");
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}
