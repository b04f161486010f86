//! Each function against the platform's libm: random arguments over its
//! range at every scale, in ulps, and the special values exactly.

use super::*;

/// The distance in ulps between `a` and `b`, both finite or both the same
/// infinity; subnormal results count in steps of the smallest subnormal.
fn ulps(a: f64, b: f64) -> u64 {
    if a == b {
        return 0;
    }
    let key = |v: f64| {
        let i = v.to_bits() as i64;
        if i < 0 {
            i64::MIN - i
        } else {
            i
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// `n` arguments drawn from `draw(unit)` for uniform `unit` in `[0, 1)`.
fn arguments(n: usize, seed: u64, draw: impl Fn(f64, usize) -> f64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|i| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            draw((state >> 11) as f64 / (1u64 << 53) as f64, i)
        })
        .collect()
}

/// Arguments spread over many binades on both sides of zero, up to `top`.
fn log_spread(n: usize, seed: u64, lo_exp: f64, top: f64) -> Vec<f64> {
    let span = top.log2() - lo_exp;
    arguments(n, seed, |u, i| {
        let v = (lo_exp + u * span).exp2();
        if i % 2 == 0 {
            v
        } else {
            -v
        }
    })
}

/// Asserts `ours` is within `max` ulps of `libm` at every argument, and
/// returns the worst distance seen.
fn check(name: &str, xs: &[f64], max: u64, ours: impl Fn(f64) -> f64, libm: impl Fn(f64) -> f64) {
    let mut worst = (0, 0.0);
    for &x in xs {
        let (got, want) = (ours(x), libm(x));
        if want.is_nan() {
            assert!(got.is_nan(), "{name}({x:e}) = {got:e}, libm NaN");
            continue;
        }
        let d = ulps(got, want);
        if d > worst.0 {
            worst = (d, x);
        }
    }
    assert!(
        worst.0 <= max,
        "{name}: {} ulps at {:e} (ours {:e}, libm {:e})",
        worst.0,
        worst.1,
        ours(worst.1),
        libm(worst.1)
    );
}

/// The values every function is checked at exactly (besides NaN).
const SPECIAL: [f64; 10] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN_POSITIVE,
    5e-324,
    f64::MAX,
    -f64::MAX,
];

#[test]
fn exp_is_libms_but_for_rare_last_bits() {
    let xs = arguments(400_000, 1, |u, i| match i % 4 {
        0 => -u * 40.0,
        1 => -u * 745.0,
        2 => u * 709.0,
        _ => (u - 0.5) * 2.0,
    });
    check("exp", &xs, 1, exp, f64::exp);
    let spread = log_spread(100_000, 2, -60.0, 700.0);
    check("exp", &spread, 1, exp, f64::exp);
    // Within 0.6 ulp of the exact value, against libm's near 0.5: the
    // two differ in the last bit for about 1% of arguments.
    let differ = xs
        .iter()
        .chain(&spread)
        .filter(|&&x| exp(x) != x.exp())
        .count();
    assert!(
        differ * 50 < xs.len() + spread.len(),
        "{differ} differ from libm"
    );
    assert_eq!(exp(1.0), std::f64::consts::E);
    assert_eq!(exp(std::f64::consts::LN_2), 2.0);
}

#[test]
fn expm1_within_two_ulps_over_its_range() {
    check(
        "expm1",
        &log_spread(400_000, 3, -70.0, 709.0),
        2,
        expm1,
        f64::exp_m1,
    );
    let near = arguments(200_000, 4, |u, _| (u - 0.5) * 4.0);
    check("expm1", &near, 2, expm1, f64::exp_m1);
}

#[test]
fn ln_and_ln_1p_within_their_bounds() {
    let pos = arguments(400_000, 5, |u, i| {
        // Every binade, subnormals included, and the stretch around 1.
        if i % 2 == 0 {
            (-1074.0 + u * 2097.0).exp2()
        } else {
            0.5 + u
        }
    });
    check("ln", &pos, 1, ln, f64::ln);
    check(
        "ln_1p",
        &log_spread(400_000, 6, -80.0, 1e300),
        2,
        ln_1p,
        f64::ln_1p,
    );
    let near = arguments(200_000, 7, |u, _| -1.0 + u * 3.0);
    check("ln_1p", &near, 2, ln_1p, f64::ln_1p);
}

