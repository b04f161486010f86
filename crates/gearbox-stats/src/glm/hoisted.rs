//! The binomial and poisson terms of a GLM grid with their per-observation
//! constants hoisted ([`super::rows`]): the per-element work that remains
//! after everything depending only on `(y, wt)` was computed once per
//! model. These are the Rust mirrors of the device functions
//! `gb_glm_row_*` (`device/`), which follow them line for line.
//!
//! # Accuracy contract
//!
//! Each term is either R's exact evaluation or within `2^-46` (`1.4e-14`)
//! relative of the exact value:
//!
//! - with the closed forms off (flag `fast` clear) the terms are **bit
//!   for bit** those of [`loglik_term`](super::loglik_term) and
//!   [`dloglik_deta`](super::dloglik_deta): the hoisted constants are the
//!   very subexpressions R's `dbinom_raw` and `dpois_raw` evaluate, in
//!   their order of evaluation (`stirlerr(n) - stirlerr(x) - stirlerr(n -
//!   x)` is `lc`'s left-to-right prefix; `lf`, `stirlerr(x)` and `0.5
//!   log(2 pi x)` are per row);
//! - with `fast` set, binomial logit for whole `0 <= x <= n` (`n > 0`) and
//!   poisson log for `y >= 0` first try a closed form, [`logit_closed_form`]
//!   (`lchoose(n, x) - n log1p(exp(-|eta|)) + (eta <= 0 ? x : x - n) eta`,
//!   every part of one sign but `lchoose`) and [`poisson_closed_form`]
//!   (`y eta - exp(eta) - lgamma(y + 1)`), and keep it only where a
//!   running bound on its rounding error certifies it: the bound adds the
//!   hoisted constant's own error bound, one ulp (`2u`, `u = 2^-53`) for
//!   each `exp` and `log1p` (CUDA's and glibc's are within one ulp), and
//!   `u` per rounding times the magnitude it rounds, each term with a
//!   margin, and the closed form is kept when the bound is at most `2^-47
//!   |value|`, which puts it within `2^-46` of the exact value. Where the
//!   parts cancel (near the mode of a large count), poisson takes
//!   [`poisson_near_mode`], R's `dpois_raw` with Loader's `bd0` series in
//!   place of `ebd0`: three non-negative parts, within about `2^-50` of
//!   the exact density (`tests/glm_hoisted.rs` checks 1,500 near-mode
//!   counts up to 1e9 against 50-digit values: worst 4.5e-16, where R
//!   4.2.2's own `dpois` is off by up to 1.1e-11); binomial takes the
//!   exact R path. The certificate is computed from the closed form's own
//!   value, so host and device may choose differently at the threshold;
//!   both choices honour the contract.

use super::family::Link;
use super::link::{lchoose_whole, LinkAt};
use super::rows::{BinomialRow, PoissonRow, UNIT_ROUNDOFF};
use crate::nmath::{bd0, ebd0};

/// Whether a row's count is a rejection code (`NaN` or `-Inf`, the term R
/// gives) rather than a count.
fn rejected(count: f64) -> bool {
    count.is_nan() || count < 0.0
}

/// The certificate's threshold: a closed form whose error bound is at most
/// this times its magnitude is within `2^-46` relative of the exact value.
pub const CERTIFIED: f64 = 1.0 / (1u64 << 47) as f64;

/// R's `dbinom_raw(x, n, p, q, log = TRUE)` for whole `0 < x < n` with
/// `p, q` positive, from the row's `h` and `lf`: `lc = h - bd0(x, n p) -
/// bd0(n - x, n q)`, then `lc - lf / 2`.
pub fn dbinom_raw_rows(x: f64, n: f64, h: f64, lf: f64, p: f64, q: f64) -> f64 {
    let lc = h - bd0(x, n * p) - bd0(n - x, n * q);
    lc - 0.5 * lf
}

