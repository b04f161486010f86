//! The linear-algebra derivative rules against central finite differences
//! in float64, on random well-conditioned inputs (never zeros): the
//! products at non-square shapes and with vector operands, `solve` with
//! vector and matrix right-hand sides, `inv`, `det`, `logdet`,
//! `inv_upper`, `cholesky` (of symmetric positive definite matrices) and
//! `qr` (tall, square and wide). Every vjp is checked with a random
//! cotangent on every output; a few jvps (`autodiff::jvp`) and second
//! derivatives are checked the same way.

mod common;

use common::TestRng;
use gearbox_core::{autodiff, Array, Error, Result};

/// Central-difference step.
const H: f64 = 1e-5;
/// The largest error allowed, relative to `max(1, max |gradient|)`.
const TOL: f64 = 1e-7;

/// A random array of `dims` with entries `±[0.2, 1]`.
fn random(rng: &mut TestRng, dims: &[usize]) -> Array {
    let n: usize = dims.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|_| {
            let m = rng.uniform(0.2, 1.0);
            if rng.uniform(0.0, 1.0) < 0.5 {
                -m
            } else {
                m
            }
        })
        .collect();
    Array::from_vec(dims.to_vec(), v).unwrap()
}

/// A random `n x n` matrix plus `shift` times the identity (well conditioned).
fn shifted(rng: &mut TestRng, n: usize, shift: f64) -> Array {
    let mut v = random(rng, &[n, n]).to_vec::<f64>().unwrap();
    for i in 0..n {
        v[i + i * n] += shift;
    }
    Array::from_vec([n, n], v).unwrap()
}

/// A random symmetric positive definite `n x n` matrix: `BᵀB + n I`.
fn spd(rng: &mut TestRng, n: usize) -> Array {
    let b = random(rng, &[n, n]);
    let mut v = b.crossprod(&b).unwrap().to_vec::<f64>().unwrap();
    for i in 0..n {
        v[i + i * n] += n as f64;
    }
    Array::from_vec([n, n], v).unwrap()
}

