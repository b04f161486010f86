//! Argument rows `(y, wt, eta, dispersion)` for the GLM term functions of
//! each base (family, link) combination: random observations over several
//! magnitudes, extreme `eta` (|eta| up to 40, and up to 800 where the mean
//! or a probability under- or overflows), `y` at the ends of its support,
//! weight 0, and invalid input (non-whole counts, negative values, NaN,
//! infinities).
#![allow(dead_code)]

use crate::common::Rng;

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

/// `eta` values every combination is tried at: the link's tails, where
/// `exp(eta)`, `plogis`, `pnorm` and the cloglog probabilities under- or
/// overflow, and the special values.
pub const SPECIAL_ETA: [f64; 31] = [
    -800.0, -746.0, -745.0, -709.0, -700.0, -40.0, -38.5, -37.6, -36.0, -8.3, -5.0, -1.0, -1e-10,
    0.0, 1e-10, 0.5, 1.0, -11.6, -18.0, 3.6, 3.7, 5.0, 6.5, 8.3, 37.6, 40.0, 700.0, 709.0, 710.0,
    800.0, INF,
];

/// The base combinations, by the suffix of their descriptor names.
pub const COMBINATIONS: [&str; 6] = [
    "binomial_logit",
    "binomial_probit",
    "binomial_cloglog",
    "poisson_log",
    "gaussian_identity",
    "gamma_log",
];

/// `eta` drawn as the combination's term sees it: mostly within
/// `[-40, 40]`, one in five out to `|eta| = 800`.
fn random_eta(r: &mut Rng) -> f64 {
    let sign = if r.uniform() < 0.5 { -1.0 } else { 1.0 };
    if r.uniform() < 0.2 {
        sign * r.log_uniform(40.0, 800.0)
    } else {
        sign * r.log_uniform(1e-3, 40.0)
    }
}

/// `n` random rows for combination `combo` plus its edge rows.
pub fn rows(combo: &str, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut r = Rng(seed);
    let mut out: Vec<Vec<f64>> = Vec::new();
    let binomial = combo.starts_with("binomial");
    for _ in 0..n {
        let dispersion = r.log_uniform(0.05, 20.0);
        let row = if binomial {
            let most = if r.uniform() < 0.2 { 1e6 } else { 50.0 };
            let trials = r.count(most);
            let successes = r.count(trials);
            let y = if trials == 0.0 {
                0.0
            } else {
                successes / trials
            };
            vec![y, trials, random_eta(&mut r), dispersion]
        } else if combo == "poisson_log" {
            let eta = if r.uniform() < 0.7 {
                r.uniform() * 20.0 - 8.0
            } else {
                random_eta(&mut r)
            };
            let mean = eta.exp().min(1e7);
            let y = r.count(2.0 * mean + 5.0);
            vec![y, r.log_uniform(1e-3, 100.0), eta, dispersion]
        } else if combo == "gaussian_identity" {
            let sign = if r.uniform() < 0.5 { -1.0 } else { 1.0 };
            let y = sign * r.log_uniform(1e-3, 1e4);
            let spread = r.log_uniform(1e-3, 1e3);
            let eta = y + (r.uniform() - 0.5) * spread;
            vec![y, r.log_uniform(1e-3, 100.0), eta, r.log_uniform(1e-4, 1e4)]
        } else {
            assert_eq!(combo, "gamma_log", "unknown combination {combo}");
            let y = r.log_uniform(1e-8, 1e8);
            let eta = if r.uniform() < 0.7 {
                y.ln() + (r.uniform() - 0.5) * 6.0
            } else {
                random_eta(&mut r)
            };
            vec![y, r.log_uniform(1e-2, 100.0), eta, dispersion]
        };
        out.push(row);
    }
    // Every combination at the special eta values, for a few observations
    // at the ends of the support and in between.
    let observations: Vec<(f64, f64)> = if binomial {
        vec![
            (0.0, 1.0),
            (1.0, 1.0),
            (0.0, 7.0),
            (1.0, 7.0),
            (3.0 / 7.0, 7.0),
            (0.5, 1e6),
            (1e-6, 1e6),
            (0.0, 0.0),
        ]
    } else if combo == "poisson_log" {
        vec![(0.0, 1.0), (1.0, 2.0), (5.0, 0.3), (1e3, 1.0), (1e6, 4.0)]
    } else if combo == "gaussian_identity" {
        vec![(0.0, 1.0), (1.5, 2.0), (-40.0, 0.5), (1e3, 10.0)]
    } else {
        vec![(1.0, 1.0), (1e-6, 3.0), (2.5, 0.2), (1e6, 50.0), (0.0, 1.0)]
    };
    for &(y, wt) in &observations {
        for &eta in SPECIAL_ETA.iter().chain(&[-INF, NAN]) {
            let eta = if combo == "gaussian_identity" {
                // The identity link: eta is the mean, near y or far off.
                if eta.abs() < 50.0 {
                    y + eta
                } else {
                    eta
                }
            } else {
                eta
            };
            out.push(vec![y, wt, eta, 1.7]);
        }
    }
    // Weight 0 with anything else (even NaN) contributes 0; invalid input
    // gives what R's densities give.
    let invalid: Vec<[f64; 2]> = vec![
        [NAN, 0.0],
        [INF, 0.0],
        [NAN, 1.0],
        [1.0, NAN],
        [-1.0, 1.0],
        [1.0, -1.0],
        [0.3, 2.0],
        [1.0, 2.5],
        [1.5, 2.0],
        [0.5, INF],
        [0.0, INF],
        [2.5, 1.0],
        [1.0, 1e-8],
        [1.0 + 1e-9, 3.0],
        [INF, 1.0],
    ];
    for [y, wt] in invalid {
        for eta in [-3.0, 0.2, 2.0] {
            out.push(vec![y, wt, eta, 0.8]);
        }
    }
    out
}

