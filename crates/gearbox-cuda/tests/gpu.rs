//! The CUDA backend's numbers against the CPU reference, on a real GPU:
//! every op, dtype and fused pattern, reductions, scans, GEMM variants,
//! factorizations, QR, random streams and the conformance suite (slices and
//! joins of resident arrays are in `gpu_movement.rs`). Every test prints
//! `SKIP: <reason>` and passes when no usable CUDA device is present (CI).
//!
//! Work is forced onto the GPU (`force_backend`) so that small sizes that
//! straddle block boundaries run there too; each test checks that the result
//! was computed on "cuda" and compares it with the CPU (precision `exact`).

mod gpu_common;

use gearbox_core::runtime::{fallback_log, fallback_log_reset};
use gearbox_core::{Array, BinaryOp, DType, Error, Precision, ReduceOp, UnaryOp};
use gpu_common::*;

fn unary_range(op: UnaryOp) -> (f64, f64) {
    use UnaryOp::*;
    match op {
        Sqrt | Log => (0.01, 50.0),
        Log1p => (-0.5, 3.0),
        Exp | Expm1 => (-20.0, 20.0),
        Tan => (-1.4, 1.4),
        Sigmoid | Softplus => (-30.0, 30.0),
        _ => (-10.0, 10.0),
    }
}

#[test]
fn every_unary_and_binary_op_matches_the_cpu() {
    let Some(_g) = gpu() else { return };
    // Every op of the definitions' lists that takes and gives numbers.
    let unary: Vec<UnaryOp> = UnaryOp::ALL
        .iter()
        .copied()
        .filter(|o| !o.is_predicate() && *o != UnaryOp::Not)
        .collect();
    let binary: Vec<BinaryOp> = BinaryOp::ALL
        .iter()
        .copied()
        .filter(|o| !matches!(o, BinaryOp::And | BinaryOp::Or))
        .collect();
    let mut rng = Rng(7);
    for dtype in [DType::F32, DType::F64] {
        for &n in &SIZES {
            for &op in &unary {
                let (lo, hi) = unary_range(op);
                let v = rng.vec(n, lo, hi);
                let build = |p| array(&[n], v.clone(), dtype, p).unary(op).unwrap();
                let (g, c, dev) = both(&build, Precision::Strict);
                assert_eq!(dev, "cuda", "{} ran on the GPU", op.name());
                close(
                    &g,
                    &c,
                    tol(dtype) * 4.0,
                    &format!("{} {dtype} n={n}", op.name()),
                );
            }
            let (a, mut b) = (rng.vec(n, 0.1, 3.0), rng.vec(n, 0.1, 3.0));
            b[0] = a[0];
            for &op in &binary {
                let build = |p| {
                    array(&[n], a.clone(), dtype, p)
                        .binary(op, &array(&[n], b.clone(), dtype, p))
                        .unwrap()
                };
                let (g, c, dev) = both(&build, Precision::Strict);
                assert_eq!(dev, "cuda");
                close(
                    &g,
                    &c,
                    tol(dtype) * 4.0,
                    &format!("{} {dtype} n={n}", op.name()),
                );
            }
        }
    }
}

