//! `many_lm` against R's `summary(lm())` (tests/data/gen_lm.R), against a
//! plain per-column faer fit on random data, and its input errors.

use faer::linalg::solvers::{DenseSolveCore as _, Qr, SolveLstsqCore as _};
use faer::{Conj, Mat, MatRef};
use gearbox_core::{Array, DType, Error, Precision};
use gearbox_stats::io::Table;
use gearbox_stats::lm::{many_lm, LmOptions, ManyLm};
use gearbox_stats::nmath::pt;

/// Relative closeness; NaN matches NaN and infinities match exactly.
fn close(got: f64, want: f64, rel: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return want == got;
    }
    (got - want).abs() <= rel * want.abs().max(f64::MIN_POSITIVE)
}

fn table(text: &str, name: &str) -> Table {
    Table::from_reader(text.as_bytes(), name).unwrap()
}

/// A `p x k` result as rows of terms: `values[term][response]`.
fn by_term(a: &Array) -> Vec<Vec<f64>> {
    let (p, k) = (a.dims()[0], a.dims()[1]);
    let v = a.to_vec::<f64>().unwrap();
    (0..p)
        .map(|i| (0..k).map(|j| v[i + j * p]).collect())
        .collect()
}

#[test]
fn matches_r_summary_lm_with_and_without_intercept() {
    let x = table(include_str!("data/lm_x.csv"), "lm_x.csv");
    let y = table(include_str!("data/lm_y.csv"), "lm_y.csv");
    let expected = include_str!("data/lm_expected.csv");
    let mut lines = expected.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "model",
            "response",
            "term",
            "estimate",
            "std_error",
            "t_value",
            "p_value",
            "sigma",
            "r_squared",
            "df"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let mut checked = 0;
    for (model, intercept) in [("intercept", true), ("no_intercept", false)] {
        let opts = LmOptions {
            intercept,
            term_names: Some(x.names.clone()),
        };
        let fit = many_lm(&x.to_matrix().unwrap(), &y.to_matrix().unwrap(), &opts).unwrap();
        let stats = [
            by_term(&fit.coefficients),
            by_term(&fit.std_errors),
            by_term(&fit.t_values),
            by_term(&fit.p_values),
        ];
        let sigma = fit.sigma.to_vec::<f64>().unwrap();
        let r_squared = fit.r_squared.to_vec::<f64>().unwrap();
        for row in rows.iter().filter(|r| r[0] == model) {
            let j = y.names.iter().position(|n| n == row[1]).unwrap();
            let i = fit.term_names.iter().position(|t| t == row[2]).unwrap();
            let want = |c: usize| row[c].parse::<f64>().unwrap();
            let what = format!("{model} {} {}", row[1], row[2]);
            for (s, name) in ["estimate", "std_error", "t_value", "p_value"]
                .iter()
                .enumerate()
            {
                let (got, want) = (stats[s][i][j], want(3 + s));
                assert!(
                    close(got, want, 1e-10),
                    "{what} {name}: {got:e} vs R {want:e}"
                );
            }
            assert!(close(sigma[j], want(7), 1e-10), "{what} sigma");
            assert!(close(r_squared[j], want(8), 1e-10), "{what} r_squared");
            assert_eq!(fit.df_residual as f64, want(9), "{what} df");
            checked += 1;
        }
    }
    assert_eq!(checked, rows.len());
    assert_eq!(checked, 5 * (4 + 3));
}

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

/// One response fitted alone: faer least squares for the coefficients,
/// plain loops for the residuals, faer's inverse of XᵀX for the variances.
struct ColumnFit {
    coefficients: Vec<f64>,
    std_errors: Vec<f64>,
    sigma: f64,
    r_squared: f64,
}

fn fit_one_column(design: &[f64], n: usize, p: usize, y: &[f64], intercept: bool) -> ColumnFit {
    let x = MatRef::from_column_major_slice(design, n, p);
    let mut rhs = Mat::<f64>::from_fn(n, 1, |i, _| y[i]);
    Qr::new(x).solve_lstsq_in_place_with_conj(Conj::No, rhs.as_mut());
    let beta: Vec<f64> = (0..p).map(|i| rhs[(i, 0)]).collect();
    let fitted: Vec<f64> = (0..n)
        .map(|i| (0..p).map(|j| design[i + j * n] * beta[j]).sum())
        .collect();
    let rss: f64 = (0..n).map(|i| (y[i] - fitted[i]).powi(2)).sum();
    let centre = if intercept {
        fitted.iter().sum::<f64>() / n as f64
    } else {
        0.0
    };
    let mss: f64 = fitted.iter().map(|f| (f - centre).powi(2)).sum();
    let sigma = (rss / (n - p) as f64).sqrt();
    let gram = x.transpose() * x;
    let gram_inverse = gram.llt(faer::Side::Lower).unwrap().inverse();
    ColumnFit {
        std_errors: (0..p)
            .map(|i| gram_inverse[(i, i)].sqrt() * sigma)
            .collect(),
        coefficients: beta,
        sigma,
        r_squared: mss / (mss + rss),
    }
}

