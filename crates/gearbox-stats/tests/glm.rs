//! The GLM grid against R (`tests/data/gen_glm.R`): qf and gradient per
//! family and link, the scalar terms in ordinary points and tails, the
//! gradient against central finite differences, the maximum-likelihood fit
//! against `glm()`, and the argument checks.
// R prints 17 significant digits; they are kept as printed.
#![allow(clippy::excessive_precision)]

use std::collections::BTreeMap;

use gearbox_core::{Array, DType, Error};
use gearbox_stats::glm::{
    dloglik_deta, glm_grid, glm_grid_reference, grid_around, loglik_term, mle, Family, GlmProblem,
    GlmSpec, Link,
};

const CASES: &str = include_str!("data/glm_grid_cases.csv");
const TERMS: &str = include_str!("data/glm_terms.csv");

/// One problem of `glm_grid_cases.csv`, matrices column-major.
#[derive(Debug, Default)]
struct Case {
    family: String,
    link: String,
    dispersion: f64,
    fields: BTreeMap<String, (Vec<f64>, usize, usize)>,
}

impl Case {
    fn spec(&self) -> GlmSpec {
        GlmSpec::parse(&self.family, Some(&self.link), Some(self.dispersion)).unwrap()
    }
    fn values(&self, field: &str) -> &[f64] {
        &self.fields[field].0
    }
    fn array(&self, field: &str) -> Array {
        let (v, rows, cols) = &self.fields[field];
        if *cols == 1 && !matches!(field, "X" | "P" | "B" | "grad" | "vcov") {
            Array::from_vec([*rows], v.clone()).unwrap()
        } else {
            Array::from_vec([*rows, *cols], v.clone()).unwrap()
        }
    }
    fn name(&self) -> String {
        format!("{}({})", self.family, self.link)
    }
    fn problem(&self) -> GlmProblem {
        GlmProblem::from_arrays(
            "test",
            &self.array("X"),
            &self.array("y"),
            &self.array("wt"),
            &self.array("alpha"),
            &self.array("mu"),
            &self.array("P"),
            &self.spec(),
        )
        .unwrap()
    }
}

fn cases() -> Vec<Case> {
    let mut by_id: BTreeMap<usize, Case> = BTreeMap::new();
    for line in CASES.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let case = by_id.entry(f[0].parse().unwrap()).or_default();
        case.family = f[1].to_string();
        case.link = f[2].to_string();
        case.dispersion = f[3].parse().unwrap();
        let (row, col): (usize, usize) = (f[5].parse().unwrap(), f[6].parse().unwrap());
        let entry = case
            .fields
            .entry(f[4].to_string())
            .or_insert((Vec::new(), 0, 0));
        entry.0.push(f[7].parse().unwrap());
        entry.1 = entry.1.max(row + 1);
        entry.2 = entry.2.max(col + 1);
    }
    let cases: Vec<Case> = by_id.into_values().collect();
    assert_eq!(cases.len(), 8, "one case per family/link of gen_glm.R");
    cases
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

#[test]
fn qf_and_gradient_match_r() {
    let (mut worst_qf, mut worst_grad) = (0.0f64, 0.0f64);
    for case in cases() {
        let grid = glm_grid(
            &case.array("X"),
            &case.array("y"),
            &case.array("wt"),
            &case.array("alpha"),
            &case.array("mu"),
            &case.array("P"),
            &case.array("B"),
            &case.spec(),
        )
        .unwrap();
        let (l2, m1) = (case.fields["B"].1, case.fields["B"].2);
        assert_eq!(grid.qf.dims(), &[m1]);
        assert_eq!(grid.gradient.dims(), &[l2, m1]);
        let qf = grid.qf.to_vec::<f64>().unwrap();
        for (j, (got, want)) in qf.iter().zip(case.values("qf")).enumerate() {
            let rel = (got - want).abs() / want.abs();
            worst_qf = worst_qf.max(rel);
            assert!(
                rel <= 1e-12,
                "{} qf[{j}]: got {got:e}, R {want:e}, rel {rel:e}",
                case.name()
            );
        }
        let grad = grid.gradient.to_vec::<f64>().unwrap();
        let want = case.values("grad");
        for j in 0..m1 {
            let (g, w) = (&grad[j * l2..(j + 1) * l2], &want[j * l2..(j + 1) * l2]);
            let scale = max_abs(w);
            for k in 0..l2 {
                let err = (g[k] - w[k]).abs() / scale;
                worst_grad = worst_grad.max(err);
                assert!(
                    err <= 1e-12,
                    "{} grad[{k},{j}]: got {:e}, R {:e}, error {err:e} of the column's largest",
                    case.name(),
                    g[k],
                    w[k]
                );
            }
        }
    }
    eprintln!("worst qf relative error {worst_qf:.1e}; worst gradient error {worst_grad:.1e} of its column's largest");
}