#[test]
fn fused_patterns_match_the_cpu() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(11);
    for dtype in [DType::F32, DType::F64] {
        for (m, n) in [(1, 1), (3, 129), (257, 255), (1000, 333)] {
            let (xv, yv, cv, rv) = (
                rng.vec(m * n, -2.0, 2.0),
                rng.vec(m * n, -2.0, 2.0),
                rng.vec(m, 0.5, 1.5),
                rng.vec(n, 0.5, 1.5),
            );
            let x = |p| array(&[m, n], xv.clone(), dtype, p);
            let y = |p| array(&[m, n], yv.clone(), dtype, p);
            let col = |p| array(&[m], cv.clone(), dtype, p);
            let row = |p| array(&[1, n], rv.clone(), dtype, p);
            type Build<'a> = Box<dyn Fn(Precision) -> Array + 'a>;
            let cases: Vec<(&str, Build)> = vec![
                (
                    "chain",
                    Box::new(|p| {
                        (x(p).exp().unwrap() * &y(p) + &x(p).sin().unwrap()
                            - &(2.0 * &y(p)).unwrap())
                            .unwrap()
                    }),
                ),
                (
                    "broadcast",
                    Box::new(|p| {
                        x(p).sub(&col(p))
                            .unwrap()
                            .mul(&row(p))
                            .unwrap()
                            .abs()
                            .unwrap()
                            .sqrt()
                            .unwrap()
                    }),
                ),
                (
                    "where",
                    Box::new(|p| {
                        let m = x(p)
                            .gt(&y(p))
                            .unwrap()
                            .and(&x(p).lt_scalar(1.0).unwrap())
                            .unwrap();
                        Array::where_(&m, &x(p).tanh().unwrap(), &y(p).neg().unwrap()).unwrap()
                    }),
                ),
                (
                    // Casts that cannot overflow (bool to i64, i64 to float):
                    // float-to-i64 casts and i64 arithmetic that can
                    // overflow run on the CPU (see
                    // work_that_the_device_declines_runs_on_the_cpu).
                    "casts",
                    Box::new(|p| {
                        x(p).ge_scalar(0.0)
                            .unwrap()
                            .astype(DType::I64)
                            .unwrap()
                            .maximum(&y(p).ge_scalar(0.0).unwrap().astype(DType::I64).unwrap())
                            .unwrap()
                            .astype(dtype)
                            .unwrap()
                            .add(&x(p))
                            .unwrap()
                    }),
                ),
                (
                    "nan",
                    Box::new(|p| {
                        x(p).log()
                            .unwrap()
                            .maximum(&y(p))
                            .unwrap()
                            .isnan()
                            .unwrap()
                            .astype(dtype)
                            .unwrap()
                    }),
                ),
                (
                    "scalar",
                    Box::new(|p| {
                        x(p).pow_scalar(2.0)
                            .unwrap()
                            .add_scalar(0.5)
                            .unwrap()
                            .sigmoid()
                            .unwrap()
                    }),
                ),
            ];
            for (name, build) in cases {
                let (g, c, dev) = both(&build, Precision::Strict);
                assert_eq!(dev, "cuda", "{name} ran on the GPU");
                close(&g, &c, tol(dtype) * 8.0, &format!("{name} {dtype} {m}x{n}"));
            }
        }
    }
}

#[test]
fn reductions_match_the_cpu() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(13);
    // prod runs on the CPU (work_that_the_device_declines_runs_on_the_cpu).
    let ops = [ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Min, ReduceOp::Max];
    for dtype in [DType::F32, DType::F64] {
        for dims in [
            vec![1],
            vec![1_000_003],
            vec![129, 257],
            vec![7, 5, 300],
            vec![4096, 3],
            vec![3, 4096],
            vec![100_003, 7],
            vec![256, 2],
            vec![4097, 1],
        ] {
            let n: usize = dims.iter().product();
            let v = rng.vec(n, 0.9, 1.1);
            for op in ops {
                for axis in std::iter::once(None).chain((0..dims.len()).map(Some)) {
                    let build = |p| {
                        array(&dims, v.clone(), dtype, p)
                            .exp()
                            .unwrap()
                            .reduce(op, axis)
                            .unwrap()
                    };
                    let (g, c, dev) = both(&build, Precision::Strict);
                    assert_eq!(dev, "cuda");
                    let t = if dtype == DType::F32 { 1e-5 } else { 1e-12 };
                    close(
                        &g,
                        &c,
                        t,
                        &format!("{}({axis:?}) {dtype} {dims:?}", op.name()),
                    );
                }
            }
        }
    }
}

