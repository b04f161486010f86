//! `gearbox_core::nn`: the Rmlx example (SGD on a linear model, float32
//! and float64), each optimizer against its update written out by hand,
//! each loss against its formula and its gradient against central finite
//! differences, layer and activation values, argument errors, and the
//! parameters staying evaluated leaves over many steps.

use gearbox_core::nn::{
    self, Activation, Adam, AdamW, Linear, Module, Optimizer, Params, Sequential, Sgd,
};
use gearbox_core::{autodiff, Array, DType, Error, Precision, Result};

fn vec1(v: &[f64]) -> Array {
    Array::from_vec([v.len()], v.to_vec()).unwrap()
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}[{i}]: got {g:e}, want {w:e}"
        );
    }
}

/// The Rmlx example: `Linear(4, 1, no bias)`, SGD lr 0.1, 50 steps of
/// mean squared error on 256 rows of standard normal features with
/// `y = X w`, `w = (2, -1, 0.5, 0.25)`. Returns the losses and the
/// learned weights.
fn rmlx_example(dtype: DType, precision: Precision) -> Result<(Vec<f64>, Vec<f64>)> {
    let cast = |a: Array| a.astype(dtype)?.with_precision(precision);
    let x = Array::randn([256, 4], 2024)?;
    let w_true = Array::from_vec([4, 1], vec![2.0, -1.0, 0.5, 0.25])?;
    let y = cast(x.matmul(&w_true)?)?;
    let x = cast(x)?;
    Array::eval_all(&[&x, &y])?;
    let mut model = Linear::new(4, 1, false, 7)?;
    model.cast(dtype, precision)?;
    let mut opt = Sgd::new(0.1)?;
    let mut losses = Vec::new();
    for _ in 0..50 {
        let loss = nn::train_step(
            &mut model,
            |m, io| nn::mse(&m.forward(&io[0])?, &io[1]),
            &mut opt,
            &[x.clone(), y.clone()],
        )?;
        assert_eq!(loss.dtype(), dtype);
        losses.push(loss.item()?);
    }
    assert_eq!(model.weight().dtype(), dtype);
    assert_eq!(model.weight().precision(), precision);
    Ok((losses, model.weight().to_f64_vec()?))
}

#[test]
fn rmlx_linear_regression_in_fast_and_strict_precision() {
    let truth = [2.0, -1.0, 0.5, 0.25];
    for (dtype, precision) in [
        (DType::F32, Precision::Fast),
        (DType::F64, Precision::Strict),
    ] {
        let (losses, w) = rmlx_example(dtype, precision).unwrap();
        for (i, pair) in losses.windows(2).enumerate() {
            assert!(
                pair[1] < pair[0],
                "{precision}: loss rose at step {}: {} -> {}",
                i + 1,
                pair[0],
                pair[1]
            );
        }
        for (k, (got, want)) in w.iter().zip(truth).enumerate() {
            assert!(
                (got - want).abs() < 1e-2,
                "{precision}: w[{k}] = {got}, truth {want}"
            );
        }
        eprintln!(
            "{precision}: loss {:.4e} -> {:.4e}, weights {w:?}",
            losses[0], losses[49]
        );
    }
}

/// Runs two updates of `opt` on `p` with the gradients `g1`, `g2`.
fn two_steps(opt: &mut dyn Optimizer, p: &[f64], g1: &[f64], g2: &[f64]) -> Vec<f64> {
    let mut params = Params::new();
    params.insert("w", vec1(p));
    for g in [g1, g2] {
        let mut grads = Params::new();
        grads.insert("w", vec1(g));
        params = opt.update(&params, &grads).unwrap();
        params.eval().unwrap();
    }
    params.get("w").unwrap().to_vec::<f64>().unwrap()
}

const P0: [f64; 3] = [1.0, -2.0, 0.5];
const G1: [f64; 3] = [0.3, -0.1, 2.0];
const G2: [f64; 3] = [-0.2, 0.4, 1.5];

