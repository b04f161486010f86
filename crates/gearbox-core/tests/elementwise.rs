//! Elementwise operations against plain f64 references on random inputs, for
//! f64 and f32, with broadcasting, scalars and NaN.

mod common;

use common::{assert_close, TestRng};
use gearbox_core::{Array, BinaryOp, DType, UnaryOp};

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// A unary op, its f64 reference, and an input range where it is defined.
type UnaryCase = (UnaryOp, fn(f64) -> f64, f64, f64);

/// Every unary op with its reference and input range.
fn unary_cases() -> Vec<UnaryCase> {
    use UnaryOp::*;
    vec![
        (Neg, |x| -x, -5.0, 5.0),
        (Abs, f64::abs, -5.0, 5.0),
        (
            Sign,
            |x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            },
            -5.0,
            5.0,
        ),
        (Floor, f64::floor, -5.0, 5.0),
        (Ceil, f64::ceil, -5.0, 5.0),
        (Round, f64::round_ties_even, -5.0, 5.0),
        (Sqrt, f64::sqrt, 0.01, 50.0),
        (Exp, f64::exp, -20.0, 20.0),
        (Expm1, f64::exp_m1, -1e-3, 1e-3),
        (Log, f64::ln, 1e-3, 1e3),
        (Log1p, f64::ln_1p, -0.5, 1e-3),
        (Sin, f64::sin, -10.0, 10.0),
        (Cos, f64::cos, -10.0, 10.0),
        (Tan, f64::tan, -1.4, 1.4),
        (Tanh, f64::tanh, -5.0, 5.0),
        (Sigmoid, sigmoid, -30.0, 30.0),
        (Softplus, |x| (1.0 + x.exp()).ln(), -20.0, 20.0),
    ]
}

fn apply(x: &Array, op: UnaryOp) -> Array {
    use UnaryOp::*;
    match op {
        Neg => x.neg(),
        Abs => x.abs(),
        Sign => x.sign(),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Round => x.round(),
        Sqrt => x.sqrt(),
        Exp => x.exp(),
        Expm1 => x.expm1(),
        Log => x.log(),
        Log1p => x.log1p(),
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Tanh => x.tanh(),
        Sigmoid => x.sigmoid(),
        Softplus => x.softplus(),
        IsNan => x.isnan(),
        IsFinite => x.isfinite(),
        Not => x.not(),
    }
    .unwrap()
}

#[test]
fn unary_ops_match_f64_reference() {
    let mut rng = TestRng::new(1);
    // 40_000 crosses the parallel threshold; 129 does not.
    for n in [1, 129, 40_000] {
        for (op, reference, lo, hi) in unary_cases() {
            let data = rng.vec(n, lo, hi);
            let want: Vec<f64> = data.iter().map(|&v| reference(v)).collect();
            let x = Array::from_vec([n], data.clone()).unwrap();
            let got = apply(&x, op).to_vec::<f64>().unwrap();
            assert_close(&got, &want, 1e-14, op.name());

            let x32 =
                Array::from_vec([n], data.iter().map(|&v| v as f32).collect::<Vec<_>>()).unwrap();
            let y32 = apply(&x32, op);
            assert_eq!(y32.dtype(), DType::F32, "{} keeps f32", op.name());
            let want32: Vec<f64> = data.iter().map(|&v| reference(v as f32 as f64)).collect();
            assert_close(&y32.to_f64_vec().unwrap(), &want32, 2e-6, op.name());
        }
    }
}

#[test]
fn unary_edge_values() {
    let x = Array::from_vec([6], vec![0.0, -0.0, f64::NAN, f64::INFINITY, -1.0, 2.5]).unwrap();
    let sign = x.sign().unwrap().to_vec::<f64>().unwrap();
    assert_eq!(&sign[..2], &[0.0, 0.0]);
    assert!(sign[2].is_nan());
    assert_eq!(&sign[3..], &[1.0, -1.0, 1.0]);
    assert_eq!(
        x.round().unwrap().get(&[5]).unwrap(),
        2.0,
        "round half to even"
    );
    assert!(x.log().unwrap().get(&[4]).unwrap().is_nan());
    assert_eq!(x.log().unwrap().get(&[0]).unwrap(), f64::NEG_INFINITY);
    assert_eq!(
        x.isnan().unwrap().to_vec::<bool>().unwrap(),
        vec![false, false, true, false, false, false]
    );
    assert_eq!(
        x.isfinite().unwrap().to_vec::<bool>().unwrap(),
        vec![true, true, false, false, true, true]
    );
    let big = Array::from_vec([2], vec![800.0, -800.0]).unwrap();
    assert_eq!(
        big.sigmoid().unwrap().to_vec::<f64>().unwrap(),
        vec![1.0, 0.0]
    );
    assert_eq!(
        big.softplus().unwrap().to_vec::<f64>().unwrap(),
        vec![800.0, 0.0]
    );
}