#[test]
fn reductions_whose_inputs_follow_the_lanes_match_the_cpu() {
    // Column sums of x * a + c and of many_lm's y - sum_k q_k e_k, with a
    // a column [len, 1], c and e_k rows [1, outer] (codegen::lanes): a
    // block per group of lanes (len >= 4096), a warp per group, packed and
    // not, partial last groups.
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(29);
    for dtype in [DType::F32, DType::F64] {
        for (len, outer) in [(8200usize, 7usize), (2000, 101), (301, 9)] {
            let x = rng.vec(len * outer, -1.0, 1.0);
            let a = rng.vec(len, 0.5, 1.5);
            let c = rng.vec(outer, -1.0, 1.0);
            for op in [ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max] {
                let build = |p| {
                    let xa = array(&[len, outer], x.clone(), dtype, p)
                        .mul(&array(&[len, 1], a.clone(), dtype, p))
                        .unwrap();
                    xa.add(&array(&[1, outer], c.clone(), dtype, p))
                        .unwrap()
                        .reduce(op, Some(0))
                        .unwrap()
                };
                let (g, cpu, dev) = both(&build, Precision::Strict);
                assert_eq!(dev, "cuda");
                let t = if dtype == DType::F32 { 1e-5 } else { 1e-12 };
                close(
                    &g,
                    &cpu,
                    t,
                    &format!("{} {dtype} [{len}, {outer}]", op.name()),
                );
            }
            let q: Vec<Vec<f64>> = (0..3).map(|_| rng.vec(len, -1.0, 1.0)).collect();
            let e: Vec<Vec<f64>> = (0..3).map(|_| rng.vec(outer, -1.0, 1.0)).collect();
            let build = |p| {
                let mut r = array(&[len, outer], x.clone(), dtype, p);
                for (qk, ek) in q.iter().zip(&e) {
                    let term = array(&[len, 1], qk.clone(), dtype, p)
                        .mul(&array(&[1, outer], ek.clone(), dtype, p))
                        .unwrap();
                    r = r.sub(&term).unwrap();
                }
                r.mul(&r).unwrap().sum_axis(0).unwrap()
            };
            let (g, cpu, dev) = both(&build, Precision::Strict);
            assert_eq!(dev, "cuda");
            let t = if dtype == DType::F32 { 1e-5 } else { 1e-12 };
            close(
                &g,
                &cpu,
                t,
                &format!("residual sums {dtype} [{len}, {outer}]"),
            );
        }
    }
}

#[test]
fn gemm_variants_match_the_cpu() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(17);
    for dtype in [DType::F32, DType::F64] {
        for (m, k, n) in [
            (1, 1, 1),
            (2, 3, 2),
            (127, 128, 129),
            (255, 256, 257),
            (257, 1, 3),
            (64, 1000, 64),
        ] {
            let (av, bv, tv) = (
                rng.vec(m * k, -1.0, 1.0),
                rng.vec(k * n, -1.0, 1.0),
                rng.vec(n * k, -1.0, 1.0),
            );
            let a = |p| array(&[m, k], av.clone(), dtype, p);
            let b = |p| array(&[k, n], bv.clone(), dtype, p);
            let bt = |p| array(&[n, k], tv.clone(), dtype, p);
            let at = |p| array(&[k, m], av.clone(), dtype, p);
            type Build<'a> = Box<dyn Fn(Precision) -> Array + 'a>;
            let cases: Vec<(&str, Build)> = vec![
                ("matmul", Box::new(|p| a(p).matmul(&b(p)).unwrap())),
                ("crossprod", Box::new(|p| at(p).crossprod(&b(p)).unwrap())),
                ("tcrossprod", Box::new(|p| a(p).tcrossprod(&bt(p)).unwrap())),
                (
                    "matmul with t()",
                    Box::new(|p| a(p).matmul(&bt(p).t().unwrap()).unwrap()),
                ),
            ];
            for (name, build) in cases {
                let (g, c, dev) = both(&build, Precision::Strict);
                assert_eq!(dev, "cuda", "{name} on the GPU");
                let t = if dtype == DType::F32 {
                    2e-6 * (k as f64).sqrt()
                } else {
                    1e-14 * (k as f64).sqrt()
                };
                close_normwise(&g, &c, t, &format!("{name} {dtype} {m}x{k}x{n}"));
            }
        }
    }
}