#[test]
fn gradient_matches_central_differences() {
    for case in cases() {
        let problem = case.problem();
        let (b, l2, m1) = case.fields["B"].clone();
        let (_, grad) = glm_grid_reference(&problem, &b, m1);
        for j in 0..m1 {
            let point = &b[j * l2..(j + 1) * l2];
            let analytic = &grad[j * l2..(j + 1) * l2];
            for k in 0..l2 {
                let h = 1e-5 * (1.0 + point[k].abs());
                let mut shifted = Vec::with_capacity(2 * l2);
                for sign in [1.0, -1.0] {
                    let mut p = point.to_vec();
                    p[k] += sign * h;
                    shifted.extend(p);
                }
                let (qf, _) = glm_grid_reference(&problem, &shifted, 2);
                let numeric = (qf[0] - qf[1]) / (2.0 * h);
                let err = (numeric - analytic[k]).abs() / max_abs(analytic).max(1.0);
                assert!(
                    err <= 1e-7,
                    "{} point {j} coefficient {k}: analytic {:e}, central difference {numeric:e}",
                    case.name(),
                    analytic[k]
                );
            }
        }
    }
}

#[test]
fn terms_match_r_including_tails() {
    let mut checked = 0;
    let mut worst = 0.0f64;
    for line in TERMS.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let family: Family = f[0].parse().unwrap();
        let link: Link = f[1].parse().unwrap();
        let n: Vec<f64> = f[2..].iter().map(|v| v.parse().unwrap()).collect();
        let (y, wt, eta, phi, want_value, want_slope) = (n[0], n[1], n[2], n[3], n[4], n[5]);
        let value = loglik_term(family, link, y, wt, eta, phi);
        let slope = dloglik_deta(family, link, y, wt, eta, phi);
        for (got, want) in [(value, want_value), (slope, want_slope)] {
            if want != 0.0 {
                worst = worst.max((got - want).abs() / want.abs());
            }
        }
        let close = |got: f64, want: f64| {
            if want == 0.0 {
                got == 0.0
            } else {
                (got - want).abs() <= 1e-13 * want.abs()
            }
        };
        assert!(
            close(value, want_value),
            "{family}({link}) y={y} wt={wt} eta={eta}: term {value:e}, R {want_value:e}"
        );
        assert!(
            close(slope, want_slope),
            "{family}({link}) y={y} wt={wt} eta={eta}: slope {slope:e}, R {want_slope:e}"
        );
        checked += 1;
    }
    assert!(checked > 200);
    eprintln!("{checked} terms and slopes; worst relative error {worst:.1e}");
}

#[test]
fn mle_matches_r_glm() {
    for case in cases() {
        let mut spec = case.spec();
        // Let the fit estimate the dispersion as summary.glm does.
        if !spec.family.has_unit_dispersion() {
            spec.dispersion = None;
        }
        let fit = mle(
            &case.array("X"),
            &case.array("y"),
            &case.array("wt"),
            &case.array("alpha"),
            &spec,
        )
        .unwrap();
        assert!(fit.converged, "{} did not converge", case.name());
        let beta = fit.beta.to_vec::<f64>().unwrap();
        for (k, (got, want)) in beta.iter().zip(case.values("beta_hat")).enumerate() {
            assert!(
                (got - want).abs() <= 1e-8 * want.abs().max(1.0),
                "{} beta[{k}]: {got}, R {want}",
                case.name()
            );
        }
        let want_dispersion = case.values("mle_dispersion")[0];
        assert!(
            (fit.dispersion - want_dispersion).abs() <= 1e-8 * want_dispersion,
            "{} dispersion: {}, R {want_dispersion}",
            case.name(),
            fit.dispersion
        );
        let cov = fit.cov.to_vec::<f64>().unwrap();
        let want_cov = case.values("vcov");
        let scale = max_abs(want_cov);
        for (k, (got, want)) in cov.iter().zip(want_cov).enumerate() {
            assert!(
                (got - want).abs() <= 1e-7 * scale,
                "{} vcov[{k}]: {got}, R {want}",
                case.name()
            );
        }
    }
}

