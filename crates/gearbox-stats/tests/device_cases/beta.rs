//! The beta-family device functions (TOMS 708 bratio and its helpers,
//! pbeta, pt) against the Rust functions, to 1e-13 relative, on the
//! arguments of the R reference table (which reach every branch of bratio)
//! and extra random ones.

use crate::common::have_engine;
use crate::devcheck::{check, flag, spread, unit, FLAGS};
use crate::r_reference;
use gearbox_stats::nmath;

const CSV: &str = include_str!("../data/beta.csv");

fn reference_args(name: &str) -> Vec<Vec<f64>> {
    r_reference::rows(CSV)
        .into_iter()
        .filter(|r| r.function == name)
        .map(|r| r.args)
        .collect()
}

#[test]
fn pbeta_matches() {
    if !have_engine() {
        return;
    }
    let mut rows = reference_args("pbeta");
    let (a, b, x) = (
        spread(200, 31, -3.0, 4.0, false),
        spread(200, 32, -3.0, 4.0, false),
        unit(200, 33),
    );
    for i in 0..200 {
        let (l, g) = FLAGS[i % 4];
        rows.push(vec![x[i], a[i], b[i], l, g]);
    }
    check("gb_pbeta", &rows, |r| {
        nmath::pbeta(r[0], r[1], r[2], flag(r[3]), flag(r[4]))
    });
}

#[test]
fn pbeta_raw_matches() {
    if !have_engine() {
        return;
    }
    // pbeta_raw assumes 0 < x; it takes zero and infinite shapes
    let rows: Vec<Vec<f64>> = reference_args("pbeta")
        .into_iter()
        .filter(|r| r[0] > 0.0 && r[1] >= 0.0 && r[2] >= 0.0)
        .collect();
    check("gb_pbeta_raw", &rows, |r| {
        nmath::pbeta_raw(r[0], r[1], r[2], flag(r[3]), flag(r[4]))
    });
}

#[test]
fn logspace_add_matches() {
    if !have_engine() {
        return;
    }
    let (u, v) = (
        spread(100, 34, -3.0, 3.0, true),
        spread(100, 35, -3.0, 3.0, true),
    );
    let mut rows: Vec<Vec<f64>> = u.iter().zip(&v).map(|(&a, &b)| vec![a, b]).collect();
    for e in [
        [0.0, f64::NEG_INFINITY],
        [f64::NEG_INFINITY, -1.0],
        [f64::NAN, 1.0],
        [1.0, f64::NAN],
        [700.0, 710.0],
    ] {
        rows.push(e.to_vec());
    }
    check("gb_logspace_add", &rows, |r| {
        nmath::logspace_add(r[0], r[1])
    });
}

#[test]
fn pt_matches() {
    if !have_engine() {
        return;
    }
    let mut rows = reference_args("pt");
    let (x, n) = (
        spread(200, 36, -3.0, 3.0, true),
        spread(200, 37, -1.0, 10.0, false),
    );
    for i in 0..200 {
        let (l, g) = FLAGS[i % 4];
        rows.push(vec![x[i], n[i], l, g]);
    }
    check("gb_pt", &rows, |r| {
        nmath::pt(r[0], r[1], flag(r[2]), flag(r[3]))
    });
}
