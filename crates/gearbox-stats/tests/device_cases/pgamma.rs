//! The pgamma device functions (R's pgamma.c, split one function per file)
//! against the Rust functions, to 1e-13 relative, on the arguments of the
//! R reference table (which reach every branch of pgamma_raw) and extra
//! random ones.

use crate::common::have_engine;
use crate::devcheck::{check, flag, spread, FLAGS};
use crate::r_reference;
use gearbox_stats::nmath;

fn reference_args() -> Vec<Vec<f64>> {
    r_reference::rows(include_str!("../data/pgamma.csv"))
        .into_iter()
        .map(|r| r.args)
        .collect()
}

#[test]
fn pgamma_matches() {
    if !have_engine() {
        return;
    }
    let mut rows = reference_args();
    let (a, r) = (
        spread(200, 41, -3.0, 6.0, false),
        spread(200, 42, -2.0, 1.0, false),
    );
    for i in 0..200 {
        let (l, g) = FLAGS[i % 4];
        rows.push(vec![a[i] * r[i], a[i], 1.0, l, g]);
    }
    check("gb_pgamma", &rows, |r| {
        nmath::pgamma(r[0], r[1], r[2], flag(r[3]), flag(r[4]))
    });
}

#[test]
fn pgamma_raw_matches() {
    if !have_engine() {
        return;
    }
    // pgamma_raw assumes non-NaN x and alph > 0, unit scale
    let rows: Vec<Vec<f64>> = reference_args()
        .into_iter()
        .filter(|r| !r[0].is_nan() && r[1] > 0.0 && r[2] == 1.0)
        .map(|r| vec![r[0], r[1], r[3], r[4]])
        .collect();
    check("gb_pgamma_raw", &rows, |r| {
        nmath::pgamma_raw(r[0], r[1], flag(r[2]), flag(r[3]))
    });
}

#[test]
fn logspace_sub_matches() {
    if !have_engine() {
        return;
    }
    let (u, v) = (
        spread(100, 43, -3.0, 3.0, true),
        spread(100, 44, -3.0, 3.0, false),
    );
    // logx >= logy
    let mut rows: Vec<Vec<f64>> = u.iter().zip(&v).map(|(&a, &b)| vec![a, a - b]).collect();
    rows.extend([
        vec![0.0, f64::NEG_INFINITY],
        vec![1.0, 1.0],
        vec![f64::NAN, 1.0],
        vec![710.0, 700.0],
    ]);
    check("gb_logspace_sub", &rows, |r| {
        nmath::logspace_sub(r[0], r[1])
    });
}
