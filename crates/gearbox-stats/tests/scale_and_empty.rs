//! Messages that name the real problem: `many_lm` fits columns of any
//! scale as R's `lm` does (its rank check is relative to each column's
//! norm), and names what it cannot fit; `glm` names an information matrix
//! that overflows instead of blaming collinearity; empty grids, responses
//! and designs are named as empty.

use gearbox_core::{Array, DType, Error};
use gearbox_stats::glm::{glm_grid, mle, GlmSpec};
use gearbox_stats::lm::{many_lm, LmOptions, ManyLm};

/// Deterministic N(0, 1)-ish values: the sum of four uniforms, centred.
fn random_values(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    let mut uniform = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..len)
        .map(|_| (0..4).map(|_| uniform()).sum::<f64>() - 2.0)
        .collect()
}

fn values(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// Asserts `got[i] == want[i] * factor[i % p]` to `rel` relative.
fn assert_scaled(got: &[f64], want: &[f64], factor: &[f64], rel: f64, what: &str) {
    let p = factor.len();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let w = w * factor[i % p];
        assert!(
            (g - w).abs() <= rel * w.abs(),
            "{what}[{i}]: {g:e} vs {w:e} (relative {:e})",
            ((g - w) / w).abs()
        );
    }
}

#[test]
fn columns_of_any_scale_fit_as_the_unscaled_design_does() {
    // R fits X diag(c) for any c, with estimates and standard errors
    // divided by c and everything else unchanged. Column scales of 1e300
    // once reported "x1 is a linear combination of ;" and 1e-300 "all
    // zeros" (their squares overflow and underflow); 1e307 makes the
    // column norm itself overflow.
    let (n, q, k) = (50, 3, 4);
    let x = random_values(n * q, 31);
    let y = Array::from_vec([n, k], random_values(n * k, 32)).unwrap();
    let scale_sets: [[f64; 3]; 6] = [
        [1e300, 1e300, 1e300],
        [1e-300, 1e-300, 1e-300],
        [1e300, 1.0, 1e-300],
        [1e307, 1e-307, 1e150],
        [1.0, 1e-300, 1.0],
        [3.5e-200, 7.0, 1e250],
    ];
    for intercept in [true, false] {
        let opts = LmOptions {
            intercept,
            term_names: None,
        };
        let base = many_lm(&Array::from_vec([n, q], x.clone()).unwrap(), &y, &opts).unwrap();
        for scales in scale_sets {
            let scaled: Vec<f64> = x
                .iter()
                .enumerate()
                .map(|(at, v)| v * scales[at / n])
                .collect();
            let xs = Array::from_vec([n, q], scaled).unwrap();
            let fit = many_lm(&xs, &y, &opts)
                .unwrap_or_else(|e| panic!("scales {scales:?}, intercept {intercept}: {e}"));
            check_scaled(&fit, &base, &scales, intercept);
        }
    }
}

/// Estimates and standard errors divided by each column's scale; t, p,
/// sigma and R² unchanged.
fn check_scaled(fit: &ManyLm, base: &ManyLm, scales: &[f64], intercept: bool) {
    let mut factor: Vec<f64> = scales.iter().map(|s| 1.0 / s).collect();
    if intercept {
        factor.insert(0, 1.0);
    }
    let what = format!("scales {scales:?}, intercept {intercept}");
    let ones = vec![1.0; factor.len()];
    let pairs = [
        (&fit.coefficients, &base.coefficients, &factor, "estimates"),
        (
            &fit.std_errors,
            &base.std_errors,
            &factor,
            "standard errors",
        ),
        (&fit.t_values, &base.t_values, &ones, "t values"),
        (&fit.p_values, &base.p_values, &ones, "p-values"),
    ];
    for (got, want, factor, name) in pairs {
        let label = format!("{what}: {name}");
        assert_scaled(&values(got), &values(want), factor, 1e-8, &label);
    }
    let one = [1.0];
    for (got, want, name) in [
        (&fit.sigma, &base.sigma, "sigma"),
        (&fit.r_squared, &base.r_squared, "R²"),
    ] {
        let label = format!("{what}: {name}");
        assert_scaled(&values(got), &values(want), &one, 1e-10, &label);
    }
}

#[test]
fn dependence_is_found_whatever_the_scales() {
    // x1 of order 1, x2 of order 1e-300 and x3 = 1e150 (x1 + 1e300 x2) of
    // order 1e150: dependent, as R's lm (which scales the tolerance to
    // each column's norm) finds.
    let n = 30;
    let x1 = random_values(n, 41);
    let x2: Vec<f64> = random_values(n, 42).iter().map(|v| v * 1e-300).collect();
    let x3: Vec<f64> = (0..n).map(|i| 1e150 * (x1[i] + 1e300 * x2[i])).collect();
    let x = Array::from_vec([n, 3], [x1, x2, x3].concat()).unwrap();
    let y = Array::from_vec([n], random_values(n, 43)).unwrap();
    let msg = many_lm(&x, &y, &LmOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("x3 is a linear combination of x1, x2"),
        "{msg}"
    );
}

