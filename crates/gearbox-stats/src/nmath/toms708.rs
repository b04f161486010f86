//! The incomplete beta function ratio `I_x(a, b)`: R's `toms708.c`, the C
//! translation of ACM TOMS 708 (Didonato & Morris, 1992) with R's log-scale
//! extensions. `bratio` and its helpers keep their TOMS names; the
//! ancillary gamma functions (`gamln`, `gam1`, ...) are TOMS's own, as R
//! keeps them, because the error analysis depends on them.
//!
//! Loop exits are written as C's negated `while` conditions (`!(a > b)`),
//! so a NaN ends a loop exactly where it ends R's.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
// TOMS's truncated constants (pi/4, ln 2, 2/sqrt(pi), ...) stay as R has
// them: the results depend on them.
#![allow(clippy::approx_constant)]

use super::dpq::{d_0, d_1, d_exp};
use super::pgamma::logspace_add;

mod ancillary;
mod prefactor;
mod series;

pub(crate) use ancillary::psi;
use ancillary::*;
use prefactor::*;
use series::*;

const M_LN_SQRT_2PI: f64 = 0.918938533204672741780329736406;
const M_SQRT_PI: f64 = 1.772453850905516027298167483341;

/// C's `min` macro of `toms708.c`: `(a < b) ? a : b`.
#[inline]
fn min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// C's `max` macro of `toms708.c`: `(a > b) ? a : b`.
#[inline]
fn max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// `toms708.c`'s `R_Log1_Exp(x) = log(1 - exp(x))`, through `rexpm1`.
#[inline]
fn log1_exp(x: f64) -> f64 {
    if x > -std::f64::consts::LN_2 {
        (-rexpm1(x)).ln()
    } else {
        (-x.exp()).ln_1p()
    }
}

/// Where `bratio` goes after choosing its algorithm (TOMS's labels).
#[derive(Clone, Copy, PartialEq)]
enum Step {
    /// `L_w_bpser`: `w = bpser(a0, b0, x0)`.
    WBpser,
    /// `L_w1_bpser`: `w1 = bpser(b0, a0, y0)`.
    W1Bpser,
    /// `L_bfrac`: the continued fraction.
    Bfrac,
    /// `L140`: `bup` then `bpser` or `bgrat`.
    L140,
    /// `L180`: the asymptotic expansion `basym`.
    Basym,
    /// The result is set; only the final conversion is left.
    Done,
}

/// How the final values come from what was computed (TOMS's `L_end*`).
#[derive(Clone, Copy)]
enum Finish {
    /// Both `w` and `w1` are final.
    End,
    /// Only `w` is set, on the natural scale.
    FromW,
    /// Only `w1` is set, on the natural scale.
    FromW1,
    /// Only `w1` is set, as `log(w1)`.
    FromW1Log,
}

