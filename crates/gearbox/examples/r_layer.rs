//! The R package's Rust layer on each GPU backend, without R (issue 17's
//! device check): `r/gearbox/src/rust/src/api.rs`, the code every R
//! function runs between R's values and R's results, is included here and
//! driven the way the R wrappers drive it (R matrices in as column-major
//! doubles, R's operator names, recycling rules, glmbayes's grid layout,
//! nmath by name, `[`, many_lm, resident handles, gradients, summaries
//! with `na.rm = TRUE` and `var`'s covariance matrix), forced onto CUDA,
//! wgpu and OpenCL in turn and compared
//! with the same calls on the CPU. Prints one line per case and backend;
//! exits non-zero on a difference past the case's tolerance.
//!
//! Run: `cargo run --release -p gearbox --example r_layer` (on the device:
//! `scripts/gpu.sh` carries it).

#[path = "../../../r/gearbox/src/rust/src/api.rs"]
#[allow(dead_code)]
mod api;

use gearbox::runtime::bench::{force, healthy};
use gearbox::runtime::metrics;
use gearbox::runtime::testing::gpu::on_cpu;
use gearbox::{Array, Precision, Result};

/// Reproducible values in (-1, 1) (an LCG), as R would hand them over.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// `values` with NaN (R's `NA`) at every `every`-th position from `first`.
fn with_nans(mut v: Vec<f64>, first: usize, every: usize) -> Vec<f64> {
    for x in v.iter_mut().skip(first).step_by(every) {
        *x = f64::NAN;
    }
    v
}

