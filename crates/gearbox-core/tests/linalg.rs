//! Dense linear algebra against plain f64 references written here: naive
//! triple loops for products, residuals for solve/inv/cholesky/qr, and an LU
//! or closed forms for det. Random inputs come from a seeded splitmix64.

use gearbox_core::ops::linalg::{Product, ProductKind};
use gearbox_core::{Array, DType, Error};

/// Sizes straddling faer's block boundaries.
const SIZES: [usize; 7] = [1, 2, 3, 17, 127, 128, 129];

/// Rectangular products `(m, k, n)` and QR shapes `(m, n)` at the same boundaries.
#[rustfmt::skip]
const ODD_PRODUCTS: [(usize, usize, usize); 5] =
    [(1, 129, 3), (129, 1, 17), (17, 128, 127), (128, 3, 129), (2, 127, 1)];
#[rustfmt::skip]
const QR_SHAPES: [(usize, usize); 8] =
    [(1, 1), (3, 2), (2, 3), (17, 17), (129, 17), (17, 129), (128, 127), (127, 128)];

/// splitmix64, mapped to uniform values in (-1, 1) that are never 0.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        // (k + 1/2) / 2^53 is never 1/2, so the result is never 0.
        let u = ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        2.0 * u - 1.0
    }
    /// An `m x n` column-major matrix.
    fn mat(&mut self, m: usize, n: usize) -> Vec<f64> {
        (0..m * n).map(|_| self.uniform()).collect()
    }
}

fn arr(dims: &[usize], v: &[f64]) -> Array {
    Array::from_vec(dims.to_vec(), v.to_vec()).unwrap()
}

fn arr32(dims: &[usize], v: &[f64]) -> Array {
    Array::from_vec(dims.to_vec(), v.iter().map(|&x| x as f32).collect()).unwrap()
}

/// `A (m x k) · B (k x n)`, column-major, naive.
fn naive_mm(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for j in 0..n {
        for p in 0..k {
            let bpj = b[p + j * k];
            for i in 0..m {
                c[i + j * m] += a[i + p * m] * bpj;
            }
        }
    }
    c
}

/// The transpose of an `m x n` column-major matrix.
fn tr(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    let mut t = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            t[j + i * n] = a[i + j * m];
        }
    }
    t
}

fn eye(n: usize) -> Vec<f64> {
    (0..n * n)
        .map(|p| (p % (n + 1) == 0) as u8 as f64)
        .collect()
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Asserts `max|got - want| <= tol * max(1, max|want|)`.
fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    let err = got
        .iter()
        .zip(want)
        .fold(0.0f64, |m, (g, w)| m.max((g - w).abs()));
    let bound = tol * max_abs(want).max(1.0);
    assert!(err <= bound, "{what}: error {err:e} exceeds {bound:e}");
}

/// Tolerance per unit of inner dimension: f64 about 1e-12 at n ~ 100, f32 ~1e-4.
fn tol(dtype: DType, n: usize) -> f64 {
    let unit = if dtype == DType::F32 { 1e-6 } else { 1e-14 };
    unit * n.max(1) as f64
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_f64_vec().unwrap()
}

#[test]
fn matmul_matches_naive_at_block_boundaries() {
    let mut rng = Rng(1);
    let shapes = SIZES.iter().map(|&n| (n, n, n)).chain(ODD_PRODUCTS);
    for (m, k, n) in shapes {
        let (a, b) = (rng.mat(m, k), rng.mat(k, n));
        let want = naive_mm(&a, &b, m, k, n);
        for dt in [DType::F64, DType::F32] {
            let mk = if dt == DType::F32 { arr32 } else { arr };
            let c = mk(&[m, k], &a).matmul(&mk(&[k, n], &b)).unwrap();
            assert_eq!((c.dims(), c.dtype()), (&[m, n][..], dt));
            assert_close(
                &vals(&c),
                &want,
                tol(dt, k),
                &format!("{dt} matmul {m}x{k}x{n}"),
            );
        }
    }
}