fn values(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// `a` with `delta` added to element `j` (column-major).
fn bumped(a: &Array, j: usize, delta: f64) -> Array {
    let mut v = values(a);
    v[j] += delta;
    Array::from_vec(a.dims().to_vec(), v).unwrap()
}

/// `sum_k <cotangents[k], outputs[k]>`.
fn pair(outputs: &[Array], cotangents: &[Array]) -> f64 {
    outputs
        .iter()
        .zip(cotangents)
        .map(|(o, c)| {
            values(o)
                .iter()
                .zip(values(c))
                .map(|(a, b)| a * b)
                .sum::<f64>()
        })
        .sum()
}

type Fun<'a> = &'a dyn Fn(&[Array]) -> Result<Vec<Array>>;

/// Checks the vjp of `f` at `xs` (random cotangents on every output)
/// against central differences of `<cotangents, f>` in every entry of
/// every argument; returns the worst error (relative to `max(1, max
/// |gradient|)`).
fn check_vjp(name: &str, f: Fun<'_>, xs: &[Array], rng: &mut TestRng) -> f64 {
    let outputs = f(xs).unwrap();
    let cts: Vec<Array> = outputs.iter().map(|o| random(rng, o.dims())).collect();
    let (_, grads) = autodiff::vjp(|a| f(a), xs, &cts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut worst = 0.0f64;
    for (i, x) in xs.iter().enumerate() {
        assert_eq!(grads[i].dims(), x.dims(), "{name}: gradient {i}'s shape");
        let g = values(&grads[i]);
        let scale = g.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (j, gj) in g.iter().enumerate() {
            let at = |delta: f64| {
                let mut moved = xs.to_vec();
                moved[i] = bumped(x, j, delta);
                pair(&f(&moved).unwrap(), &cts)
            };
            let fd = (at(H) - at(-H)) / (2.0 * H);
            let err = (fd - gj).abs() / scale;
            assert!(
                err < TOL,
                "{name}: d/dx{i}[{j}] rule {gj:e}, finite difference {fd:e} (error {err:.2e})"
            );
            worst = worst.max(err);
        }
    }
    println!("{name}: worst vjp error {worst:.2e}");
    worst
}

/// Checks the jvp of `f` at `xs` along random tangents against the
/// central difference `(f(x + h t) - f(x - h t)) / 2h`.
fn check_jvp(name: &str, f: Fun<'_>, xs: &[Array], rng: &mut TestRng) -> f64 {
    let ts: Vec<Array> = xs.iter().map(|x| random(rng, x.dims())).collect();
    let (_, jv) = autodiff::jvp(f, xs, &ts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let along = |h: f64| -> Vec<Array> {
        let moved: Vec<Array> = xs
            .iter()
            .zip(&ts)
            .map(|(x, t)| (x + &(t * h).unwrap()).unwrap())
            .collect();
        f(&moved).unwrap()
    };
    let (plus, minus) = (along(H), along(-H));
    let mut worst = 0.0f64;
    for (k, got) in jv.iter().enumerate() {
        let got = values(got);
        let scale = got.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for ((g, p), m) in got.iter().zip(values(&plus[k])).zip(values(&minus[k])) {
            let fd = (p - m) / (2.0 * H);
            let err = (fd - g).abs() / scale;
            assert!(err < TOL, "{name}: jvp {g:e}, finite difference {fd:e}");
            worst = worst.max(err);
        }
    }
    println!("{name}: worst jvp error {worst:.2e}");
    worst
}

/// A product case: name, operand shapes, the product.
type ProductCase = (
    &'static str,
    Vec<usize>,
    Vec<usize>,
    fn(&Array, &Array) -> Result<Array>,
);

/// A one-matrix op.
type UnaryMatrixOp = fn(&Array) -> Result<Array>;

fn one(a: Result<Array>) -> Result<Vec<Array>> {
    Ok(vec![a?])
}

#[test]
fn products_at_non_square_shapes_and_with_vectors() {
    let mut rng = TestRng::new(1);
    let cases: Vec<ProductCase> = vec![
        ("matmul 3x4 4x2", vec![3, 4], vec![4, 2], |a, b| a.matmul(b)),
        ("matmul 3x4 [4]", vec![3, 4], vec![4], |a, b| a.matmul(b)),
        ("matmul [4] 1x3", vec![4], vec![1, 3], |a, b| a.matmul(b)),
        ("crossprod 5x3 5x2", vec![5, 3], vec![5, 2], |a, b| {
            a.crossprod(b)
        }),
        ("crossprod 5x3 [5]", vec![5, 3], vec![5], |a, b| {
            a.crossprod(b)
        }),
        ("crossprod [5] 5x2", vec![5], vec![5, 2], |a, b| {
            a.crossprod(b)
        }),
        ("tcrossprod 3x4 2x4", vec![3, 4], vec![2, 4], |a, b| {
            a.tcrossprod(b)
        }),
        ("tcrossprod [3] [2]", vec![3], vec![2], |a, b| {
            a.tcrossprod(b)
        }),
        ("tcrossprod 3x1 [2]", vec![3, 1], vec![2], |a, b| {
            a.tcrossprod(b)
        }),
        ("dot [4] [4]", vec![4], vec![4], |a, b| a.dot(b)),
        ("outer [3] [2]", vec![3], vec![2], |a, b| a.outer(b)),
        // A pending transpose becomes a crossprod / tcrossprod operand.
        ("t(A) matmul B", vec![4, 3], vec![4, 2], |a, b| {
            a.t()?.matmul(b)
        }),
        ("A matmul t(B)", vec![3, 4], vec![2, 4], |a, b| {
            a.matmul(&b.t()?)
        }),
    ];
    for (name, da, db, op) in cases {
        let xs = [random(&mut rng, &da), random(&mut rng, &db)];
        check_vjp(name, &|a| one(op(&a[0], &a[1])), &xs, &mut rng);
    }
    // A product inside a larger expression, and the same operand twice.
    let a = random(&mut rng, &[4, 3]);
    check_vjp(
        "sum(crossprod(A, A) * A[1:3, ])",
        &|x| one((x[0].crossprod(&x[0])? * &x[0].slice(0, 0..3)?)?.sum()),
        &[a],
        &mut rng,
    );
}

#[test]
fn product_gradients_keep_each_operands_dtype() {
    let a = Array::from_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let b = Array::from_vec([2], vec![0.5, -1.0]).unwrap();
    let g = autodiff::grad(|x| x[0].matmul(&x[1])?.sum(), &[a, b]).unwrap();
    assert_eq!(g[0].dtype(), gearbox_core::DType::F32);
    assert_eq!(g[1].dtype(), gearbox_core::DType::F64);
    // d/dA sum(A b) = 1 bᵀ; d/db = Aᵀ 1.
    assert_eq!(g[0].to_vec::<f32>().unwrap(), vec![0.5, 0.5, -1.0, -1.0]);
    assert_eq!(g[1].to_vec::<f64>().unwrap(), vec![3.0, 7.0]);
}

#[test]
fn solve_with_vector_and_matrix_right_hand_sides() {
    let mut rng = TestRng::new(2);
    for k in [None, Some(1), Some(3)] {
        let a = shifted(&mut rng, 4, 3.0);
        let b = match k {
            None => random(&mut rng, &[4]),
            Some(k) => random(&mut rng, &[4, k]),
        };
        let name = format!("solve 4x4 {:?}", b.dims());
        check_vjp(&name, &|x| one(x[0].solve(&x[1])), &[a, b], &mut rng);
    }
}

#[test]
fn inverse_determinant_and_log_determinant() {
    let mut rng = TestRng::new(3);
    let a = shifted(&mut rng, 4, 2.5);
    // A negative determinant: logdet is log|det|.
    let mut v = values(&shifted(&mut rng, 3, 2.5));
    v.swap(0, 1);
    v.swap(3, 4);
    v.swap(6, 7);
    let neg = Array::from_vec([3, 3], v).unwrap();
    assert!(neg.det().unwrap().item().unwrap() < 0.0);
    let ld = neg.logdet().unwrap().item().unwrap();
    let d = neg.det().unwrap().item().unwrap();
    assert!((ld - d.abs().ln()).abs() < 1e-12);
    let cases: [(&str, UnaryMatrixOp, &Array); 5] = [
        ("inv 4x4", |x| x.inv(), &a),
        ("det 4x4", |x| x.det(), &a),
        ("logdet 4x4", |x| x.logdet(), &a),
        ("det, det < 0", |x| x.det(), &neg),
        ("logdet, det < 0", |x| x.logdet(), &neg),
    ];
    for (name, op, x) in cases {
        check_vjp(
            name,
            &|xs| one(op(&xs[0])),
            std::slice::from_ref(x),
            &mut rng,
        );
    }
}

#[test]
fn log_determinant_values() {
    let i3 = Array::eye(3).unwrap();
    assert_eq!(i3.logdet().unwrap().item().unwrap(), 0.0);
    let singular = Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 4.0]]).unwrap();
    assert_eq!(
        singular.logdet().unwrap().item().unwrap(),
        f64::NEG_INFINITY
    );
    // 200 x 200 at 100 I: the determinant overflows, its log does not.
    let big = (&Array::eye(200).unwrap() * 100.0).unwrap();
    assert_eq!(big.det().unwrap().item().unwrap(), f64::INFINITY);
    let ld = big.logdet().unwrap().item().unwrap();
    assert!((ld - 200.0 * 100f64.ln()).abs() < 1e-9, "{ld}");
    let empty = Array::from_vec([0, 0], Vec::<f64>::new()).unwrap();
    assert_eq!(empty.logdet().unwrap().item().unwrap(), 0.0);
    assert!(matches!(
        Array::from_vec([2, 3], vec![1.0; 6]).unwrap().logdet(),
        Err(Error::BadShape { op: "logdet", .. })
    ));
    let nan = Array::from_rows(&[vec![1.0, f64::NAN], vec![0.0, 1.0]]).unwrap();
    assert!(matches!(
        nan.logdet().unwrap().eval(),
        Err(Error::NonFinite { op: "logdet", .. })
    ));
}

