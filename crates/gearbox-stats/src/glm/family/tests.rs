//! Names and valid combinations, the slopes against numeric derivatives
//! into the tails, the probit ratios, hoisted terms bit for bit against
//! the direct ones, and R's tolerance for whole counts.

use super::*;

#[test]
fn names_round_trip() {
    for f in Family::ALL {
        assert_eq!(f.name().parse::<Family>().unwrap(), f);
        for &l in f.links() {
            assert_eq!(l.name().parse::<Link>().unwrap(), l);
            assert!(GlmSpec::new(f, l, Some(1.0)).is_ok());
        }
    }
    assert_eq!("gamma".parse::<Family>().unwrap(), Family::Gamma);
    assert!("binomal".parse::<Family>().is_err());
    assert!("logistic".parse::<Link>().is_err());
}

#[test]
fn spec_rules() {
    assert!(GlmSpec::parse("gaussian", Some("log"), Some(1.0)).is_err());
    assert!(GlmSpec::parse("Gamma", Some("identity"), Some(1.0)).is_err());
    assert!(GlmSpec::parse("binomial", None, Some(2.0)).is_err());
    assert!(GlmSpec::parse("quasibinomial", None, Some(2.0)).is_ok());
    assert!(GlmSpec::parse("quasipoisson", None, Some(0.0)).is_err());
    assert!(GlmSpec::parse("gaussian", None, Some(f64::NAN)).is_err());
    assert!(GlmSpec::parse("gaussian", None, Some(-1.0)).is_err());
    assert_eq!(
        GlmSpec::parse("Gamma", None, Some(0.5)).unwrap().link,
        Link::Log
    );
}

/// Each slope is the derivative of its term (central differences), and
/// the information is positive, from the centre to the far tails where
/// the log-space branches take over.
#[test]
fn slopes_differentiate_the_terms_into_the_tails() {
    let etas = [
        -800.0, -745.5, -60.0, -38.0, -3.0, 0.0, 0.7, 3.5, 6.6, 38.0, 60.0, 720.0, 800.0,
    ];
    let observations: &[(Family, Link, f64, f64, f64)] = &[
        (Family::Binomial, Link::Logit, 0.4, 5.0, 1.0),
        (Family::Binomial, Link::Probit, 0.4, 5.0, 1.0),
        (Family::Binomial, Link::Cloglog, 0.4, 5.0, 1.0),
        (Family::Binomial, Link::Cloglog, 1.0, 3.0, 1.0),
        (Family::QuasiBinomial, Link::Probit, 0.0, 4.0, 2.5),
        (Family::Poisson, Link::Log, 3.0, 1.5, 1.0),
        (Family::QuasiPoisson, Link::Log, 0.0, 2.0, 3.0),
        (Family::Gaussian, Link::Identity, 1.5, 2.0, 0.7),
        (Family::Gamma, Link::Log, 2.5, 2.0, 0.6),
    ];
    let mut checked = 0;
    for &(family, link, y, wt, phi) in observations {
        for &eta in &etas {
            let value = loglik_term(family, link, y, wt, eta, phi);
            let slope = dloglik_deta(family, link, y, wt, eta, phi);
            let info = expected_information(family, link, wt, eta, phi);
            assert!(!value.is_nan() && !slope.is_nan() && !info.is_nan());
            assert!(
                info >= 0.0,
                "{family}({link}) eta {eta}: information {info}"
            );
            let h = 1e-5 * (1.0 + eta.abs());
            let up = loglik_term(family, link, y, wt, eta + h, phi);
            let down = loglik_term(family, link, y, wt, eta - h, phi);
            if !(value.is_finite() && up.is_finite() && down.is_finite() && slope.is_finite()) {
                // Only where exp(eta) over- or underflows in the term itself.
                assert!(value == f64::NEG_INFINITY || !slope.is_finite());
                continue;
            }
            checked += 1;
            let numeric = (up - down) / (2.0 * h);
            let scale = slope.abs().max(1e-6 * value.abs()).max(1e-12);
            assert!(
                (numeric - slope).abs() <= 1e-5 * scale,
                "{family}({link}) y {y} eta {eta}: slope {slope:e}, difference {numeric:e}"
            );
        }
    }
    // Skipped: poisson and Gamma where exp(+-eta) overflows (6 points).
    assert!(checked >= 9 * 13 - 8, "checked {checked}");
}

