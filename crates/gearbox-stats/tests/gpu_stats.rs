//! glm_grid and many_lm on a real GPU (CUDA, and OpenCL: pocl in CI)
//! against the host references: every
//! family and link (GEMM, the fused term/slope/column-sum kernel, GEMM) to
//! 1e-10 (OpenCL 1e-12), and many_lm against the CPU fit to 1e-10 (OpenCL
//! 1e-12). Prints `SKIP: <reason>` and passes where no usable device is
//! present (OpenCL: unless `GEARBOX_REQUIRE_OPENCL=1`).

mod common;

use common::gpu;
use gearbox_core::runtime::{
    fallback_log, fallback_log_reset, options, set_options, RuntimeOptions,
};
use gearbox_core::Array;
use gearbox_stats::glm::{glm_grid, glm_grid_reference, GlmProblem, GlmSpec};
use gearbox_stats::lm::{many_lm, LmOptions};

struct Rng(u64);
impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        (-2.0 * self.uniform().ln()).sqrt() * (std::f64::consts::TAU * self.uniform()).cos()
    }
}

fn max_rel(got: &[f64], want: &[f64]) -> f64 {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs() / w.abs().max(1e-3 * scale))
        .fold(0.0, f64::max)
}

#[test]
fn glm_grid_on_the_device_matches_the_reference() {
    let _serial = common::serial();
    if gpu() {
        glm_grid_matches_on("cuda", 1e-10);
    }
}

#[test]
fn glm_grid_on_opencl_matches_the_reference() {
    let _serial = common::serial();
    if common::opencl() {
        glm_grid_matches_on("opencl", 1e-12);
    }
}

/// Every family and link's grid on backend `backend` (forced) against the
/// host reference, to `tol` relative.
fn glm_grid_matches_on(backend: &str, tol: f64) {
    let (l1, l2, m1) = (3000, 5, 257);
    let mut rng = Rng(5);
    for (family, link, dispersion) in [
        ("binomial", "logit", None),
        ("binomial", "probit", None),
        ("binomial", "cloglog", None),
        ("quasibinomial", "logit", Some(1.7)),
        ("poisson", "log", None),
        ("quasipoisson", "log", Some(2.5)),
        ("gaussian", "identity", Some(0.8)),
        ("Gamma", "log", Some(0.4)),
    ] {
        let mut x: Vec<f64> = (0..l1 * l2).map(|_| rng.normal() * 0.5).collect();
        x[..l1].fill(1.0);
        let wt: Vec<f64> = (0..l1).map(|i| ((i % 4) + 1) as f64).collect();
        let y: Vec<f64> = (0..l1)
            .map(|i| match family {
                "binomial" | "quasibinomial" => {
                    (rng.uniform() * (wt[i] + 1.0)).floor().min(wt[i]) / wt[i]
                }
                "poisson" | "quasipoisson" => (rng.uniform() * 6.0).floor(),
                "gaussian" => rng.normal(),
                _ => rng.uniform() * 3.0 + 0.05,
            })
            .collect();
        let alpha: Vec<f64> = (0..l1).map(|_| 0.1 * rng.normal()).collect();
        let b: Vec<f64> = (0..l2 * m1).map(|_| 0.3 * rng.normal()).collect();
        let arr =
            |shape: &[usize], v: &Vec<f64>| Array::from_vec(shape.to_vec(), v.clone()).unwrap();
        let (xa, ya, wa, aa, ba) = (
            arr(&[l1, l2], &x),
            arr(&[l1], &y),
            arr(&[l1], &wt),
            arr(&[l1], &alpha),
            arr(&[l2, m1], &b),
        );
        let mu = arr(&[l2], &vec![0.1; l2]);
        let mut pv = vec![0.0; l2 * l2];
        for i in 0..l2 {
            pv[i * l2 + i] = 2.0;
            if i + 1 < l2 {
                pv[i * l2 + i + 1] = 0.5;
                pv[(i + 1) * l2 + i] = 0.5;
            }
        }
        let p = arr(&[l2, l2], &pv);
        let spec = GlmSpec::parse(family, Some(link), dispersion).unwrap();
        fallback_log_reset();
        let grid = glm_grid(&xa, &ya, &wa, &aa, &mu, &p, &ba, &spec).unwrap();
        assert_eq!(
            grid.gradient.device(),
            backend,
            "{family} {link}: gradient on {backend}"
        );
        assert!(fallback_log().is_empty(), "{family}: {:?}", fallback_log());
        let problem = GlmProblem::from_arrays("test", &xa, &ya, &wa, &aa, &mu, &p, &spec).unwrap();
        let (qf, grad) = glm_grid_reference(&problem, &b, m1);
        let (eq, eg) = (
            max_rel(&grid.qf.to_vec::<f64>().unwrap(), &qf),
            max_rel(&grid.gradient.to_vec::<f64>().unwrap(), &grad),
        );
        println!("{backend}: {family} {link}: qf {eq:.1e}, gradient {eg:.1e}");
        assert!(
            eq <= tol && eg <= tol,
            "{family} {link}: qf {eq:e}, gradient {eg:e}"
        );
    }
}