#[test]
fn triangular_inverse() {
    let mut rng = TestRng::new(4);
    let mut v = values(&shifted(&mut rng, 4, 2.0));
    // Entries below the diagonal are not read: their gradient is zero.
    for j in 0..4 {
        for i in j + 1..4 {
            v[i + 4 * j] *= 5.0;
        }
    }
    let u = Array::from_vec([4, 4], v).unwrap();
    check_vjp(
        "inv_upper 4x4",
        &|x| one(x[0].inv_upper()),
        std::slice::from_ref(&u),
        &mut rng,
    );
    let g = autodiff::grad(|x| x[0].inv_upper()?.sum(), &[u]).unwrap();
    let g = values(&g[0]);
    assert!((0..4).all(|j| (j + 1..4).all(|i| g[i + 4 * j] == 0.0)));
}

#[test]
fn cholesky_of_symmetric_positive_definite_matrices() {
    let mut rng = TestRng::new(5);
    for n in [1, 3, 5] {
        let a = spd(&mut rng, n);
        // Through sym(X) = (X + Xᵀ)/2, so every entry may move on its own;
        // the rule's gradient is the symmetric one, which is what sym
        // passes back.
        let sym = |x: &Array| -> Result<Array> { (x + &x.t()?)? * 0.5 };
        check_vjp(
            &format!("cholesky {n}x{n}"),
            &|x| one(sym(&x[0])?.cholesky()),
            std::slice::from_ref(&a),
            &mut rng,
        );
        // The rule alone is symmetric.
        let ct = random(&mut rng, &[n, n]);
        let (_, g) =
            autodiff::vjp(|x| one(x[0].cholesky()), std::slice::from_ref(&a), &[ct]).unwrap();
        let g = values(&g[0]);
        for i in 0..n {
            for j in 0..n {
                assert!((g[i + n * j] - g[j + n * i]).abs() < 1e-12);
            }
        }
    }
    // A function of the factor: log det A = 2 sum(log diag R).
    let a = spd(&mut rng, 4);
    let eye = Array::eye(4).unwrap();
    let g = autodiff::grad(
        |x| {
            let r = x[0].cholesky()?;
            ((&r * &eye)? + &(1.0 - &eye)?)?.log()?.sum()? * 2.0
        },
        std::slice::from_ref(&a),
    )
    .unwrap();
    let want = values(&a.inv().unwrap());
    let worst = values(&g[0])
        .iter()
        .zip(&want)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(worst < 1e-12, "d logdet / dA through cholesky: {worst:e}");
}

