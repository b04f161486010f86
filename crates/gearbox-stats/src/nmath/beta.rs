//! The beta distribution function (R's `pbeta.c`), a wrapper of TOMS 708's
//! `bratio`.

use super::dpq::{dt_0, dt_1};
use super::toms708::bratio;

/// The beta distribution function `I_x(a, b)` for `0 < x` (R's
/// `pbeta_raw`, called by `pbeta` and `pt`): handles the limit cases
/// `a` or `b` 0 or infinite as point masses, then calls [`bratio`].
pub fn pbeta_raw(x: f64, a: f64, b: f64, lower_tail: bool, log_p: bool) -> f64 {
    // the limit cases
    if a == 0.0 || b == 0.0 || !a.is_finite() || !b.is_finite() {
        // NB: 0 < x < 1
        if a == 0.0 && b == 0.0 {
            // point mass 1/2 at each of {0, 1}
            return if log_p { -std::f64::consts::LN_2 } else { 0.5 };
        }
        if a == 0.0 || a / b == 0.0 {
            // point mass 1 at 0: P(X <= x) = 1 for all x > 0
            return dt_1(lower_tail, log_p);
        }
        if b == 0.0 || b / a == 0.0 {
            // point mass 1 at 1: P(X <= x) = 0 for all x < 1
            return dt_0(lower_tail, log_p);
        }
        // else a = b = Inf: point mass 1 at 1/2
        return if x < 0.5 {
            dt_0(lower_tail, log_p)
        } else {
            dt_1(lower_tail, log_p)
        };
    }
    if x >= 1.0 {
        return dt_1(lower_tail, log_p);
    }
    // now 0 < a < Inf, 0 < b < Inf
    let x1 = 0.5 - x + 0.5;
    // (R warns when bratio reports an error other than 11 and 14.)
    let (w, wc, _ierr) = bratio(a, b, x, x1, log_p);
    if lower_tail {
        w
    } else {
        wc
    }
}

/// The beta distribution function `P[X <= x]` for `X ~ Beta(a, b)` (R's
/// `pbeta`), or the upper tail, on the log scale if asked; `a = 0` or
/// `b = 0` are point masses.
pub fn pbeta(x: f64, a: f64, b: f64, lower_tail: bool, log_p: bool) -> f64 {
    if x.is_nan() || a.is_nan() || b.is_nan() {
        return x + a + b;
    }
    if a < 0.0 || b < 0.0 {
        return f64::NAN;
    }
    if x <= 0.0 {
        return dt_0(lower_tail, log_p);
    }
    pbeta_raw(x, a, b, lower_tail, log_p)
}