fn check_against_columns(fit: &ManyLm, design: &[f64], n: usize, y: &[f64], intercept: bool) {
    let p = fit.term_names.len();
    let k = y.len() / n;
    let [b, se, t, pv] = [
        &fit.coefficients,
        &fit.std_errors,
        &fit.t_values,
        &fit.p_values,
    ]
    .map(|a| {
        assert_eq!(a.dims(), &[p, k]);
        by_term(a)
    });
    let sigma = fit.sigma.to_vec::<f64>().unwrap();
    let r_squared = fit.r_squared.to_vec::<f64>().unwrap();
    let df = (n - p) as f64;
    for j in 0..k {
        let one = fit_one_column(design, n, p, &y[j * n..(j + 1) * n], intercept);
        assert!(close(sigma[j], one.sigma, 1e-11), "sigma {j}");
        assert!(close(r_squared[j], one.r_squared, 1e-10), "r2 {j}");
        for i in 0..p {
            let what = format!("response {j}, term {}", fit.term_names[i]);
            // Coefficients near zero: compare on the scale of their error.
            let scale = one.std_errors[i];
            assert!(
                (b[i][j] - one.coefficients[i]).abs() <= 1e-11 * scale,
                "{what} coefficient {} vs {}",
                b[i][j],
                one.coefficients[i]
            );
            assert!(close(se[i][j], one.std_errors[i], 1e-11), "{what} se");
            let t_want = one.coefficients[i] / one.std_errors[i];
            assert!(
                (t[i][j] - t_want).abs() <= 1e-10 * t_want.abs().max(1.0),
                "{what} t"
            );
            let p_want = 2.0 * pt(t[i][j].abs(), df, false, false);
            assert_eq!(pv[i][j], p_want, "{what} p-value");
        }
    }
}

#[test]
fn designs_on_both_sides_of_the_cholesky_bound_agree_with_a_plain_fit() {
    // Column 1 is column 0 plus eps of noise: κ² of the unit-norm design
    // is about 4 / eps², from 4 to 4e4 here, on both sides of the Cholesky
    // QR's bound (2^12, which its rigorous estimate exceeds before κ² does).
    // (Below 0.01 the plain fit's own standard errors, from an inverse of
    // X'X, drift past 1e-11.)
    let (n, q, k) = (300, 4, 6);
    for eps in [1.0, 0.5, 0.3, 0.2, 0.1, 0.03, 0.01] {
        let mut x = random_values(n * q, 11);
        let noise = random_values(n, 12);
        for i in 0..n {
            x[n + i] = x[i] + eps * noise[i];
        }
        let mut y = random_values(n * k, 13);
        for j in 0..k {
            for i in 0..n {
                y[i + j * n] += (j as f64 - 2.0) * x[i] + 0.5 * x[2 * n + i];
            }
        }
        let fit = many_lm(
            &Array::from_vec([n, q], x.clone()).unwrap(),
            &Array::from_vec([n, k], y.clone()).unwrap(),
            &LmOptions::default(),
        )
        .unwrap();
        let mut design = vec![1.0; n];
        design.extend(&x);
        check_against_columns(&fit, &design, n, &y, true);
    }
}

