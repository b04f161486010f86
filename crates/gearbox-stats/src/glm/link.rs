//! A binomial link evaluated at one `eta` ([`LinkAt`]: `p`, `q = 1 - p`,
//! their logarithms and slopes, each computed directly and only when asked
//! for) and the tail-safe helpers behind it (`cloglog_log_p`,
//! `cloglog_ratio`, `probit_ratio`), with `lchoose_whole`; shared by the
//! one-observation terms of [`super::family`] and the hoisted terms of
//! [`super::hoisted`].

use super::family::Link;
use crate::nmath::{dnorm, lgamma, log1mexp, plogis, pnorm};

/// A binomial link evaluated at one `eta`: the success probability `p`,
/// its complement `q = 1 - p`, their logarithms and their slopes in `eta`,
/// each computed directly (no `1 - p`) and only when asked for, so a term
/// evaluates only the quantities it uses (`x = 0` needs `log q` alone,
/// `x = n` `log p` alone). Cloglog computes `t = exp(eta)`, which all its
/// quantities share, once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinkAt {
    link: Link,
    eta: f64,
    /// `exp(eta)` for cloglog; unused (NaN) for the other links.
    t: f64,
}

impl LinkAt {
    pub(crate) fn new(link: Link, eta: f64) -> LinkAt {
        let t = if link == Link::Cloglog {
            eta.exp()
        } else {
            f64::NAN
        };
        LinkAt { link, eta, t }
    }

    /// `p`: `plogis(eta)`, `pnorm(eta)`, `1 - exp(-t)`.
    pub(crate) fn p(&self) -> f64 {
        match self.link {
            Link::Logit => plogis(self.eta, 0.0, 1.0, true, false),
            Link::Probit => pnorm(self.eta, 0.0, 1.0, true, false),
            Link::Cloglog => -(-self.t).exp_m1(),
            // Not binomial links; `check` never pairs them with binomial.
            Link::Log | Link::Identity => f64::NAN,
        }
    }

    /// `q = 1 - p`: `plogis(-eta)`, `pnorm(-eta)`, `exp(-t)`.
    pub(crate) fn q(&self) -> f64 {
        match self.link {
            Link::Logit => plogis(self.eta, 0.0, 1.0, false, false),
            Link::Probit => pnorm(self.eta, 0.0, 1.0, false, false),
            Link::Cloglog => (-self.t).exp(),
            Link::Log | Link::Identity => f64::NAN,
        }
    }

    /// `log p`.
    pub(crate) fn log_p(&self) -> f64 {
        match self.link {
            Link::Logit => plogis(self.eta, 0.0, 1.0, true, true),
            Link::Probit => pnorm(self.eta, 0.0, 1.0, true, true),
            Link::Cloglog => cloglog_log_p(self.eta, self.t),
            Link::Log | Link::Identity => f64::NAN,
        }
    }

    /// `log q`.
    pub(crate) fn log_q(&self) -> f64 {
        match self.link {
            Link::Logit => plogis(self.eta, 0.0, 1.0, false, true),
            Link::Probit => pnorm(self.eta, 0.0, 1.0, false, true),
            Link::Cloglog => -self.t,
            Link::Log | Link::Identity => f64::NAN,
        }
    }

    /// `d log p / d eta`, as a ratio that neither overflows nor divides 0
    /// by 0 in the tails.
    pub(crate) fn log_p_slope(&self) -> f64 {
        match self.link {
            // log p = -log1pexp(-eta): slope q.
            Link::Logit => logit_p_q(self.eta).1,
            // slope of log pnorm(eta) is dnorm(eta) / pnorm(eta).
            Link::Probit => probit_ratio(self.eta),
            // log p = log(1 - exp(-t)), t = exp(eta): slope
            // t exp(-t) / (1 - exp(-t)) = t / expm1(t).
            Link::Cloglog => cloglog_ratio(self.eta, self.t),
            Link::Log | Link::Identity => f64::NAN,
        }
    }

    /// `d log q / d eta`, as [`LinkAt::log_p_slope`].
    pub(crate) fn log_q_slope(&self) -> f64 {
        match self.link {
            // log q = -log1pexp(eta): slope -p.
            Link::Logit => -logit_p_q(self.eta).0,
            // the upper tail's slope is -dnorm(eta) / pnorm(-eta).
            Link::Probit => -probit_ratio(-self.eta),
            // log q = -exp(eta): slope -exp(eta).
            Link::Cloglog => -self.t,
            Link::Log | Link::Identity => f64::NAN,
        }
    }
}

/// `log p = log(1 - exp(-t))`, `t = exp(eta)`, for the cloglog link: for
/// `t < 1e-5` its series `eta - t/2 + t^2/24` (error below `t^4/2880`),
/// which stays finite where `t` underflows to 0.
pub(crate) fn cloglog_log_p(eta: f64, t: f64) -> f64 {
    if t < 1e-5 {
        eta - 0.5 * t + t * t / 24.0
    } else {
        log1mexp(t)
    }
}