#[test]
fn grid_around_the_mle_has_its_covariance() {
    let beta = Array::from_vec([2], vec![0.5, -1.0]).unwrap();
    let cov = Array::from_rows(&[vec![0.04, 0.018], vec![0.018, 0.09]]).unwrap();
    let m1 = 40_000;
    let grid = grid_around(&beta, &cov, m1, 11)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let mean: Vec<f64> = (0..2)
        .map(|k| (0..m1).map(|j| grid[j * 2 + k]).sum::<f64>() / m1 as f64)
        .collect();
    let c = |a: usize, b: usize| {
        (0..m1)
            .map(|j| (grid[j * 2 + a] - mean[a]) * (grid[j * 2 + b] - mean[b]))
            .sum::<f64>()
            / (m1 - 1) as f64
    };
    // Standard errors of the estimates are about 1e-3 and 5e-4 here.
    assert!((mean[0] - 0.5).abs() < 5e-3 && (mean[1] + 1.0).abs() < 8e-3);
    assert!((c(0, 0) - 0.04).abs() < 2e-3);
    assert!((c(1, 1) - 0.09).abs() < 4e-3);
    assert!((c(0, 1) - 0.018).abs() < 2e-3);
    // The same seed gives the same grid; another seed another.
    let again = grid_around(&beta, &cov, 3, 11)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(again[..], grid[..6]);
    let other = grid_around(&beta, &cov, 3, 12)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_ne!(other[..], grid[..6]);
    let indefinite = Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 1.0]]).unwrap();
    assert!(matches!(
        grid_around(&beta, &indefinite, 3, 1),
        Err(Error::NotPositiveDefinite { .. })
    ));
}

/// The first case's arrays, with one replaced, through `glm_grid`.
fn grid_with(replace: &str, value: Array, spec: Option<GlmSpec>) -> Result<(), Error> {
    let case = &cases()[0];
    let get = |name: &str| {
        if name == replace {
            value.clone()
        } else {
            case.array(name)
        }
    };
    glm_grid(
        &get("X"),
        &get("y"),
        &get("wt"),
        &get("alpha"),
        &get("mu"),
        &get("P"),
        &get("B"),
        &spec.unwrap_or_else(|| case.spec()),
    )
    .map(|_| ())
}

/// The argument an error names (`InvalidArgument`), or its shape text.
fn named(e: &Error) -> String {
    match e {
        Error::InvalidArgument { name, .. } => name.to_string(),
        other => other.to_string(),
    }
}