#[test]
fn many_lm_on_the_device_matches_the_cpu() {
    let _serial = common::serial();
    if !gpu() {
        return;
    }
    // A small host design (factored on the calling thread) with results
    // past HOST_TAIL_VALUES (the rest on the device), a large one that
    // lives on the device (factored there by cuSOLVER), and one on the
    // device whose few results are finished on the host (lm::tail).
    for (n, q, k, resident, results_on) in [
        (500, 6, 2000, false, "cuda"),
        (3000, 299, 40, true, "cuda"),
        (4096, 49, 3, true, "cpu"),
    ] {
        let x = Array::randn([n, q], 11).unwrap();
        let y = Array::randn([n, k], 12).unwrap();
        if resident {
            x.to_device("cuda").unwrap();
            y.to_device("cuda").unwrap();
        }
        compare_many_lm(&x, &y, results_on, &format!("{n} x {q} x {k}"), 1e-10);
    }
    // A NaN or Inf in a device design is refused with the host path's words.
    let (n, q) = (3000, 299);
    for bad in [f64::NAN, f64::INFINITY] {
        let mut values = Array::randn([n, q], 13).unwrap().to_vec::<f64>().unwrap();
        values[7 * n + 123] = bad;
        let host = Array::from_vec([n, q], values.clone()).unwrap();
        let y = Array::randn([n, 2], 14).unwrap();
        let want = many_lm(&host, &y, &LmOptions::default())
            .err()
            .unwrap()
            .to_string();
        let xd = Array::from_vec([n, q], values).unwrap();
        xd.to_device("cuda").unwrap();
        let got = many_lm(&xd, &y, &LmOptions::default())
            .err()
            .unwrap()
            .to_string();
        assert_eq!(got, want);
        assert!(got.contains("row 123, column 7"), "{got}");
    }
    println!("many_lm: a NaN or Inf in a device design names its row and column");
}

#[test]
fn many_lm_on_opencl_matches_the_cpu() {
    let _serial = common::serial();
    if !common::opencl() {
        return;
    }
    // A host design (factored on the calling thread): the residual and
    // p-value passes run on the device, the results live there.
    for (n, q, k) in [(500, 6, 2000), (1000, 4, 3000)] {
        let x = Array::randn([n, q], 21).unwrap();
        let y = Array::randn([n, k], 22).unwrap();
        compare_many_lm(&x, &y, "opencl", &format!("opencl: {n} x {q} x {k}"), 1e-12);
    }
}

/// many_lm with the GPU on against the same fit on the CPU, to `tol`
/// relative; its results live on `results_on`.
fn compare_many_lm(x: &Array, y: &Array, results_on: &str, what: &str, tol: f64) {
    fallback_log_reset();
    let g = many_lm(x, y, &LmOptions::default()).unwrap();
    assert_eq!(g.t_values.device(), results_on, "{what}");
    let saved = set_options(RuntimeOptions {
        optional_backends: false,
        force_backend: None,
        ..options()
    });
    let c = many_lm(
        &x.gather().unwrap(),
        &y.gather().unwrap(),
        &LmOptions::default(),
    )
    .unwrap();
    set_options(saved);
    for (name, a, b) in [
        ("coefficients", &g.coefficients, &c.coefficients),
        ("std_errors", &g.std_errors, &c.std_errors),
        ("t_values", &g.t_values, &c.t_values),
        ("p_values", &g.p_values, &c.p_values),
        ("sigma", &g.sigma, &c.sigma),
        ("r_squared", &g.r_squared, &c.r_squared),
    ] {
        let e = max_rel(&a.to_vec::<f64>().unwrap(), &b.to_vec::<f64>().unwrap());
        println!("many_lm {what} {name}: {e:.1e}");
        assert!(e <= tol, "{what} {name}: {e:e}");
    }
}