#[test]
fn a_wide_gram_matrix_is_the_product_and_exactly_symmetric() {
    // crossprod(x, x) from 256 columns takes the triangular product.
    let mut rng = Rng(7);
    for (n, p) in [(300, 256), (97, 261)] {
        let x = rng.mat(n, p);
        let want = naive_mm(&tr(&x, n, p), &x, p, n, p);
        for dt in [DType::F64, DType::F32] {
            let mk = if dt == DType::F32 { arr32 } else { arr };
            let a = mk(&[n, p], &x);
            let got = vals(&a.crossprod(&a).unwrap());
            assert_close(&got, &want, tol(dt, n), &format!("{dt} gram {n}x{p}"));
            for j in 0..p {
                for i in 0..j {
                    assert_eq!(got[i + j * p], got[j + i * p], "{dt} ({i}, {j})");
                }
            }
        }
    }
}

#[test]
fn crossprod_and_tcrossprod_match_explicit_transposes() {
    let mut rng = Rng(2);
    for (m, k, n) in [(1, 1, 1), (3, 2, 17), (129, 17, 128), (127, 129, 2)] {
        // crossprod: A is k x m, B is k x n.
        let (a, b) = (rng.mat(k, m), rng.mat(k, n));
        let want = naive_mm(&tr(&a, k, m), &b, m, k, n);
        let c = arr(&[k, m], &a).crossprod(&arr(&[k, n], &b)).unwrap();
        assert_close(&vals(&c), &want, tol(DType::F64, k), "crossprod");
        // tcrossprod: A is m x k, B is n x k.
        let (a, b) = (rng.mat(m, k), rng.mat(n, k));
        let want = naive_mm(&a, &tr(&b, n, k), m, k, n);
        let c = arr32(&[m, k], &a).tcrossprod(&arr32(&[n, k], &b)).unwrap();
        assert_eq!(c.dtype(), DType::F32);
        assert_close(&vals(&c), &want, tol(DType::F32, k), "tcrossprod f32");
    }
}

#[test]
fn vectors_are_columns() {
    let mut rng = Rng(3);
    let (a, v) = (rng.mat(17, 5), rng.mat(5, 1));
    let y = arr(&[17, 5], &a).matmul(&arr(&[5], &v)).unwrap();
    assert_eq!(y.dims(), &[17]);
    assert_close(
        &vals(&y),
        &naive_mm(&a, &v, 17, 5, 1),
        1e-13,
        "matrix · vector",
    );
    let (u, w) = (rng.mat(4, 1), rng.mat(1, 3));
    let o = arr(&[4], &u).matmul(&arr(&[1, 3], &w)).unwrap();
    assert_eq!(o.dims(), &[4, 3]);
    assert_close(&vals(&o), &naive_mm(&u, &w, 4, 1, 3), 1e-15, "column · row");
    let g = arr(&[17, 5], &a)
        .crossprod(&arr(&[17], &rng.mat(17, 1)))
        .unwrap();
    assert_eq!(g.dims(), &[5]);
}

#[test]
fn dot_and_outer() {
    let mut rng = Rng(4);
    for n in SIZES {
        let (u, v) = (rng.mat(n, 1), rng.mat(n, 1));
        let want: f64 = u.iter().zip(&v).map(|(a, b)| a * b).sum();
        let d = arr(&[n], &u).dot(&arr(&[n], &v)).unwrap();
        assert_eq!(d.ndim(), 0);
        assert_close(&[d.item().unwrap()], &[want], tol(DType::F64, n), "dot");
        let w = rng.mat(3, 1);
        let o = arr32(&[n], &u).outer(&arr32(&[3], &w)).unwrap();
        assert_eq!((o.dims(), o.dtype()), (&[n, 3][..], DType::F32));
        assert_close(&vals(&o), &naive_mm(&u, &w, n, 1, 3), 1e-6, "outer");
    }
}