#[test]
fn bad_input_is_rejected_with_the_argument_named() {
    let case = &cases()[0];
    let l1 = case.fields["X"].1;
    let with = |field: &str, i: usize, v: f64| {
        let (mut vals, rows, cols) = case.fields[field].clone();
        vals[i] = v;
        if cols == 1 && field != "B" {
            Array::from_vec([rows], vals).unwrap()
        } else {
            Array::from_vec([rows, cols], vals).unwrap()
        }
    };
    // Dimensions.
    let e = grid_with("y", Array::zeros([l1 - 1], DType::F64).unwrap(), None).unwrap_err();
    assert!(
        e.to_string().contains("y must be a vector of length"),
        "{e}"
    );
    let e = grid_with("mu", Array::zeros([4], DType::F64).unwrap(), None).unwrap_err();
    assert!(e.to_string().contains("mu must be"), "{e}");
    let e = grid_with("P", Array::eye(4).unwrap(), None).unwrap_err();
    assert!(e.to_string().contains("P must be a matrix"), "{e}");
    let e = grid_with("B", Array::zeros([4, 2], DType::F64).unwrap(), None).unwrap_err();
    assert!(e.to_string().contains("B must be a matrix"), "{e}");
    // Dtype.
    let e = grid_with("X", case.array("X").astype(DType::F32).unwrap(), None).unwrap_err();
    assert_eq!(named(&e), "x");
    // Non-finite values.
    for (field, v) in [("X", f64::NAN), ("alpha", f64::INFINITY), ("B", f64::NAN)] {
        let e = grid_with(field, with(field, 3, v), None).unwrap_err();
        assert_eq!(named(&e).to_lowercase(), field.to_lowercase());
    }
    // Binomial support: proportion outside [0, 1], non-whole successes
    // or trials.
    assert_eq!(
        named(&grid_with("y", with("y", 2, 1.5), None).unwrap_err()),
        "y"
    );
    assert_eq!(
        named(&grid_with("y", with("y", 2, -0.1), None).unwrap_err()),
        "y"
    );
    let r = case.values("wt").iter().position(|&w| w >= 2.0).unwrap();
    let wt_r = case.values("wt")[r];
    let e = grid_with("y", with("y", r, 0.5 / wt_r), None).unwrap_err();
    assert_eq!(named(&e), "y");
    let e = grid_with("wt", with("wt", r, wt_r + 0.5), None).unwrap_err();
    assert_eq!(named(&e), "wt");
    // R's tolerance: a count off by 1e-10 is whole.
    let y_r = case.values("y")[r];
    assert!(grid_with("y", with("y", r, y_r + 1e-10 / wt_r), None).is_ok());
    // Negative weights.
    assert_eq!(
        named(&grid_with("wt", with("wt", 0, -1.0), None).unwrap_err()),
        "wt"
    );
    // Prior precision: asymmetric, indefinite.
    let p = case.values("P").to_vec();
    let mut asym = p.clone();
    asym[1] += 1e-3;
    let e = grid_with("P", Array::from_vec([3, 3], asym).unwrap(), None).unwrap_err();
    assert_eq!(named(&e), "P");
    let mut tiny = p.clone();
    tiny[1] *= 1.0 + 1e-13;
    assert!(grid_with("P", Array::from_vec([3, 3], tiny).unwrap(), None).is_ok());
    let indefinite = Array::from_rows(&[
        vec![1.0, 2.0, 0.0],
        vec![2.0, 1.0, 0.0],
        vec![0.0, 0.0, 1.0],
    ])
    .unwrap();
    let e = grid_with("P", indefinite, None).unwrap_err();
    assert!(
        matches!(&e, Error::NotPositiveDefinite { detail, .. } if detail.contains("argument P")),
        "{e}"
    );
    // Spec: wrong link, dispersion for binomial.
    let bad_link = GlmSpec {
        family: Family::Binomial,
        link: Link::Log,
        dispersion: None,
    };
    assert_eq!(
        named(&grid_with("", case.array("y"), Some(bad_link)).unwrap_err()),
        "link"
    );
    let bad_disp = GlmSpec {
        family: Family::Binomial,
        link: Link::Logit,
        dispersion: Some(2.0),
    };
    assert_eq!(
        named(&grid_with("", case.array("y"), Some(bad_disp)).unwrap_err()),
        "dispersion"
    );
}