#[test]
fn agrees_with_a_plain_fit_of_each_column() {
    let (n, q, k) = (120, 5, 64);
    let mut x = random_values(n * q, 1);
    // Different scales and a shifted column, as real covariates have.
    for v in &mut x[n..2 * n] {
        *v *= 1e-4;
    }
    for v in &mut x[2 * n..3 * n] {
        *v = *v * 50.0 + 300.0;
    }
    let mut y = random_values(n * k, 2);
    for j in 0..k {
        for i in 0..n {
            let signal = (j % 7) as f64 * 0.3 * x[i] + 0.01 * (j % 3) as f64 * x[2 * n + i];
            y[i + j * n] += signal + j as f64;
        }
    }
    let x_array = Array::from_vec([n, q], x.clone()).unwrap();
    let y_array = Array::from_vec([n, k], y.clone()).unwrap();
    for intercept in [true, false] {
        let opts = LmOptions {
            intercept,
            term_names: None,
        };
        let fit = many_lm(&x_array, &y_array, &opts).unwrap();
        let p = q + intercept as usize;
        assert_eq!(fit.df_residual, n - p);
        let mut names: Vec<String> = (1..=q).map(|j| format!("x{j}")).collect();
        if intercept {
            names.insert(0, "(Intercept)".into());
        }
        assert_eq!(fit.term_names, names);
        let mut design = if intercept { vec![1.0; n] } else { Vec::new() };
        design.extend_from_slice(&x);
        check_against_columns(&fit, &design, n, &y, intercept);
    }
}

#[test]
fn one_response_as_a_vector_and_an_exact_fit() {
    let x = Array::from_vec([6, 1], vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let y = Array::from_vec([6], vec![1.0, 3.0, 5.0, 7.0, 9.0, 11.0]).unwrap();
    let fit = many_lm(&x, &y, &LmOptions::default()).unwrap();
    assert_eq!(fit.coefficients.dims(), &[2, 1]);
    let b = fit.coefficients.to_vec::<f64>().unwrap();
    assert!(
        (b[0] - 1.0).abs() < 1e-13 && (b[1] - 2.0).abs() < 1e-13,
        "{b:?}"
    );
    // An exact fit: residual standard error ~0 and R² 1, as in R.
    assert!(fit.sigma.item().unwrap() < 1e-14);
    assert!((fit.r_squared.item().unwrap() - 1.0).abs() < 1e-14);
}

#[test]
fn intercept_only_model_has_zero_r_squared() {
    let x = Array::zeros([5, 0], DType::F64).unwrap();
    let y = Array::from_vec([5, 1], vec![1.0, 2.0, 4.0, 8.0, 16.0]).unwrap();
    let fit = many_lm(&x, &y, &LmOptions::default()).unwrap();
    assert_eq!(fit.term_names, ["(Intercept)"]);
    assert!((fit.coefficients.item().unwrap() - 6.2).abs() < 1e-13);
    assert_eq!(fit.r_squared.item().unwrap(), 0.0);
    // sd(y) / sqrt(n): the standard error of a mean.
    let sd = (((1.0f64 - 6.2).powi(2)
        + (2.0f64 - 6.2).powi(2)
        + (4.0f64 - 6.2).powi(2)
        + (8.0f64 - 6.2).powi(2)
        + (16.0f64 - 6.2).powi(2))
        / 4.0)
        .sqrt();
    assert!(close(
        fit.std_errors.item().unwrap(),
        sd / 5f64.sqrt(),
        1e-13
    ));
}

fn singular_detail(result: gearbox_core::Result<ManyLm>) -> String {
    match result {
        Err(Error::Singular { op, detail, .. }) => {
            assert_eq!(op, "many_lm");
            detail
        }
        Err(other) => panic!("expected Singular, got {other}"),
        Ok(_) => panic!("expected Singular, got a fit"),
    }
}

#[test]
fn rank_deficient_designs_name_the_dependent_terms() {
    let n = 30;
    let a = random_values(n, 11);
    let b = random_values(n, 12);
    let combo: Vec<f64> = a.iter().zip(&b).map(|(a, b)| a - 2.0 * b).collect();
    let names = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect());
    let y = Array::from_vec([n, 2], random_values(2 * n, 13)).unwrap();

    let x = Array::from_vec([n, 3], [a.clone(), b.clone(), combo.clone()].concat()).unwrap();
    let opts = LmOptions {
        intercept: true,
        term_names: names(&["age", "dose", "mix"]),
    };
    let detail = singular_detail(many_lm(&x, &y, &opts));
    assert!(detail.contains("rank 3 of 4"), "{detail}");
    // The later column is the dependent one, as R's lm reports it (NA).
    assert!(
        detail.contains("): mix is a linear combination of age, dose; drop"),
        "{detail}"
    );

    // Two separate dependencies, each named with its own partners.
    let c = random_values(n, 14);
    let triple: Vec<f64> = c.iter().map(|v| 3.0 * v).collect();
    let x = Array::from_vec(
        [n, 5],
        [a.clone(), b.clone(), combo.clone(), c, triple].concat(),
    )
    .unwrap();
    let detail = singular_detail(many_lm(&x, &y, &LmOptions::default()));
    assert!(
        detail.contains(
            "rank 4 of 6 columns, relative tolerance 1e-7): x3 is a linear combination of \
             x1, x2; x5 is a linear combination of x4; drop"
        ),
        "{detail}"
    );

    // A constant column duplicates the intercept.
    let x = Array::from_vec([n, 2], [a.clone(), vec![3.5; n]].concat()).unwrap();
    let opts = LmOptions {
        intercept: true,
        term_names: names(&["age", "site"]),
    };
    let detail = singular_detail(many_lm(&x, &y, &opts));
    assert!(
        detail.contains("): site is a linear combination of (Intercept); drop"),
        "{detail}"
    );

    // An all-zero column.
    let x = Array::from_vec([n, 2], [vec![0.0; n], a.clone()].concat()).unwrap();
    let detail = singular_detail(many_lm(&x, &y, &LmOptions::default()));
    assert!(detail.contains("x1 are all zeros"), "{detail}");

    // A tiny scale is not a dependency: the check is relative to each column.
    let tiny: Vec<f64> = b.iter().map(|v| v * 1e-12).collect();
    let x = Array::from_vec([n, 2], [a, tiny].concat()).unwrap();
    assert!(many_lm(&x, &y, &LmOptions::default()).is_ok());
}

