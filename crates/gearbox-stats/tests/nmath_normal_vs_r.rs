//! pnorm, qnorm, plogis and qlogis against values printed by R 4.2.2
//! (`tests/data/normal.csv`, written by `tests/data/gen_normal.R`): within
//! 4 ulps of R on random inputs over wide ranges, the far tails (down to
//! `x = -1e171` on the log scale, `p` to 5e-324 and `log p` to -1e300) and
//! the edge cases.

mod r_reference;

use gearbox_stats::nmath;
use r_reference::{rows, Tally};

fn flag(v: f64) -> bool {
    v != 0.0
}

#[test]
fn normal_and_logistic_match_r() {
    let mut tally = Tally::default();
    for row in rows(include_str!("data/normal.csv")) {
        let a = &row.args;
        let (lower_tail, log_p) = (flag(a[3]), flag(a[4]));
        let got = match row.function.as_str() {
            "pnorm" => nmath::pnorm(a[0], a[1], a[2], lower_tail, log_p),
            "qnorm" => nmath::qnorm(a[0], a[1], a[2], lower_tail, log_p),
            "plogis" => nmath::plogis(a[0], a[1], a[2], lower_tail, log_p),
            "qlogis" => nmath::qlogis(a[0], a[1], a[2], lower_tail, log_p),
            f => panic!("normal.csv names an unknown function {f}"),
        };
        tally.record(&row, got, 4);
    }
    tally.finish();
}
