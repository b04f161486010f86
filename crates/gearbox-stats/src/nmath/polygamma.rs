//! The digamma function as R computes it (`polygamma.c`): R's `digamma(x)`
//! is `-dpsifn(x, 0, 1, 1)`, Amos's algorithm 610 (TOMS 9(4), 1983) for the
//! first member (n = 0) of the sequence, with Maechler's reflection for
//! `x <= 0`. Only that case is needed, so the general sequence (n > 0,
//! several members, kode 2) is not carried; what remains performs R's
//! floating-point operations in R's order, so the results are R's bits
//! where the math library's `log`, `cos` and `sin` are the same.
//!
//! TOMS 708's `psi` ([`super::toms708`]), which R keeps for its beta
//! function internals only, differs: it stops at `log(x)` from 2^31 up,
//! about 4.5e-12 relative away from R's `digamma(5e9)`.

use std::f64::consts::{LOG10_2, PI};

/// The Bernoulli numbers B2, B4, ..., B40 (dpsifn's `bvalues` from its
/// third entry, the ones the n = 0 expansion reads).
const BERNOULLI: [f64; 20] = [
    1.66666666666666667e-01,
    -3.33333333333333333e-02,
    2.38095238095238095e-02,
    -3.33333333333333333e-02,
    7.57575757575757576e-02,
    -2.53113553113553114e-01,
    1.16666666666666667e+00,
    -7.09215686274509804e+00,
    5.49711779448621554e+01,
    -5.29124242424242424e+02,
    6.19212318840579710e+03,
    -8.65802531135531136e+04,
    1.42551716666666667e+06,
    -2.72982310678160920e+07,
    6.01580873900642368e+08,
    -1.51163157670921569e+10,
    4.29614643061166667e+11,
    -1.37116552050883328e+13,
    4.88332318973593167e+14,
    -1.92965793419400681e+16,
];

/// dpsifn's tolerance, `max(DBL_EPSILON / 2, 0.5e-18)`: 2^-53.
const WDTOL: f64 = f64::EPSILON * 0.5;

/// dpsifn's exponential over- and underflow limit, `2.302 (nx log10(2) -
/// 3)` with `nx = min(-DBL_MIN_EXP, DBL_MAX_EXP) = 1021`: about 700.6.
/// For n = 0 it only matters below `exp(-ELIM)` (about 3.8e-305), where R
/// reports an overflow and `digamma` is NaN.
const ELIM: f64 = 2.302 * (1021.0 * LOG10_2 - 3.0);

/// Where the asymptotic expansion holds for n = 0: `trunc(yint) + 1`
/// with `yint = 3.5 + 0.4 fln`, `fln = max(min(53 log10(2), 18.06), 3) -
/// 3` (the decimal digits of a double, less 3): 9.
const XMIN: f64 = {
    let rln = LOG10_2 * 53.0;
    let rln = if rln < 18.06 { rln } else { 18.06 };
    let fln = (if rln > 3.0 { rln } else { 3.0 }) - 3.0;
    let yint = 3.50 + 0.40 * fln;
    (yint as i32 + 1) as f64
};

/// dpsifn's large argument (`1 / (2 DBL_EPSILON)` = 2^51): where `x
/// log(x)` passes it, `psi(x)` is `log(x)` to working precision.
const LARGE: f64 = 1.0 / (2.0 * f64::EPSILON);