#[test]
fn sgd_with_momentum_weight_decay_and_nesterov_matches_the_formula() {
    let (lr, mu, wd) = (0.1, 0.9, 0.01);
    for nesterov in [false, true] {
        let mut opt = Sgd::new(lr)
            .unwrap()
            .with_momentum(mu)
            .unwrap()
            .with_weight_decay(wd)
            .unwrap()
            .with_nesterov(nesterov)
            .unwrap();
        let got = two_steps(&mut opt, &P0, &G1, &G2);
        let want: Vec<f64> = (0..3)
            .map(|i| {
                let mut p = P0[i];
                let mut v = 0.0;
                for g in [G1[i], G2[i]] {
                    let g = g + wd * p;
                    v = mu * v + g;
                    let step = if nesterov { g + mu * v } else { v };
                    p -= lr * step;
                }
                p
            })
            .collect();
        close(&got, &want, 1e-15, &format!("sgd nesterov={nesterov}"));
        assert_eq!(opt.state().names(), vec!["velocity.w"]);
    }
    // Plain SGD keeps no state.
    let mut plain = Sgd::new(0.5).unwrap();
    let got = two_steps(&mut plain, &P0, &G1, &G2);
    let want: Vec<f64> = (0..3).map(|i| P0[i] - 0.5 * G1[i] - 0.5 * G2[i]).collect();
    close(&got, &want, 1e-15, "plain sgd");
    assert!(plain.state().is_empty());
}

/// Two Adam steps by the formula, with decoupled decay `wd` (0 for Adam).
fn adam_by_hand(lr: f64, b1: f64, b2: f64, eps: f64, wd: f64) -> Vec<f64> {
    (0..3)
        .map(|i| {
            let (mut p, mut m, mut v) = (P0[i], 0.0, 0.0);
            for (t, g) in [(1, G1[i]), (2, G2[i])] {
                m = b1 * m + (1.0 - b1) * g;
                v = b2 * v + (1.0 - b2) * g * g;
                let m_hat = m / (1.0 - b1.powi(t));
                let v_hat = v / (1.0 - b2.powi(t));
                p = p * (1.0 - lr * wd) - lr * m_hat / (v_hat.sqrt() + eps);
            }
            p
        })
        .collect()
}

#[test]
fn adam_and_adamw_match_the_formula() {
    let mut adam = Adam::new(0.01)
        .unwrap()
        .with_betas(0.8, 0.99)
        .unwrap()
        .with_eps(1e-6)
        .unwrap();
    let got = two_steps(&mut adam, &P0, &G1, &G2);
    close(
        &got,
        &adam_by_hand(0.01, 0.8, 0.99, 1e-6, 0.0),
        1e-14,
        "adam",
    );
    assert_eq!(adam.steps(), 2);
    assert_eq!(adam.state().names(), vec!["m.w", "v.w"]);

    let mut defaults = Adam::new(0.001).unwrap();
    let got = two_steps(&mut defaults, &P0, &G1, &G2);
    close(
        &got,
        &adam_by_hand(0.001, 0.9, 0.999, 1e-8, 0.0),
        1e-14,
        "adam defaults",
    );

    let mut adamw = AdamW::new(0.01).unwrap().with_weight_decay(0.1).unwrap();
    let got = two_steps(&mut adamw, &P0, &G1, &G2);
    close(
        &got,
        &adam_by_hand(0.01, 0.9, 0.999, 1e-8, 0.1),
        1e-14,
        "adamw",
    );
    assert_eq!(adamw.steps(), 2);

    // The default decay is 0.01.
    let mut adamw = AdamW::new(0.01).unwrap();
    let got = two_steps(&mut adamw, &P0, &G1, &G2);
    close(
        &got,
        &adam_by_hand(0.01, 0.9, 0.999, 1e-8, 0.01),
        1e-14,
        "adamw default decay",
    );
}

#[test]
fn optimizers_keep_the_parameters_dtype_and_precision() {
    let p = vec1(&P0)
        .astype(DType::F32)
        .unwrap()
        .with_precision(Precision::Fast)
        .unwrap();
    let g = vec1(&G1).astype(DType::F32).unwrap();
    let (mut params, mut grads) = (Params::new(), Params::new());
    params.insert("w", p);
    grads.insert("w", g);
    let opts: Vec<Box<dyn Optimizer>> = vec![
        Box::new(Sgd::new(0.1).unwrap().with_momentum(0.5).unwrap()),
        Box::new(Adam::new(0.1).unwrap()),
        Box::new(AdamW::new(0.1).unwrap()),
    ];
    for mut opt in opts {
        let new = opt.update(&params, &grads).unwrap();
        for (name, a) in new.iter().chain(opt.state().iter()) {
            assert_eq!(a.dtype(), DType::F32, "{name}");
            assert_eq!(a.precision(), Precision::Fast, "{name}");
        }
    }
}

