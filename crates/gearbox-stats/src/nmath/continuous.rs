//! Densities of the continuous distributions: gamma, beta, normal,
//! logistic and Student's t (R's `dgamma.c`, `dbeta.c`, `dnorm.c`,
//! `dlogis.c`, `dt.c`).

use std::f64::consts::LN_2;

use super::density_scale::{d_exp, d_val, d_zero};
use super::deviance::{bd0, stirlerr};
use super::discrete::{dbinom_raw, dpois_raw};
use super::gamma::{lbeta, M_LN_SQRT_2PI};

/// `1 / sqrt(2 pi)`.
const M_1_SQRT_2PI: f64 = 0.398942280401432677939946059934;

/// The gamma density with `shape` and `scale` (R's `dgamma`; note the
/// scale, not the rate). NaN for `shape < 0` or `scale <= 0`; `shape == 0`
/// is the point mass at 0.
pub fn dgamma(x: f64, shape: f64, scale: f64, give_log: bool) -> f64 {
    if x.is_nan() || shape.is_nan() || scale.is_nan() {
        return x + shape + scale;
    }
    if shape < 0.0 || scale <= 0.0 {
        return f64::NAN;
    }
    if x < 0.0 {
        return d_zero(give_log);
    }
    if shape == 0.0 {
        // Point mass at 0.
        return if x == 0.0 {
            f64::INFINITY
        } else {
            d_zero(give_log)
        };
    }
    if x == 0.0 {
        if shape < 1.0 {
            return f64::INFINITY;
        }
        if shape > 1.0 {
            return d_zero(give_log);
        }
        return if give_log { -scale.ln() } else { 1.0 / scale };
    }
    if shape < 1.0 {
        let pr = dpois_raw(shape, x / scale, give_log);
        return if give_log {
            // shape/x may overflow to +Inf (it cannot underflow to 0 here).
            pr + if (shape / x).is_finite() {
                (shape / x).ln()
            } else {
                shape.ln() - x.ln()
            }
        } else {
            pr * shape / x
        };
    }
    // shape >= 1
    let pr = dpois_raw(shape - 1.0, x / scale, give_log);
    if give_log {
        pr - scale.ln()
    } else {
        pr / scale
    }
}

/// The beta density with shapes `a` and `b` (R's `dbeta`). NaN for a
/// negative shape; zero or infinite shapes give R's limiting point masses.
pub fn dbeta(x: f64, a: f64, b: f64, give_log: bool) -> f64 {
    if x.is_nan() || a.is_nan() || b.is_nan() {
        return x + a + b;
    }
    if a < 0.0 || b < 0.0 {
        return f64::NAN;
    }
    if !(0.0..=1.0).contains(&x) {
        return d_zero(give_log);
    }
    // Limit cases for (a, b): point masses.
    if a == 0.0 || b == 0.0 || !a.is_finite() || !b.is_finite() {
        let mass_at = |point: f64| {
            if x == point {
                f64::INFINITY
            } else {
                d_zero(give_log)
            }
        };
        if a == 0.0 && b == 0.0 {
            // Mass 1/2 at each of 0 and 1.
            return if x == 0.0 || x == 1.0 {
                f64::INFINITY
            } else {
                d_zero(give_log)
            };
        }
        if a == 0.0 || b / a == f64::INFINITY {
            return mass_at(0.0);
        }
        if b == 0.0 || a / b == f64::INFINITY {
            return mass_at(1.0);
        }
        // a = b = Inf: mass 1 at 1/2.
        return mass_at(0.5);
    }
    if x == 0.0 {
        if a > 1.0 {
            return d_zero(give_log);
        }
        if a < 1.0 {
            return f64::INFINITY;
        }
        return d_val(give_log, b); // a == 1
    }
    if x == 1.0 {
        if b > 1.0 {
            return d_zero(give_log);
        }
        if b < 1.0 {
            return f64::INFINITY;
        }
        return d_val(give_log, a); // b == 1
    }
    let lval = if a <= 2.0 || b <= 2.0 {
        (a - 1.0) * x.ln() + (b - 1.0) * (-x).ln_1p() - lbeta(a, b)
    } else {
        (a + b - 1.0).ln() + dbinom_raw(a - 1.0, a + b - 2.0, x, 1.0 - x, true)
    };
    d_exp(give_log, lval)
}