#[test]
fn multi_output_kernels_store_outputs_and_reduce_in_one_pass() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(31);
    for (rows, cols, axis) in [(1000, 37, 0), (4100, 3, 0), (64, 96, 1), (999, 5, 1)] {
        for dtype in [DType::F32, DType::F64] {
            let xv = rng.vec(rows * cols, -2.0, 2.0);
            let build = |p| {
                let x = array(&[rows, cols], xv.clone(), dtype, p);
                let q = x.sigmoid().unwrap();
                let r = (&q * 3.0).unwrap().sub(&x).unwrap();
                let s = q.log().unwrap().sum_axis(axis).unwrap();
                Array::eval_all(&[&r, &s]).unwrap();
                (r, s)
            };
            let (rg, sg) = build(Precision::Strict);
            assert_eq!((rg.device(), sg.device()), ("cuda".into(), "cuda".into()));
            let (rc, sc) = build(Precision::Exact);
            let what = format!("{rows}x{cols} axis {axis} {dtype}");
            close(
                &rg.to_f64_vec().unwrap(),
                &rc.to_f64_vec().unwrap(),
                tol(dtype),
                &what,
            );
            close(
                &sg.to_f64_vec().unwrap(),
                &sc.to_f64_vec().unwrap(),
                tol(dtype) * 10.0,
                &what,
            );
        }
    }
}

#[test]
fn independent_gemms_run_as_one_batched_call() {
    let Some(_g) = gpu() else { return };
    use std::sync::atomic::Ordering;
    let mut rng = Rng(29);
    for dtype in [DType::F32, DType::F64] {
        let (m, k, n, count) = (33, 17, 29, 6);
        let shared = rng.vec(k * n, -1.0, 1.0);
        let sets: Vec<(Vec<f64>, Vec<f64>)> = (0..count)
            .map(|_| (rng.vec(m * k, -1.0, 1.0), rng.vec(n * k, -1.0, 1.0)))
            .collect();
        type Build<'a> = Box<dyn Fn(&[f64], &[f64], Precision) -> Array + 'a>;
        let cases: Vec<(&str, Build)> = vec![
            (
                "matmul",
                Box::new(|a, _, p| {
                    array(&[m, k], a.to_vec(), dtype, p)
                        .matmul(&array(&[k, n], shared.clone(), dtype, p))
                        .unwrap()
                }),
            ),
            (
                "crossprod",
                Box::new(|a, _, p| {
                    array(&[k, m], a.to_vec(), dtype, p)
                        .crossprod(&array(&[k, n], shared.clone(), dtype, p))
                        .unwrap()
                }),
            ),
            (
                "tcrossprod",
                Box::new(|a, t, p| {
                    array(&[m, k], a.to_vec(), dtype, p)
                        .tcrossprod(&array(&[n, k], t.to_vec(), dtype, p))
                        .unwrap()
                }),
            ),
        ];
        for (name, build) in cases {
            fallback_log_reset();
            let before = gearbox_cuda::blas::BATCHED_GEMM_CALLS.load(Ordering::Relaxed);
            let products: Vec<Array> = sets
                .iter()
                .map(|(a, t)| build(a, t, Precision::Strict))
                .collect();
            Array::eval_all(&products.iter().collect::<Vec<_>>()).unwrap();
            let after = gearbox_cuda::blas::BATCHED_GEMM_CALLS.load(Ordering::Relaxed);
            assert_eq!(after - before, 1, "{name} {dtype}: one batched call");
            assert!(fallback_log().is_empty(), "{:?}", fallback_log());
            for ((a, t), g) in sets.iter().zip(&products) {
                assert_eq!(g.device(), "cuda");
                let want = build(a, t, Precision::Exact).to_f64_vec().unwrap();
                let tol = if dtype == DType::F32 { 2e-6 } else { 1e-14 } * (k as f64).sqrt();
                close_normwise(
                    &g.to_f64_vec().unwrap(),
                    &want,
                    tol,
                    &format!("batched {name} {dtype}"),
                );
            }
        }
    }
}

