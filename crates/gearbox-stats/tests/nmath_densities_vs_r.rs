//! The densities against values printed by R 4.2.2
//! (`tests/data/densities.csv`, written by `tests/data/gen_densities.R`):
//! within 4 ulps of R on and off the log scale, on random inputs over wide
//! ranges and edge cases.

mod r_reference;

use gearbox_stats::nmath;
use r_reference::{rows, Tally};

#[test]
fn densities_match_r() {
    let mut tally = Tally::default();
    for row in rows(include_str!("data/densities.csv")) {
        let a = &row.args;
        let give_log = *a.last().expect("give_log column") != 0.0;
        let got = match row.function.as_str() {
            "dbinom_raw" => nmath::dbinom_raw(a[0], a[1], a[2], a[3], give_log),
            "dbinom" => nmath::dbinom(a[0], a[1], a[2], give_log),
            "dpois_raw" => nmath::dpois_raw(a[0], a[1], give_log),
            "dpois" => nmath::dpois(a[0], a[1], give_log),
            "dnbinom" => nmath::dnbinom(a[0], a[1], a[2], give_log),
            "dgamma" => nmath::dgamma(a[0], a[1], a[2], give_log),
            "dbeta" => nmath::dbeta(a[0], a[1], a[2], give_log),
            "dnorm" => nmath::dnorm(a[0], a[1], a[2], give_log),
            "dlogis" => nmath::dlogis(a[0], a[1], a[2], give_log),
            "dt" => nmath::dt(a[0], a[1], give_log),
            f => panic!("densities.csv names an unknown function {f}"),
        };
        tally.record(&row, got, 4);
    }
    tally.finish();
}