#[test]
#[allow(clippy::excessive_precision)] // mpmath's 17 digits
fn probit_ratio_is_accurate_in_both_tails() {
    // dnorm(eta) / pnorm(eta) from mpmath at 60 digits.
    let cases = [
        (-1e6, 1000000.000001),
        (-800.0, 800.00124999609378),
        (-123.4, 123.40810266371394),
        (-40.0, 40.024968847207264),
        (-38.0, 38.026279466575869),
        (-10.0, 10.098093233962512),
        (-5.657, 5.8241398333648582),
        (-5.6568, 5.8239451443735333),
        (-5.6, 5.7686666042971348),
        (-3.0, 3.2830986549304365),
        (-1.0, 1.5251352761609812),
        (0.0, 0.79788456080286536),
        (0.5, 0.50916043383703349),
        (2.0, 0.055247862678989959),
        (8.0, 5.0522710835368954e-15),
        (30.0, 1.4736461348785475e-196),
        (37.5, 1.7282337322841052e-306),
    ];
    for (eta, want) in cases {
        let got = probit_ratio(eta);
        assert!(
            (got - want).abs() <= 4e-16 * want,
            "probit_ratio({eta}) = {got:e}, want {want:e}"
        );
    }
    assert_eq!(probit_ratio(f64::NEG_INFINITY), f64::INFINITY);
    assert_eq!(probit_ratio(f64::INFINITY), 0.0);
    assert!(probit_ratio(f64::NAN).is_nan());
}

/// The probit information per trial, `dnorm^2 / (pnorm(eta)
/// pnorm(-eta))`, against mpmath at 60 digits from the centre to where
/// it nears the subnormals: the product of the two ratios keeps full
/// precision (the old difference of logarithms lost `1e-13` by
/// `|eta| = 30`).
#[test]
#[allow(clippy::excessive_precision)] // mpmath's 17 digits
fn probit_information_is_accurate_in_both_tails() {
    let cases = [
        (-30.0, 4.425839702671741e-195),
        (-20.0, 1.1069365136539652e-86),
        (-8.0, 4.1031353272209136e-14),
        (-5.0, 7.710878871508391e-6),
        (-3.0, 0.014569863390000544),
        (-1.0, 0.43862886110221396),
        (0.0, std::f64::consts::FRAC_2_PI),
        (0.5, 0.58099165260239858),
        (2.0, 0.1311150858650423),
        (6.0, 3.741821887480392e-8),
        (10.0, 7.770077433040133e-22),
        (25.0, 1.916534286431528e-135),
        (37.0, 7.8497456477810117e-297),
    ];
    for (eta, want) in cases {
        for family in [Family::Binomial, Family::QuasiBinomial] {
            let phi = if family == Family::Binomial { 1.0 } else { 2.0 };
            let got = expected_information(family, Link::Probit, 3.0, eta, phi) * phi / 3.0;
            assert!(
                (got - want).abs() <= 2e-15 * want,
                "probit information at {eta}: {got:e}, want {want:e}"
            );
        }
    }
}

/// The eager evaluation this module used before [`LinkAt`]: all four
/// probabilities and both slopes at every observation, kept here to pin
/// that the lazy one gives the very same bits.
mod eager {
    use super::super::*;
    use crate::glm::link::cloglog_log_p;
    use crate::nmath::{plogis, pnorm};

    pub struct Probabilities {
        pub p: f64,
        pub q: f64,
        pub log_p: f64,
        pub log_q: f64,
    }

    pub fn probabilities(link: Link, eta: f64) -> Probabilities {
        match link {
            Link::Logit => Probabilities {
                p: plogis(eta, 0.0, 1.0, true, false),
                q: plogis(eta, 0.0, 1.0, false, false),
                log_p: plogis(eta, 0.0, 1.0, true, true),
                log_q: plogis(eta, 0.0, 1.0, false, true),
            },
            Link::Probit => Probabilities {
                p: pnorm(eta, 0.0, 1.0, true, false),
                q: pnorm(eta, 0.0, 1.0, false, false),
                log_p: pnorm(eta, 0.0, 1.0, true, true),
                log_q: pnorm(eta, 0.0, 1.0, false, true),
            },
            Link::Cloglog => {
                let t = eta.exp();
                Probabilities {
                    p: -(-t).exp_m1(),
                    q: (-t).exp(),
                    log_p: cloglog_log_p(eta, t),
                    log_q: -t,
                }
            }
            Link::Log | Link::Identity => Probabilities {
                p: f64::NAN,
                q: f64::NAN,
                log_p: f64::NAN,
                log_q: f64::NAN,
            },
        }
    }

    fn slopes(link: Link, eta: f64) -> (f64, f64) {
        match link {
            Link::Logit => {
                // q and -p from one exponential, as the device files do.
                let e = (-eta.abs()).exp();
                let d = 1.0 / (1.0 + e);
                let (p, q) = if eta >= 0.0 { (d, e * d) } else { (e * d, d) };
                (q, -p)
            }
            Link::Probit => (probit_ratio(eta), -probit_ratio(-eta)),
            Link::Cloglog => {
                let t = eta.exp();
                (cloglog_ratio(eta, t), -t)
            }
            Link::Log | Link::Identity => (f64::NAN, f64::NAN),
        }
    }

