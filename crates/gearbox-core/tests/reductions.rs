//! Reductions and cumulative ops against plain f64 references on random
//! inputs, over everything and along each axis, with NaN and empty inputs.

mod common;

use common::{assert_close, TestRng};
use gearbox_core::{Array, DType, ReduceOp};

fn reference(op: ReduceOp, v: &[f64]) -> f64 {
    use ReduceOp::*;
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    let first_nan = v.iter().position(|x| x.is_nan());
    match op {
        Sum => v.iter().sum(),
        Prod => v.iter().product(),
        Mean => mean,
        Var => {
            if v.len() < 2 {
                f64::NAN
            } else {
                var
            }
        }
        Sd => {
            if v.len() < 2 {
                f64::NAN
            } else {
                var.sqrt()
            }
        }
        Min => {
            if first_nan.is_some() {
                f64::NAN
            } else {
                v.iter().copied().fold(f64::INFINITY, f64::min)
            }
        }
        Max => {
            if first_nan.is_some() {
                f64::NAN
            } else {
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            }
        }
        ArgMin => first_nan
            .unwrap_or_else(|| (0..v.len()).fold(0, |b, i| if v[i] < v[b] { i } else { b }))
            as f64,
        ArgMax => first_nan
            .unwrap_or_else(|| (0..v.len()).fold(0, |b, i| if v[i] > v[b] { i } else { b }))
            as f64,
        LogSumExp => match reference(Max, v) {
            m if m.is_finite() => m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln(),
            m => m,
        },
        Any | All => unreachable!("bool reductions are tested separately"),
    }
}

const FLOAT_OPS: [ReduceOp; 10] = {
    use ReduceOp::*;
    [
        Sum, Prod, Mean, Var, Sd, Min, Max, ArgMin, ArgMax, LogSumExp,
    ]
};

/// The lanes of `axis` in a column-major array of `dims`, in output order.
fn lanes(v: &[f64], dims: &[usize], axis: usize) -> Vec<Vec<f64>> {
    let inner: usize = dims[..axis].iter().product();
    let len = dims[axis];
    let outer: usize = dims[axis + 1..].iter().product();
    let mut out = Vec::new();
    for o in 0..outer {
        for i in 0..inner {
            out.push((0..len).map(|k| v[i + inner * (k + len * o)]).collect());
        }
    }
    out
}

#[test]
fn full_and_axis_reductions_match_reference() {
    let mut rng = TestRng::new(10);
    for dims in [
        vec![1],
        vec![129],
        vec![7, 5],
        vec![3, 4, 5],
        vec![300, 250],
    ] {
        let n: usize = dims.iter().product();
        // values near 1 keep prod finite
        let v = rng.vec(n, 0.5, 1.5);
        let x = Array::from_vec(dims.clone(), v.clone()).unwrap();
        for op in FLOAT_OPS {
            let got = x.reduce(op, None).unwrap();
            assert_eq!(got.ndim(), 0);
            assert_close(
                &[got.item().unwrap()],
                &[reference(op, &v)],
                1e-12,
                op.name(),
            );
            for axis in 0..dims.len() {
                let got = x.reduce(op, Some(axis)).unwrap();
                let mut kept = dims.clone();
                kept[axis] = 1;
                assert_eq!(got.dims(), &kept[..], "{} keeps the axis", op.name());
                let want: Vec<f64> = lanes(&v, &dims, axis)
                    .iter()
                    .map(|l| reference(op, l))
                    .collect();
                assert_close(&got.to_f64_vec().unwrap(), &want, 1e-12, op.name());
            }
        }
    }
}

#[test]
fn f32_reductions_accumulate_in_f64() {
    let mut rng = TestRng::new(11);
    let v = rng.vec(1 << 20, 0.0, 1.0);
    let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
    let exact: f64 = v32.iter().map(|&x| x as f64).sum();
    let x = Array::from_vec([1 << 20], v32).unwrap();
    let s = x.sum().unwrap();
    assert_eq!(s.dtype(), DType::F32);
    // the f32 result is the correctly rounded f64 sum, not a drifting f32 one
    assert_eq!(s.item().unwrap(), exact as f32 as f64);
    assert_close(
        &[x.mean().unwrap().item().unwrap()],
        &[exact / (1 << 20) as f64],
        1e-7,
        "mean",
    );
}

