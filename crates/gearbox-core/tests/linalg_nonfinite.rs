//! The factorizations refuse NaN and Inf, naming the entry: random matrices
//! of several sizes with one NaN, Inf or -Inf planted at a random position,
//! in float64 and float32, for `solve` (both operands), `inv`, `det`,
//! `cholesky` and `qr`. The products propagate the values instead.

use gearbox_core::{Array, DType, Error};

/// splitmix64, for seeded positions and values.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    /// A well-conditioned `n x n` matrix (random plus `n` on the diagonal),
    /// symmetric so that it is also positive definite.
    fn spd(&mut self, n: usize) -> Vec<f64> {
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..=j {
                let v = self.uniform();
                a[i + j * n] = v;
                a[j + i * n] = v;
            }
            a[j + j * n] += n as f64;
        }
        a
    }
}

const BAD: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
const SIZES: [usize; 6] = [1, 2, 3, 17, 64, 129];

fn array(dims: &[usize], v: Vec<f64>, dtype: DType) -> Array {
    Array::from_vec(dims.to_vec(), v)
        .unwrap()
        .astype(dtype)
        .unwrap()
}

/// Evaluates `a` and returns its error (panicking if it has none).
fn error_of(a: Array) -> Error {
    match a.eval() {
        Ok(()) => panic!("no error; values {:?}", a.to_f64_vec().unwrap()),
        Err(e) => e,
    }
}

/// Checks that `e` is the NonFinite error of `op` for `operand` at `index`
/// holding `value`, and that its message names all of them.
fn assert_names(e: &Error, op: &str, operand: &str, index: &[usize], value: f64) {
    let msg = e.to_string();
    match e {
        Error::NonFinite {
            op: o,
            operand: w,
            index: at,
            value: v,
        } => {
            assert_eq!((*o, *w, at.as_slice()), (op, operand, index), "{msg}");
            assert!(
                v.to_bits() == value.to_bits() || (v.is_nan() && value.is_nan()),
                "{msg}"
            );
        }
        other => panic!("{op}: expected NonFinite, got {other}"),
    }
    let spot: Vec<String> = index.iter().map(usize::to_string).collect();
    let shown = if value.is_nan() {
        "NaN"
    } else if value > 0.0 {
        "Inf"
    } else {
        "-Inf"
    };
    let want = format!("{op}: {operand}[{}] is {shown}", spot.join(", "));
    assert!(
        msg.starts_with(&want),
        "{msg:?} does not start with {want:?}"
    );
}

#[test]
fn every_factorization_names_a_planted_non_finite_entry() {
    let mut rng = Rng(2026);
    for dtype in [DType::F64, DType::F32] {
        for n in SIZES {
            for value in BAD {
                let mut a = rng.spd(n);
                let (i, j) = (rng.below(n), rng.below(n));
                a[i + j * n] = value;
                let a = array(&[n, n], a, dtype);
                let b = array(&[n, 2], (0..2 * n).map(|_| rng.uniform()).collect(), dtype);
                let cases = [
                    ("solve", a.solve(&b).unwrap()),
                    ("inv", a.inv().unwrap()),
                    ("det", a.det().unwrap()),
                    ("cholesky", a.cholesky().unwrap()),
                    ("qr", a.qr().unwrap().0),
                ];
                for (op, result) in cases {
                    assert_names(&error_of(result), op, "A", &[i, j], value);
                }
            }
        }
    }
}

#[test]
fn qr_of_rectangular_matrices_names_the_entry() {
    let mut rng = Rng(7);
    for (m, n) in [(1, 5), (5, 1), (40, 3), (3, 40), (130, 17)] {
        for value in BAD {
            let mut a: Vec<f64> = (0..m * n).map(|_| rng.uniform()).collect();
            let (i, j) = (rng.below(m), rng.below(n));
            a[i + j * m] = value;
            for dtype in [DType::F64, DType::F32] {
                let (q, r) = array(&[m, n], a.clone(), dtype).qr().unwrap();
                assert_names(&error_of(q), "qr", "A", &[i, j], value);
                assert_names(&error_of(r), "qr", "A", &[i, j], value);
            }
        }
    }
}

