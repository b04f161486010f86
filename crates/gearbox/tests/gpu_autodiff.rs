//! Gradients computed on a GPU backend against the same gradients on the
//! CPU: a fused elementwise chain, reductions with broadcasting, a small
//! MLP's loss through matmul, a logdet and an nmath density, forced onto
//! each GPU backend that is usable here (OpenCL on pocl in CI, with CPU
//! devices allowed; CUDA and OpenCL on the H100). Backends without a
//! device print `SKIP: ...`; `GEARBOX_REQUIRE_OPENCL=1` makes OpenCL's
//! absence a failure.

use gearbox::runtime::testing::gpu::{assert_ran_on, lock, work_on, UnderTest};
use gearbox::runtime::{fallback_log, fallback_log_reset, options, set_options, RuntimeOptions};
use gearbox::{autodiff, nn, Array, Result};

/// Each case: a name and a scalar function of its arguments.
type Case = (&'static str, fn(&[Array]) -> Result<Array>, Vec<Array>);

fn cases() -> Vec<Case> {
    let m = |r, c, seed| Array::randn([r, c], seed).unwrap();
    let spd = {
        let a = m(6, 6, 9);
        (a.crossprod(&a).unwrap() + &Array::eye(6).unwrap()).unwrap()
    };
    vec![
        (
            "chain",
            |a: &[Array]| ((((&a[0].sin()? * 2.0)? + &a[0])?.exp()? / 3.0)?).sum(),
            vec![m(300, 7, 1)],
        ),
        (
            "broadcast reductions",
            |a: &[Array]| ((&a[0] * &a[1])?.tanh()?.mean_axis(0)? * &a[0].sum_axis(0)?)?.sum(),
            vec![m(50, 4, 2), m(1, 4, 3)],
        ),
        (
            "mlp loss",
            |a: &[Array]| {
                let h = nn::relu(&a[0].matmul(&a[1])?)?;
                nn::mse(&h.matmul(&a[2])?, &a[3])
            },
            vec![m(64, 8, 4), m(8, 16, 5), m(16, 3, 6), m(64, 3, 7)],
        ),
        ("logdet", |a: &[Array]| a[0].logdet(), vec![spd]),
        (
            "dnorm",
            |a: &[Array]| {
                let sd = (a[1].exp()? + 0.5)?;
                gearbox::stats::dnorm(&a[0], &Array::scalar(0.3), &sd, true)?.sum()
            },
            vec![m(40, 3, 10), m(40, 3, 11)],
        ),
    ]
}

/// The gradients of every case on the backend now forced, as host values.
fn gradients() -> Vec<Vec<Vec<f64>>> {
    cases()
        .into_iter()
        .map(|(name, f, args)| {
            autodiff::grad(f, &args)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .iter()
                .map(|g| g.to_f64_vec().unwrap())
                .collect()
        })
        .collect()
}

fn check(under: UnderTest) {
    let _g = lock();
    let saved = options();
    set_options(RuntimeOptions {
        force_backend: None,
        optional_backends: false,
        ..saved.clone()
    });
    let want = gradients();
    if !under.forced_and_healthy() {
        set_options(saved);
        return;
    }
    fallback_log_reset();
    let before = work_on(under.backend);
    let got = gradients();
    assert_ran_on(under.backend, before, "the gradients");
    let fell_back = fallback_log();
    set_options(saved);
    assert!(fell_back.is_empty(), "{}: {fell_back:?}", under.backend);
    for ((name, _, _), (g, w)) in cases().iter().zip(got.iter().zip(&want)) {
        for (k, (gk, wk)) in g.iter().zip(w).enumerate() {
            let scale = wk.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
            let err = gk
                .iter()
                .zip(wk)
                .map(|(a, b)| (a - b).abs() / scale)
                .fold(0.0, f64::max);
            println!("{}: {name} argument {k}: {err:.1e}", under.backend);
            assert!(
                err < 1e-10,
                "{}: {name} argument {k}: {err:e}",
                under.backend
            );
        }
    }
}

#[test]
fn gradients_on_opencl_match_the_cpu() {
    gearbox::init();
    gearbox::opencl::allow_cpu_devices(true);
    check(UnderTest {
        backend: "opencl",
        kind: "OpenCL",
        noun: "device",
        require: "GEARBOX_REQUIRE_OPENCL",
    });
}

#[test]
fn gradients_on_cuda_match_the_cpu() {
    gearbox::init();
    check(UnderTest {
        backend: "cuda",
        kind: "CUDA",
        noun: "device",
        require: "GEARBOX_REQUIRE_CUDA",
    });
}