#[test]
fn factorizations_match_the_cpu_and_reject_bad_matrices() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(19);
    for dtype in [DType::F32, DType::F64] {
        for n in [1, 2, 3, 127, 128, 129, 300] {
            let r = rng.vec(n * n, -1.0, 1.0);
            let bvals = rng.vec(n * 3, -1.0, 1.0);
            // A = RᵀR + n I is symmetric positive definite and well conditioned
            let spd = |p| {
                let m = array(&[n, n], r.clone(), dtype, p);
                m.crossprod(&m)
                    .unwrap()
                    .add(
                        &Array::eye(n)
                            .unwrap()
                            .astype(dtype)
                            .unwrap()
                            .mul_scalar(n as f64)
                            .unwrap()
                            .with_precision(p)
                            .unwrap(),
                    )
                    .unwrap()
            };
            let rhs = |p| array(&[n, 3], bvals.clone(), dtype, p);
            let t = if dtype == DType::F32 {
                2e-6 * n as f64
            } else {
                1e-14 * n as f64
            };
            for (name, build) in [
                (
                    "cholesky",
                    Box::new(|p| spd(p).cholesky().unwrap()) as Box<dyn Fn(Precision) -> Array>,
                ),
                ("solve", Box::new(|p| spd(p).solve(&rhs(p)).unwrap())),
                ("inv", Box::new(|p| spd(p).inv().unwrap())),
                (
                    "inv_upper",
                    Box::new(|p| spd(p).cholesky().unwrap().inv_upper().unwrap()),
                ),
            ] {
                let (g, c, dev) = both(&build, Precision::Strict);
                assert_eq!(dev, "cuda", "{name} on the GPU");
                close_normwise(&g, &c, t, &format!("{name} {dtype} n={n}"));
            }
        }
        let singular = array(
            &[3, 3],
            vec![1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 1.0, 0.0, 1.0],
            dtype,
            Precision::Strict,
        );
        assert!(matches!(
            singular.inv().unwrap().eval(),
            Err(Error::Singular { .. })
        ));
        let zero_diagonal = array(&[2, 2], vec![1.0, 0.0, 3.0, 0.0], dtype, Precision::Strict);
        assert!(matches!(
            zero_diagonal.inv_upper().unwrap().eval(),
            Err(Error::Singular { .. })
        ));
        let indefinite = array(&[2, 2], vec![1.0, 2.0, 2.0, 1.0], dtype, Precision::Strict);
        assert!(matches!(
            indefinite.cholesky().unwrap().eval(),
            Err(Error::NotPositiveDefinite { .. })
        ));
        let asym = array(&[2, 2], vec![2.0, 0.5, 0.0, 2.0], dtype, Precision::Strict);
        assert!(matches!(
            asym.cholesky().unwrap().eval(),
            Err(Error::NotPositiveDefinite { .. })
        ));
    }
}

#[test]
fn strict_keeps_float64_to_1e12_and_fast_float32_to_1e4() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(41);
    let n = 1024;
    let (av, bv) = (rng.vec(n * n, -1.0, 1.0), rng.vec(n * n, -1.0, 1.0));
    let reference = array(&[n, n], av.clone(), DType::F64, Precision::Exact)
        .matmul(&array(&[n, n], bv.clone(), DType::F64, Precision::Exact))
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = |got: Vec<f64>| {
        got.iter()
            .zip(&reference)
            .map(|(g, w)| (g - w).abs())
            .fold(0.0, f64::max)
            / scale
    };
    let strict = array(&[n, n], av.clone(), DType::F64, Precision::Strict)
        .matmul(&array(&[n, n], bv.clone(), DType::F64, Precision::Strict))
        .unwrap();
    strict.eval().unwrap();
    assert_eq!(strict.device(), "cuda");
    let fast = array(&[n, n], av, DType::F32, Precision::Fast)
        .matmul(&array(&[n, n], bv, DType::F32, Precision::Fast))
        .unwrap();
    fast.eval().unwrap();
    let (es, ef) = (
        err(strict.to_f64_vec().unwrap()),
        err(fast.to_f64_vec().unwrap()),
    );
    println!("1024 GEMM relative error vs CPU float64: strict {es:.1e}, fast {ef:.1e}");
    assert!(es < 1e-12 && ef < 1e-4);
}

#[test]
fn random_numbers_are_the_cpu_stream() {
    let Some(_g) = gpu() else { return };
    for n in [1usize, 3, 257, 1_000_003] {
        for seed in [0u64, 42, u64::MAX] {
            let gpu_u = Array::rand([n], seed).unwrap();
            gpu_u.eval().unwrap();
            assert_eq!(gpu_u.device(), "cuda", "rand ran on the GPU");
            let cpu_u: Vec<f64> = (0..n as u64)
                .map(|i| gearbox_core::random::uniform_at(seed, i))
                .collect();
            assert_eq!(
                gpu_u.to_vec::<f64>().unwrap(),
                cpu_u,
                "uniform is bit-exact (n={n}, seed={seed})"
            );
            let gpu_z = Array::randn([n], seed).unwrap();
            gpu_z.eval().unwrap();
            assert_eq!(gpu_z.device(), "cuda");
            let cpu_z: Vec<f64> = (0..n as u64)
                .map(|i| gearbox_core::random::normal_at(seed, i))
                .collect();
            close(
                &gpu_z.to_vec::<f64>().unwrap(),
                &cpu_z,
                1e-14,
                &format!("randn n={n} seed={seed}"),
            );
        }
    }
}

