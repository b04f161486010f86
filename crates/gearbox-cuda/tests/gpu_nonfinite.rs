//! The device factorizations (cuSOLVER) refuse NaN and Inf as the CPU does:
//! a random matrix with one NaN, Inf or -Inf planted at a random position,
//! forced onto the GPU, ends in the CPU's `Error::NonFinite` naming that
//! entry, and the fallback log shows that the device itself refused it with
//! the same words (it never returned numbers). Min and max order signed
//! zeros as the CPU does. Prints `SKIP: <reason>` and passes without a
//! usable CUDA device.

mod gpu_common;

use gearbox_core::runtime::{fallback_log, fallback_log_reset};
use gearbox_core::{Array, DType, Error, Precision};
use gpu_common::*;

const BAD: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

/// A symmetric, diagonally dominant (so positive definite) `n x n` matrix.
fn spd(rng: &mut Rng, n: usize) -> Vec<f64> {
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..=j {
            let v = rng.next() - 0.5;
            a[i + j * n] = v;
            a[j + i * n] = v;
        }
        a[j + j * n] += n as f64;
    }
    a
}

fn below(rng: &mut Rng, n: usize) -> usize {
    ((rng.next() * n as f64) as usize).min(n - 1)
}

/// Evaluates `a` (forced onto the GPU) and checks the error: NonFinite of
/// `op` for `operand` at `index`, and the device's own refusal in the log.
fn assert_refused(a: &Array, op: &str, operand: &str, index: &[usize], what: &str) {
    fallback_log_reset();
    let e = match a.eval() {
        Ok(()) => panic!(
            "{what}: no error; the device returned {:?}",
            a.to_f64_vec().unwrap()
        ),
        Err(e) => e,
    };
    match &e {
        Error::NonFinite {
            op: o,
            operand: w,
            index: at,
            ..
        } => assert_eq!((*o, *w, at.as_slice()), (op, operand, index), "{what}: {e}"),
        other => panic!("{what}: expected NonFinite, got {other}"),
    }
    let log = fallback_log();
    assert!(
        log.iter()
            .any(|f| f.from_backend == "cuda" && f.reason == e.to_string()),
        "{what}: the device did not refuse with the CPU's words: {log:?}"
    );
}

#[test]
fn device_factorizations_refuse_non_finite_entries() {
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(404);
    for dtype in [DType::F32, DType::F64] {
        for n in [1, 3, 129, 300] {
            for value in BAD {
                let mut a = spd(&mut rng, n);
                let (i, j) = (below(&mut rng, n), below(&mut rng, n));
                a[i + j * n] = value;
                let a = array(&[n, n], a, dtype, Precision::Strict);
                let b = array(&[n, 2], rng.vec(2 * n, -1.0, 1.0), dtype, Precision::Strict);
                let what = |op: &str| format!("{op} {dtype} n={n} {value} at [{i}, {j}]");
                assert_refused(&a.solve(&b).unwrap(), "solve", "A", &[i, j], &what("solve"));
                assert_refused(&a.inv().unwrap(), "inv", "A", &[i, j], &what("inv"));
                let chol = a.cholesky().unwrap();
                assert_refused(&chol, "cholesky", "A", &[i, j], &what("cholesky"));
                let (q, _) = a.qr().unwrap();
                assert_refused(&q, "qr", "A", &[i, j], &what("qr"));

                // A finite A with the value in the right-hand side.
                let good = array(&[n, n], spd(&mut rng, n), dtype, Precision::Strict);
                let mut bv = rng.vec(2 * n, -1.0, 1.0);
                let (r, c) = (below(&mut rng, n), below(&mut rng, 2));
                bv[r + c * n] = value;
                let b = array(&[n, 2], bv, dtype, Precision::Strict);
                let x = good.solve(&b).unwrap();
                assert_refused(&x, "solve", "B", &[r, c], &what("solve B"));
            }
        }
        // A rectangular QR.
        let (m, n) = (500, 40);
        let mut a = rng.vec(m * n, -1.0, 1.0);
        a[17 + 33 * m] = f64::NAN;
        let (q, _) = array(&[m, n], a, dtype, Precision::Strict).qr().unwrap();
        assert_refused(&q, "qr", "A", &[17, 33], &format!("qr {dtype} 500x40"));
    }
}

#[test]
fn min_and_max_order_signed_zeros_as_the_cpu_does() {
    // -0.0 is below +0.0 (IEEE 754-2019), whatever order the device folds
    // in: full and axis reductions and the elementwise ops give the CPU's
    // bits.
    let Some(_g) = gpu() else { return };
    let mut rng = Rng(71);
    for dtype in [DType::F64, DType::F32] {
        for n in [2usize, 3, 127, 1000, 100_003] {
            let data: Vec<f64> = (0..n)
                .map(|_| if rng.next() < 0.5 { -0.0 } else { 0.0 })
                .collect();
            let other: Vec<f64> = data.iter().map(|v| -v).collect();
            let build = |p: Precision| {
                let x = array(&[n, 1], data.clone(), dtype, p);
                let y = array(&[n, 1], other.clone(), dtype, p);
                vec![
                    x.min().unwrap(),
                    x.max().unwrap(),
                    x.minimum(&y).unwrap(),
                    x.maximum(&y).unwrap(),
                    x.slice(0, 0..n / 2 * 2)
                        .unwrap()
                        .reshape([n / 2, 2])
                        .unwrap()
                        .max_axis(0)
                        .unwrap(),
                ]
            };
            let (gpu, cpu) = (build(Precision::Strict), build(Precision::Exact));
            for (k, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
                g.eval().unwrap();
                let bits = |a: &Array| -> Vec<u64> {
                    a.to_f64_vec()
                        .unwrap()
                        .iter()
                        .map(|v| v.to_bits())
                        .collect()
                };
                assert_eq!(
                    bits(g),
                    bits(c),
                    "{dtype} n = {n}, case {k} on {}",
                    g.device()
                );
            }
        }
    }
    println!("signed zeros: min/max on the device match the CPU's bits");
}