#[test]
fn integer_inputs_follow_r_dtype_rules() {
    let x = Array::from_vec([3], vec![-2i64, 0, 3]).unwrap();
    assert_eq!(x.abs().unwrap().to_vec::<i64>().unwrap(), vec![2, 0, 3]);
    assert_eq!(x.sqrt().unwrap().dtype(), DType::F64);
    assert_eq!(
        x.div_scalar(2.0).unwrap().to_vec::<f64>().unwrap(),
        vec![-1.0, 0.0, 1.5]
    );
    assert_eq!(
        x.add_scalar(1.0).unwrap().to_vec::<i64>().unwrap(),
        vec![-1, 1, 4]
    );
    let b = Array::from_vec([2], vec![true, false]).unwrap();
    assert_eq!(b.neg().unwrap().to_vec::<i64>().unwrap(), vec![-1, 0]);
    assert_eq!(
        b.not().unwrap().to_vec::<bool>().unwrap(),
        vec![false, true]
    );
}

fn binary_reference(op: BinaryOp, a: f64, b: f64) -> f64 {
    use BinaryOp::*;
    let t = |c: bool| c as u8 as f64;
    match op {
        Add => a + b,
        Sub => a - b,
        Mul => a * b,
        Div => a / b,
        Pow => a.powf(b),
        Minimum => a.min(b),
        Maximum => a.max(b),
        Atan2 => a.atan2(b),
        Eq => t(a == b),
        Ne => t(a != b),
        Lt => t(a < b),
        Le => t(a <= b),
        Gt => t(a > b),
        Ge => t(a >= b),
        And | Or => unreachable!("logical ops are tested separately"),
    }
}

/// Broadcast reference: the value at output multi-index `idx` reads each input
/// at the same index, with size-1 axes pinned to 0.
fn broadcast_ref(
    a: &[f64],
    sa: &[usize],
    b: &[f64],
    sb: &[usize],
    out: &[usize],
    f: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    let n: usize = out.iter().product();
    let offset = |s: &[usize], idx: &[usize]| {
        let mut off = 0;
        let mut stride = 1;
        for (ax, &i) in idx.iter().enumerate() {
            let d = s.get(ax).copied().unwrap_or(1);
            if d != 1 {
                off += i * stride;
            }
            stride *= d;
        }
        off
    };
    (0..n)
        .map(|lin| {
            let mut rem = lin;
            let idx: Vec<usize> = out
                .iter()
                .map(|&d| {
                    let i = rem % d;
                    rem /= d;
                    i
                })
                .collect();
            f(a[offset(sa, &idx)], b[offset(sb, &idx)])
        })
        .collect()
}