/// The normal density with mean `mu` and standard deviation `sigma` (R 4.2's
/// `dnorm4`), accurate also far in the tails: for `|x| >= 5` the square is
/// split so that `x^2` loses no digits. NaN for `sigma < 0`; `sigma == 0`
/// is the point mass at `mu`.
pub fn dnorm(x: f64, mu: f64, sigma: f64, give_log: bool) -> f64 {
    if x.is_nan() || mu.is_nan() || sigma.is_nan() {
        return x + mu + sigma;
    }
    if sigma < 0.0 {
        return f64::NAN;
    }
    if !sigma.is_finite() {
        return d_zero(give_log);
    }
    if !x.is_finite() && mu == x {
        return f64::NAN; // x - mu is NaN
    }
    if sigma == 0.0 {
        return if x == mu {
            f64::INFINITY
        } else {
            d_zero(give_log)
        };
    }
    let x = (x - mu) / sigma;
    if !x.is_finite() {
        return d_zero(give_log);
    }
    let x = x.abs();
    if x >= 2.0 * f64::MAX.sqrt() {
        return d_zero(give_log);
    }
    if give_log {
        return -(M_LN_SQRT_2PI + 0.5 * x * x + sigma.ln());
    }
    if x < 5.0 {
        return M_1_SQRT_2PI * (-0.5 * x * x).exp() / sigma;
    }
    // exp(-x^2/2) underflows to 0 (subnormals included) beyond
    // sqrt(-2 log(2) (DBL_MIN_EXP + 1 - DBL_MANT_DIG)) = 38.57.
    if x > (-2.0 * LN_2 * f64::from(f64::MIN_EXP + 1 - f64::MANTISSA_DIGITS as i32)).sqrt() {
        return 0.0;
    }
    // x = x1 + x2 with |x2| <= 2^-16, so that x1 * x1 is exact.
    let x1 = (x * 65536.0).round_ties_even() / 65536.0;
    let x2 = x - x1;
    M_1_SQRT_2PI / sigma * ((-0.5 * x1 * x1).exp() * ((-0.5 * x2 - x1) * x2).exp())
}

/// The logistic density with `location` and `scale` (R's `dlogis`). NaN for
/// `scale <= 0`.
pub fn dlogis(x: f64, location: f64, scale: f64, give_log: bool) -> f64 {
    if x.is_nan() || location.is_nan() || scale.is_nan() {
        return x + location + scale;
    }
    if scale <= 0.0 {
        return f64::NAN;
    }
    let x = ((x - location) / scale).abs();
    let e = (-x).exp();
    let f = 1.0 + e;
    if give_log {
        -(x + (scale * f * f).ln())
    } else {
        e / (scale * f * f)
    }
}

/// Student's t density with `n` degrees of freedom (R's `dt`, Loader's
/// saddle-point form; `n` need not be an integer). NaN for `n <= 0`;
/// `n = Inf` is the standard normal.
pub fn dt(x: f64, n: f64, give_log: bool) -> f64 {
    if x.is_nan() || n.is_nan() {
        return x + n;
    }
    if n <= 0.0 {
        return f64::NAN;
    }
    if !x.is_finite() {
        return d_zero(give_log);
    }
    if !n.is_finite() {
        return dnorm(x, 0.0, 1.0, give_log);
    }
    let t = -bd0(n / 2.0, (n + 1.0) / 2.0) + stirlerr((n + 1.0) / 2.0) - stirlerr(n / 2.0);
    let x2n = x * x / n; // in [0, Inf]
    let mut ax = 0.0;
    // l_x2n = log(sqrt(1 + x2n)) = log(1 + x2n) / 2; u = n l_x2n
    let large_x2n = x2n > 1.0 / f64::EPSILON;
    let (l_x2n, u) = if large_x2n {
        ax = x.abs();
        let l_x2n = ax.ln() - n.ln() / 2.0; // log(x2n) / 2
        (l_x2n, n * l_x2n)
    } else if x2n > 0.2 {
        let l_x2n = (1.0 + x2n).ln() / 2.0;
        (l_x2n, n * l_x2n)
    } else {
        (
            x2n.ln_1p() / 2.0,
            -bd0(n / 2.0, (n + x * x) / 2.0) + x * x / 2.0,
        )
    };
    if give_log {
        return t - u - (M_LN_SQRT_2PI + l_x2n);
    }
    // 1/sqrt(1 + x2n); for large x2n, sqrt(1 + 1/x2n) is 1.
    let i_sqrt = if large_x2n {
        n.sqrt() / ax
    } else {
        (-l_x2n).exp()
    };
    (t - u).exp() * M_1_SQRT_2PI * i_sqrt
}