#[test]
fn bad_hyperparameters_are_errors_naming_the_argument() {
    let message = |r: Result<()>| match r {
        Err(e @ Error::InvalidArgument { .. }) => e.to_string(),
        other => panic!("expected an invalid argument, got {other:?}"),
    };
    let cases: Vec<(Result<()>, &str)> = vec![
        (Sgd::new(-0.1).map(drop), "lr"),
        (Sgd::new(f64::NAN).map(drop), "lr"),
        (
            Sgd::new(0.1).and_then(|s| s.with_momentum(1.0)).map(drop),
            "momentum",
        ),
        (
            Sgd::new(0.1).and_then(|s| s.with_momentum(-0.5)).map(drop),
            "momentum",
        ),
        (
            Sgd::new(0.1)
                .and_then(|s| s.with_weight_decay(-1.0))
                .map(drop),
            "weight_decay",
        ),
        (
            Sgd::new(0.1).and_then(|s| s.with_nesterov(true)).map(drop),
            "nesterov",
        ),
        (Adam::new(-1e-3).map(drop), "lr"),
        (
            Adam::new(1e-3)
                .and_then(|a| a.with_betas(1.0, 0.999))
                .map(drop),
            "beta1",
        ),
        (
            Adam::new(1e-3)
                .and_then(|a| a.with_betas(0.9, -0.1))
                .map(drop),
            "beta2",
        ),
        (
            Adam::new(1e-3).and_then(|a| a.with_eps(0.0)).map(drop),
            "eps",
        ),
        (
            AdamW::new(1e-3)
                .and_then(|a| a.with_weight_decay(-0.1))
                .map(drop),
            "weight_decay",
        ),
        (
            AdamW::new(1e-3)
                .and_then(|a| a.with_betas(0.9, 1.5))
                .map(drop),
            "beta2",
        ),
        (
            Adam::new(1e-3).and_then(|mut a| a.set_learning_rate(-1.0)),
            "lr",
        ),
    ];
    for (r, name) in cases {
        let m = message(r);
        assert!(m.contains(&format!("invalid argument {name} =")), "{m}");
    }
    let m = message(
        AdamW::new(1e-3)
            .and_then(|a| a.with_betas(1.0, 0.9))
            .map(drop),
    );
    assert!(m.starts_with("AdamW"), "{m}");
}

#[test]
fn shape_mismatches_are_errors() {
    let layer = Linear::new(4, 2, true, 1).unwrap();
    let e = layer
        .forward(&Array::ones([3, 5], DType::F64).unwrap())
        .unwrap_err();
    assert!(
        e.to_string().contains("Linear(4, 2) takes inputs [n, 4]"),
        "{e}"
    );
    assert!(layer
        .forward(&Array::ones([2, 3, 4], DType::F64).unwrap())
        .is_err());
    // Updates must keep names and shapes.
    let mut layer = layer;
    let mut bad = Params::new();
    bad.insert("weight", Array::zeros([2, 5], DType::F64).unwrap());
    let e = layer.update(&bad).unwrap_err();
    assert!(
        e.to_string().contains("\"weight\" has shape [2 x 4]"),
        "{e}"
    );
    let mut bad = Params::new();
    bad.insert("kernel", Array::zeros([2, 4], DType::F64).unwrap());
    let e = layer.update(&bad).unwrap_err();
    assert!(e.to_string().contains("kernel"), "{e}");
    // Losses take one shape, no broadcasting.
    let p = Array::zeros([4, 1], DType::F64).unwrap();
    let t = Array::zeros([4], DType::F64).unwrap();
    for r in [
        nn::mse(&p, &t),
        nn::binary_cross_entropy_with_logits(&p, &t),
        nn::poisson_nll(&p, &t),
        nn::softmax_cross_entropy(&p, &t),
    ] {
        assert!(matches!(r, Err(Error::ShapeMismatch { .. })), "{r:?}");
    }
    // Gradients must match their parameters.
    let mut params = Params::new();
    params.insert("w", vec1(&P0));
    let mut grads = Params::new();
    grads.insert("w", vec1(&[1.0, 2.0]));
    assert!(Sgd::new(0.1).unwrap().update(&params, &grads).is_err());
    assert!(Adam::new(0.1)
        .unwrap()
        .update(&params, &Params::new())
        .is_err());
    assert!(Linear::new(0, 2, true, 1).is_err());
    assert!(nn::one_hot(&[0, 3], 3).is_err());
}