/// `t / expm1(t)` for `t = exp(eta) >= 0`: the cloglog `d log p / d eta`.
/// Its series `1 - t/2` below `1e-8` (so `t = 0` gives 1), and
/// `exp(eta - t)` above 40, where `expm1(t) = exp(t)` to double precision.
pub(crate) fn cloglog_ratio(eta: f64, t: f64) -> f64 {
    if t < 1e-8 {
        1.0 - 0.5 * t
    } else if t > 40.0 {
        (eta - t).exp()
    } else {
        t / t.exp_m1()
    }
}

/// `dnorm(eta) / pnorm(eta)`, the probit `d log p / d eta`, computed
/// without cancellation: below `-sqrt(32)` as `dnorm(eta) / pnorm(eta) =
/// (1 / sqrt(2 pi)) / temp`, where `pnorm(eta) = exp(-eta^2 / 2) temp` is
/// Cody's tail form that R's `pnorm_both` uses there (same coefficients),
/// so `exp(-eta^2 / 2)` cancels exactly (the difference of the two
/// logarithms, each near `-eta^2 / 2`, would lose `log2(eta^2)` bits, and
/// differ between two correct implementations by an ulp of `eta^2 / 2`:
/// `1e-13` relative at `|eta| = 40`, `6e-11` at 800); elsewhere the
/// plain quotient, whose denominator is at least `pnorm(-sqrt(32))`. Tends
/// to `-eta` as `eta -> -Inf` (`+Inf` there) and to 0 as `eta -> +Inf`.
#[allow(clippy::excessive_precision)] // Cody's coefficients as R prints them
pub(crate) fn probit_ratio(eta: f64) -> f64 {
    const M_SQRT_32: f64 = 5.656854249492380195206754896838;
    const M_1_SQRT_2PI: f64 = 0.398942280401432677939946059934;
    const P: [f64; 6] = crate::nmath::normal::CODY_TAIL_P;
    const Q: [f64; 5] = crate::nmath::normal::CODY_TAIL_Q;
    if eta < -M_SQRT_32 {
        let y = -eta;
        let xsq = 1.0 / (y * y);
        let mut xnum = P[5] * xsq;
        let mut xden = xsq;
        for i in 0..4 {
            xnum = (xnum + P[i]) * xsq;
            xden = (xden + Q[i]) * xsq;
        }
        let temp = (M_1_SQRT_2PI - xsq * (xnum + P[4]) / (xden + Q[4])) / y;
        return M_1_SQRT_2PI / temp;
    }
    dnorm(eta, 0.0, 1.0, false) / pnorm(eta, 0.0, 1.0, true, false)
}

/// `lchoose(n, x)` for whole `0 <= x <= n`, through `lgamma`.
pub(crate) fn lchoose_whole(n: f64, x: f64) -> f64 {
    lgamma(n + 1.0) - lgamma(x + 1.0) - lgamma(n - x + 1.0)
}

/// `(p, q)` = `(plogis(eta), plogis(-eta))` from one exponential,
/// `e = exp(-|eta|)`: `1 / (1 + e)` for the larger and `e / (1 + e)` for
/// the smaller (never an overflow, and the small one keeps its relative
/// accuracy far in the tails). The device files of the logit slopes
/// (`gb_glm_slope_binomial_logit`, `gb_glm_row_slope_binomial_logit`)
/// compute it the same way, so a kernel shares the exponential with the
/// closed-form term's `log1p(exp(-|eta|))`.
pub(crate) fn logit_p_q(eta: f64) -> (f64, f64) {
    let e = (-eta.abs()).exp();
    let d = 1.0 / (1.0 + e);
    if eta >= 0.0 {
        (d, e * d)
    } else {
        (e * d, d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logit_p_q_matches_plogis_across_the_range() {
        let mut worst: f64 = 0.0;
        for k in -7400..=7400 {
            let eta = f64::from(k) * 0.1 + 0.013;
            let (p, q) = logit_p_q(eta);
            for (got, want) in [
                (p, plogis(eta, 0.0, 1.0, true, false)),
                (q, plogis(eta, 0.0, 1.0, false, false)),
            ] {
                if want > 0.0 {
                    worst = worst.max(((got - want) / want).abs());
                } else {
                    assert!(got < 1e-300, "eta {eta}: {got} where plogis gives 0");
                }
            }
        }
        // Both sides round two or three times: a few ulps apart at most.
        assert!(worst < 1e-15, "worst relative difference {worst:e}");
        let (p, q) = logit_p_q(f64::NAN);
        assert!(p.is_nan() && q.is_nan());
        assert_eq!(logit_p_q(f64::INFINITY), (1.0, 0.0));
        assert_eq!(logit_p_q(f64::NEG_INFINITY), (0.0, 1.0));
    }
}