/// Every row twice: with the quasi flag 0 and 1 appended.
pub fn with_both_flags(rows: &[Vec<f64>]) -> Vec<Vec<f64>> {
    rows.iter()
        .flat_map(|r| {
            let mut plain = r.clone();
            plain.push(0.0);
            let mut quasi = r.clone();
            quasi.push(1.0);
            [plain, quasi]
        })
        .collect()
}

/// The size of the quantities descriptor `name` adds up at `row` (`y, wt,
/// eta, dispersion, quasi`; `want` its value): where they cancel, results
/// that differ in the last bits of those quantities (a fused multiply-add,
/// an `exp` one ulp apart) differ by that much relative to the sum, so two
/// implementations are compared to `1e-13` relative to the larger of
/// `|want|` and this. For the log-likelihood terms of binomial and poisson
/// (sums of terms of one sign) it is `|want|` itself.
pub fn parts(name: &str, row: &[f64], want: f64, eval: fn(&[f64], u8) -> f64) -> f64 {
    let (y, wt, eta, dispersion, flags) = (row[0], row[1], row[2], row[3], row[4] as u8);
    let combo = name
        .strip_prefix("glm_ll_")
        .or_else(|| name.strip_prefix("glm_slope_"))
        .expect("a glm descriptor");
    let slope = name.starts_with("glm_slope_");
    let size = match (combo, slope) {
        (c, true) if c.starts_with("binomial") => {
            // x up + (n - x) down, up and down the single-trial slopes.
            let (x, n) = ((y * wt).round_ties_even(), wt.round_ties_even());
            let up = eval(&[1.0, 1.0, eta, dispersion], flags).abs();
            let down = eval(&[0.0, 1.0, eta, dispersion], flags).abs();
            x * up + (n - x) * down
        }
        ("poisson_log", true) => wt * (y.abs() + eta.exp()),
        ("gaussian_identity", false) => {
            let sigma = (dispersion / wt).sqrt();
            let z = (y - eta) / sigma;
            0.92 + 0.5 * z * z + sigma.ln().abs()
        }
        ("gamma_log", false) => {
            let shape = wt / dispersion;
            1.0 + (eta - shape.ln()).abs() + shape.ln().abs() + y.ln().abs()
        }
        ("gamma_log", true) => (wt / dispersion) * (y * (-eta).exp() + 1.0),
        _ => want.abs(),
    };
    if size.is_finite() {
        size.max(want.abs())
    } else {
        want.abs()
    }
}

/// Whether `got` agrees with `want` to `rel` relative to the larger of
/// `|want|` and `parts` (NaN matches NaN, infinities must match exactly).
pub fn agrees(got: f64, want: f64, parts: f64, rel: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return want == got;
    }
    (got - want).abs() <= rel * parts.max(want.abs()).max(f64::MIN_POSITIVE)
}