#[test]
fn linear_initialisation_is_seeded_uniform_within_one_over_sqrt_in() {
    let a = Linear::new(16, 8, true, 5).unwrap();
    let b = Linear::new(16, 8, true, 5).unwrap();
    let w = a.weight().to_vec::<f64>().unwrap();
    assert_eq!(w, b.weight().to_vec::<f64>().unwrap());
    assert_eq!(a.weight().dims(), &[8, 16]);
    assert_eq!(a.bias().unwrap().dims(), &[8]);
    let s = 0.25;
    let bias = a.bias().unwrap().to_vec::<f64>().unwrap();
    assert!(w.iter().chain(&bias).all(|v| (-s..s).contains(v)));
    assert!(w.iter().any(|v| *v < -s / 2.0) && w.iter().any(|v| *v > s / 2.0));
    assert_ne!(&w[..8], &bias[..], "weight and bias streams differ");
    assert!(a.weight().is_evaluated() && a.bias().unwrap().is_evaluated());
    assert!(Linear::new(16, 8, false, 5).unwrap().bias().is_none());
}

#[test]
fn linear_and_sequential_forward_values() {
    // W = [1 2; 3 4; 5 6] (out 3, in 2), b = (0.5, -1, 2).
    let w = Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]]).unwrap();
    let b = vec1(&[0.5, -1.0, 2.0]);
    let layer = Linear::from_weights(w, Some(b)).unwrap();
    let x = Array::from_rows(&[vec![1.0, -1.0], vec![0.0, 2.0]]).unwrap();
    let y = layer.forward(&x).unwrap();
    assert_eq!(y.dims(), &[2, 3]);
    // rows: (1,-1) -> (-1+0.5, -1-1, -1+2); (0,2) -> (4.5, 7, 14)
    assert_eq!(
        y.to_vec::<f64>().unwrap(),
        vec![-0.5, 4.5, -2.0, 7.0, 1.0, 14.0]
    );
    let v = layer.forward(&vec1(&[1.0, -1.0])).unwrap();
    assert_eq!(v.to_vec::<f64>().unwrap(), vec![-0.5, -2.0, 1.0]);

    let second =
        Linear::from_weights(Array::from_rows(&[vec![1.0, 1.0, 1.0]]).unwrap(), None).unwrap();
    let mlp = Sequential::new()
        .push(layer)
        .push(Activation::Relu)
        .push(second);
    assert_eq!(mlp.len(), 3);
    assert_eq!(
        mlp.parameters().names(),
        vec!["0.weight", "0.bias", "2.weight"]
    );
    // relu: (0, 0, 1) and (4.5, 7, 14); the sum of each row.
    assert_eq!(
        mlp.forward(&x).unwrap().to_vec::<f64>().unwrap(),
        vec![1.0, 25.5]
    );
}

#[test]
fn activations_match_their_formulas() {
    let xs = [-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 30.0];
    let x = vec1(&xs);
    let gelu = |v: f64| {
        0.5 * v * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v.powi(3))).tanh())
    };
    let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
    let softplus = |v: f64| v.max(0.0) + (-v.abs()).exp().ln_1p();
    let table: [(Activation, &dyn Fn(f64) -> f64); 5] = [
        (Activation::Relu, &|v: f64| v.max(0.0)),
        (Activation::Gelu, &gelu),
        (Activation::Tanh, &f64::tanh),
        (Activation::Sigmoid, &sigmoid),
        (Activation::Softplus, &softplus),
    ];
    for (act, f) in table {
        let want: Vec<f64> = xs.iter().map(|&v| f(v)).collect();
        close(
            &act.forward(&x).unwrap().to_vec::<f64>().unwrap(),
            &want,
            1e-15,
            &format!("{act:?}"),
        );
        assert!(act.parameters().is_empty());
    }
    // gelu(1) in the tanh form, and within 5e-4 of x Phi(x) at x = 1.5
    // (Phi(1.5) = 0.9331927987311419).
    assert!((nn::gelu(&vec1(&[1.0])).unwrap().item().unwrap() - 0.841_191_990_607_9).abs() < 1e-12);
    let g15 = nn::gelu(&vec1(&[1.5])).unwrap().item().unwrap();
    assert!((g15 - 1.5 * 0.933_192_798_731_141_9).abs() < 5e-4);
    // relu's derivative is 0 at 0 and 1 above.
    let g = autodiff::grad(|a| nn::relu(&a[0])?.sum(), &[vec1(&[-1.0, 0.0, 2.0])]).unwrap();
    assert_eq!(g[0].to_vec::<f64>().unwrap(), vec![0.0, 0.0, 1.0]);
}