/// The exact binomial log density of a row with valid counts under the
/// link at `at` (as `family`'s `binomial_log_density`).
fn binomial_log_density_rows(x: f64, n: f64, h: f64, lf: f64, at: LinkAt) -> f64 {
    if x == 0.0 {
        return if n == 0.0 { 0.0 } else { n * at.log_q() };
    }
    if x == n {
        return n * at.log_p();
    }
    let (p, q) = (at.p(), at.q());
    if p >= f64::MIN_POSITIVE && q >= f64::MIN_POSITIVE {
        return dbinom_raw_rows(x, n, h, lf, p, q);
    }
    lchoose_whole(n, x) + x * at.log_p() + (n - x) * at.log_q()
}

/// The closed form of the binomial logit log density for whole `0 <= x <=
/// n`, `n > 0`: `lchoose - n log1p(exp(-|eta|)) + t`, `t = x eta` for `eta <= 0`
/// and `(x - n) eta` above, if its error bound `lchoose_err + u (2
/// |lchoose| + 7 n L + 2 |t| + 3 |value|)` (`L` the `log1p`, relative
/// error `4u`) is at most [`CERTIFIED`] `|value|`; `NaN` otherwise.
pub fn logit_closed_form(eta: f64, x: f64, n: f64, lchoose: f64, lchoose_err: f64) -> f64 {
    let l = (-eta.abs()).exp().ln_1p();
    let t = if eta <= 0.0 { x * eta } else { (x - n) * eta };
    let nl = n * l;
    let value = lchoose - nl + t;
    let bound = lchoose_err
        + UNIT_ROUNDOFF * (2.0 * lchoose.abs() + 7.0 * nl + 2.0 * t.abs() + 3.0 * value.abs());
    if value.is_finite() && bound <= CERTIFIED * value.abs() {
        value
    } else {
        f64::NAN
    }
}

/// The binomial log-likelihood term of a row (`row` from
/// [`super::rows::binomial_row`]) at `eta`, divided by `dispersion` when
/// `quasi`; with `fast`, the certified closed form for the logit link
/// where it applies (module docs). Without `fast` it equals
/// [`loglik_term`](super::loglik_term) bit for bit.
pub fn binomial_loglik(
    link: Link,
    eta: f64,
    dispersion: f64,
    row: &BinomialRow,
    quasi: bool,
    fast: bool,
) -> f64 {
    let (x, n) = (row.x, row.n);
    let mut value = f64::NAN;
    if fast && link == Link::Logit && x >= 0.0 && x <= n && n > 0.0 {
        value = logit_closed_form(eta, x, n, row.lchoose, row.lchoose_err);
    }
    if value.is_nan() {
        value = if rejected(x) {
            x
        } else {
            binomial_log_density_rows(x, n, row.h, row.lf, LinkAt::new(link, eta))
        };
    }
    if quasi {
        value / dispersion
    } else {
        value
    }
}

/// The eta-slope of the binomial term of a row with counts `x`, `n`
/// (rejected counts give `NaN`), divided by `dispersion` when `quasi`;
/// bit for bit [`dloglik_deta`](super::dloglik_deta).
pub fn binomial_slope(link: Link, eta: f64, dispersion: f64, x: f64, n: f64, quasi: bool) -> f64 {
    let value = if rejected(x) {
        f64::NAN
    } else {
        let at = LinkAt::new(link, eta);
        let mut d = 0.0;
        if x > 0.0 {
            d += x * at.log_p_slope();
        }
        if n - x > 0.0 {
            d += (n - x) * at.log_q_slope();
        }
        d
    };
    if quasi {
        value / dispersion
    } else {
        value
    }
}

/// R's `dpois_raw(x, lambda, log = TRUE)` for a whole finite `x >= 0` and
/// a normal finite `lambda`, from the row's `stirlerr(x)`, `0.5 log(2 pi
/// x)` and `lgammafn(x + 1)`.
pub fn dpois_raw_rows(x: f64, lambda: f64, stirlerr: f64, log_term: f64, lgamma: f64) -> f64 {
    if x <= lambda * f64::MIN_POSITIVE {
        return -lambda;
    }
    if lambda < x * f64::MIN_POSITIVE {
        return -lambda + x * lambda.ln() - lgamma;
    }
    let (yh, mut yl) = ebd0(x, lambda);
    yl += stirlerr;
    -yl - yh - log_term
}

