//! R's `dpq.h` helpers for the `lower_tail` / `log_p` flags: the values 0
//! and 1 on the requested scale, and the conversions between a probability
//! given on that scale and a plain lower-tail probability.

/// `R_D__0`: probability 0 on the `log_p` scale.
#[inline]
pub(crate) fn d_0(log_p: bool) -> f64 {
    if log_p {
        f64::NEG_INFINITY
    } else {
        0.0
    }
}

/// `R_D__1`: probability 1 on the `log_p` scale.
#[inline]
pub(crate) fn d_1(log_p: bool) -> f64 {
    if log_p {
        0.0
    } else {
        1.0
    }
}

/// `R_DT_0`: probability 0 of the requested tail.
#[inline]
pub(crate) fn dt_0(lower_tail: bool, log_p: bool) -> f64 {
    if lower_tail {
        d_0(log_p)
    } else {
        d_1(log_p)
    }
}

/// `R_DT_1`: probability 1 of the requested tail.
#[inline]
pub(crate) fn dt_1(lower_tail: bool, log_p: bool) -> f64 {
    if lower_tail {
        d_1(log_p)
    } else {
        d_0(log_p)
    }
}

/// `R_D_Lval(p)`: the lower-tail value of a non-log probability.
#[inline]
pub(crate) fn d_lval(p: f64, lower_tail: bool) -> f64 {
    if lower_tail {
        p
    } else {
        0.5 - p + 0.5
    }
}

/// `R_D_Cval(p)`: the upper-tail value of a non-log probability.
#[inline]
pub(crate) fn d_cval(p: f64, lower_tail: bool) -> f64 {
    if lower_tail {
        0.5 - p + 0.5
    } else {
        p
    }
}

/// `R_D_exp(x)`: `exp(x)` on the requested scale (`x` itself for `log_p`).
#[inline]
pub(crate) fn d_exp(x: f64, log_p: bool) -> f64 {
    if log_p {
        x
    } else {
        x.exp()
    }
}

/// `R_DT_qIv(p)`: the plain lower-tail probability of `p` given on the
/// requested scale.
#[inline]
pub(crate) fn dt_qiv(p: f64, lower_tail: bool, log_p: bool) -> f64 {
    if log_p {
        if lower_tail {
            p.exp()
        } else {
            -p.exp_m1()
        }
    } else {
        d_lval(p, lower_tail)
    }
}

/// `R_DT_CIv(p)`: the plain upper-tail probability of `p` given on the
/// requested scale.
#[inline]
pub(crate) fn dt_civ(p: f64, lower_tail: bool, log_p: bool) -> f64 {
    if log_p {
        if lower_tail {
            -p.exp_m1()
        } else {
            p.exp()
        }
    } else {
        d_cval(p, lower_tail)
    }
}

/// `R_Q_P01_boundaries(p, left, right)`: `Some(answer)` when a quantile
/// function's `p` is outside [0, 1] (NaN) or at a boundary (`left` or
/// `right`), `None` when `p` is interior.
#[inline]
pub(crate) fn q_p01_boundaries(
    p: f64,
    left: f64,
    right: f64,
    lower_tail: bool,
    log_p: bool,
) -> Option<f64> {
    if log_p {
        if p > 0.0 {
            return Some(f64::NAN);
        }
        if p == 0.0 {
            return Some(if lower_tail { right } else { left });
        }
        if p == f64::NEG_INFINITY {
            return Some(if lower_tail { left } else { right });
        }
    } else {
        if !(0.0..=1.0).contains(&p) {
            return Some(f64::NAN);
        }
        if p == 0.0 {
            return Some(if lower_tail { left } else { right });
        }
        if p == 1.0 {
            return Some(if lower_tail { right } else { left });
        }
    }
    None
}