#[test]
fn dtype_rules() {
    let i = Array::from_vec([2, 2], vec![1i64, 2, 3, 4]).unwrap();
    let b = Array::from_vec([2, 2], vec![true, false, false, true]).unwrap();
    let f32m = Array::from_vec([2, 2], vec![1.0f32, 0.0, 0.0, 1.0]).unwrap();
    let f64m = arr(&[2, 2], &[1.0, 0.0, 0.0, 1.0]);
    assert_eq!(i.matmul(&b).unwrap().dtype(), DType::F64);
    assert_eq!(f32m.matmul(&f64m).unwrap().dtype(), DType::F64);
    assert_eq!(f32m.matmul(&i).unwrap().dtype(), DType::F64);
    assert_eq!(f32m.matmul(&f32m).unwrap().dtype(), DType::F32);
    assert_eq!(
        i.matmul(&b).unwrap().to_vec::<f64>().unwrap(),
        vec![1.0, 2.0, 3.0, 4.0]
    );
    assert_eq!(i.det().unwrap().dtype(), DType::F64);
    assert!((i.det().unwrap().item().unwrap() + 2.0).abs() < 1e-12);
    assert_eq!(f32m.inv().unwrap().dtype(), DType::F32);
    assert_eq!(
        f32m.solve(&i.cols(0..1).unwrap()).unwrap().dtype(),
        DType::F64
    );
    let (q, r) = i.qr().unwrap();
    assert_eq!((q.dtype(), r.dtype()), (DType::F64, DType::F64));
}