/// The incomplete beta function ratio (R's `bratio`, ACM TOMS 708):
/// returns `(w, w1, ierr)` with `w = I_x(a, b)` and `w1 = 1 - I_x(a, b)`
/// (both as logs when `log_p`), for `a, b >= 0`, `0 <= x <= 1` and
/// `y = 1 - x`. `ierr` is 0 on success, else TOMS's error code (1: a or b
/// negative, 2: a = b = 0, 3: x outside [0, 1], 4: y outside [0, 1],
/// 5: x + y != 1, 6: x = a = 0, 7: y = b = 0, 9: NaN argument, 10 + k:
/// `bgrat` error k), and then `w` and `w1` are 0 on the requested scale.
pub fn bratio(a: f64, b: f64, x: f64, y: f64, log_p: bool) -> (f64, f64, i32) {
    // eps: the smallest x with 1 + x > 1 (replaced by 1e-15 below for
    // almost every purpose).
    let mut eps = 2.0 * (f64::EPSILON * 0.5);

    let zero = d_0(log_p);
    if x.is_nan() || y.is_nan() || a.is_nan() || b.is_nan() {
        return (zero, zero, 9);
    }
    if a < 0.0 || b < 0.0 {
        return (zero, zero, 1);
    }
    if a == 0.0 && b == 0.0 {
        return (zero, zero, 2);
    }
    if !(0.0..=1.0).contains(&x) {
        return (zero, zero, 3);
    }
    if !(0.0..=1.0).contains(&y) {
        return (zero, zero, 4);
    }
    // check that y == 1 - x
    let z = x + y - 0.5 - 0.5;
    if z.abs() > eps * 3.0 {
        return (zero, zero, 5);
    }

    if x == 0.0 {
        // L200
        if a == 0.0 {
            return (zero, zero, 6);
        }
        return (d_0(log_p), d_1(log_p), 0); // L201
    }
    if y == 0.0 {
        // L210
        if b == 0.0 {
            return (zero, zero, 7);
        }
        return (d_1(log_p), d_0(log_p), 0); // L211
    }
    if a == 0.0 {
        return (d_1(log_p), d_0(log_p), 0); // L211
    }
    if b == 0.0 {
        return (d_0(log_p), d_1(log_p), 0); // L201
    }

    eps = max(eps, 1e-15);
    let a_lt_b = a < b;
    if (if a_lt_b { b } else { a }) < eps * 0.001 {
        // a and b both below 0.001 * eps: the result does not depend on x
        return if log_p {
            if a_lt_b {
                ((-a / (a + b)).ln_1p(), (a / (a + b)).ln(), 0)
            } else {
                ((b / (a + b)).ln(), (-b / (a + b)).ln_1p(), 0)
            }
        } else {
            (b / (a + b), a / (a + b), 0)
        };
    }

    let mut ierr = 0;
    let mut ierr1 = 0;
    let (mut w, mut w1) = (zero, zero);
    let (mut a0, mut b0, x0, y0);
    let do_swap;
    let mut lambda = 0.0;
    let mut step;
    let mut finish = Finish::End;

    if min(a, b) <= 1.0 {
        // a <= 1 or b <= 1
        do_swap = x > 0.5;
        if do_swap {
            (a0, x0, b0, y0) = (b, y, a, x);
        } else {
            (a0, x0, b0, y0) = (a, x, b, y);
        }
        // now x0 <= 1/2 <= y0 (still x0 + y0 == 1)
        if b0 < min(eps, eps * a0) {
            // L80
            w = fpser(a0, b0, x0, eps, log_p);
            w1 = if log_p { log1_exp(w) } else { 0.5 - w + 0.5 };
            step = Step::Done;
        } else if a0 < min(eps, eps * b0) && b0 * x0 <= 1.0 {
            // L90
            w1 = apser(a0, b0, x0, eps);
            finish = Finish::FromW1;
            step = Step::Done;
        } else {
            // Some(w1 start) goes on to bgrat (L131), None to bup first.
            let mut to_bgrat: Option<Option<f64>> = None;
            step = Step::Done;
            if max(a0, b0) > 1.0 {
                // L20: min(a, b) <= 1 < max(a, b)
                if b0 <= 1.0 {
                    step = Step::WBpser;
                } else if x0 >= 0.29 {
                    // was 0.3, PR#13786
                    step = Step::W1Bpser;
                } else if x0 < 0.1 && (x0 * b0).powf(a0) <= 0.7 {
                    step = Step::WBpser;
                } else if b0 > 15.0 {
                    to_bgrat = Some(Some(0.0));
                } else {
                    to_bgrat = Some(None);
                }
            } else {
                // a, b <= 1
                if a0 >= min(0.2, b0) || x0.powf(a0) <= 0.9 {
                    step = Step::WBpser;
                } else if x0 >= 0.3 {
                    step = Step::W1Bpser;
                } else {
                    to_bgrat = Some(None);
                }
            }
            if let Some(start) = to_bgrat {
                let n = 20;
                let did_bup = start.is_none();
                match start {
                    Some(v) => w1 = v,
                    None => {
                        w1 = bup(b0, a0, y0, x0, n, eps, false);
                        b0 += n as f64;
                    }
                }
                // L131
                bgrat(b0, a0, y0, x0, &mut w1, 15.0 * eps, &mut ierr1, false);
                if w1 == 0.0 || (0.0 < w1 && w1 < f64::MIN_POSITIVE) {
                    // w1 = 0 or very close: almost surely underflow; redo
                    // on the log scale
                    if did_bup {
                        w1 = bup(b0 - n as f64, a0, y0, x0, n, eps, true);
                    } else {
                        w1 = f64::NEG_INFINITY; // = 0 on the log scale
                    }
                    bgrat(b0, a0, y0, x0, &mut w1, 15.0 * eps, &mut ierr1, true);
                    if ierr1 != 0 {
                        ierr = 10 + ierr1;
                    }
                    finish = Finish::FromW1Log;
                } else {
                    if ierr1 != 0 {
                        ierr = 10 + ierr1;
                    }
                    finish = Finish::FromW1;
                }
            }
        }
    } else {
        // L30: both a, b > 1
        // lambda := a y - b x = (a + b) y - b = a - (a + b) x, the
        // numerically best version:
        lambda = if (a + b).is_finite() {
            if a > b {
                (a + b) * y - b
            } else {
                a - (a + b) * x
            }
        } else {
            a * y - b * x
        };
        do_swap = lambda < 0.0;
        if do_swap {
            lambda = -lambda;
            (a0, x0, b0, y0) = (b, y, a, x);
        } else {
            (a0, x0, b0, y0) = (a, x, b, y);
        }
        step = if b0 < 40.0 {
            if b0 * x0 <= 0.7 || (log_p && lambda > 650.0) {
                Step::WBpser
            } else {
                Step::L140
            }
        } else if a0 > b0 {
            // a0 > b0 >= 40
            if b0 <= 100.0 || lambda > b0 * 0.03 {
                Step::Bfrac
            } else {
                Step::Basym
            }
        } else if a0 <= 100.0 || lambda > a0 * 0.03 {
            Step::Bfrac
        } else {
            Step::Basym
        };
    }

    if step == Step::L140 {
        // b0 := fractional part of b0, in (0, 1]
        let mut n = b0 as i32;
        b0 -= n as f64;
        if b0 == 0.0 {
            n -= 1;
            b0 = 1.0;
        }
        w = bup(b0, a0, y0, x0, n, eps, false);
        if w < f64::MIN_POSITIVE && log_p {
            // do not believe it; try bpser()
            b0 += n as f64;
            step = Step::WBpser;
        } else {
            if x0 <= 0.7 {
                w += bpser(a0, b0, x0, eps, false);
            } else {
                // L150
                if a0 <= 15.0 {
                    let n = 20;
                    w += bup(a0, b0, x0, y0, n, eps, false);
                    a0 += n as f64;
                }
                bgrat(a0, b0, x0, y0, &mut w, 15.0 * eps, &mut ierr1, false);
                if ierr1 != 0 {
                    ierr = 10 + ierr1;
                }
            }
            finish = Finish::FromW;
            step = Step::Done;
        }
    }

    match step {
        Step::WBpser => {
            w = bpser(a0, b0, x0, eps, log_p);
            w1 = if log_p { log1_exp(w) } else { 0.5 - w + 0.5 };
        }
        Step::W1Bpser => {
            w1 = bpser(b0, a0, y0, eps, log_p);
            w = if log_p { log1_exp(w1) } else { 0.5 - w1 + 0.5 };
        }
        Step::Bfrac => {
            w = bfrac(a0, b0, x0, y0, lambda, eps * 15.0, log_p);
            w1 = if log_p { log1_exp(w) } else { 0.5 - w + 0.5 };
        }
        Step::Basym => {
            w = basym(a0, b0, lambda, eps * 100.0, log_p);
            w1 = if log_p { log1_exp(w) } else { 0.5 - w + 0.5 };
        }
        Step::L140 | Step::Done => {}
    }

    match finish {
        Finish::End => {}
        Finish::FromW => {
            if log_p {
                w1 = (-w).ln_1p();
                w = w.ln();
            } else {
                w1 = 0.5 - w + 0.5;
            }
        }
        Finish::FromW1 => {
            if log_p {
                w = (-w1).ln_1p();
                w1 = w1.ln();
            } else {
                w = 0.5 - w1 + 0.5;
            }
        }
        Finish::FromW1Log => {
            // w1 = log(w1) already; log(w) = log(1 - exp(w1))
            if log_p {
                w = log1_exp(w1);
            } else {
                w = -w1.exp_m1();
                w1 = w1.exp();
            }
        }
    }

    if do_swap {
        (w, w1) = (w1, w);
    }
    (w, w1, ierr)
}
