//! Student's t distribution function (R's `pt.c`).

use super::dpq::{dt_0, dt_1};
use super::{lbeta, pbeta, pnorm};

/// Student's t distribution function `P[T <= x]` for `T ~ t_n` (R's `pt`),
/// or the upper tail, on the log scale if asked; `n = Inf` is the normal.
pub fn pt(x: f64, n: f64, lower_tail: bool, log_p: bool) -> f64 {
    if x.is_nan() || n.is_nan() {
        return x + n;
    }
    if n <= 0.0 {
        return f64::NAN;
    }
    if !x.is_finite() {
        return if x < 0.0 {
            dt_0(lower_tail, log_p)
        } else {
            dt_1(lower_tail, log_p)
        };
    }
    if !n.is_finite() {
        return pnorm(x, 0.0, 1.0, lower_tail, log_p);
    }

    let nx = 1.0 + (x / n) * x;
    let val = if nx > 1e100 {
        // x*x > 1e100 * n: danger of underflow, so use Abramowitz & Stegun
        // 26.5.4, pbeta(z, a, b) ~ z^a (1-z)^b / a B(a, b) ~ z^a / a B(a, b)
        // with z = 1/nx, a = n/2, b = 1/2
        let lval = -0.5 * n * (2.0 * x.abs().ln() - n.ln()) - lbeta(0.5 * n, 0.5) - (0.5 * n).ln();
        if log_p {
            lval
        } else {
            lval.exp()
        }
    } else if n > x * x {
        pbeta(x * x / (n + x * x), 0.5, n / 2.0, false, log_p)
    } else {
        pbeta(1.0 / nx, n / 2.0, 0.5, true, log_p)
    };

    // 1 - val if lower_tail and x > 0 (but not both)
    let lower_tail = if x <= 0.0 { !lower_tail } else { lower_tail };

    if log_p {
        if lower_tail {
            (-0.5 * val.exp()).ln_1p()
        } else {
            val - std::f64::consts::LN_2 // log(0.5 * pbeta(...))
        }
    } else {
        let val = val / 2.0;
        if lower_tail {
            0.5 - val + 0.5
        } else {
            val
        }
    }
}