#[test]
fn qr_of_tall_square_and_wide_matrices() {
    let mut rng = TestRng::new(6);
    for dims in [[5, 3], [4, 4], [6, 1], [3, 5], [2, 3]] {
        let a = random(&mut rng, &dims);
        let f = |x: &[Array]| -> Result<Vec<Array>> {
            let (q, r) = x[0].qr()?;
            Ok(vec![q, r])
        };
        check_vjp(
            &format!("qr {}x{}", dims[0], dims[1]),
            &f,
            std::slice::from_ref(&a),
            &mut rng,
        );
        // R alone and Q alone (the other's cotangent is zero).
        check_vjp(
            &format!("qr {}x{}, R only", dims[0], dims[1]),
            &|x| one(Ok(x[0].qr()?.1)),
            std::slice::from_ref(&a),
            &mut rng,
        );
        check_vjp(
            &format!("qr {}x{}, Q only", dims[0], dims[1]),
            &|x| one(Ok(x[0].qr()?.0)),
            &[a],
            &mut rng,
        );
    }
}

#[test]
fn jvps_through_the_transpose_of_the_vjp() {
    let mut rng = TestRng::new(7);
    let (a, b) = (random(&mut rng, &[3, 4]), random(&mut rng, &[4, 2]));
    check_jvp("matmul", &|x| one(x[0].matmul(&x[1])), &[a, b], &mut rng);
    let (a, b) = (shifted(&mut rng, 4, 3.0), random(&mut rng, &[4]));
    check_jvp("solve", &|x| one(x[0].solve(&x[1])), &[a, b], &mut rng);
    let a = shifted(&mut rng, 3, 2.5);
    check_jvp(
        "inv",
        &|x| one(x[0].inv()),
        std::slice::from_ref(&a),
        &mut rng,
    );
    check_jvp("logdet", &|x| one(x[0].logdet()), &[a], &mut rng);
    let a = spd(&mut rng, 4);
    check_jvp(
        "cholesky",
        &|x| one(((&x[0] + &x[0].t()?)? * 0.5)?.cholesky()),
        &[a],
        &mut rng,
    );
    let a = random(&mut rng, &[5, 3]);
    check_jvp(
        "qr",
        &|x| {
            let (q, r) = x[0].qr()?;
            Ok(vec![q, r])
        },
        &[a],
        &mut rng,
    );
}

