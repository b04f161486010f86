//! R's `dpq.h` density helpers: the values a density returns on its own
//! scale or on the log scale (`give_log`), and the `R_nonint` test that the
//! discrete densities apply to their count argument.

/// `R_D__0`: a zero density (0, or `-Inf` on the log scale).
#[inline]
pub(crate) fn d_zero(give_log: bool) -> f64 {
    if give_log {
        f64::NEG_INFINITY
    } else {
        0.0
    }
}

/// `R_D__1`: a density of one (1, or 0 on the log scale).
#[inline]
pub(crate) fn d_one(give_log: bool) -> f64 {
    if give_log {
        0.0
    } else {
        1.0
    }
}

/// `R_D_exp(x)`: `exp(x)`, or `x` itself on the log scale.
#[inline]
pub(crate) fn d_exp(give_log: bool, x: f64) -> f64 {
    if give_log {
        x
    } else {
        x.exp()
    }
}

/// `R_D_val(x)`: `x`, or `log(x)` on the log scale.
#[inline]
pub(crate) fn d_val(give_log: bool, x: f64) -> f64 {
    if give_log {
        x.ln()
    } else {
        x
    }
}

/// `R_forceint(x)`: the nearest integer, ties to even (`nearbyint`).
#[inline]
pub(crate) fn forceint(x: f64) -> f64 {
    x.round_ties_even()
}

/// `R_nonint(x)`: whether `x` is farther from an integer than R tolerates
/// (`1e-7` relative to `max(1, |x|)`). False for infinite and NaN `x`.
#[inline]
pub(crate) fn nonint(x: f64) -> bool {
    (x - forceint(x)).abs() > 1e-7 * fmax2(1.0, x.abs())
}

/// R's `fmax2`: the larger of two values, NaN if either is NaN.
#[inline]
pub(crate) fn fmax2(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    if x < y {
        y
    } else {
        x
    }
}