#[test]
fn binary_ops_with_broadcasting_match_reference() {
    use BinaryOp::*;
    let ops = [
        Add, Sub, Mul, Div, Pow, Minimum, Maximum, Atan2, Eq, Ne, Lt, Le, Gt, Ge,
    ];
    let shapes: &[(&[usize], &[usize], &[usize])] = &[
        (&[7, 5], &[7, 5], &[7, 5]),
        (&[7, 5], &[7], &[7, 5]),      // column vector
        (&[7, 5], &[1, 5], &[7, 5]),   // row vector
        (&[7, 1], &[1, 5], &[7, 5]),   // outer broadcast
        (&[], &[4, 3, 2], &[4, 3, 2]), // scalar
        (&[4, 1, 2], &[1, 3], &[4, 3, 2]),
        (&[300, 200], &[300], &[300, 200]), // parallel path
    ];
    let mut rng = TestRng::new(2);
    for &(sa, sb, so) in shapes {
        let na: usize = sa.iter().product();
        let nb: usize = sb.iter().product();
        let a = rng.vec(na, 0.1, 3.0);
        let mut b = rng.vec(nb, 0.1, 3.0);
        b[0] = a[0]; // make equality happen at least once
        let xa = Array::from_vec(sa.to_vec(), a.clone()).unwrap();
        let xb = Array::from_vec(sb.to_vec(), b.clone()).unwrap();
        for op in ops {
            let y = xa.binary(op, &xb).unwrap();
            assert_eq!(y.dims(), so, "{} {:?} {:?}", op.name(), sa, sb);
            let want = broadcast_ref(&a, sa, &b, sb, so, |p, q| binary_reference(op, p, q));
            assert_close(&y.to_f64_vec().unwrap(), &want, 1e-15, op.name());
        }
    }
}

#[test]
fn minimum_and_maximum_propagate_nan_and_comparisons_with_nan_are_false() {
    let a = Array::from_vec([3], vec![1.0, f64::NAN, 3.0]).unwrap();
    let b = Array::from_vec([3], vec![2.0, 0.0, f64::NAN]).unwrap();
    let mn = a.minimum(&b).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(mn[0], 1.0);
    assert!(mn[1].is_nan() && mn[2].is_nan());
    let mx = a.maximum(&b).unwrap().to_vec::<f64>().unwrap();
    assert!(mx[1].is_nan() && mx[2].is_nan());
    assert_eq!(
        a.lt(&b).unwrap().to_vec::<bool>().unwrap(),
        vec![true, false, false]
    );
    assert_eq!(
        a.ne(&b).unwrap().to_vec::<bool>().unwrap(),
        vec![true, true, true]
    );
}

#[test]
fn mixed_dtypes_promote() {
    let a = Array::from_vec([2], vec![1.5f32, 2.5]).unwrap();
    let b = Array::from_vec([2], vec![1.0f64, 2.0]).unwrap();
    let c = Array::from_vec([2], vec![3i64, 4]).unwrap();
    assert_eq!(a.add(&b).unwrap().dtype(), DType::F64);
    assert_eq!(a.add(&c).unwrap().dtype(), DType::F32);
    assert_eq!(
        a.mul_scalar(2.0).unwrap().dtype(),
        DType::F32,
        "a float scalar adopts the array's dtype"
    );
    assert_eq!(
        c.mul_scalar(2.5).unwrap().to_vec::<f64>().unwrap(),
        vec![7.5, 10.0]
    );
    assert_eq!(
        c.pow_scalar(2.0).unwrap().to_vec::<f64>().unwrap(),
        vec![9.0, 16.0]
    );
}

#[test]
fn logical_ops_where_and_clamp() {
    let mut rng = TestRng::new(3);
    let a = rng.vec(50, -1.0, 1.0);
    let b = rng.vec(50, -1.0, 1.0);
    let xa = Array::from_vec([10, 5], a.clone()).unwrap();
    let xb = Array::from_vec([10, 5], b.clone()).unwrap();
    let pa = xa.gt_scalar(0.0).unwrap();
    let pb = xb.gt_scalar(0.0).unwrap();
    let and = pa.and(&pb).unwrap().to_vec::<bool>().unwrap();
    let or = pa.or(&pb).unwrap().to_vec::<bool>().unwrap();
    for i in 0..50 {
        assert_eq!(and[i], a[i] > 0.0 && b[i] > 0.0);
        assert_eq!(or[i], a[i] > 0.0 || b[i] > 0.0);
    }
    let w = Array::where_(&pa, &xa, &xb)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let want: Vec<f64> = (0..50)
        .map(|i| if a[i] > 0.0 { a[i] } else { b[i] })
        .collect();
    assert_eq!(w, want);
    // where with a scalar branch and a column mask
    let col = Array::from_vec([10], (0..10).map(|i| i % 2 == 0).collect::<Vec<_>>()).unwrap();
    let w2 = Array::where_(&col, &xa, &Array::scalar(-9.0)).unwrap();
    assert_eq!(w2.dims(), &[10, 5]);
    assert_eq!(w2.get(&[1, 3]).unwrap(), -9.0);
    assert_eq!(w2.get(&[2, 3]).unwrap(), a[2 + 30]);
    let c = xa.clamp(-0.5, 0.5).unwrap().to_vec::<f64>().unwrap();
    let want: Vec<f64> = a.iter().map(|v| v.clamp(-0.5, 0.5)).collect();
    assert_eq!(c, want);
}

