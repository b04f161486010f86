//! Densities of the discrete distributions: binomial, Poisson and negative
//! binomial (R's `dbinom.c`, `dpois.c`, `dnbinom.c`), with the unchecked
//! `_raw` kernels other densities build on.
//!
//! As in R, a count `x` farther than `1e-7 max(1, |x|)` from an integer has
//! density 0 (R also warns), and a near-integer `x` is rounded (ties to
//! even).

use super::density_scale::{d_exp, d_one, d_zero, forceint, nonint};
use super::deviance::{bd0, ebd0, ldexp, stirlerr};
use super::gamma::{lgamma, lgamma1p};

/// `log(2 pi)`.
const M_LN_2PI: f64 = 1.837877066409345483560659472811;
/// `2 pi`.
const M_2PI: f64 = std::f64::consts::TAU;
/// `sqrt(2 pi)`.
const M_SQRT_2PI: f64 = 2.50662827463100050241576528481104525301;
/// `2^1023 / pi`: from here on `2 pi x` overflows.
const X_LRG: f64 = 2.86111748575702815380240589208115399625e+307;

/// The binomial probability of `x` successes in `n` trials with success
/// probability `p` and `q = 1 - p` given separately (R's `dbinom_raw`,
/// Loader's saddle-point form). No argument checks: `x` need not be an
/// integer (`dbeta` and `dnbinom` call it with real arguments); `x` outside
/// `[0, n]` has density 0.
pub fn dbinom_raw(x: f64, n: f64, p: f64, q: f64, give_log: bool) -> f64 {
    if p == 0.0 {
        return if x == 0.0 {
            d_one(give_log)
        } else {
            d_zero(give_log)
        };
    }
    if q == 0.0 {
        return if x == n {
            d_one(give_log)
        } else {
            d_zero(give_log)
        };
    }
    if x == 0.0 {
        if n == 0.0 {
            return d_one(give_log);
        }
        let lc = if p < 0.1 {
            -bd0(n, n * q) - n * p
        } else {
            n * q.ln()
        };
        return d_exp(give_log, lc);
    }
    if x == n {
        let lc = if q < 0.1 {
            -bd0(n, n * p) - n * q
        } else {
            n * p.ln()
        };
        return d_exp(give_log, lc);
    }
    if x < 0.0 || x > n {
        return d_zero(give_log);
    }
    // n p or n q can underflow to zero for small n and p or q (NaN then).
    let lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, n * p) - bd0(n - x, n * q);
    // log(2 pi x (n - x) / n), written to stay accurate for x << n.
    let lf = M_LN_2PI + x.ln() + (-x / n).ln_1p();
    d_exp(give_log, lc - 0.5 * lf)
}

/// The binomial density of `x` successes in `n` trials with success
/// probability `p` (R's `dbinom`). NaN for `p` outside [0, 1] or `n`
/// negative or not an integer.
pub fn dbinom(x: f64, n: f64, p: f64, give_log: bool) -> f64 {
    if x.is_nan() || n.is_nan() || p.is_nan() {
        return x + n + p;
    }
    if !(0.0..=1.0).contains(&p) || n < 0.0 || nonint(n) {
        return f64::NAN;
    }
    if nonint(x) || x < 0.0 || !x.is_finite() {
        return d_zero(give_log);
    }
    dbinom_raw(forceint(x), forceint(n), p, 1.0 - p, give_log)
}

/// The Poisson probability `lambda^x e^-lambda / x!` (R 4.2's `dpois_raw`,
/// through [`ebd0`] and [`stirlerr`]). No argument checks: `x` need not be
/// an integer (`dgamma` and `pgamma` call it with real `x`); `x < 0` has
/// density 0.
pub fn dpois_raw(x: f64, lambda: f64, give_log: bool) -> f64 {
    if lambda == 0.0 {
        return if x == 0.0 {
            d_one(give_log)
        } else {
            d_zero(give_log)
        };
    }
    if !lambda.is_finite() {
        return d_zero(give_log); // also for x = lambda = +Inf
    }
    if x < 0.0 {
        return d_zero(give_log);
    }
    if x <= lambda * f64::MIN_POSITIVE {
        return d_exp(give_log, -lambda);
    }
    if lambda < x * f64::MIN_POSITIVE {
        if !x.is_finite() {
            return d_zero(give_log); // lambda < x = +Inf
        }
        return d_exp(give_log, -lambda + x * lambda.ln() - lgamma(x + 1.0));
    }
    let (yh, mut yl) = ebd0(x, lambda);
    yl += stirlerr(x);
    let large_x = x >= X_LRG; // 2 pi x overflows
    let r = if large_x {
        M_SQRT_2PI * x.sqrt()
    } else {
        M_2PI * x
    };
    if give_log {
        -yl - yh - if large_x { r.ln() } else { 0.5 * r.ln() }
    } else {
        (-yl).exp() * (-yh).exp() / if large_x { r } else { r.sqrt() }
    }
}

/// The Poisson density of `x` with mean `lambda` (R's `dpois`). NaN for
/// `lambda < 0`.
pub fn dpois(x: f64, lambda: f64, give_log: bool) -> f64 {
    if x.is_nan() || lambda.is_nan() {
        return x + lambda;
    }
    if lambda < 0.0 {
        return f64::NAN;
    }
    if nonint(x) || x < 0.0 || !x.is_finite() {
        return d_zero(give_log);
    }
    dpois_raw(forceint(x), lambda, give_log)
}

/// The negative binomial density of `x` failures before the `size`-th
/// success with success probability `prob` (R's `dnbinom`; `size` need not
/// be an integer). NaN for `prob` outside (0, 1] or `size < 0`.
pub fn dnbinom(x: f64, size: f64, prob: f64, give_log: bool) -> f64 {
    if x.is_nan() || size.is_nan() || prob.is_nan() {
        return x + size + prob;
    }
    if prob <= 0.0 || prob > 1.0 || size < 0.0 {
        return f64::NAN;
    }
    if nonint(x) || x < 0.0 || !x.is_finite() {
        return d_zero(give_log);
    }
    let x = forceint(x);
    if x == 0.0 {
        // size = 0 is the point mass at zero; else P(0) = prob^size.
        if size == 0.0 {
            return d_one(give_log);
        }
        return if give_log {
            size * prob.ln()
        } else {
            prob.powf(size)
        };
    }
    let size = if size.is_finite() { size } else { f64::MAX };
    if x < 1e-10 * size {
        // Two terms of Abramowitz & Stegun 6.1.47 instead of dbinom_raw().
        let xx2s = if x < f64::MAX.sqrt() {
            ldexp(x * (x - 1.0), -1) / size // x (x-1) / (2 size)
        } else {
            x * (ldexp(x, -1) / size)
        };
        d_exp(
            give_log,
            size * prob.ln() + x * (size.ln() + (-prob).ln_1p()) - lgamma1p(x) + xx2s.ln_1p(),
        )
    } else {
        // log1p(-x/(size+x)) is more accurate than log(size/(size+x)) for x < size.
        let p = if give_log {
            if x < size {
                (-x / (size + x)).ln_1p()
            } else {
                (size / (size + x)).ln()
            }
        } else {
            size / (size + x)
        };
        let ans = dbinom_raw(size, x + size, prob, 1.0 - prob, give_log);
        if give_log {
            p + ans
        } else {
            p * ans
        }
    }
}
