//! Automatic differentiation against the GLM statistics: the gradient of
//! the negative log-posterior written with array ops and
//! `gearbox_core::autodiff::grad` equals `glm_grid`'s analytic gradient
//! (binomial logit, poisson log), and a logistic regression trained with
//! `nn::Adam` reaches R's `glm()` coefficients (stored by
//! `tests/data/gen_glm.R`) and the crate's IRLS fit.

use std::collections::BTreeMap;

use gearbox_core::nn::{self, Adam, Linear, Optimizer};
use gearbox_core::{autodiff, Array, Result};
use gearbox_stats::glm::{glm_grid, mle, GlmSpec};

const CASES: &str = include_str!("data/glm_grid_cases.csv");

/// The fields of case `id` of `glm_grid_cases.csv` (columns `case, family,
/// link, dispersion, field, row, col, value`), each as an `[rows, cols]`
/// matrix (column-major, as the file lists them).
fn case(id: &str) -> (String, String, BTreeMap<String, Array>) {
    let mut raw: BTreeMap<String, (Vec<f64>, usize, usize)> = BTreeMap::new();
    let (mut family, mut link) = (String::new(), String::new());
    for line in CASES.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f[0] != id {
            continue;
        }
        (family, link) = (f[1].to_string(), f[2].to_string());
        let e = raw.entry(f[4].to_string()).or_default();
        e.0.push(f[7].parse().unwrap());
        e.1 = e.1.max(f[5].parse::<usize>().unwrap() + 1);
        e.2 = e.2.max(f[6].parse::<usize>().unwrap() + 1);
    }
    let fields = raw
        .into_iter()
        .map(|(k, (v, r, c))| (k, Array::from_vec([r, c], v).unwrap()))
        .collect();
    (family, link, fields)
}

/// The per-observation negative log-likelihood in `eta`, up to terms free
/// of `eta`: binomial logit `wt (softplus(eta) - y eta)` (from
/// `-dbinom(y wt, wt, plogis(eta), log = TRUE)`), poisson log
/// `wt (exp(eta) - y eta)` (from `-wt dpois(y, exp(eta), log = TRUE)`).
fn neg_loglik(family: &str, eta: &Array, y: &Array, wt: &Array) -> Result<Array> {
    let mean_part = match family {
        "binomial" => eta.softplus()?,
        "poisson" => eta.exp()?,
        other => panic!("no array form for {other}"),
    };
    (wt * &(mean_part - &(y * eta)?)?)?.sum()
}

/// glmbayes's `qf` at `b` (`[l2, 1]`) up to a constant:
/// `0.5 (b - mu)' P (b - mu) + sum neg_loglik(X b + alpha)`.
fn neg_log_posterior(family: &str, f: &BTreeMap<String, Array>, b: &Array) -> Result<Array> {
    let d = (b - &f["mu"])?;
    let prior = ((&d * &f["P"].matmul(&d)?)?.sum()? * 0.5)?;
    let eta = (f["X"].matmul(b)? + &f["alpha"])?;
    prior + &neg_loglik(family, &eta, &f["y"], &f["wt"])?
}

#[test]
fn grad_of_the_negative_log_posterior_equals_glm_grid_gradient() {
    for (id, want_family) in [("1", "binomial"), ("5", "poisson")] {
        let (family, link, f) = case(id);
        assert_eq!(family, want_family);
        let spec = GlmSpec::parse(&family, Some(&link), None).unwrap();
        let vector = |a: &Array| a.reshape([a.numel()]).unwrap();
        let grid = glm_grid(
            &f["X"],
            &vector(&f["y"]),
            &vector(&f["wt"]),
            &vector(&f["alpha"]),
            &vector(&f["mu"]),
            &f["P"],
            &f["B"],
            &spec,
        )
        .unwrap();
        let analytic = grid.gradient.to_vec::<f64>().unwrap();
        let qf = grid.qf.to_vec::<f64>().unwrap();
        let (l2, m1) = (f["B"].dims()[0], f["B"].dims()[1]);
        let (mut worst, mut values) = (0.0f64, Vec::new());
        for j in 0..m1 {
            let b = f["B"].cols(j..j + 1).unwrap();
            let (value, g) =
                autodiff::value_and_grad(|a| neg_log_posterior(&family, &f, &a[0]), &[b]).unwrap();
            values.push(value.item().unwrap());
            let g = g[0].to_vec::<f64>().unwrap();
            let want = &analytic[j * l2..(j + 1) * l2];
            let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            for k in 0..l2 {
                let diff = (g[k] - want[k]).abs() / scale;
                worst = worst.max(diff);
                assert!(
                    diff <= 1e-10,
                    "{family}({link}) point {j} coefficient {k}: grad {} glm_grid {}",
                    g[k],
                    want[k]
                );
            }
        }
        // The values differ from qf by one constant (the terms free of eta).
        let offset = qf[0] - values[0];
        for j in 1..m1 {
            let rel = (values[j] + offset - qf[j]).abs() / qf[j].abs();
            assert!(
                rel <= 1e-12,
                "{family} qf[{j}]: {} vs {}",
                values[j] + offset,
                qf[j]
            );
        }
        eprintln!("{family}({link}): autodiff gradient vs glm_grid, worst {worst:.1e} (relative to the column's largest entry)");
    }
}

#[test]
fn logistic_regression_trained_with_adam_reaches_the_glm_estimate() {
    let (family, link, f) = case("1");
    assert_eq!((family.as_str(), link.as_str()), ("binomial", "logit"));
    let r_beta = f["beta_hat"].to_vec::<f64>().unwrap();
    let vector = |a: &Array| a.reshape([a.numel()]).unwrap();
    let spec = GlmSpec::parse("binomial", Some("logit"), None).unwrap();
    let irls = mle(
        &f["X"],
        &vector(&f["y"]),
        &vector(&f["wt"]),
        &vector(&f["alpha"]),
        &spec,
    )
    .unwrap();
    let irls_beta = irls.beta.to_vec::<f64>().unwrap();

    // The mean over observations of the weighted binomial negative
    // log-likelihood of the model's linear predictor plus the offsets.
    let n = f["X"].dims()[0] as f64;
    let loss = |m: &nn::Bound<'_, Linear>, io: &[Array]| {
        let eta = (m.forward(&io[0])? + &io[3])?;
        neg_loglik("binomial", &eta, &io[1], &io[2])? / n
    };
    let inputs = [
        f["X"].clone(),
        f["y"].clone(),
        f["wt"].clone(),
        f["alpha"].clone(),
    ];
    let mut model = Linear::new(3, 1, false, 11).unwrap();
    // Adam with an exponentially decaying learning rate: steps of about
    // the learning rate, which shrinks below the tolerance.
    let mut opt = Adam::new(0.05).unwrap();
    let steps = 2500;
    for t in 0..steps {
        opt.set_learning_rate(0.05 * 0.994f64.powi(t)).unwrap();
        nn::train_step(&mut model, loss, &mut opt, &inputs).unwrap();
    }
    let beta = model.weight().to_vec::<f64>().unwrap();
    let diff = |reference: &[f64]| {
        beta.iter()
            .zip(reference)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
    };
    let (vs_r, vs_irls) = (diff(&r_beta), diff(&irls_beta));
    eprintln!("Adam {beta:?}; R glm {r_beta:?}; max |Adam - R| {vs_r:.1e}, max |Adam - IRLS| {vs_irls:.1e}");
    assert!(vs_r <= 1e-6, "Adam {beta:?} vs R's glm {r_beta:?}");
    assert!(vs_irls <= 1e-6, "Adam {beta:?} vs IRLS {irls_beta:?}");
}