#[test]
fn second_derivatives() {
    let mut rng = TestRng::new(8);
    // The gradient of <grad logdet(A), V> = <A⁻ᵀ, V> against differences of
    // the first gradient.
    let a = shifted(&mut rng, 3, 2.5);
    let v = random(&mut rng, &[3, 3]);
    let vv = v.clone();
    check_vjp(
        "grad of grad logdet",
        &move |x| {
            let g = autodiff::grad(|y| y[0].logdet(), &[x[0].clone()])?;
            one((&g[0] * &vv)?.sum())
        },
        &[a],
        &mut rng,
    );
    let (a, b) = (shifted(&mut rng, 3, 3.0), random(&mut rng, &[3, 2]));
    let v = random(&mut rng, &[3, 2]);
    check_vjp(
        "grad of grad solve",
        &move |x| {
            let g = autodiff::grad(
                |y| (y[0].solve(&y[1])? * &v)?.sum(),
                &[x[0].clone(), x[1].clone()],
            )?;
            one(g[0].sum()? + &g[1].sum()?)
        },
        &[a, b],
        &mut rng,
    );
    let a = spd(&mut rng, 3);
    check_vjp(
        "grad of grad cholesky",
        &|x| {
            let g = autodiff::grad(
                |y| {
                    let r = ((&y[0] + &y[0].t()?)? * 0.5)?.cholesky()?;
                    (&r * &r)?.sum()
                },
                &[x[0].clone()],
            )?;
            one((&g[0] * &x[0])?.sum())
        },
        &[a],
        &mut rng,
    );
}

#[test]
fn a_singular_matrix_has_no_determinant_gradient() {
    let s = Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 4.0]]).unwrap();
    let g = autodiff::grad(|x| x[0].det(), &[s]).unwrap();
    assert!(matches!(g[0].eval(), Err(Error::Singular { .. })));
}

#[test]
fn float32_gradients_stay_float32_and_agree_with_float64() {
    let mut rng = TestRng::new(9);
    let a = spd(&mut rng, 4);
    let b = random(&mut rng, &[4, 2]);
    let f = |x: &[Array]| -> Result<Array> {
        let r = x[0].cholesky()?;
        let (q, rr) = x[0].qr()?;
        let s = x[0].solve(&x[1])?;
        ((r.sum()? + &q.sum()?)? + &(rr.sum()? + &s.sum()?)?)? + &x[0].logdet()?
    };
    let g64 = autodiff::grad(f, &[a.clone(), b.clone()]).unwrap();
    let (a32, b32) = (
        a.astype(gearbox_core::DType::F32).unwrap(),
        b.astype(gearbox_core::DType::F32).unwrap(),
    );
    let g32 = autodiff::grad(f, &[a32, b32]).unwrap();
    for (g, h) in g32.iter().zip(&g64) {
        assert_eq!(g.dtype(), gearbox_core::DType::F32);
        let g = values(&g.astype(gearbox_core::DType::F64).unwrap());
        let h = values(h);
        let scale = h.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (x, y) in g.iter().zip(&h) {
            assert!((x - y).abs() < 1e-4 * scale, "f32 {x} f64 {y}");
        }
    }
}