#[test]
fn products_are_lazy_library_ops() {
    let a = arr(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let c = a.matmul(&a).unwrap();
    assert!(!c.is_evaluated());
    assert!(c.op().unwrap().library_call().is_some());
    assert!(a.solve(&a).unwrap().op().unwrap().library_call().is_some());
    assert_eq!(a.det().unwrap().op().unwrap().name(), "det");
    let one_input = Array::from_op(Product(ProductKind::MatMul), vec![a.clone()]);
    assert!(matches!(one_input, Err(Error::InvalidArgument { .. })));
}

#[test]
fn empty_matrices() {
    let z = |m: usize, n: usize| arr(&[m, n], &vec![0.0; m * n]);
    let c = z(3, 0).matmul(&z(0, 4)).unwrap();
    assert_eq!((c.dims(), vals(&c)), (&[3, 4][..], vec![0.0; 12]));
    assert_eq!(z(0, 3).matmul(&z(3, 2)).unwrap().dims(), &[0, 2]);
    assert_eq!(z(2, 0).crossprod(&z(2, 0)).unwrap().dims(), &[0, 0]);
    let e = arr(&[0], &[]);
    assert_eq!(e.dot(&e).unwrap().item().unwrap(), 0.0);
    assert_eq!(e.outer(&arr(&[2], &[1.0, 2.0])).unwrap().dims(), &[0, 2]);
    assert_eq!(z(0, 0).det().unwrap().item().unwrap(), 1.0);
    assert_eq!(z(0, 0).inv().unwrap().dims(), &[0, 0]);
    assert_eq!(z(0, 0).cholesky().unwrap().dims(), &[0, 0]);
    let x = z(0, 0).solve(&e).unwrap();
    assert_eq!((x.dims(), vals(&x)), (&[0][..], vec![]));
    assert_eq!(z(0, 0).solve(&z(0, 3)).unwrap().dims(), &[0, 3]);
    let x = arr(&[2, 2], &[2.0, 0.0, 0.0, 2.0]).solve(&z(2, 0)).unwrap();
    assert_eq!(vals(&x).len(), 0);
    for (m, n) in [(3, 0), (0, 3), (0, 0)] {
        let (q, r) = z(m, n).qr().unwrap();
        let p = m.min(n);
        assert_eq!((q.dims(), r.dims()), (&[m, p][..], &[p, n][..]));
        assert!(vals(&q).is_empty() && vals(&r).is_empty());
    }
}

/// `‖A X − B‖ / (‖A‖ ‖X‖ + ‖B‖)` in the max norm, computed in f64.
fn backward_error(a: &[f64], x: &[f64], b: &[f64], n: usize, k: usize) -> f64 {
    let ax = naive_mm(a, x, n, n, k);
    let r: Vec<f64> = ax.iter().zip(b).map(|(p, q)| p - q).collect();
    max_abs(&r) / (n as f64 * max_abs(a) * max_abs(x) + max_abs(b))
}

#[test]
fn solve_satisfies_the_system() {
    let mut rng = Rng(5);
    for n in SIZES {
        let a = rng.mat(n, n);
        for (dt, eps) in [
            (DType::F64, f64::EPSILON),
            (DType::F32, f32::EPSILON as f64),
        ] {
            let mk = if dt == DType::F32 { arr32 } else { arr };
            let b = rng.mat(n, 3);
            let x = mk(&[n, n], &a).solve(&mk(&[n, 3], &b)).unwrap();
            assert_eq!((x.dims(), x.dtype()), (&[n, 3][..], dt));
            let berr = backward_error(&a, &vals(&x), &b, n, 3);
            assert!(berr <= 10.0 * eps * n as f64, "{dt} solve n={n}: {berr:e}");
            let b1 = rng.mat(n, 1);
            let x1 = mk(&[n, n], &a).solve(&mk(&[n], &b1)).unwrap();
            assert_eq!(x1.dims(), &[n]);
            let berr = backward_error(&a, &vals(&x1), &b1, n, 1);
            assert!(
                berr <= 10.0 * eps * n as f64,
                "{dt} solve vector n={n}: {berr:e}"
            );
        }
    }
}

#[test]
fn inv_times_matrix_is_identity() {
    let mut rng = Rng(6);
    for n in SIZES {
        let a = rng.mat(n, n);
        for (dt, eps) in [
            (DType::F64, f64::EPSILON),
            (DType::F32, f32::EPSILON as f64),
        ] {
            let mk = if dt == DType::F32 { arr32 } else { arr };
            let ai = mk(&[n, n], &a).inv().unwrap();
            assert_eq!((ai.dims(), ai.dtype()), (&[n, n][..], dt));
            let ai = vals(&ai);
            let berr = backward_error(&a, &ai, &eye(n), n, n);
            assert!(berr <= 10.0 * eps * n as f64, "{dt} inv n={n}: {berr:e}");
        }
    }
}

#[test]
fn inv_upper_inverts_the_upper_triangle_and_reads_nothing_below() {
    let mut rng = Rng(61);
    for n in SIZES {
        // A well-conditioned upper triangle, noise below it (never read).
        let mut a = rng.mat(n, n);
        for j in 0..n {
            a[j + j * n] = 2.0 + a[j + j * n].abs();
        }
        let upper: Vec<f64> = (0..n * n)
            .map(|at| if at % n <= at / n { a[at] } else { 0.0 })
            .collect();
        for (dt, eps) in [
            (DType::F64, f64::EPSILON),
            (DType::F32, f32::EPSILON as f64),
        ] {
            let mk = if dt == DType::F32 { arr32 } else { arr };
            let ri = mk(&[n, n], &a).inv_upper().unwrap();
            assert_eq!((ri.dims(), ri.dtype()), (&[n, n][..], dt));
            let ri = vals(&ri);
            for (at, v) in ri.iter().enumerate() {
                if at % n > at / n {
                    assert_eq!(*v, 0.0, "{dt} n={n}: below the diagonal");
                }
            }
            let berr = backward_error(&upper, &ri, &eye(n), n, n);
            assert!(
                berr <= 10.0 * eps * n as f64,
                "{dt} inv_upper n={n}: {berr:e}"
            );
        }
    }
    let zero_pivot = arr(&[2, 2], &[1.0, 0.0, 3.0, 0.0]);
    let e = zero_pivot.inv_upper().unwrap().eval().unwrap_err();
    assert!(
        matches!(
            e,
            Error::Singular {
                op: "inv_upper",
                ..
            }
        ),
        "{e}"
    );
    let spread = arr(&[2, 2], &[1.0, 0.0, 0.0, 1e-17]);
    assert!(matches!(
        spread.inv_upper().unwrap().eval(),
        Err(Error::Singular { .. })
    ));
    let nan = arr(&[2, 2], &[1.0, f64::NAN, 0.0, 1.0]);
    assert!(matches!(
        nan.inv_upper().unwrap().eval(),
        Err(Error::NonFinite { .. })
    ));
    assert!(arr(&[2, 3], &[1.0; 6]).inv_upper().is_err());
    assert_eq!(
        arr(&[0, 0], &[])
            .inv_upper()
            .unwrap()
            .to_vec::<f64>()
            .unwrap(),
        Vec::<f64>::new()
    );
}

/// Determinant by Gaussian elimination with partial pivoting, in f64.
fn ref_det(a: &[f64], n: usize) -> f64 {
    let mut m = a.to_vec();
    let mut det = 1.0;
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| m[i + c * n].abs().total_cmp(&m[j + c * n].abs()))
            .unwrap();
        if p != c {
            for j in 0..n {
                m.swap(c + j * n, p + j * n);
            }
            det = -det;
        }
        let piv = m[c + c * n];
        det *= piv;
        for i in c + 1..n {
            let l = m[i + c * n] / piv;
            for j in c..n {
                m[i + j * n] -= l * m[c + j * n];
            }
        }
    }
    det
}