/// The closed form of the poisson log density of count `k` at `eta`,
/// `lambda = exp(eta)`: `k eta - lambda - lgamma`, if its error bound
/// `lgamma_err + u (3 |k eta| + 4 lambda + 4 |value|)` is at most
/// [`CERTIFIED`] `|value|`; `NaN` otherwise.
pub fn poisson_closed_form(eta: f64, lambda: f64, k: f64, lgamma: f64, lgamma_err: f64) -> f64 {
    let k_eta = k * eta;
    let value = k_eta - lambda - lgamma;
    let bound = lgamma_err + UNIT_ROUNDOFF * (3.0 * k_eta.abs() + 4.0 * lambda + 4.0 * value.abs());
    if value.is_finite() && bound <= CERTIFIED * value.abs() {
        value
    } else {
        f64::NAN
    }
}

/// The poisson log density of whole count `k >= 1` near its mode, where
/// the closed form cancels: `-(stirlerr(k) + bd0(k, lambda)) - 0.5 log(2
/// pi k)` with `stirlerr(k)` and `0.5 log(2 pi k)` hoisted (`stirl`,
/// `log_term`) and Loader's `bd0` by its series in `v = (k - lambda) / (k +
/// lambda)`, which [`bd0`] takes for `|k - lambda| <
/// 0.1 (k + lambda)`; `NaN` outside that range. It is R's `dpois_raw`
/// with `bd0` in place of `ebd0` (R before 4.2). Certified within
/// [`CERTIFIED`]: the three terms are non-negative, so nothing cancels,
/// and each is within a few `u` (the series' terms alternate in size by
/// at most 7% of its first, the hoisted constants are R's), about `8u`
/// (`2^-50`) in all.
pub fn poisson_near_mode(k: f64, lambda: f64, stirl: f64, log_term: f64) -> f64 {
    if k >= 1.0 && (k - lambda).abs() < 0.1 * (k + lambda) {
        -(stirl + bd0(k, lambda)) - log_term
    } else {
        f64::NAN
    }
}

/// The poisson log-likelihood term of a row (`row` from
/// [`super::rows::poisson_row`]) at `eta`, `wt dpois(y, exp(eta), log =
/// TRUE)`, divided by `dispersion` when `quasi`; with `fast`, the
/// certified closed form for `y >= 0` (module docs; at `y = 0` it is
/// `-exp(eta)`, R's value exactly), and where it cannot be certified near
/// the mode [`poisson_near_mode`]. Without `fast` it
/// equals [`loglik_term`](super::loglik_term) bit for bit.
pub fn poisson_loglik(eta: f64, dispersion: f64, row: &PoissonRow, quasi: bool, fast: bool) -> f64 {
    if row.wt == 0.0 {
        return 0.0;
    }
    let lambda = eta.exp();
    let k = row.k;
    let density = if rejected(k) {
        k
    } else if lambda >= f64::MIN_POSITIVE && lambda.is_finite() {
        if k == f64::INFINITY {
            f64::NEG_INFINITY
        } else {
            let mut d = f64::NAN;
            if fast && k >= 0.0 {
                d = poisson_closed_form(eta, lambda, k, row.lgamma, row.lgamma_err);
                if d.is_nan() {
                    d = poisson_near_mode(k, lambda, row.stirlerr, row.log_term);
                }
            }
            if d.is_nan() {
                d = dpois_raw_rows(k, lambda, row.stirlerr, row.log_term, row.lgamma);
            }
            d
        }
    } else {
        // k eta is 0 for k = 0 even where eta is -Inf.
        let k_eta = if k == 0.0 { 0.0 } else { k * eta };
        k_eta - lambda - row.lgamma
    };
    let value = row.wt * density;
    if quasi {
        value / dispersion
    } else {
        value
    }
}
