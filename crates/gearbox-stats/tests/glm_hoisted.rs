//! The hoisted GLM terms (`glm::rows`, `glm::hoisted`, the grid calls of
//! `glm::terms::grid_calls`): without the closed forms they give the bits
//! of `loglik_term` / `dloglik_deta` for every family and link, on random
//! and edge observations (huge counts, all failures or successes, non-whole
//! counts, weight 0, the tails of eta, NaN and infinities); with them, the
//! certified closed forms of binomial logit and poisson log stay within
//! `2^-45` relative of R's exact evaluation (binomial from the
//! better-conditioned end, as R's `dbinom_raw` loses accuracy for `x`
//! near `n`), on many random observations
//! around the mode (where they switch) and in the tails; and the error
//! bounds of the hoisted `lchoose` and `lgammafn(k + 1)` hold against
//! mpmath.

mod common;
mod glm_rows;

use common::Rng;
use gearbox_stats::glm::rows::{lchoose_with_error, lgamma_error};
use gearbox_stats::glm::terms::{FAST, QUASI};
use gearbox_stats::glm::{dloglik_deta, loglik_term, Family, Link};
use gearbox_stats::nmath::{dbinom_raw, lgamma, plogis};
use glm_rows::{grid_call_rows, hoisted_edge_rows, rows, spec_of, COMBINATIONS};

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The family of `combo` with the quasi flag as given.
fn family(combo: &str, quasi: bool) -> (Family, Link) {
    let spec = spec_of(combo);
    let family = match (spec.family, quasi) {
        (Family::Binomial, true) => Family::QuasiBinomial,
        (Family::Poisson, true) => Family::QuasiPoisson,
        (f, _) => f,
    };
    (family, spec.link)
}