    fn log_density(x: f64, n: f64, probs: Probabilities) -> f64 {
        if x == 0.0 {
            return if n == 0.0 { 0.0 } else { n * probs.log_q };
        }
        if x == n {
            return n * probs.log_p;
        }
        if probs.p >= f64::MIN_POSITIVE && probs.q >= f64::MIN_POSITIVE {
            return dbinom_raw(x, n, probs.p, probs.q, true);
        }
        lchoose_whole(n, x) + x * probs.log_p + (n - x) * probs.log_q
    }

    pub fn loglik(family: Family, link: Link, y: f64, wt: f64, eta: f64, phi: f64) -> f64 {
        if wt == 0.0 {
            return 0.0;
        }
        let value = match binomial_counts(y, wt) {
            Ok((x, n)) => log_density(x, n, probabilities(link, eta)),
            Err(v) => v,
        };
        if family == Family::QuasiBinomial {
            value / phi
        } else {
            value
        }
    }

    pub fn slope(family: Family, link: Link, y: f64, wt: f64, eta: f64, phi: f64) -> f64 {
        if wt == 0.0 {
            return 0.0;
        }
        let value = match binomial_counts(y, wt) {
            Ok((x, n)) => {
                let (up, down) = slopes(link, eta);
                let mut d = 0.0;
                if x > 0.0 {
                    d += x * up;
                }
                if n - x > 0.0 {
                    d += (n - x) * down;
                }
                d
            }
            Err(_) => f64::NAN,
        };
        if family == Family::QuasiBinomial {
            value / phi
        } else {
            value
        }
    }
}

/// Same bits, or both NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The lazy binomial term, slope and mean give exactly the eager
/// evaluation's bits, on random observations (all failures, all
/// successes, in between, invalid counts) at random `eta` from the
/// centre to beyond the under- and overflow thresholds.
#[test]
fn lazy_binomial_terms_are_bit_identical_to_eager() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut uniform = move || (next() >> 11) as f64 / (1u64 << 53) as f64;
    let fixed_etas = [
        f64::NEG_INFINITY,
        -1e6,
        -800.0,
        -745.2,
        -709.0,
        -40.0,
        -37.5,
        -33.3,
        -18.0,
        -5.657,
        -11.5,
        -0.67,
        0.0,
        -0.0,
        1e-300,
        0.5,
        3.6,
        18.0,
        33.3,
        37.5,
        40.0,
        709.0,
        745.2,
        800.0,
        1e6,
        f64::INFINITY,
        f64::NAN,
    ];
    let weights = [1.0, 2.0, 3.0, 7.0, 40.0, 1e6, 2.5, 1e-9, f64::NAN, -1.0];
    let mut compared = 0;
    for round in 0..20_000 {
        let eta = if round % 4 == 0 {
            fixed_etas[round / 4 % fixed_etas.len()]
        } else {
            // Spread over [-1000, 1000] with most mass near the centre.
            let u = 2.0 * uniform() - 1.0;
            u * u * u * 1000.0
        };
        let wt = weights[(uniform() * weights.len() as f64) as usize];
        let y = match (uniform() * 5.0) as u32 {
            0 => 0.0,
            1 => 1.0,
            2 => (uniform() * (wt + 1.0)).floor() / wt,
            3 => uniform(),
            _ => 1.5,
        };
        let phi = 0.25 + 4.0 * uniform();
        for link in [Link::Logit, Link::Probit, Link::Cloglog] {
            for family in [Family::Binomial, Family::QuasiBinomial] {
                let phi = if family == Family::Binomial { 1.0 } else { phi };
                let lazy = loglik_term(family, link, y, wt, eta, phi);
                let old = eager::loglik(family, link, y, wt, eta, phi);
                assert!(
                    same(lazy, old),
                    "{family}({link}) y {y} wt {wt} eta {eta}: term {lazy:e} != {old:e}"
                );
                let lazy = dloglik_deta(family, link, y, wt, eta, phi);
                let old = eager::slope(family, link, y, wt, eta, phi);
                assert!(
                    same(lazy, old),
                    "{family}({link}) y {y} wt {wt} eta {eta}: slope {lazy:e} != {old:e}"
                );
                compared += 1;
            }
            assert!(same(mean(link, eta), eager::probabilities(link, eta).p));
        }
    }
    assert_eq!(compared, 20_000 * 6);
}

#[test]
fn r_nonint_matches_r() {
    assert!(!r_nonint(3.0 + 1e-8));
    assert!(r_nonint(3.0 + 1e-6));
    assert!(!r_nonint(1e5 + 0.005));
    assert!(r_nonint(1e5 + 0.02));
}