#[test]
fn trig_within_their_bounds_up_to_the_limit() {
    let xs = log_spread(400_000, 8, -30.0, TRIG_LIMIT);
    check("sin", &xs, 1, sin_reduced, f64::sin);
    check("cos", &xs, 1, cos_reduced, f64::cos);
    check("tan", &xs, 2, tan_reduced, f64::tan);
    // Close to multiples of π/2, where the reduction cancels most.
    let near = arguments(200_000, 9, |u, i| {
        let k = (i % 4000) as f64 - 2000.0;
        k * std::f64::consts::FRAC_PI_2 + (u - 0.5) * 1e-6
    });
    check("sin", &near, 1, sin_reduced, f64::sin);
    check("cos", &near, 1, cos_reduced, f64::cos);
    check("tan", &near, 2, tan_reduced, f64::tan);
    // Beyond the limit the plain functions are libm's.
    for x in [TRIG_LIMIT * 2.0, -1e10, 1e300] {
        assert_eq!(sin(x), x.sin());
        assert_eq!(cos(x), x.cos());
        assert_eq!(tan(x), x.tan());
    }
}

#[test]
fn hyperbolic_and_logistic_within_their_bounds() {
    let xs = log_spread(400_000, 10, -40.0, 800.0);
    check("tanh", &xs, 3, tanh, f64::tanh);
    let sigmoid_libm = |x: f64| {
        if x >= 0.0 {
            1.0 / (1.0 + (-x).exp())
        } else {
            x.exp() / (1.0 + x.exp())
        }
    };
    check("sigmoid", &xs, 3, sigmoid, sigmoid_libm);
    let softplus_libm = |x: f64| x.max(0.0) + (-x.abs()).exp().ln_1p();
    check("softplus", &xs, 3, softplus, softplus_libm);
}

#[test]
fn special_values_match_libm() {
    type F = fn(f64) -> f64;
    let pairs: [(&str, F, F); 8] = [
        ("exp", exp, f64::exp),
        ("expm1", expm1, f64::exp_m1),
        ("ln", ln, f64::ln),
        ("ln_1p", ln_1p, f64::ln_1p),
        ("sin", sin, f64::sin),
        ("cos", cos, f64::cos),
        ("tan", tan, f64::tan),
        ("tanh", tanh, f64::tanh),
    ];
    for (name, ours, libm) in pairs {
        assert!(ours(f64::NAN).is_nan(), "{name}(NaN)");
        for x in SPECIAL
            .iter()
            .chain(&[-1.0 + f64::EPSILON / 2.0, 1e-300, -1e-300])
        {
            let (got, want) = (ours(*x), libm(*x));
            assert!(
                (got.is_nan() && want.is_nan())
                    || (ulps(got, want) <= 1 && got.is_sign_negative() == want.is_sign_negative()),
                "{name}({x:e}) = {got:e}, libm {want:e}"
            );
        }
    }
    assert_eq!(ln_1p(-1.0), f64::NEG_INFINITY);
    assert!(ln_1p(-2.0).is_nan() && ln(-1e-300).is_nan());
    assert!(sigmoid(f64::NAN).is_nan() && softplus(f64::NAN).is_nan());
    assert_eq!((sigmoid(-800.0), sigmoid(800.0)), (0.0, 1.0));
    assert_eq!(softplus(1e300), 1e300);
}

#[test]
fn wide_arguments_are_redone_by_the_exact_function() {
    use crate::ops::unary::UnaryOp;
    let x = [1.0f64, 1e7, -3e9, 0.5, f64::INFINITY, -TRIG_LIMIT];
    for op in [UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tan] {
        let mut out: Vec<f64> = x.iter().map(|&v| op.apply_lane(v)).collect();
        op.redo_uncovered(&x, &mut out);
        let libm = |v: f64| match op {
            UnaryOp::Sin => v.sin(),
            UnaryOp::Cos => v.cos(),
            _ => v.tan(),
        };
        for (o, v) in out.iter().zip(x) {
            let want = libm(v);
            assert!(
                ulps(*o, want) <= 2 || (o.is_nan() && want.is_nan()),
                "{op:?}({v:e})"
            );
            assert_eq!(o.to_bits(), op.apply(v).to_bits(), "{op:?}({v:e})");
        }
    }
}

