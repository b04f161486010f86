//! The R package's Rust layer on each GPU backend, without R (issue 17's
//! device check): `r/gearbox/src/rust/src/api.rs`, the code every R
//! function runs between R's values and R's results, is included here and
//! driven the way the R wrappers drive it (R matrices in as column-major
//! doubles, R's operator names, recycling rules, glmbayes's grid layout,
//! nmath by name), forced onto CUDA, wgpu and OpenCL in turn and compared
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

type Case = (&'static str, f64, Box<dyn Fn() -> Result<Vec<f64>>>);

fn cases() -> Vec<Case> {
    let m = |r: usize, c: usize, seed: u64| {
        api::from_values(values(r * c, seed), vec![r, c], Precision::Strict)
    };
    let (r, c) = (2048, 384);
    vec![
        (
            "Ops + * > on matrices",
            1e-15,
            Box::new(move || {
                let (a, b) = (m(r, c, 1)?, m(r, c, 2)?);
                let s = api::r_binary(&api::r_binary(&a, &b, "+")?, &b, "*")?;
                api::to_values(&api::r_binary(&s, &a, ">")?)
            }),
        ),
        (
            "Ops with a scalar, Math exp",
            1e-15,
            Box::new(move || {
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
            Box::new(move || {
                let a = m(r, c, 4)?;
                let mut v = api::to_values(&api::r_reduce(&a, "sum", None)?)?;
                v.extend(api::to_values(&api::r_reduce(&a, "mean", Some(0))?)?);
                Ok(v)
            }),
        ),
        (
            "%*%, crossprod",
            1e-13,
            Box::new(move || {
                let (a, b) = (m(r, c, 5)?, m(c, 256, 6)?);
                let mut v = api::to_values(&a.matmul(&b)?)?;
                v.extend(api::to_values(&a.crossprod(&a)?)?);
                Ok(v)
            }),
        ),
        (
            "solve, chol",
            1e-11,
            Box::new(move || {
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
            Box::new(move || {
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
            "gb_dnorm, gb_pbeta (nmath by name)",
            1e-13,
            Box::new(|| {
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

/// The largest difference relative to the largest value (normwise: sums
/// and products that cancel to near zero are judged against the scale of
/// the result, as their error bounds are).
fn worst(got: &[f64], want: &[f64]) -> f64 {
    let scale = want
        .iter()
        .fold(0.0f64, |m, w| m.max(w.abs()))
        .max(f64::MIN_POSITIVE);
    got.iter()
        .zip(want)
        .map(|(g, w)| if g == w { 0.0 } else { (g - w).abs() / scale })
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
            let want = on_cpu(&case)?;
            let before = metrics().of(backend).compute.count;
            let got = case()?;
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