#[test]
fn det_matches_references() {
    let mut rng = Rng(7);
    for n in SIZES {
        let a = rng.mat(n, n);
        let want = ref_det(&a, n);
        let got = arr(&[n, n], &a).det().unwrap();
        assert_eq!((got.ndim(), got.dtype()), (0, DType::F64));
        let rel = (got.item().unwrap() - want).abs() / want.abs();
        assert!(
            rel <= 1e-13 * (n * n) as f64,
            "det n={n}: relative error {rel:e}"
        );
        if n <= 17 {
            let g32 = arr32(&[n, n], &a).det().unwrap();
            assert_eq!(g32.dtype(), DType::F32);
            let rel = (g32.item().unwrap() - want).abs() / want.abs();
            assert!(rel <= 1e-5 * (n * n) as f64, "f32 det n={n}: {rel:e}");
        }
    }
    // Closed forms: 2 x 2, 3 x 3 (Sarrus), triangular, a permutation.
    let (a, b, c, d) = (0.3, -1.7, 2.5, 0.9);
    let two = Array::from_rows(&[vec![a, b], vec![c, d]]).unwrap();
    assert!((two.det().unwrap().item().unwrap() - (a * d - b * c)).abs() < 1e-15);
    let m = [[2.0, -1.0, 0.5], [1.5, 3.0, -2.0], [-0.5, 4.0, 1.0]];
    let sarrus =
        m[0][0] * m[1][1] * m[2][2] + m[0][1] * m[1][2] * m[2][0] + m[0][2] * m[1][0] * m[2][1]
            - m[0][2] * m[1][1] * m[2][0]
            - m[0][0] * m[1][2] * m[2][1]
            - m[0][1] * m[1][0] * m[2][2];
    let three = Array::from_rows(&m.map(|r| r.to_vec())).unwrap();
    assert!((three.det().unwrap().item().unwrap() - sarrus).abs() < 1e-13);
    let mut t = rng.mat(17, 17);
    for j in 0..17 {
        for i in j + 1..17 {
            t[i + j * 17] = 0.0;
        }
    }
    let prod: f64 = (0..17).map(|i| t[i * 18]).product();
    let got = arr(&[17, 17], &t).det().unwrap().item().unwrap();
    assert!((got - prod).abs() <= 1e-14 * prod.abs());
    // The cyclic permutation [0 1 0; 0 0 1; 1 0 0], column-major.
    let perm = arr(&[3, 3], &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    assert_eq!(perm.det().unwrap().item().unwrap(), 1.0);
    let swap = Array::from_rows(&[vec![0.0, 1.0], vec![1.0, 0.0]]).unwrap();
    assert_eq!(swap.det().unwrap().item().unwrap(), -1.0);
}

#[test]
fn det_of_singular_matrices_is_zero() {
    let s = Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 4.0]]).unwrap();
    assert_eq!(s.det().unwrap().item().unwrap(), 0.0);
    // A zero column early on: no NaN from the rest of the factorization.
    let mut rng = Rng(8);
    let mut a = rng.mat(17, 17);
    a[..17].fill(0.0);
    assert_eq!(arr(&[17, 17], &a).det().unwrap().item().unwrap(), 0.0);
    assert_eq!(arr32(&[17, 17], &a).det().unwrap().item().unwrap(), 0.0);
}

/// `XᵀX + n I` for a random `X`: symmetric positive definite.
fn spd(rng: &mut Rng, n: usize) -> Vec<f64> {
    let x = rng.mat(n, n);
    let mut a = naive_mm(&tr(&x, n, n), &x, n, n, n);
    for i in 0..n {
        a[i * (n + 1)] += n as f64;
    }
    a
}