/// Neumaier's compensated sum: a reference accurate to about one ulp.
fn compensated_sum(v: &[f64]) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for &x in v {
        let t = s + x;
        c += if s.abs() >= x.abs() {
            (s - t) + x
        } else {
            (x - t) + s
        };
        s = t;
    }
    s + c
}

#[test]
fn sums_are_accurate_on_ill_conditioned_data() {
    // 1e8 followed by a million values of 1e-3: a naive running sum loses
    // about 7e-11 relative; pairwise summation stays near 1e-15.
    let mut v = vec![1e-3; 1_000_000];
    v[0] = 1e8;
    let want = compensated_sum(&v);
    let naive_err = (v.iter().fold(0.0, |a, b| a + b) - want).abs() / want;
    assert!(
        naive_err > 1e-12,
        "the data must defeat naive summation ({naive_err:e})"
    );
    let x = Array::from_vec([v.len()], v.clone()).unwrap();
    assert_close(&[x.sum().unwrap().item().unwrap()], &[want], 1e-14, "sum");
    let mean = want / 1e6;
    let want_var =
        compensated_sum(&v.iter().map(|x| (x - mean).powi(2)).collect::<Vec<_>>()) / 999_999.0;
    assert_close(
        &[x.var().unwrap().item().unwrap()],
        &[want_var],
        1e-12,
        "var",
    );
}

#[test]
fn col_and_row_summaries_are_vectors() {
    let mut rng = TestRng::new(12);
    let (m, n) = (257, 129);
    let v = rng.vec(m * n, -1.0, 1.0);
    let x = Array::from_vec([m, n], v.clone()).unwrap();
    let cols = lanes(&v, &[m, n], 0);
    let rows = lanes(&v, &[m, n], 1);
    let cs: Vec<f64> = cols.iter().map(|c| c.iter().sum()).collect();
    let rs: Vec<f64> = rows.iter().map(|r| r.iter().sum()).collect();
    assert_eq!(x.col_sums().unwrap().dims(), &[n]);
    assert_close(
        &x.col_sums().unwrap().to_vec::<f64>().unwrap(),
        &cs,
        1e-13,
        "col_sums",
    );
    assert_close(
        &x.row_sums().unwrap().to_vec::<f64>().unwrap(),
        &rs,
        1e-13,
        "row_sums",
    );
    let cm: Vec<f64> = cs.iter().map(|s| s / m as f64).collect();
    let rm: Vec<f64> = rs.iter().map(|s| s / n as f64).collect();
    assert_close(
        &x.col_means().unwrap().to_vec::<f64>().unwrap(),
        &cm,
        1e-13,
        "col_means",
    );
    assert_close(
        &x.row_means().unwrap().to_vec::<f64>().unwrap(),
        &rm,
        1e-13,
        "row_means",
    );
    // an axis reduction keeps the axis, so it broadcasts back: centred columns sum to 0
    let centred = x.sub(&x.mean_axis(0).unwrap()).unwrap();
    for s in centred.col_sums().unwrap().to_vec::<f64>().unwrap() {
        assert!(s.abs() < 1e-12);
    }
}

#[test]
fn rmlx_reduction_examples() {
    let x = Array::from_vec([10, 10], (1..=100).map(|v| v as f64).collect::<Vec<_>>()).unwrap();
    assert_eq!(x.sum().unwrap().item().unwrap(), 5050.0);
    assert_eq!(x.mean().unwrap().item().unwrap(), 50.5);
    assert_eq!(
        x.col_means().unwrap().to_vec::<f64>().unwrap(),
        (0..10).map(|j| 5.5 + 10.0 * j as f64).collect::<Vec<_>>()
    );
    assert_eq!(
        x.row_means().unwrap().to_vec::<f64>().unwrap(),
        (0..10).map(|i| 46.0 + i as f64).collect::<Vec<_>>()
    );
    let cs = x.cumsum().unwrap().to_vec::<f64>().unwrap();
    assert_eq!(cs.len(), 100);
    assert_eq!((cs[14], cs[99]), (120.0, 5050.0));
}