/// A case: its name, its tolerance, and the calls, given the backend the
/// run is forced onto ("cpu" for the reference; resident handles name it).
type Case = (&'static str, f64, Box<dyn Fn(&str) -> Result<Vec<f64>>>);

fn cases() -> Vec<Case> {
    let m = |r: usize, c: usize, seed: u64| {
        api::from_values(values(r * c, seed), vec![r, c], Precision::Strict)
    };
    let (r, c) = (2048, 384);
    vec![
        (
            "Ops + * > on matrices",
            1e-15,
            Box::new(move |_| {
                let (a, b) = (m(r, c, 1)?, m(r, c, 2)?);
                let s = api::r_binary(&api::r_binary(&a, &b, "+")?, &b, "*")?;
                api::to_values(&api::r_binary(&s, &a, ">")?)
            }),
        ),
        (
            "Ops with a scalar, Math exp",
            1e-15,
            Box::new(move |_| {
                let a = m(r, c, 3)?;
                api::to_values(&api::r_math(
                    &api::r_binary_scalar(&a, 2.0, "^", false)?,
                    "exp",
                )?)
            }),
        ),
        (
            "Summary sum, colMeans",
            1e-13,
            Box::new(move |_| {
                let a = m(r, c, 4)?;
                let mut v = api::to_values(&api::r_reduce(&a, "sum", None)?)?;
                v.extend(api::to_values(&api::r_reduce(&a, "mean", Some(0))?)?);
                Ok(v)
            }),
        ),
        (
            "sum, prod, min, max, mean, sd, colSums, rowMeans with na.rm = TRUE",
            1e-13,
            Box::new(move |_| {
                let keep = api::Keep::NotNan;
                let a = api::from_values(
                    with_nans(values(r * c, 21), 5, 97),
                    vec![r, c],
                    Precision::Strict,
                )?;
                let mut v = Vec::new();
                for name in ["sum", "mean", "sd", "min", "max"] {
                    v.extend(api::to_values(&api::r_reduce_kept(&a, name, None, keep)?)?);
                }
                // A product of values near 1 (not 2048 x 384 of them in (-1, 1)).
                let column = api::r_subset(&a, None, Some(&[3]))?;
                let near_one = api::r_binary_scalar(
                    &api::r_binary_scalar(&column, 0.01, "*", false)?,
                    1.0,
                    "+",
                    false,
                )?;
                v.extend(api::to_values(&api::r_reduce_kept(
                    &near_one, "prod", None, keep,
                )?)?);
                v.extend(api::to_values(&api::r_reduce_kept(
                    &a,
                    "sum",
                    Some(0),
                    keep,
                )?)?);
                v.extend(api::to_values(&api::r_reduce_kept(
                    &a,
                    "mean",
                    Some(1),
                    keep,
                )?)?);
                v.push(api::r_count_kept(&a, keep)?);
                let finite = api::Keep::Finite;
                v.extend(api::to_values(&api::r_reduce_kept(
                    &a, "max", None, finite,
                )?)?);
                Ok(v)
            }),
        ),
        (
            "var: covariance matrices (everything, na.or.complete, complete.obs with y)",
            1e-12,
            Box::new(move |_| {
                let (k, p) = (r, 96);
                let a = api::from_values(values(k * p, 22), vec![k, p], Precision::Strict)?;
                // NaN in a few rows only: most rows stay complete.
                let holes = api::from_values(
                    with_nans(values(k * p, 23), 17, 2 * k + 3),
                    vec![k, p],
                    Precision::Strict,
                )?;
                let y = api::from_values(
                    with_nans(values(k * 8, 24), 40, 999),
                    vec![k, 8],
                    Precision::Strict,
                )?;
                let mut v = api::to_values(&api::r_cov(&a, None, api::CovUse::Everything)?)?;
                v.extend(api::to_values(&api::r_cov(
                    &holes,
                    None,
                    api::CovUse::NaOrComplete,
                )?)?);
                v.extend(api::to_values(&api::r_cov(
                    &holes,
                    Some(&y),
                    api::CovUse::CompleteObs,
                )?)?);
                Ok(v)
            }),
        ),
        (
            "%*%, crossprod",
            1e-13,
            Box::new(move |_| {
                let (a, b) = (m(r, c, 5)?, m(c, 256, 6)?);
                let mut v = api::to_values(&a.matmul(&b)?)?;
                v.extend(api::to_values(&a.crossprod(&a)?)?);
                Ok(v)
            }),
        ),
        (
            "solve, chol",
            1e-11,
            Box::new(move |_| {
                let a = m(r, c, 7)?;
                let spd = (a.crossprod(&a)? + &Array::eye(c)?)?;
                let mut v = api::to_values(&api::eager(spd.solve(&m(c, 3, 8)?))?)?;
                v.extend(api::to_values(&api::eager(spd.cholesky())?)?);
                Ok(v)
            }),
        ),
        (
            "gb_glm_grid binomial logit",
            1e-13,
            Box::new(move |_| {
                let (l1, l2, m1) = (4000, 4, 2000);
                let mut x = values(l1 * l2, 9);
                x[..l1].fill(1.0);
                let y: Vec<f64> = values(l1, 10).iter().map(|v| f64::from(*v > 0.0)).collect();
                let arr = |v: Vec<f64>, d: Vec<usize>| Array::from_vec(d, v);
                let p: Vec<f64> = (0..l2 * l2)
                    .map(|i| if i % (l2 + 1) == 0 { 2.0 } else { 0.0 })
                    .collect();
                let (qf, grad) = api::glm_grid_r(
                    "binomial",
                    Some("logit"),
                    None,
                    &arr(
                        values(l2 * m1, 11).iter().map(|v| v * 0.3).collect(),
                        vec![l2, m1],
                    )?,
                    &arr(y, vec![l1, 1])?,
                    &arr(x, vec![l1, l2])?,
                    &arr(vec![0.1; l2], vec![l2, 1])?,
                    &arr(p, vec![l2, l2])?,
                    &arr(vec![0.0; l1], vec![l1, 1])?,
                    &arr(vec![1.0; l1], vec![l1, 1])?,
                )?;
                let mut v = api::to_values(&qf)?;
                v.extend(api::to_values(&grad)?);
                Ok(v)
            }),
        ),
        (
            "[ by runs (sliced) and scattered (gathered), then Ops",
            1e-15,
            Box::new(move |_| {
                let a = m(r, c, 14)?;
                let rows: Vec<usize> = (10..500).chain(700..900).chain([3, 3, 2]).collect();
                let cols: Vec<usize> = (0..c).step_by(7).collect();
                let runs = api::r_subset(&a, Some(&rows), Some(&[5, 6, 7, 100]))?;
                let scattered = api::r_subset(&a, Some(&rows[..50]), Some(&cols))?;
                let mut v = api::to_values(&api::r_binary_scalar(&runs, 2.0, "*", false)?)?;
                v.extend(api::to_values(&api::r_binary_scalar(
                    &scattered, 1.0, "+", false,
                )?)?);
                Ok(v)
            }),
        ),
        (
            "gb_many_lm (coefficients, standard errors, sigma)",
            1e-10,
            Box::new(move |backend| {
                // A fit runs where its responses live: on the device once
                // they are there (a small fit of host data stays on the host).
                let (x, mut y) = (m(4000, 6, 15)?, m(4000, 96, 16)?);
                if backend != "cpu" {
                    y = y.to_device(backend)?;
                }
                let fit = api::many_lm_r(&x, &y, true, Vec::new())?;
                let mut v = api::to_values(&fit.coefficients)?;
                v.extend(api::to_values(&fit.std_errors)?);
                v.extend(api::to_values(&fit.sigma)?);
                Ok(v)
            }),
        ),
        (
            "resident_handle, gb_ewise_inplace, gb_sweep_inplace",
            1e-15,
            Box::new(move |backend| {
                let (a, b) = (m(r, c, 17)?, m(r, c, 18)?);
                let h = gearbox::resident::resident_handle(&a, backend)?;
                h.ewise_inplace(api::binary_op("*")?, &b)?;
                let stats = api::r_reduce(&b, "mean", Some(0))?;
                h.sweep_inplace(&stats, api::sweep_axis(2)?, api::binary_op("-")?)?;
                h.ewise_inplace(api::binary_op("^")?, 2.0)?;
                api::to_values(&h.snapshot()?)
            }),
        ),
        (
            "gb_value_grad of sum(exp(x) * y) + mean(x^2)",
            1e-12,
            Box::new(move |_| {
                let f = |xs: &[Array]| -> Result<Array> {
                    let e = api::r_binary(&api::r_math(&xs[0], "exp")?, &xs[1], "*")?;
                    let s = api::r_reduce(&e, "sum", None)?;
                    let squares = api::r_binary_scalar(&xs[0], 2.0, "^", false)?;
                    api::r_binary(&s, &api::r_reduce(&squares, "mean", None)?, "+")
                };
                let (value, grads) =
                    gearbox::autodiff::value_and_grad(f, &[m(r, c, 19)?, m(r, c, 20)?])?;
                let mut v = api::to_values(&value)?;
                for g in grads {
                    v.extend(api::to_values(&g)?);
                }
                Ok(v)
            }),
        ),
        (
            "gb_dnorm, gb_pbeta (nmath by name)",
            1e-13,
            Box::new(|_| {
                let n = 1 << 16;
                let x: Vec<f64> = values(n, 12).iter().map(|v| v * 4.0).collect();
                let mut v = api::nmath("dnorm", vec![x, vec![0.5; n], vec![2.0; n]], &[false])?;
                let q: Vec<f64> = values(n, 13).iter().map(|v| v.abs()).collect();
                v.extend(api::nmath(
                    "pbeta",
                    vec![q, vec![2.0; n], vec![3.5; n]],
                    &[true, false],
                )?);
                Ok(v)
            }),
        ),
    ]
}

/// The largest difference relative to the largest finite value (normwise:
/// sums and products that cancel to near zero are judged against the
/// scale of the result, as their error bounds are). Equal values (NaN
/// with NaN too) differ by 0; a NaN or infinity on one side only is an
/// infinite difference.
fn worst(got: &[f64], want: &[f64]) -> f64 {
    let scale = want
        .iter()
        .filter(|w| w.is_finite())
        .fold(0.0f64, |m, w| m.max(w.abs()))
        .max(f64::MIN_POSITIVE);
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            if g == w || (g.is_nan() && w.is_nan()) {
                0.0
            } else if !g.is_finite() || !w.is_finite() {
                f64::INFINITY
            } else {
                (g - w).abs() / scale
            }
        })
        .fold(0.0, f64::max)
}