#[test]
fn hoisted_terms_are_bit_identical_to_the_scalar_terms() {
    let mut compared = 0;
    for combo in COMBINATIONS {
        let mut all = rows(combo, 5000, 0xb175 ^ combo.len() as u64);
        all.extend(hoisted_edge_rows(combo));
        let calls = grid_call_rows(combo, &all, false);
        for (k, (f, flags, args)) in calls.iter().enumerate() {
            assert_eq!(flags & FAST, 0, "{}: fast off", f.name);
            for quasi in [false, true] {
                let (fam, link) = family(combo, quasi);
                let bits = flags | if quasi { QUASI } else { 0 };
                for (row, a) in all.iter().zip(args) {
                    let (y, wt, eta, phi) = (row[0], row[1], row[2], row[3]);
                    let want = if k == 0 {
                        loglik_term(fam, link, y, wt, eta, phi)
                    } else {
                        dloglik_deta(fam, link, y, wt, eta, phi)
                    };
                    let got = (f.eval)(a, bits);
                    assert!(
                        same(got, want),
                        "{} {row:?} quasi {quasi}: hoisted {got:e} ({:#x}), scalar {want:e} ({:#x})",
                        f.name,
                        got.to_bits(),
                        want.to_bits()
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 6 * 2 * 2 * 5000, "{compared}");
}

/// Observations around the mode (where the closed forms switch to the
/// exact path) and off into the tails, for `combo` (binomial_logit or
/// poisson_log).
fn closed_form_rows(combo: &str, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let spread = [1e-6, 1e-3, 0.1, 1.0, 5.0, 30.0][(r.uniform() * 6.0) as usize];
        let noise = (2.0 * r.uniform() - 1.0) * spread;
        let phi = r.log_uniform(0.1, 10.0);
        if combo == "binomial_logit" {
            let trials = r.log_uniform(2.0, 1e7).floor();
            let x = 1.0 + r.count(trials - 2.0);
            let mode = (x / (trials - x)).ln();
            out.push(vec![x / trials, trials, mode + noise, phi]);
        } else {
            let k = 1.0 + r.log_uniform(1.0, 1e6).floor() - 1.0;
            let k = if r.uniform() < 0.5 { r.count(12.0) } else { k };
            let mode = k.max(0.5).ln();
            out.push(vec![k, r.log_uniform(1e-2, 50.0), mode + noise, phi]);
        }
    }
    out
}

/// Whether the fast poisson term takes the series near the mode for the
/// hoisted arguments `a` (`eta, dispersion, wt, k, stirlerr, log_term,
/// lgamma, lgamma_err`): the closed form declines and the series applies.
fn near_mode_series(combo: &str, a: &[f64]) -> bool {
    use gearbox_stats::glm::hoisted::{poisson_closed_form, poisson_near_mode};
    if combo != "poisson_log" {
        return false;
    }
    let (eta, k) = (a[0], a[3]);
    let lambda = eta.exp();
    poisson_closed_form(eta, lambda, k, a[6], a[7]).is_nan()
        && !poisson_near_mode(k, lambda, a[4], a[5]).is_nan()
}

#[test]
fn certified_closed_forms_stay_within_2_45_of_the_exact_terms() {
    let limit = 2f64.powi(-45);
    for combo in ["binomial_logit", "poisson_log"] {
        let all = closed_form_rows(combo, 200_000, 0xc105e ^ combo.len() as u64);
        let fast = grid_call_rows(combo, &all, true);
        let exact = grid_call_rows(combo, &all, false);
        let (f, fast_flags, fast_args) = &fast[0];
        let (g, exact_flags, exact_args) = &exact[0];
        assert_eq!(f.name, g.name);
        // R's dbinom_raw(x, n, p, q) loses `u x / (n - x)` in its
        // log1p(-x / n) when x is near n; the same density evaluated from
        // the other end, dbinom_raw(n - x, n, q, p), does not. That
        // orientation is the exact reference here (bit for bit R's path
        // for x <= n / 2).
        let reference = |row: &[f64], exact: f64, quasi: u8| -> f64 {
            if combo != "binomial_logit" {
                return exact;
            }
            let (n, eta) = (row[1], row[2]);
            let x = (row[0] * n).round_ties_even();
            let (p, q) = (
                plogis(eta, 0.0, 1.0, true, false),
                plogis(eta, 0.0, 1.0, false, false),
            );
            if x <= n / 2.0 || p < f64::MIN_POSITIVE || q < f64::MIN_POSITIVE {
                return exact;
            }
            let v = dbinom_raw(n - x, n, q, p, true);
            if quasi != 0 {
                v / row[3]
            } else {
                v
            }
        };
        assert_eq!(fast_flags & FAST, FAST);
        let (mut used, mut worst, mut worst_row) = (0usize, 0.0f64, Vec::new());
        for quasi in [0, QUASI] {
            for ((row, a), b) in all.iter().zip(fast_args).zip(exact_args) {
                let got = (f.eval)(a, fast_flags | quasi);
                let exact = (g.eval)(b, exact_flags | quasi);
                if got.to_bits() == exact.to_bits() || near_mode_series(combo, a) {
                    // R's path itself, or the poisson series near the mode
                    // (compared with the exact density below, since R's
                    // ebd0 is the less accurate of the two there).
                    continue;
                }
                used += 1;
                let want = reference(row, exact, quasi);
                let e = (got - want).abs() / want.abs();
                if e.is_nan() || e > limit {
                    panic!("{combo} {row:?} quasi {quasi}: closed form {got:e}, exact {want:e}, error {e:e}");
                }
                if e > worst {
                    worst = e;
                    worst_row = row.clone();
                }
            }
        }
        println!(
            "{combo}: closed form differs from exact in {used} of {} terms; worst relative difference {worst:.3e} (2^{:.1}) at {worst_row:?}",
            2 * all.len(),
            worst.log2()
        );
        // The closed form is taken for a good share of these observations.
        assert!(
            used > all.len() / 10,
            "{combo}: closed form used {used} times"
        );
    }
}

#[test]
fn the_closed_forms_reject_what_they_cannot_certify() {
    use gearbox_stats::glm::hoisted::{logit_closed_form, poisson_closed_form};
    // Near the mode of a large count the parts cancel: exact path.
    let (c, ec) = lchoose_with_error(1e6, 5e5);
    assert!(logit_closed_form(0.0, 5e5, 1e6, c, ec).is_nan());
    let k = 1e4f64;
    let g = lgamma(k + 1.0);
    assert!(poisson_closed_form(k.ln(), k, k, g, lgamma_error(k, g)).is_nan());
    // Small counts, or far from the mode, certify.
    let (c, ec) = lchoose_with_error(10.0, 3.0);
    assert!(!logit_closed_form(0.2, 3.0, 10.0, c, ec).is_nan());
    assert!(!logit_closed_form(-30.0, 3.0, 10.0, c, ec).is_nan());
    let g = lgamma(3.0);
    assert!(!poisson_closed_form(0.5, 0.5f64.exp(), 2.0, g, lgamma_error(2.0, g)).is_nan());
    // NaN and infinite eta, and an unknown error bound, never certify.
    for eta in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(logit_closed_form(eta, 3.0, 10.0, c, ec).is_nan());
        assert!(poisson_closed_form(eta, eta.exp(), 2.0, g, 0.0).is_nan());
    }
    assert!(logit_closed_form(0.2, 3.0, 10.0, c, f64::INFINITY).is_nan());
}

/// `lchoose(n, x)` and `lgammafn(k + 1)` with their error bounds against
/// mpmath at 50 digits (`tests/data/gen_glm_hoisted_bounds.py`): each
/// constant is within its bound of the true value, and the bound is not
/// vacuous (below `1e-13` relative).
#[test]
fn hoisted_constants_are_within_their_error_bounds() {
    let data = include_str!("data/glm_hoisted_bounds.csv");
    let mut checked = 0;
    for line in data.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (a, b, want): (f64, f64, f64) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        let (got, bound) = match f[0] {
            "lchoose" => lchoose_with_error(a, b),
            "lgamma1p" => {
                let g = lgamma(a + 1.0);
                (g, lgamma_error(a, g))
            }
            other => panic!("unknown kind {other}"),
        };
        // The reference is itself rounded to a double: half an ulp.
        let slack = want.abs() * f64::EPSILON / 2.0;
        assert!(
            (got - want).abs() <= bound + slack,
            "{line}: got {got:e}, error {:e} over its bound {bound:e}",
            (got - want).abs()
        );
        assert!(
            bound <= 1e-13 * want.abs().max(1.0),
            "{line}: bound {bound:e}"
        );
        checked += 1;
    }
    assert!(checked >= 60, "{checked}");
}

#[test]
fn the_poisson_series_near_the_mode_stays_within_2_47_of_the_exact_density() {
    use gearbox_stats::glm::hoisted::poisson_near_mode;
    use gearbox_stats::glm::rows::poisson_row;
    use gearbox_stats::nmath::dpois;
    // k, lambda and log dpois(k, lambda) at 50 digits (data/gen_poisson_near_mode.py).
    let csv = include_str!("data/poisson_near_mode.csv");
    let (mut ours, mut r_worst, mut used) = (0.0f64, 0.0f64, 0);
    for line in csv.lines().skip(1) {
        let v: Vec<f64> = line.split(',').map(|t| t.parse().unwrap()).collect();
        let (k, lambda, exact) = (v[0], v[1], v[2]);
        let row = poisson_row(k, 1.0);
        let got = poisson_near_mode(k, lambda, row.stirlerr, row.log_term);
        if (k - lambda).abs() >= 0.1 * (k + lambda) {
            assert!(
                got.is_nan(),
                "k {k} lambda {lambda}: outside the series' range"
            );
            continue;
        }
        used += 1;
        let e = ((got - exact) / exact).abs();
        assert!(
            e <= 2f64.powi(-47),
            "k {k} lambda {lambda}: {got:e} vs {exact:e} ({e:e})"
        );
        ours = ours.max(e);
        r_worst = r_worst.max(((dpois(k, lambda, true) - exact) / exact).abs());
    }
    assert!(used > 1000, "{used} rows in range");
    // R 4.2.2's own dpois (ebd0) is less accurate on some of these rows
    // (1.2e-12 at k = 1595196, lambda = 1604460.385...): the series is the
    // better value there, which is why this test compares with the exact
    // density rather than with R.
    println!(
        "poisson near the mode: worst relative error {ours:.2e} (R 4.2.2's dpois: {r_worst:.2e}) over {used} rows"
    );
    let row = poisson_row(50.0, 1.0);
    assert!(poisson_near_mode(50.0, 70.0, row.stirlerr, row.log_term).is_nan());
    let row = poisson_row(0.0, 1.0);
    assert!(poisson_near_mode(0.0, 0.01, row.stirlerr, row.log_term).is_nan());
}