#[test]
fn cumulative_ops_match_reference() {
    let mut rng = TestRng::new(13);
    let dims = [6, 4, 3];
    let v = rng.vec(72, 0.5, 1.5);
    let x = Array::from_vec(dims.to_vec(), v.clone()).unwrap();
    let mut acc = 0.0;
    let flat: Vec<f64> = v
        .iter()
        .map(|a| {
            acc += a;
            acc
        })
        .collect();
    assert_close(
        &x.cumsum().unwrap().to_vec::<f64>().unwrap(),
        &flat,
        1e-14,
        "cumsum",
    );
    for axis in 0..3 {
        let got = x.cumprod_axis(axis).unwrap();
        assert_eq!(got.dims(), &dims);
        let gv = got.to_vec::<f64>().unwrap();
        // check lane by lane
        let got_lanes = lanes(&gv, &dims, axis);
        for (l, g) in lanes(&v, &dims, axis).iter().zip(&got_lanes) {
            let mut p = 1.0;
            let want: Vec<f64> = l
                .iter()
                .map(|a| {
                    p *= a;
                    p
                })
                .collect();
            assert_close(g, &want, 1e-14, "cumprod_axis");
        }
    }
    let ints = Array::from_vec([4], vec![1i64, 2, 3, 4]).unwrap();
    assert_eq!(
        ints.cumsum().unwrap().to_vec::<i64>().unwrap(),
        vec![1, 3, 6, 10]
    );
    assert_eq!(
        ints.cumprod().unwrap().to_vec::<f64>().unwrap(),
        vec![1.0, 2.0, 6.0, 24.0]
    );
}

#[test]
fn nan_propagates_and_empty_inputs_have_defined_results() {
    let x = Array::from_vec([4], vec![1.0, f64::NAN, -3.0, 2.0]).unwrap();
    for op in [
        ReduceOp::Sum,
        ReduceOp::Mean,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::Var,
    ] {
        assert!(
            x.reduce(op, None).unwrap().item().unwrap().is_nan(),
            "{} propagates NaN",
            op.name()
        );
    }
    assert_eq!(x.argmax().unwrap().item().unwrap(), 1.0, "first NaN wins");
    let e = Array::from_vec([0], Vec::<f64>::new()).unwrap();
    assert_eq!(e.sum().unwrap().item().unwrap(), 0.0);
    assert_eq!(e.prod().unwrap().item().unwrap(), 1.0);
    assert!(e.mean().unwrap().item().unwrap().is_nan());
    assert!(e.min().is_err() && e.argmax().is_err());
    let one = Array::from_vec([1], vec![4.0]).unwrap();
    assert!(
        one.var().unwrap().item().unwrap().is_nan(),
        "var of one value is NaN as in R"
    );
    let b = Array::from_vec([0], Vec::<bool>::new()).unwrap();
    assert_eq!(b.any().unwrap().item().unwrap(), 0.0);
    assert_eq!(b.all().unwrap().item().unwrap(), 1.0);
}

#[test]
fn bool_and_integer_reductions() {
    let b = Array::from_vec([2, 3], vec![true, false, true, true, false, false]).unwrap();
    assert_eq!(
        b.any_axis(0).unwrap().to_vec::<bool>().unwrap(),
        vec![true, true, false]
    );
    assert_eq!(
        b.all_axis(0).unwrap().to_vec::<bool>().unwrap(),
        vec![false, true, false]
    );
    assert_eq!(b.sum().unwrap().to_vec::<i64>().unwrap(), vec![3]);
    let i = Array::from_vec([3], vec![5i64, -7, 2]).unwrap();
    assert_eq!(i.min().unwrap().to_vec::<i64>().unwrap(), vec![-7]);
    assert_eq!(i.argmin().unwrap().to_vec::<i64>().unwrap(), vec![1]);
    assert_eq!(i.mean().unwrap().item().unwrap(), 0.0);
}