#[test]
fn atan2_within_two_ulps_in_every_quadrant() {
    let ys = log_spread(300_000, 12, -40.0, 1e40);
    let xs = log_spread(300_000, 13, -40.0, 1e40);
    let mut worst = (0, 0.0, 0.0);
    for (&y, &x) in ys.iter().zip(&xs) {
        let d = ulps(atan2(y, x), y.atan2(x));
        if d > worst.0 {
            worst = (d, y, x);
        }
    }
    assert!(
        worst.0 <= 2,
        "atan2: {} ulps at ({:e}, {:e})",
        worst.0,
        worst.1,
        worst.2
    );
    // Every pair of special values: signed zeros, infinities, NaN, ones.
    let special = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
        -0.3,
        f64::INFINITY,
        f64::NEG_INFINITY,
        5e-324,
    ];
    for &y in &special {
        for &x in &special {
            let (got, want) = (atan2(y, x), y.atan2(x));
            assert!(
                ulps(got, want) <= 1 && got.is_sign_negative() == want.is_sign_negative(),
                "atan2({y:e}, {x:e}) = {got:e}, libm {want:e}"
            );
        }
        assert!(atan2(y, f64::NAN).is_nan() && atan2(f64::NAN, y).is_nan());
    }
}

#[test]
fn single_atan2_within_two_ulps_in_every_quadrant() {
    let ys = log_spread(300_000, 14, -30.0, 1e30);
    let xs = log_spread(300_000, 15, -30.0, 1e30);
    let mut worst = (0, 0.0f32, 0.0f32);
    for (&y, &x) in ys.iter().zip(&xs) {
        let (y, x) = (y as f32, x as f32);
        let d = ulps32(single::atan2(y, x), (y as f64).atan2(x as f64) as f32);
        if d > worst.0 {
            worst = (d, y, x);
        }
    }
    assert!(
        worst.0 <= 1,
        "atan2 (f32): {} ulps at ({:e}, {:e})",
        worst.0,
        worst.1,
        worst.2
    );
    let special = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        2.5,
        -0.3,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-45,
        f32::MAX,
        f32::MAX / 2.0,
        -3e38,
    ];
    for &y in &special {
        for &x in &special {
            let (got, want) = (single::atan2(y, x), (y as f64).atan2(x as f64) as f32);
            assert!(
                ulps32(got, want) <= 1 && got.is_sign_negative() == want.is_sign_negative(),
                "atan2({y:e}, {x:e}) = {got:e}, libm {want:e}"
            );
        }
        assert!(single::atan2(y, f32::NAN).is_nan() && single::atan2(f32::NAN, y).is_nan());
    }
}