#[test]
fn bad_inputs_are_clear_errors() {
    let n = 10;
    let x = Array::from_vec([n, 2], random_values(2 * n, 21)).unwrap();
    let y = Array::from_vec([n, 3], random_values(3 * n, 22)).unwrap();
    let opts = LmOptions::default();
    assert!(many_lm(&x, &y, &opts).is_ok());

    let x32 = x.astype(DType::F32).unwrap();
    assert!(matches!(
        many_lm(&x32, &y, &opts),
        Err(Error::DType { op: "many_lm", .. })
    ));
    let y64 = y.astype(DType::I64).unwrap();
    assert!(matches!(many_lm(&x, &y64, &opts), Err(Error::DType { .. })));

    let x3d = x.reshape([n, 2, 1]).unwrap();
    assert!(matches!(
        many_lm(&x3d, &y, &opts),
        Err(Error::BadShape { .. })
    ));

    let short = y.rows(0..n - 1).unwrap();
    let msg = many_lm(&x, &short, &opts).unwrap_err().to_string();
    assert!(
        msg.contains("x has 10 rows") && msg.contains("y has 9"),
        "{msg}"
    );

    // n <= p: 3 rows, 3 terms with the intercept.
    let x_small = x.rows(0..3).unwrap();
    let y_small = y.rows(0..3).unwrap();
    let msg = many_lm(&x_small, &y_small, &opts).unwrap_err().to_string();
    assert!(msg.contains("3 rows for 3 terms"), "{msg}");

    let wrong_names = LmOptions {
        intercept: true,
        term_names: Some(vec!["a".into()]),
    };
    let msg = many_lm(&x, &y, &wrong_names).unwrap_err().to_string();
    assert!(
        msg.contains("term_names") && msg.contains("2 column(s)"),
        "{msg}"
    );

    let mut x_nan = x.clone();
    x_nan.set(&[4, 1], f64::NAN).unwrap();
    let msg = many_lm(&x_nan, &y, &opts).unwrap_err().to_string();
    assert!(msg.contains("NaN at row 4, column 1"), "{msg}");

    let mut y_inf = y.clone();
    y_inf.set(&[7, 2], f64::INFINITY).unwrap();
    let msg = many_lm(&x, &y_inf, &opts).unwrap_err().to_string();
    assert!(msg.contains("inf at row 7, column 2"), "{msg}");

    let mut y_huge = y.clone();
    y_huge.set(&[3, 1], 1e300).unwrap();
    let msg = many_lm(&x, &y_huge, &opts).unwrap_err().to_string();
    assert!(
        msg.contains("column 1 of 3") && msg.contains("overflows"),
        "{msg}"
    );
}