/// Random values in `[lo, hi)` away from zero, `[rows, cols]`.
fn uniform(rows: usize, cols: usize, lo: f64, hi: f64, seed: u64) -> Array {
    let u = ((Array::rand([rows, cols], seed).unwrap() * (hi - lo)).unwrap() + lo).unwrap();
    u.eval().unwrap();
    u
}

/// The gradient of `loss(., target)` at `pred` by autodiff and by central
/// differences, compared.
fn check_gradient(
    name: &str,
    loss: fn(&Array, &Array) -> Result<Array>,
    pred: &Array,
    target: &Array,
) {
    let g = autodiff::grad(|a| loss(&a[0], target), std::slice::from_ref(pred)).unwrap();
    let g = g[0].to_vec::<f64>().unwrap();
    let base = pred.to_vec::<f64>().unwrap();
    let h = 1e-6;
    for i in 0..base.len() {
        let at = |d: f64| {
            let mut v = base.clone();
            v[i] += d;
            let p = Array::from_vec(pred.shape().clone(), v).unwrap();
            loss(&p, target).unwrap().item().unwrap()
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        assert!(
            (g[i] - fd).abs() <= 1e-7 * fd.abs().max(1e-2),
            "{name} d/dpred[{i}]: autodiff {} fd {fd}",
            g[i]
        );
    }
}

#[test]
fn losses_match_their_formulas_and_finite_differences() {
    let (n, k) = (5, 3);
    let pred = uniform(n, k, -2.0, 2.0, 11);
    let p = pred.to_vec::<f64>().unwrap();

    // mse
    let target = uniform(n, k, -1.0, 1.0, 12);
    let t = target.to_vec::<f64>().unwrap();
    let want = p.iter().zip(&t).map(|(a, b)| (a - b).powi(2)).sum::<f64>() / p.len() as f64;
    close(
        &[nn::mse(&pred, &target).unwrap().item().unwrap()],
        &[want],
        1e-14,
        "mse",
    );
    check_gradient("mse", nn::mse, &pred, &target);

    // binary cross-entropy with logits, against the log-sigmoid form
    let labels = uniform(n, k, 0.0, 1.0, 13);
    let y = labels.to_vec::<f64>().unwrap();
    let sig = |z: f64| 1.0 / (1.0 + (-z).exp());
    let want = -p
        .iter()
        .zip(&y)
        .map(|(z, y)| y * sig(*z).ln() + (1.0 - y) * (1.0 - sig(*z)).ln())
        .sum::<f64>()
        / p.len() as f64;
    let bce = nn::binary_cross_entropy_with_logits;
    close(
        &[bce(&pred, &labels).unwrap().item().unwrap()],
        &[want],
        1e-13,
        "bce",
    );
    check_gradient("bce", bce, &pred, &labels);
    // Stable for large logits: softplus(800) - 800 = 0, not Inf - Inf.
    let big = vec1(&[800.0, -800.0]);
    let v = bce(&big, &vec1(&[1.0, 0.0])).unwrap().item().unwrap();
    assert!(v.abs() < 1e-300, "{v}");

    // softmax cross-entropy, against -sum y log softmax per row
    let probs = nn::one_hot(&[0, 2, 1, 1, 0], k).unwrap();
    let soft = uniform(n, k, 0.1, 1.0, 14);
    let soft = (&soft / &soft.sum_axis(1).unwrap()).unwrap();
    for (what, target) in [("one-hot", probs), ("soft", soft)] {
        let t = target.to_vec::<f64>().unwrap();
        let mut want = 0.0;
        for i in 0..n {
            let row: Vec<f64> = (0..k).map(|j| p[i + j * n]).collect();
            let lse = row.iter().map(|z| z.exp()).sum::<f64>().ln();
            want -= (0..k).map(|j| t[i + j * n] * (row[j] - lse)).sum::<f64>();
        }
        want /= n as f64;
        let got = nn::softmax_cross_entropy(&pred, &target)
            .unwrap()
            .item()
            .unwrap();
        close(
            &[got],
            &[want],
            1e-14,
            &format!("softmax cross-entropy ({what})"),
        );
        check_gradient(
            "softmax cross-entropy",
            nn::softmax_cross_entropy,
            &pred,
            &target,
        );
    }
    // Large logits: the maximum is subtracted first.
    let huge = Array::from_rows(&[vec![1000.0, 0.0, -1000.0]]).unwrap();
    let got = nn::softmax_cross_entropy(&huge, &nn::one_hot(&[1], 3).unwrap())
        .unwrap()
        .item()
        .unwrap();
    assert!((got - 1000.0).abs() < 1e-9, "{got}");

    // poisson negative log-likelihood (without log y!)
    let counts = Array::from_vec(
        [n, k],
        (0..n * k).map(|i| (i % 4) as f64).collect::<Vec<_>>(),
    )
    .unwrap();
    let c = counts.to_vec::<f64>().unwrap();
    let want = p.iter().zip(&c).map(|(e, y)| e.exp() - y * e).sum::<f64>() / p.len() as f64;
    close(
        &[nn::poisson_nll(&pred, &counts).unwrap().item().unwrap()],
        &[want],
        1e-14,
        "poisson",
    );
    check_gradient("poisson", nn::poisson_nll, &pred, &counts);
}

#[test]
fn linear_gradients_match_finite_differences() {
    let layer = Linear::new(3, 2, true, 9).unwrap();
    let x = uniform(6, 3, -1.0, 1.0, 21);
    let t = uniform(6, 2, -1.0, 1.0, 22);
    let loss = |m: &nn::Bound<'_, Linear>, io: &[Array]| nn::mse(&m.forward(&io[0])?, &io[1]);
    let (value, grads) = nn::value_and_grad(&layer, loss, &[x.clone(), t.clone()]).unwrap();
    let params = layer.parameters();
    let h = 1e-6;
    for (name, p) in params.iter() {
        let g = grads.get(name).unwrap().to_vec::<f64>().unwrap();
        let base = p.to_vec::<f64>().unwrap();
        for i in 0..base.len() {
            let at = |d: f64| {
                let mut v = base.clone();
                v[i] += d;
                let mut moved = params.clone();
                moved.insert(name, Array::from_vec(p.shape().clone(), v).unwrap());
                nn::mse(&layer.forward_with(&moved, &x).unwrap(), &t)
                    .unwrap()
                    .item()
                    .unwrap()
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            assert!(
                (g[i] - fd).abs() <= 1e-7 * fd.abs().max(1e-2),
                "{name}[{i}]: {} vs {fd}",
                g[i]
            );
        }
    }
    let direct = nn::mse(&layer.forward(&x).unwrap(), &t)
        .unwrap()
        .item()
        .unwrap();
    assert_eq!(value.item().unwrap(), direct);
}

/// Every parameter and state array is an evaluated leaf (no pending graph
/// behind it).
fn assert_leaves(what: &str, params: &Params) {
    for (name, a) in params.iter() {
        assert!(a.is_evaluated(), "{what} {name} is pending");
        assert!(
            a.op().is_none() && a.inputs().is_empty(),
            "{what} {name} keeps a graph"
        );
    }
}

#[test]
fn parameters_stay_evaluated_leaves_over_many_steps() {
    let mut mlp = Sequential::new()
        .push(Linear::new(3, 16, true, 1).unwrap())
        .push(Activation::Gelu)
        .push(Linear::new(16, 16, true, 2).unwrap())
        .push(Activation::Tanh)
        .push(Linear::new(16, 1, true, 3).unwrap());
    let x = uniform(64, 3, -1.0, 1.0, 31);
    let y = ((x.sum_axis(1).unwrap().sin().unwrap()) * 0.5).unwrap();
    y.eval().unwrap();
    let mut opt = AdamW::new(0.01).unwrap();
    let loss = |m: &nn::Bound<'_, Sequential>, io: &[Array]| nn::mse(&m.forward(&io[0])?, &io[1]);
    let mut losses = Vec::new();
    for step in 0..300 {
        let l = nn::train_step(&mut mlp, loss, &mut opt, &[x.clone(), y.clone()]).unwrap();
        assert!(l.is_evaluated());
        losses.push(l.item().unwrap());
        if step % 50 == 0 {
            assert_leaves("parameter", &mlp.parameters());
            assert_leaves("state", &opt.state());
        }
    }
    assert_leaves("parameter", &mlp.parameters());
    assert_leaves("state", &opt.state());
    assert_eq!(opt.state().len(), 2 * mlp.parameters().len());
    assert!(
        losses[299] < 0.1 * losses[0],
        "loss {} -> {}",
        losses[0],
        losses[299]
    );
}

#[test]
fn train_step_with_classification_losses() {
    // Two well separated classes: logistic regression and a two-class softmax.
    let n = 40;
    let x = uniform(n, 2, -1.0, 1.0, 41);
    let xv = x.to_vec::<f64>().unwrap();
    let labels: Vec<usize> = (0..n)
        .map(|i| usize::from(xv[i] + xv[i + n] > 0.0))
        .collect();
    let y = Array::from_vec([n, 1], labels.iter().map(|&l| l as f64).collect::<Vec<_>>()).unwrap();
    let logistic = Linear::new(2, 1, true, 4).unwrap();
    let bce = |m: &nn::Bound<'_, Linear>, io: &[Array]| {
        nn::binary_cross_entropy_with_logits(&m.forward(&io[0])?, &io[1])
    };
    let (first, last) = train(logistic, bce, Adam::new(0.1).unwrap(), &[x.clone(), y], 100);
    assert!(last < 0.5 * first, "logistic: {first} -> {last}");

    let onehot = nn::one_hot(&labels, 2).unwrap();
    let softmax = Linear::new(2, 2, true, 5).unwrap();
    let opt = Sgd::new(0.5).unwrap().with_momentum(0.5).unwrap();
    let ce = |m: &nn::Bound<'_, Linear>, io: &[Array]| {
        nn::softmax_cross_entropy(&m.forward(&io[0])?, &io[1])
    };
    let (first, last) = train(softmax, ce, opt, &[x, onehot], 100);
    assert!(last < 0.5 * first, "softmax: {first} -> {last}");
}