#[test]
fn operators_chain() {
    let mut rng = TestRng::new(4);
    let xv = rng.vec(64, -2.0, 2.0);
    let yv = rng.vec(64, -2.0, 2.0);
    let x = Array::from_vec([8, 8], xv.clone()).unwrap();
    let y = Array::from_vec([8, 8], yv.clone()).unwrap();
    // the benchmark's fused chain: exp(x)*y + sin(x) - 2*y
    let z = (x.exp().unwrap() * &y + &x.sin().unwrap() - &(2.0 * &y).unwrap()).unwrap();
    let want: Vec<f64> = xv
        .iter()
        .zip(&yv)
        .map(|(a, b)| a.exp() * b + a.sin() - 2.0 * b)
        .collect();
    assert_close(&z.to_vec::<f64>().unwrap(), &want, 1e-15, "chain");
    let neg = (-&x).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(neg, xv.iter().map(|v| -v).collect::<Vec<_>>());
}

/// The op lists come from the definitions (the CPU interpreter's dispatch
/// names each op through the same list, so the compiler rejects a list that
/// misses one): each op once, under its own name.
#[test]
fn every_elementwise_op_is_listed_once() {
    use gearbox_core::{BinaryOp, UnaryOp};
    let unary: std::collections::BTreeSet<&str> = UnaryOp::ALL.iter().map(|o| o.name()).collect();
    let binary: std::collections::BTreeSet<&str> = BinaryOp::ALL.iter().map(|o| o.name()).collect();
    assert_eq!(unary.len(), UnaryOp::ALL.len());
    assert_eq!(binary.len(), BinaryOp::ALL.len());
    assert!(UnaryOp::ALL.iter().all(|o| o.cost() >= 1));
    assert!(BinaryOp::ALL.iter().all(|o| o.cost() >= 1));
    assert!(unary.contains("softplus") && binary.contains("atan2"));
}

/// The distance in ulps between two f32 values of the same sign.
fn ulps32(a: f32, b: f32) -> u32 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

#[test]
fn f32_pow_and_atan2_are_within_an_ulp_of_libm_with_every_special_operand() {
    // Random operands of both signs and wide range, then every pair of
    // special values: zeros, ones, integral and fractional exponents of
    // negative bases, infinities and NaN (the straight-line forms cover
    // part of these and libm the rest).
    let mut rng = TestRng::new(9);
    let mut x: Vec<f32> = rng
        .vec(4000, -30.0, 30.0)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let mut y: Vec<f32> = rng.vec(4000, -8.0, 8.0).iter().map(|&v| v as f32).collect();
    let special = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -3.0,
        0.5,
        -2.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-40,
    ];
    for &a in &special {
        for &b in &special {
            x.push(a);
            y.push(b);
        }
    }
    let n = x.len();
    let xa = Array::from_vec(vec![n], x.clone()).unwrap();
    let ya = Array::from_vec(vec![n], y.clone()).unwrap();
    for op in [BinaryOp::Pow, BinaryOp::Atan2] {
        let got = xa.binary(op, &ya).unwrap().to_vec::<f32>().unwrap();
        for j in 0..n {
            let want = match op {
                BinaryOp::Pow => x[j].powf(y[j]),
                _ => x[j].atan2(y[j]),
            };
            let ok = (got[j].is_nan() && want.is_nan())
                || got[j] == want
                || (got[j].is_sign_negative() == want.is_sign_negative()
                    && ulps32(got[j], want) <= 1);
            assert!(
                ok,
                "{}({}, {}) = {}, libm {want}",
                op.name(),
                x[j],
                y[j],
                got[j]
            );
            // The scalar definition agrees with the tile loops bit for bit.
            assert_eq!(
                got[j].to_bits(),
                op.apply(x[j], y[j]).to_bits(),
                "{}",
                op.name()
            );
        }
    }
}