#[test]
fn p_values_are_lazy_and_correct_when_read() {
    let (n, q, k) = (150, 4, 30);
    let x = random_values(n * q, 31);
    let mut y = random_values(n * k, 32);
    for j in 0..k {
        for i in 0..n {
            y[i + j * n] += (j % 5) as f64 * 0.2 * x[i] - 0.1 * x[3 * n + i];
        }
    }
    let x_array = Array::from_vec([n, q], x.clone()).unwrap();
    let y_array = Array::from_vec([n, k], y.clone()).unwrap();
    let fit = many_lm(&x_array, &y_array, &LmOptions::default()).unwrap();
    for (name, a) in [
        ("coefficients", &fit.coefficients),
        ("std_errors", &fit.std_errors),
        ("t_values", &fit.t_values),
        ("sigma", &fit.sigma),
        ("r_squared", &fit.r_squared),
    ] {
        assert!(a.is_evaluated(), "{name} is computed by many_lm");
    }
    assert!(
        !fit.p_values.is_evaluated(),
        "the p-values wait for their first read"
    );
    // Read: the Student t tail probabilities of the t statistics.
    let (t, pv) = (by_term(&fit.t_values), by_term(&fit.p_values));
    assert!(fit.p_values.is_evaluated());
    let df = (n - q - 1) as f64;
    for (t_row, p_row) in t.iter().zip(&pv) {
        for (&t, &p) in t_row.iter().zip(p_row) {
            assert_eq!(p, 2.0 * pt(t.abs(), df, false, false), "t = {t}");
        }
    }
    assert!(
        pv.iter().flatten().any(|&p| p < 1e-3),
        "some effects are real"
    );
    let mut design = vec![1.0; n];
    design.extend_from_slice(&x);
    check_against_columns(&fit, &design, n, &y, true);
}

#[test]
fn more_terms_than_the_fused_residual_pass_takes_agree_with_a_plain_fit() {
    use gearbox_stats::lm::FUSED_RESIDUAL_MAX_TERMS;
    let (n, q, k) = (200, FUSED_RESIDUAL_MAX_TERMS + 3, 6);
    let x = random_values(n * q, 41);
    let mut y = random_values(n * k, 42);
    for j in 0..k {
        for i in 0..n {
            y[i + j * n] += 0.5 * x[i] * j as f64 + 10.0;
        }
    }
    let x_array = Array::from_vec([n, q], x.clone()).unwrap();
    let y_array = Array::from_vec([n, k], y.clone()).unwrap();
    for intercept in [true, false] {
        let opts = LmOptions {
            intercept,
            term_names: None,
        };
        let fit = many_lm(&x_array, &y_array, &opts).unwrap();
        let mut design = if intercept { vec![1.0; n] } else { Vec::new() };
        design.extend_from_slice(&x);
        check_against_columns(&fit, &design, n, &y, intercept);
    }
}

#[test]
fn no_terms_at_all_and_fast_responses_still_fit_at_strict_precision() {
    // No intercept and no covariates: p = 0, RSS = colSums(Y²), R² = 0.
    let x = Array::zeros([5, 0], DType::F64).unwrap();
    let values = vec![1.0, 2.0, 4.0, 8.0, 16.0, -1.0, 0.5, 0.25, 3.0, 2.0];
    let y = Array::from_vec([5, 2], values.clone())
        .unwrap()
        .with_precision(Precision::Fast)
        .unwrap();
    let opts = LmOptions {
        intercept: false,
        term_names: None,
    };
    let fit = many_lm(&x, &y, &opts).unwrap();
    assert_eq!(fit.coefficients.dims(), &[0, 2]);
    assert_eq!(fit.df_residual, 5);
    let sigma = fit.sigma.to_vec::<f64>().unwrap();
    for (j, column) in values.chunks(5).enumerate() {
        let want = (column.iter().map(|v| v * v).sum::<f64>() / 5.0).sqrt();
        assert!(close(sigma[j], want, 1e-15), "{} vs {want}", sigma[j]);
    }
    assert_eq!(fit.r_squared.to_vec::<f64>().unwrap(), [0.0, 0.0]);
    // Every result runs at Strict precision although Y is tagged Fast.
    for a in [&fit.sigma, &fit.r_squared, &fit.std_errors, &fit.p_values] {
        assert!(a.precision() >= Precision::Strict);
    }
    let x = Array::from_vec([5, 1], vec![0.5, -1.0, 2.0, 0.0, 1.0]).unwrap();
    let fit = many_lm(&x, &y, &LmOptions::default()).unwrap();
    for a in [&fit.coefficients, &fit.sigma, &fit.r_squared, &fit.p_values] {
        assert!(a.precision() >= Precision::Strict);
    }
}