/// The digamma function `psi(x) = d/dx log gamma(x)`, the derivative of
/// [`super::lgamma`], as R's `digamma` computes it: the asymptotic
/// expansion from 9 up (after the recurrence `psi(x) = psi(x + 1) - 1/x`
/// below 9), `log(x)` where `x log(x) > 2^51`, `-1/x` below 2^-53, and
/// the reflection `psi(x) = psi(1 - x) - pi cot(pi x)` for `x <= 0`.
///
/// NaN for a NaN, at the poles (0, -0 and the negative integers, so also
/// at `-Inf` and every negative `x` from -2^52 down), and, as in R, for
/// `0 < x < exp(-700.6)` (about 3.8e-305), where R's dpsifn reports an
/// overflow; `+Inf` at `+Inf`.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 0.0 {
        return -minus_psi(x);
    }
    if x == x.round() {
        return f64::NAN;
    }
    // Abramowitz & Stegun 6.4.7 with n = 0: -psi(x) = -psi(1 - x) + pi
    // cot(pi x), cot(y) as cos(y) / sin(y).
    let a = minus_psi(1.0 - x);
    let px = x * PI;
    -(a + PI * (px.cos() / px.sin()))
}

/// `-psi(x)` for `x > 0` (dpsifn's `ans[0]` for n = 0, kode 1, m = 1),
/// NaN where dpsifn sets its overflow flag.
fn minus_psi(x: f64) -> f64 {
    let xln = x.ln();
    if x * xln > LARGE {
        return -xln;
    }
    if xln.abs() > ELIM {
        // Only a tiny x gets here (a large one was caught above): dpsifn's
        // ierr = 2, which R's digamma turns into NaN.
        return f64::NAN;
    }
    if x < WDTOL {
        return 1.0 / x;
    }
    // Below XMIN, the expansion runs at x + (XMIN - trunc(x)) and the
    // recurrence comes back down by that many steps.
    let (xdmy, xdmln, steps) = if x < XMIN {
        let whole = x as i32;
        let xinc = XMIN - f64::from(whole);
        let xdmy = x + xinc;
        (xdmy, xdmy.ln(), xinc as i32)
    } else {
        (x, xln, 0)
    };
    // The asymptotic expansion: log(x) - psi(x) = 1/(2x) + sum B2k /
    // (2k x^2k). dpsifn's scale factor exp(-n log(x)) is exp(-0) = 1 here,
    // and dpsifn's ratio (tk + n + 1) / (tk + 1) is exactly 1, so both are
    // left out (multiplying by 1 changes no bits); the check that xdmy's
    // logarithm stays within ELIM always holds (9 <= xdmy < 7e13).
    let tt = 0.5 / xdmy;
    let tst = WDTOL * tt;
    let rxsq = 1.0 / (xdmy * xdmy);
    let mut t = 0.5 * rxsq;
    let mut s = t * BERNOULLI[0];
    if s.abs() >= tst {
        let mut tk = 2.0;
        for b in &BERNOULLI[1..] {
            t = t * (tk / (tk + 2.0)) * rxsq;
            let term = t * b;
            if term.abs() < tst {
                break;
            }
            s += term;
            tk += 2.0;
        }
    }
    s += tt;
    // Back down from xdmy to x, the smallest terms first (R's PR#13714).
    for i in 1..=steps {
        s += 1.0 / (x + f64::from(steps - i));
    }
    s - xdmln
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_dpsifns() {
        assert_eq!(WDTOL, 2f64.powi(-53));
        assert_eq!(XMIN, 9.0);
        assert!((ELIM - 700.6174).abs() < 1e-4, "{ELIM}");
        assert_eq!(LARGE, 2f64.powi(51));
    }

    #[test]
    fn regions_meet_r_values() {
        // R 4.2.2, sprintf("%.17g", digamma(x)).
        assert_eq!(digamma(5e9), 22.332703749280512);
        assert_eq!(digamma(9.0), 2.1406414779556102);
        assert_eq!(digamma(2.5), 0.70315664064524341);
        assert_eq!(digamma(-0.5), 0.036489973978577089);
        assert_eq!(digamma(1e-300), -9.999999999999999e+299);
        assert!(digamma(1e-305).is_nan());
        assert!(digamma(0.0).is_nan() && digamma(-0.0).is_nan() && digamma(-2.0).is_nan());
        assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
        assert!(digamma(f64::NEG_INFINITY).is_nan());
    }
}