#[test]
fn cholesky_gives_upper_r_with_rtr_equal_a() {
    let mut rng = Rng(9);
    for n in SIZES {
        let a = spd(&mut rng, n);
        for dt in [DType::F64, DType::F32] {
            let mk = if dt == DType::F32 { arr32 } else { arr };
            let r = mk(&[n, n], &a).cholesky().unwrap();
            assert_eq!((r.dims(), r.dtype()), (&[n, n][..], dt));
            let r = vals(&r);
            for j in 0..n {
                for i in j + 1..n {
                    assert_eq!(r[i + j * n], 0.0, "R is upper triangular");
                }
                assert!(r[j * (n + 1)] > 0.0, "R has a positive diagonal");
            }
            let rtr = naive_mm(&tr(&r, n, n), &r, n, n, n);
            assert_close(&rtr, &a, tol(dt, n), &format!("{dt} RᵀR, n={n}"));
        }
    }
}

#[test]
fn qr_reconstructs_with_orthonormal_q() {
    let mut rng = Rng(10);
    for (m, n) in QR_SHAPES {
        let a = rng.mat(m, n);
        let p = m.min(n);
        for dt in [DType::F64, DType::F32] {
            let mk = if dt == DType::F32 { arr32 } else { arr };
            let (q, r) = mk(&[m, n], &a).qr().unwrap();
            assert_eq!((q.dims(), r.dims()), (&[m, p][..], &[p, n][..]));
            assert_eq!((q.dtype(), r.dtype()), (dt, dt));
            let (q, r) = (vals(&q), vals(&r));
            for j in 0..n {
                for i in j + 1..p {
                    assert_eq!(r[i + j * p], 0.0, "R is upper trapezoidal");
                }
            }
            let what = format!("{dt} qr {m}x{n}");
            assert_close(&naive_mm(&q, &r, m, p, n), &a, tol(dt, m.max(n)), &what);
            let qtq = naive_mm(&tr(&q, m, p), &q, p, m, p);
            assert_close(&qtq, &eye(p), tol(dt, m), &format!("{what}: QᵀQ"));
        }
    }
}

#[test]
fn qr_factors_once() {
    let a = arr(&[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 7.0]);
    let (q, r) = a.qr().unwrap();
    // r = reshape(slice(packed)); q = reshape(slice(packed)): one shared node.
    let packed_of = |x: &Array| x.inputs()[0].inputs()[0].clone();
    let packed = packed_of(&r);
    assert!(packed.same_node(&packed_of(&q)));
    q.eval().unwrap();
    assert!(
        packed.is_evaluated(),
        "evaluating Q factors once, for R too"
    );
    assert!(!r.is_evaluated());
    assert_eq!(vals(&r).len(), 4);
}

fn err_of(r: Result<Array, Error>) -> Error {
    match r.and_then(|a| a.eval().map(|_| a)) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[test]
fn shape_errors_name_the_op_and_both_shapes() {
    let a = arr(&[2, 3], &[1.0; 6]);
    let b = arr(&[4, 5], &[1.0; 20]);
    for (op, e) in [
        ("matmul", a.matmul(&b)),
        ("crossprod", a.crossprod(&b)),
        ("tcrossprod", a.tcrossprod(&b)),
    ] {
        let e = e.unwrap_err();
        assert!(
            matches!(e, Error::ShapeMismatch { op: o, .. } if o == op),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains(op) && msg.contains("[2 x 3]") && msg.contains("[4 x 5]"),
            "{msg}"
        );
    }
    let u = arr(&[3], &[1.0; 3]);
    let e = u.dot(&arr(&[4], &[1.0; 4])).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "dot", .. }), "{e}");
    let e = arr(&[3, 3], &[1.0; 9])
        .solve(&arr(&[4, 2], &[1.0; 8]))
        .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::ShapeMismatch { op: "solve", .. }), "{e}");
    assert!(msg.contains("[3 x 3]") && msg.contains("[4 x 2]"), "{msg}");
}