/// The non-quasi spec of a base combination (dispersion 1 where one is
/// needed; the rows carry their own).
pub fn spec_of(combo: &str) -> gearbox_stats::glm::GlmSpec {
    use gearbox_stats::glm::{Family, GlmSpec, Link};
    let (family, link) = match combo {
        "binomial_logit" => (Family::Binomial, Link::Logit),
        "binomial_probit" => (Family::Binomial, Link::Probit),
        "binomial_cloglog" => (Family::Binomial, Link::Cloglog),
        "poisson_log" => (Family::Poisson, Link::Log),
        "gaussian_identity" => (Family::Gaussian, Link::Identity),
        "gamma_log" => (Family::Gamma, Link::Log),
        _ => panic!("unknown combination {combo}"),
    };
    GlmSpec::new(family, link, Some(1.0)).unwrap()
}

/// Edge rows `(y, wt, eta, dispersion)` for the hoisted terms beyond
/// [`rows`]: huge counts, all failures and all successes, non-whole counts,
/// weight 0, counts whose `2 pi x` overflows, each at the tails of `eta`.
pub fn hoisted_edge_rows(combo: &str) -> Vec<Vec<f64>> {
    let observations: Vec<(f64, f64)> = if combo.starts_with("binomial") {
        vec![
            (0.5, 1e9),
            (1.0 - 1.0 / 4503599627370496.0, 4503599627370496.0),
            (1.0 / 3e8, 3e8),
            (0.0, 1e12),
            (1.0, 1e12),
            (2.0 / 3.0, 3.0),
            (0.37, 100.0),
            (0.25, 0.0),
            (NAN, 0.0),
            (0.3, 1.0),
            (0.5, 2.0 + 1e-6),
            (0.5, 2.0 + 1e-9),
        ]
    } else if combo == "poisson_log" {
        vec![
            (1e15, 1.0),
            (1e300, 2.0),
            (2.9e307, 1.0),
            (0.0, 3.0),
            (2.5, 1.0),
            (7.0 + 1e-9, 1.0),
            (-3.0, 1.0),
            (3.0, 0.0),
            (NAN, 0.0),
            (-0.0, 1.0),
        ]
    } else {
        vec![(1.5, 0.0), (2.0, 1.0)]
    };
    let etas = [
        -1e6, -800.0, -745.5, -709.5, -40.0, -2.0, 0.0, 0.3, 3.0, 40.0, 690.0, 709.7, 800.0, 1e6,
        -INF, INF, NAN,
    ];
    let mut out = Vec::new();
    for &(y, wt) in &observations {
        for &eta in &etas {
            // Near the mode too: log y for poisson, logit(y) for binomial.
            out.push(vec![y, wt, eta, 1.3]);
        }
        let mode = if combo == "poisson_log" {
            y.ln()
        } else {
            (y / (1.0 - y)).ln()
        };
        if mode.is_finite() {
            for d in [-1e-3, 0.0, 1e-9, 0.5] {
                out.push(vec![y, wt, mode + d, 0.6]);
            }
        }
    }
    out
}

/// The grid calls of `combo` ([`gearbox_stats::glm::terms::grid_calls`])
/// for `rows` `(y, wt, eta, dispersion)`, each with its argument rows:
/// `(descriptor, flag bits without quasi, rows of arguments)`, the
/// log-likelihood first.
pub fn grid_call_rows(
    combo: &str,
    rows: &[Vec<f64>],
    fast: bool,
) -> Vec<(
    &'static gearbox_core::fusion::ir::ScalarFn,
    u8,
    Vec<Vec<f64>>,
)> {
    use gearbox_stats::glm::terms::{grid_calls, TermArg};
    let y: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    let wt: Vec<f64> = rows.iter().map(|r| r[1]).collect();
    let (ll, slope) = grid_calls(&spec_of(combo), &y, &wt, fast);
    [ll, slope]
        .into_iter()
        .map(|call| {
            let args = rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    call.args
                        .iter()
                        .map(|a| match a {
                            TermArg::Eta => r[2],
                            TermArg::Dispersion => r[3],
                            TermArg::Column(v) => v[i],
                        })
                        .collect()
                })
                .collect();
            (call.f, call.flags, args)
        })
        .collect()
}