#[test]
fn scans_match_the_cpu() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(43);
    for dtype in [DType::F32, DType::F64] {
        for dims in [
            vec![1],
            vec![129],
            vec![1_000_003],
            vec![7, 5, 300],
            vec![4096, 3],
            vec![3, 4096],
            vec![100_003, 7],
            vec![256, 2],
            vec![4097, 1],
            // Axis 0: 600 contiguous lanes, the one pass on a device of
            // up to 300 SMs (scan::path).
            vec![1000, 600],
        ] {
            let n: usize = dims.iter().product();
            let v = rng.vec(n, 0.999, 1.001);
            for product in [false, true] {
                for axis in std::iter::once(None).chain((0..dims.len()).map(Some)) {
                    let build = |p| {
                        let a = array(&dims, v.clone(), dtype, p);
                        match (product, axis) {
                            (false, None) => a.cumsum(),
                            (true, None) => a.cumprod(),
                            (false, Some(x)) => a.cumsum_axis(x),
                            (true, Some(x)) => a.cumprod_axis(x),
                        }
                        .unwrap()
                    };
                    let (g, c, dev) = both(&build, Precision::Strict);
                    assert_eq!(dev, "cuda", "scan ran on the GPU");
                    let t = if dtype == DType::F32 { 1e-6 } else { 1e-12 };
                    close(
                        &g,
                        &c,
                        t,
                        &format!(
                            "{} {axis:?} {dtype} {dims:?}",
                            if product { "cumprod" } else { "cumsum" }
                        ),
                    );
                }
            }
        }
    }
}

/// `cumprod` of 1-D, 2-D and 3-D arrays along every axis, f32 and f64,
/// with factors that overflow and underflow on the way, zeros, NaN and
/// infinities, against the CPU's float64 path
/// (`gearbox_core::runtime::testing::scans`); i64 and bool data as their
/// f64 values.
#[test]
fn cumprod_never_overflows_on_the_way_on_the_device() {
    let Some(_g) = gpu() else { return };
    gearbox_core::runtime::testing::scans::check_cumprod_through_the_runtime(
        "cuda",
        &[DType::F64, DType::F32, DType::I64, DType::Bool],
        gearbox_core::runtime::scan_plan::Accumulation::Double,
    );
}