/// The distance in ulps between two f32 values, as [`ulps`] counts them.
fn ulps32(a: f32, b: f32) -> u64 {
    if a == b {
        return 0;
    }
    let key = |v: f32| {
        let i = v.to_bits() as i32 as i64;
        if i < 0 {
            i64::from(i32::MIN) - i
        } else {
            i
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Asserts an f32 function is within `max` ulps of the f64 `reference`
/// rounded to f32 at every argument (NaN where it is NaN).
fn check32(
    name: &str,
    xs: &[f64],
    max: u64,
    ours: impl Fn(f32) -> f32,
    reference: impl Fn(f64) -> f64,
) {
    let mut worst = (0, 0.0f32);
    for &x in xs {
        let x = x as f32;
        let (got, want) = (ours(x), reference(x as f64) as f32);
        if want.is_nan() {
            assert!(got.is_nan(), "{name}({x:e}) = {got:e}, want NaN");
            continue;
        }
        let d = ulps32(got, want);
        if d > worst.0 {
            worst = (d, x);
        }
    }
    assert!(
        worst.0 <= max,
        "{name} (f32): {} ulps at {:e} (ours {:e}, reference {:e})",
        worst.0,
        worst.1,
        ours(worst.1),
        reference(worst.1 as f64) as f32
    );
}

#[test]
fn single_precision_functions_within_their_bounds() {
    let wide = log_spread(300_000, 14, -30.0, 104.0);
    check32("exp", &wide, 2, single::exp, f64::exp);
    let positive = arguments(300_000, 15, |u, i| {
        if i % 2 == 0 {
            (-149.0 + u * 277.0).exp2()
        } else {
            0.5 + u
        }
    });
    check32("ln", &positive, 2, single::ln, f64::ln);
    let angles = log_spread(300_000, 16, -20.0, single::TRIG_LIMIT as f64);
    check32("sin", &angles, 2, single::sin_reduced, f64::sin);
    check32("cos", &angles, 2, single::cos_reduced, f64::cos);
    check32("tan", &angles, 3, single::tan_reduced, f64::tan);
    let hyper = log_spread(300_000, 17, -30.0, 120.0);
    check32("tanh", &hyper, 2, single::tanh, f64::tanh);
    let sigmoid_ref = |x: f64| 1.0 / (1.0 + (-x).exp());
    check32("sigmoid", &hyper, 2, single::sigmoid, sigmoid_ref);
    check32("expm1", &hyper, 1, single::expm1, f64::exp_m1);
    let linear = arguments(300_000, 20, |u, _| -20.0 + 110.0 * u);
    check32("expm1", &linear, 1, single::expm1, f64::exp_m1);
    let softplus_ref = |x: f64| x.max(0.0) + (-x.abs()).exp().ln_1p();
    check32("softplus", &hyper, 3, single::softplus, softplus_ref);
    let near = arguments(300_000, 18, |u, i| {
        if i % 2 == 0 {
            -1.0 + u * 3.0
        } else {
            (u * 120.0 - 100.0).exp2()
        }
    });
    check32("ln_1p", &near, 3, single::ln_1p, f64::ln_1p);
    check32(
        "ln_1p",
        &log_spread(100_000, 19, -30.0, 1e30),
        3,
        single::ln_1p,
        f64::ln_1p,
    );
    // Special values as f64's functions give them.
    type F = fn(f32) -> f32;
    type G = fn(f64) -> f64;
    let pairs: [(&str, F, G); 6] = [
        ("expm1", single::expm1, f64::exp_m1),
        ("ln_1p", single::ln_1p, f64::ln_1p),
        ("exp", single::exp, f64::exp),
        ("ln", single::ln, f64::ln),
        ("tanh", single::tanh, f64::tanh),
        ("sigmoid", single::sigmoid, |x| 1.0 / (1.0 + (-x).exp())),
    ];
    for (name, ours, reference) in pairs {
        assert!(ours(f32::NAN).is_nan(), "{name}(NaN)");
        for x in [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            1e-45,
            f32::MAX,
        ] {
            let (got, want) = (ours(x), reference(x as f64) as f32);
            assert!(
                (got.is_nan() && want.is_nan())
                    || (ulps32(got, want) <= 1
                        && got.is_sign_negative() == want.is_sign_negative()),
                "{name}({x:e}) = {got:e}, want {want:e}"
            );
        }
    }
    assert_eq!(single::exp(89.0), f32::INFINITY);
    assert_eq!(single::exp(-104.0), 0.0);
    assert_eq!(single::sin_reduced(-0.0).to_bits(), (-0.0f32).to_bits());
}

/// `n` pairs drawn from `draw(u, v, i)` for uniform `u` and `v` in `[0, 1)`.
fn pairs(n: usize, seed: u64, draw: impl Fn(f64, f64, usize) -> (f64, f64)) -> Vec<(f64, f64)> {
    let units = arguments(2 * n, seed, |u, _| u);
    (0..n)
        .map(|i| draw(units[2 * i], units[2 * i + 1], i))
        .collect()
}

/// `pow` as the CPU's loops compute it ([`BinaryOp::apply`], which they
/// call per value).
fn pow_as_loops<T: crate::ops::unary::Real>(ps: &[(T, T)]) -> Vec<T> {
    use crate::ops::binary::BinaryOp;
    ps.iter().map(|&(x, y)| BinaryOp::Pow.apply(x, y)).collect()
}

/// Asserts f64 `pow` (as the loops give it) is within `max` ulps of libm
/// at every pair, with the sign of libm's zeros and infinities and NaN
/// where it is NaN; returns the worst distance.
fn check_pow(name: &str, ps: &[(f64, f64)], max: u64) -> u64 {
    let got = pow_as_loops(ps);
    let mut worst = (0, 0.0, 0.0);
    for (&g, &(x, y)) in got.iter().zip(ps) {
        let want = x.powf(y);
        if want.is_nan() || g.is_nan() {
            assert!(
                g.is_nan() && want.is_nan(),
                "pow({x:e}, {y:e}) = {g:e}, libm {want:e}"
            );
            continue;
        }
        assert_eq!(
            g.is_sign_negative(),
            want.is_sign_negative(),
            "pow({x:e}, {y:e}) = {g:e}, libm {want:e}"
        );
        let d = ulps(g, want);
        if d > worst.0 {
            worst = (d, x, y);
        }
    }
    let (d, x, y) = worst;
    eprintln!("pow {name}: worst {d} ulps at ({x:e}, {y:e})");
    assert!(
        d <= max,
        "pow {name}: {d} ulps at ({x:e}, {y:e}): {:e}, libm {:e}",
        pow(x, y),
        x.powf(y)
    );
    d
}

/// [`check_pow`] of f32 `pow` against f64 libm rounded to f32.
fn check_pow32(name: &str, ps: &[(f64, f64)], max: u64) -> u64 {
    let ps: Vec<(f32, f32)> = ps.iter().map(|&(x, y)| (x as f32, y as f32)).collect();
    let got = pow_as_loops(&ps);
    let mut worst = (0, 0.0, 0.0);
    for (&g, &(x, y)) in got.iter().zip(&ps) {
        let want = (x as f64).powf(y as f64) as f32;
        if want.is_nan() || g.is_nan() {
            assert!(
                g.is_nan() && want.is_nan(),
                "pow32({x:e}, {y:e}) = {g:e}, want {want:e}"
            );
            continue;
        }
        assert_eq!(
            g.is_sign_negative(),
            want.is_sign_negative(),
            "pow32({x:e}, {y:e}) = {g:e}, want {want:e}"
        );
        let d = ulps32(g, want);
        if d > worst.0 {
            worst = (d, x, y);
        }
    }
    let (d, x, y) = worst;
    eprintln!("pow32 {name}: worst {d} ulps at ({x:e}, {y:e})");
    assert!(d <= max, "pow32 {name}: {d} ulps at ({x:e}, {y:e})");
    d
}

/// The exponents of a float type, for [`pow_ranges`].
struct Exponents {
    /// The smallest subnormal is `2^lo`.
    lo: f64,
    /// The smallest normal number is `2^normal`.
    normal: f64,
    /// Overflow from `2^hi`.
    hi: f64,
    /// Wide exponents run over `[-y_span, y_span]`.
    y_span: f64,
}

/// Pairs over every range of `pow`: wide bases and exponents, moderate
/// ones, bases near 1 with large exponents, results near overflow,
/// underflow and in the subnormal range (signed by negative bases with
/// integral exponents), negative bases with integral and half-integral
/// exponents, subnormal bases.
fn pow_ranges(n: usize, seed: u64, e: &Exponents) -> Vec<(&'static str, Vec<(f64, f64)>)> {
    let Exponents {
        lo,
        normal,
        hi,
        y_span,
    } = *e;
    let wide = pairs(n, seed, |u, v, _| {
        ((lo + u * (hi - lo)).exp2(), (v - 0.5) * 2.0 * y_span)
    });
    let moderate = pairs(n, seed + 1, |u, v, _| {
        (((u - 0.5) * 64.0).exp2(), (v - 0.5) * 40.0)
    });
    let near_one = pairs(n, seed + 2, |u, v, i| {
        // |x - 1| near 2^-k and |y·(x - 1)| up to 64.
        let k = 3.0 + (i % 40) as f64;
        (1.0 + (u - 0.5) * (-k).exp2(), (v - 0.5) * (k + 7.0).exp2())
    });
    let edges = pairs(n, seed + 3, |u, v, i| {
        // Results near 2^t, t from beyond underflow to beyond overflow.
        let t = lo - 4.0 + u * (hi - lo + 8.0);
        let lx = (v - 0.5) * 128.0;
        let lx = if lx.abs() < 0.25 { 0.25 } else { lx };
        if i % 3 == 0 {
            (-lx.exp2(), (t / lx).round())
        } else {
            (lx.exp2(), t / lx)
        }
    });
    let negative = pairs(n, seed + 4, |u, v, i| {
        let x = -((u - 0.5) * hi / 4.0).exp2();
        let y = ((v - 0.5) * if i % 2 == 0 { 40.0 } else { 600.0 }).round();
        (x, if i % 7 == 0 { y + 0.5 } else { y })
    });
    let subnormal = pairs(n, seed + 5, |u, v, i| {
        let x = (lo + u * (normal - lo)).exp2();
        let y = (v - 0.5) * 4.0;
        let y = if i % 4 < 2 { y } else { y.round() };
        (if i % 2 == 0 { x } else { -x }, y)
    });
    vec![
        ("wide", wide),
        ("moderate", moderate),
        ("near one", near_one),
        ("edges", edges),
        ("negative", negative),
        ("subnormal", subnormal),
    ]
}

/// Special operands of `pow`, in f64: every pair of them is checked.
const POW_SPECIAL: [f64; 30] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    3.0,
    -3.0,
    1.5,
    -1.5,
    0.25,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    f64::MAX,
    -f64::MAX,
    1e300,
    1e-300,
    9_007_199_254_740_991.0,
    -9_007_199_254_740_991.0,
    9_007_199_254_740_992.0,
    9.223_372_036_854_776e18,
    -1.844_674_407_370_955_2e19,
    1.0 + f64::EPSILON,
    1.0 - f64::EPSILON / 2.0,
];

#[test]
fn pow_within_an_ulp_of_libm() {
    let e = Exponents {
        lo: -1074.0,
        normal: -1022.0,
        hi: 1024.0,
        y_span: 1000.0,
    };
    let mut worst = 0;
    for (name, ps) in pow_ranges(200_000, 20, &e) {
        worst = worst.max(check_pow(name, &ps, 1));
    }
    let special: Vec<(f64, f64)> = POW_SPECIAL
        .iter()
        .flat_map(|&x| POW_SPECIAL.iter().map(move |&y| (x, y)))
        .collect();
    worst = worst.max(check_pow("special", &special, 1));
    eprintln!("pow: worst {worst} ulps");
    // Exact where the result is representable.
    assert_eq!(pow(2.0, 10.0), 1024.0);
    assert_eq!(pow(-3.0, 3.0), -27.0);
    assert_eq!(pow(2.0, -1074.0), 5e-324);
    assert_eq!(pow(-2.0, -1073.0), -1e-323);
    assert_eq!(pow(4.0, 0.5), 2.0);
    assert_eq!(pow(f64::MAX, 1.0), f64::MAX);
}

#[test]
fn pow32_within_an_ulp_of_the_rounded_value() {
    let e = Exponents {
        lo: -149.0,
        normal: -126.0,
        hi: 128.0,
        y_span: 200.0,
    };
    let mut worst = 0;
    for (name, ps) in pow_ranges(200_000, 30, &e) {
        worst = worst.max(check_pow32(name, &ps, 1));
    }
    let special: Vec<(f64, f64)> = POW_SPECIAL
        .iter()
        .chain(&[
            f32::MAX as f64,
            f32::MIN_POSITIVE as f64,
            1e-45,
            16_777_215.0,
            -16_777_215.0,
        ])
        .flat_map(|&x| POW_SPECIAL.iter().map(move |&y| (x, y)))
        .collect();
    worst = worst.max(check_pow32("special", &special, 1));
    eprintln!("pow32: worst {worst} ulps");
    assert_eq!(pow32(2.0, 10.0), 1024.0);
    assert_eq!(pow32(-3.0, 3.0), -27.0);
    assert_eq!(pow32(2.0, -149.0), 1e-45);
    assert_eq!(pow32(f32::MAX, 1.0), f32::MAX);
}