#[test]
fn wrong_ranks_and_non_square_are_bad_shape() {
    let cube = Array::from_vec([2, 2, 2], vec![1.0; 8]).unwrap();
    let m = arr(&[2, 2], &[1.0, 0.0, 0.0, 1.0]);
    let rect = arr(&[2, 3], &[1.0; 6]);
    let v = arr(&[2], &[1.0, 2.0]);
    let s = Array::scalar(2.0);
    let bad = [
        ("matmul", cube.matmul(&m)),
        ("matmul", m.matmul(&s)),
        ("crossprod", m.crossprod(&cube)),
        ("dot", m.dot(&m)),
        ("outer", v.outer(&m)),
        ("solve", rect.solve(&v)),
        ("solve", v.solve(&v)),
        ("solve", m.solve(&cube)),
        ("solve", m.solve(&s)),
        ("inv", rect.inv()),
        ("det", rect.det()),
        ("det", v.det()),
        ("cholesky", rect.cholesky()),
        ("qr", v.qr().map(|(q, _)| q)),
        ("qr", cube.qr().map(|(q, _)| q)),
    ];
    for (op, r) in bad {
        let e = r.unwrap_err();
        assert!(
            matches!(e, Error::BadShape { op: o, .. } if o == op),
            "{op}: {e}"
        );
    }
}

#[test]
fn singular_systems_are_errors_not_infinities() {
    let exact = arr(&[2, 2], &[1.0, 2.0, 2.0, 4.0]);
    // [1 2 3; 4 5 6; 7 8 9], column-major: rank 2, LU pivots not exactly 0.
    let numerically = arr(&[3, 3], &[1.0, 4.0, 7.0, 2.0, 5.0, 8.0, 3.0, 6.0, 9.0]);
    let mut rng = Rng(11);
    let mut big = rng.mat(129, 129);
    let col: Vec<f64> = big[..129].to_vec();
    big[129 * 64..129 * 65].copy_from_slice(&col); // column 64 = column 0
    let big = arr(&[129, 129], &big);
    for a in [&exact, &numerically, &big] {
        for a in [a.clone(), a.astype(DType::F32).unwrap()] {
            let n = a.dims()[0];
            let b = arr(&[n], &vec![1.0; n]);
            for e in [err_of(a.solve(&b)), err_of(a.inv())] {
                assert!(matches!(e, Error::Singular { .. }), "{e}");
            }
        }
    }
    let e = err_of(exact.inv());
    assert!(e.to_string().contains("exactly zero"), "{e}");
    let e = err_of(numerically.solve(&arr(&[3], &[1.0; 3])));
    assert!(e.to_string().contains("reciprocal condition"), "{e}");
    // Ill-conditioned but not singular (cond ~ 1e8) still solves in f64.
    let hilbert: Vec<f64> = (0..36)
        .map(|p| 1.0 / ((p % 6 + p / 6) as f64 + 1.0))
        .collect();
    assert!(arr(&[6, 6], &hilbert).inv().unwrap().eval().is_ok());
}

#[test]
fn cholesky_rejects_non_pd_and_non_symmetric() {
    let indefinite = Array::from_rows(&[vec![1.0, 2.0], vec![2.0, 1.0]]).unwrap();
    let e = err_of(indefinite.cholesky());
    assert!(matches!(e, Error::NotPositiveDefinite { .. }), "{e}");
    assert!(e.to_string().contains("order 2"), "{e}");
    let negative = arr(&[1, 1], &[-4.0]);
    assert!(matches!(
        err_of(negative.cholesky()),
        Error::NotPositiveDefinite { .. }
    ));
    let mut rng = Rng(12);
    let mut a = spd(&mut rng, 17);
    a[3 + 5 * 17] += 0.5; // A[3, 5] != A[5, 3]
    a[1 + 2 * 17] += 1e-13; // within tolerance
    for a in [arr(&[17, 17], &a), arr32(&[17, 17], &a)] {
        let e = err_of(a.cholesky());
        assert!(matches!(e, Error::NotPositiveDefinite { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("not symmetric") && msg.contains("[3, 5]"),
            "{msg}"
        );
    }
    // NaN and Inf are refused before the factorization (tests/linalg_nonfinite.rs).
    let nan = arr(&[2, 2], &[1.0, f64::NAN, f64::NAN, 1.0]);
    assert!(matches!(err_of(nan.cholesky()), Error::NonFinite { .. }));
}

#[test]
fn solve_recovers_a_known_solution() {
    let mut rng = Rng(13);
    let (a, x) = (rng.mat(128, 128), rng.mat(128, 2));
    let aa = arr(&[128, 128], &a);
    let b = aa.matmul(&arr(&[128, 2], &x)).unwrap();
    let got = aa.solve(&b).unwrap();
    assert_close(&vals(&got), &x, 1e-9, "solve(A, A X) = X");
}
