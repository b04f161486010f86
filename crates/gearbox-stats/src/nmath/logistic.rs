//! The logistic distribution function and quantile (R's `plogis.c`,
//! `qlogis.c`).

use super::dpq::{dt_0, dt_1, q_p01_boundaries};
use super::{log1mexp, log1pexp};

/// The logistic distribution function `1 / (1 + exp(-(x - location) /
/// scale))` (R's `plogis`), or the upper tail, on the log scale if asked.
pub fn plogis(x: f64, location: f64, scale: f64, lower_tail: bool, log_p: bool) -> f64 {
    if x.is_nan() || location.is_nan() || scale.is_nan() {
        return x + location + scale;
    }
    if scale <= 0.0 {
        return f64::NAN;
    }
    let x = (x - location) / scale;
    if x.is_nan() {
        return f64::NAN;
    }
    // R_P_bounds_Inf_01(x)
    if !x.is_finite() {
        return if x > 0.0 {
            dt_1(lower_tail, log_p)
        } else {
            dt_0(lower_tail, log_p)
        };
    }
    let t = if lower_tail { -x } else { x };
    if log_p {
        // log(1 / (1 + exp(+-x))) = -log(1 + exp(+-x))
        -log1pexp(t)
    } else {
        1.0 / (1.0 + t.exp())
    }
}

/// The logistic quantile function `location + scale * logit(p)` (R's
/// `qlogis`).
pub fn qlogis(p: f64, location: f64, scale: f64, lower_tail: bool, log_p: bool) -> f64 {
    if p.is_nan() || location.is_nan() || scale.is_nan() {
        return p + location + scale;
    }
    if let Some(v) = q_p01_boundaries(p, f64::NEG_INFINITY, f64::INFINITY, lower_tail, log_p) {
        return v;
    }
    if scale < 0.0 {
        return f64::NAN;
    }
    if scale == 0.0 {
        return location;
    }
    // p := logit(p) = log(p / (1 - p)); R_Log1_Exp(p) == log1mexp(-p)
    let logit = if log_p {
        if lower_tail {
            p - log1mexp(-p)
        } else {
            log1mexp(-p) - p
        }
    } else if lower_tail {
        (p / (1.0 - p)).ln()
    } else {
        ((1.0 - p) / p).ln()
    };
    location + scale * logit
}