fn main() -> Result<()> {
    gearbox::init();
    let mut failed = 0;
    for backend in ["cuda", "wgpu", "opencl"] {
        force(Some(backend), true);
        let Some(b) = healthy(backend) else {
            println!("{backend}: no usable device, skipped");
            continue;
        };
        let has_nmath = b.capabilities().scalar_fns;
        for (name, tol, case) in cases() {
            let want = on_cpu(|| case("cpu"))?;
            let before = metrics().of(backend).compute.count;
            let got = case(backend)?;
            let ran = metrics().of(backend).compute.count > before;
            let err = worst(&got, &want);
            // A backend without R's nmath functions (wgpu) declines those
            // kernels by design: the CPU computes them.
            let declined = name.contains("nmath") && !has_nmath;
            let ok = got.len() == want.len() && err <= tol && (ran || declined);
            failed += usize::from(!ok);
            println!(
                "{backend}: {name}: {} values, worst error {err:.1e} of the largest value (tolerance {tol:.0e}), ran on {backend}: {ran}{}{}",
                got.len(),
                if declined { " (declined: no nmath functions; the CPU ran it)" } else { "" },
                if ok { "" } else { "  FAILED" }
            );
        }
    }
    force(None, true);
    if failed > 0 {
        eprintln!("{failed} case(s) failed");
        std::process::exit(1);
    }
    Ok(())
}
