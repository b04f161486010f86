//! Random GLM problems for every family and link, and the comparison of a
//! grid against the one-point-at-a-time reference at 1e-12 of each
//! result's scale, shared by the CPU and GPU strategy tests.

use gearbox_core::Array;
use gearbox_stats::glm::{
    dloglik_deta, glm_grid_reference, loglik_term, GlmGrid, GlmModel, GlmProblem, GlmSpec,
};

use crate::common::Rng;

/// Every (family, link) with a dispersion where the family takes one.
pub const SPECS: &[(&str, &str, Option<f64>)] = &[
    ("binomial", "logit", None),
    ("binomial", "probit", None),
    ("binomial", "cloglog", None),
    ("quasibinomial", "logit", Some(1.7)),
    ("poisson", "log", None),
    ("quasipoisson", "log", Some(0.6)),
    ("gaussian", "identity", Some(2.5)),
    ("Gamma", "log", Some(0.8)),
];

/// A random problem of `l1` observations and `l2` coefficients with a grid
/// of `m1` points around a plausible coefficient vector.
pub struct Problem {
    pub arrays: [Array; 6],
    pub spec: GlmSpec,
    pub b: Vec<f64>,
    pub l2: usize,
    pub m1: usize,
}

impl Problem {
    pub fn new(
        spec: (&str, &str, Option<f64>),
        l1: usize,
        l2: usize,
        m1: usize,
        seed: u64,
    ) -> Problem {
        let mut r = Rng(seed);
        let spec = GlmSpec::parse(spec.0, Some(spec.1), spec.2).unwrap();
        let scale = 1.0 / (l2 as f64).sqrt();
        let x: Vec<f64> = (0..l1 * l2)
            .map(|_| (r.uniform() - 0.5) * 2.0 * scale)
            .collect();
        let family = spec.family.to_string();
        let (y, wt): (Vec<f64>, Vec<f64>) = (0..l1)
            .map(|_| match family.as_str() {
                "binomial" | "quasibinomial" => {
                    let n = 1.0 + r.count(12.0);
                    (r.count(n) / n, n)
                }
                "poisson" | "quasipoisson" => (r.count(9.0), 0.5 + r.uniform()),
                "gaussian" => ((r.uniform() - 0.5) * 6.0, 0.5 + r.uniform()),
                _ => (r.log_uniform(0.1, 10.0), 0.5 + r.uniform()),
            })
            .unzip();
        let alpha: Vec<f64> = (0..l1).map(|_| (r.uniform() - 0.5) * 0.4).collect();
        let mu: Vec<f64> = (0..l2).map(|_| (r.uniform() - 0.5) * 0.2).collect();
        // A symmetric positive definite prior precision.
        let mut p = vec![0.0; l2 * l2];
        for i in 0..l2 {
            for j in 0..l2 {
                p[i + j * l2] = if i == j {
                    1.5
                } else {
                    0.1 / (1.0 + (i + j) as f64)
                };
            }
        }
        let b: Vec<f64> = (0..l2 * m1).map(|_| (r.uniform() - 0.5) * 1.2).collect();
        let arr = |shape: Vec<usize>, v: Vec<f64>| Array::from_vec(shape, v).unwrap();
        Problem {
            arrays: [
                arr(vec![l1, l2], x),
                arr(vec![l1], y),
                arr(vec![l1], wt),
                arr(vec![l1], alpha),
                arr(vec![l2], mu),
                arr(vec![l2, l2], p),
            ],
            spec,
            b,
            l2,
            m1,
        }
    }

    pub fn model(&self) -> GlmModel {
        let [x, y, wt, alpha, mu, p] = &self.arrays;
        GlmModel::new(x, y, wt, alpha, mu, p, &self.spec).unwrap()
    }

    pub fn grid(&self) -> Array {
        Array::from_vec([self.l2, self.m1], self.b.clone()).unwrap()
    }

    pub fn problem(&self) -> GlmProblem {
        let [x, y, wt, alpha, mu, p] = &self.arrays;
        GlmProblem::from_arrays("test", x, y, wt, alpha, mu, p, &self.spec).unwrap()
    }

    /// Points as an `l2 x m1` column-major vector (for product grids).
    pub fn check(&self, what: &str, got: &GlmGrid, b: &[f64]) {
        check_against_reference(what, &self.problem(), got, b)
    }
}

/// `got` against [`glm_grid_reference`] at `b`: each value within 1e-12 of
/// the sum of the magnitudes it is made of (the prior term and every
/// observation's term), so that cancellation does not hide or fake an error.
pub fn check_against_reference(what: &str, problem: &GlmProblem, got: &GlmGrid, b: &[f64]) {
    let (l1, l2) = (problem.data.l1, problem.data.l2);
    let m1 = b.len() / l2;
    let (qf, grad) = glm_grid_reference(problem, b, m1);
    let got_qf = got.qf.to_vec::<f64>().unwrap();
    let got_grad = got.gradient.to_vec::<f64>().unwrap();
    assert_eq!(got_qf.len(), m1, "{what}: qf length");
    assert_eq!(got_grad.len(), l2 * m1, "{what}: gradient length");
    let (family, link) = (problem.spec.family, problem.spec.link);
    let d = &problem.data;
    for j in 0..m1 {
        let point = &b[j * l2..(j + 1) * l2];
        let eta = problem.data.linear_predictor(point);
        let c: Vec<f64> = point.iter().zip(&problem.mu).map(|(b, m)| b - m).collect();
        let pc: Vec<f64> = (0..l2)
            .map(|k| (0..l2).map(|r| (problem.p[k + r * l2] * c[r]).abs()).sum())
            .collect();
        let mut q_scale: f64 = (0..l2).map(|k| c[k].abs() * pc[k]).sum::<f64>() * 0.5;
        let mut g_scale = pc.clone();
        for (i, &e) in eta.iter().enumerate() {
            let ll = loglik_term(family, link, d.y[i], d.wt[i], e, problem.dispersion);
            let s = dloglik_deta(family, link, d.y[i], d.wt[i], e, problem.dispersion);
            q_scale += ll.abs();
            for (k, g) in g_scale.iter_mut().enumerate() {
                *g += (d.x[i + k * l1] * s).abs();
            }
        }
        let tol = 1e-12;
        assert!(
            (got_qf[j] - qf[j]).abs() <= tol * q_scale.max(f64::MIN_POSITIVE),
            "{what}: qf at point {j}: got {:e}, want {:e} (scale {q_scale:e})",
            got_qf[j],
            qf[j]
        );
        for k in 0..l2 {
            let (g, w) = (got_grad[j * l2 + k], grad[j * l2 + k]);
            assert!(
                (g - w).abs() <= tol * g_scale[k].max(f64::MIN_POSITIVE),
                "{what}: gradient[{k}] at point {j}: got {g:e}, want {w:e} (scale {:e})",
                g_scale[k]
            );
        }
    }
}