#[test]
fn a_column_too_small_for_its_coefficient_is_named() {
    // Values of 1e-310 (subnormal): 1 / norm overflows, and so would the
    // coefficient.
    let n = 20;
    let mut x = random_values(2 * n, 51);
    for v in &mut x[n..] {
        *v *= 1e-310;
    }
    let x = Array::from_vec([n, 2], x).unwrap();
    let y = Array::from_vec([n], random_values(n, 52)).unwrap();
    let msg = many_lm(&x, &y, &LmOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("term x2") && msg.contains("overflows"),
        "{msg}"
    );
}

#[test]
fn an_estimate_that_overflows_is_named() {
    // x2 of order 1e-300 fits (as R fits it) while the responses are of
    // order 1, its estimates near 1e300; responses of order 1e10 put them
    // near 1e310, past float64, which once came back as inf silently.
    let n = 20;
    let mut x = random_values(2 * n, 53);
    for v in &mut x[n..] {
        *v *= 1e-300;
    }
    let x = Array::from_vec([n, 2], x).unwrap();
    let mut y = random_values(2 * n, 54);
    let fit = many_lm(
        &x,
        &Array::from_vec([n, 2], y.clone()).unwrap(),
        &LmOptions::default(),
    )
    .unwrap();
    assert!(values(&fit.coefficients).iter().all(|b| b.is_finite()));
    for v in &mut y[n..] {
        *v *= 1e10;
    }
    let y = Array::from_vec([n, 2], y).unwrap();
    let msg = many_lm(&x, &y, &LmOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("term x2 for response column 1 of 2")
            && msg.contains("coefficient overflows float64"),
        "{msg}"
    );
}

#[test]
fn empty_responses_and_designs_are_named() {
    let n = 10;
    let x = Array::from_vec([n, 2], random_values(2 * n, 61)).unwrap();
    let no_responses = Array::zeros([n, 0], DType::F64).unwrap();
    let e = many_lm(&x, &no_responses, &LmOptions::default()).unwrap_err();
    assert!(matches!(e, Error::Empty { op: "many_lm", .. }), "{e}");
    assert!(e.to_string().contains("no columns (responses)"), "{e}");

    let no_rows = Array::zeros([0, 2], DType::F64).unwrap();
    let e = many_lm(
        &no_rows,
        &Array::zeros([0, 3], DType::F64).unwrap(),
        &LmOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Empty { op: "many_lm", .. }), "{e}");
    assert!(e.to_string().contains("no rows (observations)"), "{e}");
}

/// A small binomial problem: `x` (`n x 2`, an intercept and one covariate),
/// proportions `y` out of 4 trials.
fn binomial_problem(covariate_scale: f64) -> [Array; 4] {
    let n = 24;
    let z = random_values(n, 71);
    let mut x = vec![1.0; n];
    x.extend(z.iter().map(|v| v * covariate_scale));
    let y: Vec<f64> = (0..n).map(|i| ((i * 3) % 5).min(4) as f64 / 4.0).collect();
    [
        Array::from_vec([n, 2], x).unwrap(),
        Array::from_vec([n], y).unwrap(),
        Array::from_vec([n], vec![4.0; n]).unwrap(),
        Array::zeros([n], DType::F64).unwrap(),
    ]
}

#[test]
fn an_overflowing_information_matrix_is_named_as_overflow() {
    let spec = GlmSpec::parse("binomial", Some("logit"), None).unwrap();
    // Fits at an ordinary scale.
    let [x, y, wt, alpha] = binomial_problem(1.0);
    assert!(mle(&x, &y, &wt, &alpha, &spec).is_ok());
    // A covariate near 1e308 once blamed collinear columns.
    for scale in [1e308, 1e200] {
        let [x, y, wt, alpha] = binomial_problem(scale);
        let msg = mle(&x, &y, &wt, &alpha, &spec).unwrap_err().to_string();
        assert!(
            msg.contains("column 1") && msg.contains("overflows") && !msg.contains("collinear"),
            "scale {scale:e}: {msg}"
        );
    }
}

#[test]
fn an_empty_grid_is_named() {
    let [x, y, wt, alpha] = binomial_problem(1.0);
    let spec = GlmSpec::parse("binomial", Some("logit"), None).unwrap();
    let mu = Array::zeros([2], DType::F64).unwrap();
    let p = Array::eye(2).unwrap();
    let b = Array::zeros([2, 0], DType::F64).unwrap();
    let e = glm_grid(&x, &y, &wt, &alpha, &mu, &p, &b, &spec).unwrap_err();
    assert!(matches!(e, Error::Empty { op: "glm_grid", .. }), "{e}");
    assert!(e.to_string().contains("no points"), "{e}");
    // One point still works.
    let b = Array::zeros([2, 1], DType::F64).unwrap();
    let grid = glm_grid(&x, &y, &wt, &alpha, &mu, &p, &b, &spec).unwrap();
    assert_eq!(grid.qf.dims(), &[1]);
}