#[test]
fn family_support_and_dispersion_checks() {
    let all = cases();
    let by_family = |f: &str| all.iter().find(|c| c.family == f).unwrap();
    let run = |case: &Case, y: Option<Vec<f64>>, spec: GlmSpec| {
        let y = y.map_or_else(
            || case.array("y"),
            |v| Array::from_vec([v.len()], v).unwrap(),
        );
        glm_grid(
            &case.array("X"),
            &y,
            &case.array("wt"),
            &case.array("alpha"),
            &case.array("mu"),
            &case.array("P"),
            &case.array("B"),
            &spec,
        )
    };
    let pois = by_family("poisson");
    let mut y = pois.values("y").to_vec();
    y[3] = 2.5;
    assert_eq!(
        named(&run(pois, Some(y.clone()), pois.spec()).unwrap_err()),
        "y"
    );
    y[3] = -1.0;
    assert_eq!(named(&run(pois, Some(y), pois.spec()).unwrap_err()), "y");
    let gamma = by_family("Gamma");
    let mut y = gamma.values("y").to_vec();
    y[3] = 0.0;
    assert_eq!(named(&run(gamma, Some(y), gamma.spec()).unwrap_err()), "y");
    for f in ["gaussian", "Gamma"] {
        let case = by_family(f);
        let mut spec = case.spec();
        spec.dispersion = None;
        assert_eq!(named(&run(case, None, spec).unwrap_err()), "dispersion");
        spec.dispersion = Some(0.0);
        assert_eq!(named(&run(case, None, spec).unwrap_err()), "dispersion");
        spec.dispersion = Some(-2.0);
        assert_eq!(named(&run(case, None, spec).unwrap_err()), "dispersion");
    }
    // The quasi families default to dispersion 1, which is the base family.
    let quasi = by_family("quasipoisson");
    let mut spec = quasi.spec();
    spec.dispersion = None;
    let q = run(quasi, None, spec).unwrap().qf.to_vec::<f64>().unwrap();
    spec.family = Family::Poisson;
    let p = run(quasi, None, spec).unwrap().qf.to_vec::<f64>().unwrap();
    assert_eq!(q, p);
}

#[test]
fn one_point_as_a_vector() {
    let case = &cases()[4];
    let (b, l2, _) = case.fields["B"].clone();
    let point = Array::from_vec([l2], b[..l2].to_vec()).unwrap();
    let one = glm_grid(
        &case.array("X"),
        &case.array("y"),
        &case.array("wt"),
        &case.array("alpha"),
        &case.array("mu"),
        &case.array("P"),
        &point,
        &case.spec(),
    )
    .unwrap();
    assert_eq!(one.gradient.dims(), &[l2, 1]);
    let qf = one.qf.to_vec::<f64>().unwrap();
    assert!((qf[0] - case.values("qf")[0]).abs() <= 1e-12 * qf[0].abs());
}

/// Columns of a shipped data set (`data/NAME.csv`, numeric with a header).
fn dataset(name: &str) -> gearbox_stats::io::Table {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(format!("{name}.csv"));
    gearbox_stats::io::read_csv(path).unwrap()
}

#[test]
fn mle_on_the_shipped_data_sets_matches_r() {
    let fits = [
        (
            "esoph",
            ["age", "alcohol", "tobacco"],
            "y",
            Some("trials"),
            "binomial",
            [
                -7.163952764136047,
                0.74375136384785501,
                1.1025547157972886,
                0.43085076039434805,
            ],
        ),
        (
            "warpbreaks",
            ["woolB", "tensionM", "tensionH"],
            "breaks",
            None,
            "poisson",
            [
                3.6919631449407966,
                -0.2059884426386217,
                -0.3213204316006118,
                -0.5184884965115607,
            ],
        ),
    ];
    for (name, columns, response, weights, family, want) in fits {
        let table = dataset(name);
        let n = table.nrows();
        let mut x = vec![1.0; n];
        for c in columns {
            x.extend_from_slice(table.column(c).unwrap());
        }
        let wt = weights.map_or(vec![1.0; n], |w| table.column(w).unwrap().to_vec());
        let fit = mle(
            &Array::from_vec([n, 4], x).unwrap(),
            &Array::from_vec([n], table.column(response).unwrap().to_vec()).unwrap(),
            &Array::from_vec([n], wt).unwrap(),
            &Array::from_vec([n], vec![0.0; n]).unwrap(),
            &GlmSpec::parse(family, None, None).unwrap(),
        )
        .unwrap();
        let beta = fit.beta.to_vec::<f64>().unwrap();
        for (k, (got, want)) in beta.iter().zip(want).enumerate() {
            assert!(
                (got - want).abs() <= 1e-8 * want.abs().max(1.0),
                "{name} beta[{k}]: {got}, R {want}"
            );
        }
    }
}