/// `cumsum` and `cumprod` along axis 0 of `len x lanes` arrays with just
/// more lanes than the one pass takes on this device (`scan::path`: two
/// per SM), lanes shorter than a tile, of one tile, just over one and of
/// several, f32 and f64, against the CPU's float64 path: sums to rounding,
/// products (factors that wander out of range and back, and ones far out
/// of range) within `scan_product::tolerance`.
#[test]
fn many_contiguous_lanes_take_one_pass_on_the_device() {
    use gearbox_core::runtime::scan_plan::Accumulation;
    use gearbox_core::runtime::testing::gpu::{array, scan_error, scan_reference, values};
    use gearbox_core::runtime::testing::scans::{cumprod_mismatch, factors, Factors};
    use gearbox_core::Shape;
    use gearbox_cuda::scan::{path, Path, LANE_BLOCKS_PER_SM};
    let Some(_g) = gpu() else { return };
    let backend = gearbox_cuda::shared().expect("the CUDA backend is registered");
    let sms = backend.device().expect("the device opens").sm_count;
    let lanes = LANE_BLOCKS_PER_SM * sms as usize + 1;
    for len in [257, 4096, 4097, 9000] {
        assert_eq!(path(1, len, lanes, sms), Path::OnePass);
        let shape = Shape::new(vec![len, lanes]);
        let layout = (1, len, lanes);
        for dtype in [DType::F32, DType::F64] {
            let cases = [
                (false, values(len * lanes, dtype, 5)),
                (true, factors(len * lanes, dtype, Factors::Wandering, 6)),
                (true, factors(len * lanes, dtype, Factors::Extreme, 7)),
            ];
            for (c, (product, host)) in cases.into_iter().enumerate() {
                let a = array(&shape, &host);
                let y = if product {
                    a.cumprod_axis(0)
                } else {
                    a.cumsum_axis(0)
                }
                .unwrap();
                y.eval().unwrap();
                assert_eq!(y.device(), "cuda", "the scan ran on the GPU");
                let got = y.to_f64_vec().unwrap();
                let x = host.to_f64_vec().unwrap();
                let want = scan_reference(&shape, Some(0), product, &x);
                let what = format!("[{len}, {lanes}] axis 0 {dtype} case {c}");
                if product {
                    if let Some(bad) =
                        cumprod_mismatch(&x, layout, &got, &want, Accumulation::Double, dtype)
                    {
                        panic!("cumprod {what}: {bad}");
                    }
                } else {
                    let bounds = match dtype {
                        DType::F32 => (f32::EPSILON as f64 / 2.0, 1e-13),
                        _ => (0.0, 32.0 * f64::EPSILON),
                    };
                    let err = scan_error(&x, layout, &got, &want, bounds);
                    assert!(err <= 1.0, "cumsum {what}: error {err:.2} of the bound");
                }
            }
        }
    }
}

#[test]
fn qr_factors_on_the_device() {
    let Some(_g) = gpu() else { return };
    fallback_log_reset();
    let mut rng = Rng(47);
    for dtype in [DType::F32, DType::F64] {
        for (m, n) in [(1, 1), (3, 2), (2, 3), (129, 127), (300, 300), (500, 40)] {
            let a = array(&[m, n], rng.vec(m * n, -1.0, 1.0), dtype, Precision::Strict);
            a.eval().unwrap();
            let (q, r) = a.qr().unwrap();
            Array::eval_all(&[&q, &r]).unwrap();
            let p = m.min(n);
            let qv = q.to_f64_vec().unwrap();
            let rv = r.to_f64_vec().unwrap();
            assert_eq!((q.dims(), r.dims()), (&[m, p][..], &[p, n][..]));
            let t = if dtype == DType::F32 {
                1e-5 * (m as f64).sqrt()
            } else {
                1e-13 * (m as f64).sqrt()
            };
            for j in 0..n {
                for i in j + 1..p {
                    assert_eq!(rv[i + p * j], 0.0, "R is upper triangular");
                }
            }
            let back = q.matmul(&r).unwrap().to_f64_vec().unwrap();
            close_normwise(
                &back,
                &a.to_f64_vec().unwrap(),
                t,
                &format!("QR = A {dtype} {m}x{n}"),
            );
            let qtq = q.crossprod(&q).unwrap().to_f64_vec().unwrap();
            let eye: Vec<f64> = (0..p * p)
                .map(|k| if k % p == k / p { 1.0 } else { 0.0 })
                .collect();
            close_normwise(&qtq, &eye, t, &format!("QᵀQ = I {dtype} {m}x{n}"));
            let _ = qv;
        }
    }
    assert!(
        !fallback_log().iter().any(|e| e.op == "qr"),
        "QR ran on the device: {:?}",
        fallback_log()
    );
}

/// The shared conformance suite (`gearbox_core::conformance`): every op,
/// dtype and size straddling the kernels' boundaries, chains, reductions,
/// scans, library calls and random streams, forced onto the device and
/// compared with the CPU op by op.
#[test]
fn the_conformance_suite_passes_on_the_device() {
    let Some(_g) = gpu() else { return };
    let report =
        gearbox_core::conformance::check(gearbox_core::conformance::Target::Backend("cuda"))
            .expect("the suite runs");
    let shown: Vec<String> = report
        .mismatches
        .iter()
        .take(30)
        .map(|m| format!("{}: {}", m.case, m.detail))
        .collect();
    println!(
        "conformance on cuda: {} cases, {} differ",
        report.cases,
        report.mismatches.len()
    );
    assert!(report.mismatches.is_empty(), "{}", shown.join("\n"));
}
