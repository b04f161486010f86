//! The nmath functions on Arrays: every function against its scalar
//! version on random and edge-case arguments (the same Rust code, so
//! bit-identical), broadcasting, and fusion into a larger kernel.

mod common;

use common::argument_rows;
use gearbox_core::fusion::plan::{plan, Region};
use gearbox_core::runtime::{options, set_options, RuntimeOptions};
use gearbox_core::Array;
use gearbox_stats::elementwise::ALL;

fn column(rows: &[Vec<f64>], i: usize) -> Array {
    Array::from_vec(
        [rows.len()],
        rows.iter().map(|r| r[i]).collect::<Vec<f64>>(),
    )
    .unwrap()
}

#[test]
fn every_function_matches_its_scalar_version() {
    for f in ALL {
        let rows = argument_rows(f.name, 300, 11);
        let args: Vec<Array> = (0..f.arity).map(|i| column(&rows, i)).collect();
        let refs: Vec<&Array> = args.iter().collect();
        for flags in 0..(1u8 << f.flags) {
            let got = Array::call_fn(f, &refs, flags)
                .unwrap()
                .to_vec::<f64>()
                .unwrap();
            for (row, g) in rows.iter().zip(&got) {
                let want = (f.eval)(row, flags);
                assert!(
                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                    "{}({row:?}, flags {flags:#b}): array {g:e}, scalar {want:e}",
                    f.name
                );
            }
        }
    }
}

#[test]
fn named_functions_broadcast_and_fuse() {
    // Binomial log-likelihood of a 200 x 50 grid of probabilities for one
    // column of counts, summed per column: one fused kernel.
    let (n_obs, n_grid) = (200usize, 50usize);
    let size = Array::from_vec(
        [n_obs, 1],
        (0..n_obs).map(|i| (i % 7 + 1) as f64).collect::<Vec<_>>(),
    )
    .unwrap();
    let x = Array::from_vec(
        [n_obs, 1],
        (0..n_obs)
            .map(|i| ((i % 3) as f64).min((i % 7 + 1) as f64))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let eta = Array::from_vec(
        [n_obs, n_grid],
        (0..n_obs * n_grid)
            .map(|k| ((k * 7919) % 1000) as f64 / 250.0 - 2.0)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let build = || {
        let zero = Array::scalar(0.0);
        let one = Array::scalar(1.0);
        let p = gearbox_stats::plogis(&eta, &zero, &one, true, false).unwrap();
        gearbox_stats::dbinom(&x, &size, &p, true)
            .unwrap()
            .sum_axis(0)
            .unwrap()
    };
    let ll = build();
    let p = plan(&ll.pending_in_order(), &[&ll], true).unwrap();
    assert_eq!(p.regions.len(), 1, "plogis + dbinom + sum in one kernel");
    assert!(matches!(p.regions[0], Region::Fused(_)));
    let fused = ll.to_vec::<f64>().unwrap();
    let saved = set_options(RuntimeOptions {
        fusion: false,
        ..options()
    });
    let unfused = build().to_vec::<f64>().unwrap();
    set_options(saved);
    let (xv, sv, ev) = (
        x.to_vec::<f64>().unwrap(),
        size.to_vec::<f64>().unwrap(),
        eta.to_vec::<f64>().unwrap(),
    );
    for j in 0..n_grid {
        let want: f64 = (0..n_obs)
            .map(|i| {
                let p = gearbox_stats::nmath::plogis(ev[j * n_obs + i], 0.0, 1.0, true, false);
                gearbox_stats::nmath::dbinom(xv[i], sv[i], p, true)
            })
            .sum();
        for got in [fused[j], unfused[j]] {
            assert!(
                (got - want).abs() <= 1e-12 * want.abs(),
                "column {j}: {got} vs {want}"
            );
        }
    }
}