/// The first and last losses of `steps` training steps.
fn train(
    mut model: Linear,
    loss: impl Fn(&nn::Bound<'_, Linear>, &[Array]) -> Result<Array> + Copy,
    mut opt: impl Optimizer,
    inputs: &[Array],
    steps: usize,
) -> (f64, f64) {
    let losses: Vec<f64> = (0..steps)
        .map(|_| {
            nn::train_step(&mut model, loss, &mut opt, inputs)
                .unwrap()
                .item()
                .unwrap()
        })
        .collect();
    (losses[0], losses[steps - 1])
}

#[test]
fn a_loss_that_leaves_the_graph_is_an_error() {
    let layer = Linear::new(2, 1, false, 1).unwrap();
    let x = Array::ones([3, 2], DType::F64).unwrap();
    let r = nn::value_and_grad(
        &layer,
        |m, io| {
            let out = m.forward(&io[0])?;
            let v = out.sum()?.item()?;
            Ok(Array::scalar(v))
        },
        &[x],
    );
    assert!(matches!(r, Err(Error::Autodiff { .. })), "{r:?}");
}

#[test]
fn the_softmax_gradient_needs_no_argmax() {
    // The row maximum is a constant to autodiff (its gradient cancels):
    // no argmax in the backward graph, which GPUs would send to the host.
    let z = Array::randn([6, 4], 3).unwrap();
    let t = nn::one_hot(&[0, 1, 2, 3, 0, 1], 4).unwrap();
    let g = autodiff::grad(|a| nn::softmax_cross_entropy(&a[0], &t), &[z]).unwrap();
    let ops: Vec<&str> = g[0]
        .pending_in_order()
        .iter()
        .filter_map(|a| a.op().map(|o| o.name()))
        .collect();
    assert!(!ops.is_empty(), "the gradient is lazy");
    assert!(!ops.contains(&"argmax"), "{ops:?}");
}
