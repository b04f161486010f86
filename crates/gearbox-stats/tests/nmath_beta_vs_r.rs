//! pbeta (TOMS 708 bratio) and pt against values printed by R 4.2.2
//! (`tests/data/beta.csv`, written by `tests/data/gen_beta.R`): within 4
//! ulps of R on shapes from 1e-20 to 1e10 chosen to reach each of bratio's
//! algorithms, x near 0, 1 and the mean, df from 0.1 to 1e20 and Inf, and
//! the edge cases.

mod r_reference;

use gearbox_stats::nmath;
use r_reference::{rows, Tally};

fn flag(v: f64) -> bool {
    v != 0.0
}

#[test]
fn pbeta_and_pt_match_r() {
    let mut tally = Tally::default();
    for row in rows(include_str!("data/beta.csv")) {
        let a = &row.args;
        let got = match row.function.as_str() {
            "pbeta" => nmath::pbeta(a[0], a[1], a[2], flag(a[3]), flag(a[4])),
            "pt" => nmath::pt(a[0], a[1], flag(a[2]), flag(a[3])),
            f => panic!("beta.csv names an unknown function {f}"),
        };
        tally.record(&row, got, 4);
    }
    tally.finish();
}