#[test]
fn solve_names_a_non_finite_right_hand_side() {
    let mut rng = Rng(99);
    for n in SIZES {
        let a = array(&[n, n], rng.spd(n), DType::F64);
        for value in BAD {
            // A vector right-hand side: the entry is [i].
            let mut v: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
            let i = rng.below(n);
            v[i] = value;
            let e = error_of(a.solve(&array(&[n], v, DType::F64)).unwrap());
            assert_names(&e, "solve", "B", &[i], value);
            // A matrix right-hand side: [i, j].
            let k = 3;
            let mut m: Vec<f64> = (0..n * k).map(|_| rng.uniform()).collect();
            let (i, j) = (rng.below(n), rng.below(k));
            m[i + j * n] = value;
            let e = error_of(a.solve(&array(&[n, k], m, DType::F64)).unwrap());
            assert_names(&e, "solve", "B", &[i, j], value);
        }
    }
}

#[test]
fn the_first_entry_in_column_major_order_is_named() {
    // NaN at [2, 0] comes before Inf at [0, 1] in column-major order.
    let a = Array::from_rows(&[
        vec![1.0, f64::INFINITY, 0.0],
        vec![0.0, 1.0, 0.0],
        vec![f64::NAN, 0.0, 1.0],
    ])
    .unwrap();
    assert_names(&error_of(a.inv().unwrap()), "inv", "A", &[2, 0], f64::NAN);
}

#[test]
fn an_inf_no_longer_gives_finite_numbers() {
    // [Inf 1; 1 1]: LU's first pivot is the Inf, the multiplier 1/Inf is
    // 0, and out came [0, 1] and a finite inverse, as if nothing were wrong.
    let a = Array::from_rows(&[vec![f64::INFINITY, 1.0], vec![1.0, 1.0]]).unwrap();
    let b = Array::from_vec([2], vec![1.0, 1.0]).unwrap();
    assert_names(
        &error_of(a.solve(&b).unwrap()),
        "solve",
        "A",
        &[0, 0],
        f64::INFINITY,
    );
    assert_names(
        &error_of(a.inv().unwrap()),
        "inv",
        "A",
        &[0, 0],
        f64::INFINITY,
    );
    // Solving with the identity and [Inf, 1]: without the check both
    // entries came out NaN although the answer is [Inf, 1].
    let e = error_of(
        Array::eye(2)
            .unwrap()
            .solve(&Array::from_vec([2], vec![f64::INFINITY, 1.0]).unwrap())
            .unwrap(),
    );
    assert_names(&e, "solve", "B", &[0], f64::INFINITY);
}

#[test]
fn values_made_inside_the_graph_are_checked_too() {
    // The Inf comes from a division by zero in a fused chain that feeds the
    // factorization.
    let mut rng = Rng(5);
    let n = 17;
    let a = array(&[n, n], rng.spd(n), DType::F64);
    let mut d = vec![1.0; n * n];
    d[4 + 9 * n] = 0.0;
    let made = (&a / &array(&[n, n], d, DType::F64)).unwrap();
    let e = error_of(made.inv().unwrap());
    let value = a.get(&[4, 9]).unwrap() / 0.0;
    assert_names(&e, "inv", "A", &[4, 9], value);
}

#[test]
fn finite_inputs_still_factor_and_products_propagate() {
    let mut rng = Rng(11);
    let n = 17;
    let a = array(&[n, n], rng.spd(n), DType::F64);
    let x: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let b = a.matmul(&array(&[n], x.clone(), DType::F64)).unwrap();
    let got = a.solve(&b).unwrap().to_vec::<f64>().unwrap();
    for (g, w) in got.iter().zip(&x) {
        assert!((g - w).abs() < 1e-12, "{g} vs {w}");
    }
    // NaN and Inf go through the products as BLAS sends them (R's too).
    let mut with_nan = rng.spd(n);
    with_nan[3] = f64::NAN; // row 3 of column 0
    let c = array(&[n, n], with_nan, DType::F64).matmul(&a).unwrap();
    let c = c.to_vec::<f64>().unwrap();
    for j in 0..n {
        assert!(c[3 + j * n].is_nan(), "row 3 is NaN");
        assert!(c[2 + j * n].is_finite(), "row 2 is finite");
    }
    let v = Array::from_vec([2], vec![f64::INFINITY, 1.0]).unwrap();
    let g = v.crossprod(&v).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(g, [f64::INFINITY]);
}
