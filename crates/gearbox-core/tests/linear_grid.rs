//! The per-point grid call (`ops::linear_grid`) on the CPU against a direct
//! evaluation of its definition, dense and product grids alike, blocks of
//! points whole and partial, with and without a run evaluator, and its
//! argument checks.

use gearbox_core::fusion::ir::{DeviceLibrary, FnRef, ScalarFn};
use std::sync::atomic::{AtomicUsize, Ordering};

use gearbox_core::ops::linear_grid::{
    GridPoints, GridTerm, LinearGridSpec, RunEval, RunRef, TermArg,
};
use gearbox_core::{Array, Result};

fn no_source(_: &[&str]) -> Result<String> {
    Ok(String::new())
}

static LIB: DeviceLibrary = DeviceLibrary {
    name: "linear_grid_test",
    assemble: no_source,
};

/// value(eta, y, w) = w (y eta - exp(eta)) (a poisson log-likelihood).
static VALUE: ScalarFn = ScalarFn {
    name: "test_value",
    device_name: "test_value",
    arity: 3,
    flags: 0,
    eval: |a, _| a[2] * (a[1] * a[0] - a[0].exp()),
    library: &LIB,
    partials: None,
};

/// slope(eta, y, w) = w (y - exp(eta)).
static SLOPE: ScalarFn = ScalarFn {
    name: "test_slope",
    device_name: "test_slope",
    arity: 3,
    flags: 0,
    eval: |a, _| a[2] * (a[1] - a[0].exp()),
    library: &LIB,
    partials: None,
};

struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn vec(&mut self, n: usize, scale: f64) -> Vec<f64> {
        (0..n).map(|_| (self.uniform() - 0.5) * scale).collect()
    }
}

fn spec() -> gearbox_core::ops::linear_grid::LinearGridId {
    let args = [TermArg::Eta, TermArg::Column(0), TermArg::Column(1)];
    LinearGridSpec {
        value: GridTerm::new(&VALUE, 0, &args).unwrap(),
        slope: GridTerm::new(&SLOPE, 0, &args).unwrap(),
        pair: None,
        runs: None,
        columns: 2,
    }
    .intern()
    .unwrap()
}

/// The definition, one point at a time.
#[allow(clippy::too_many_arguments)]
fn direct(
    x: &[f64],
    l1: usize,
    l2: usize,
    b: &[f64],
    off: &[f64],
    mu: &[f64],
    p: &[f64],
    y: &[f64],
    w: &[f64],
) -> Vec<f64> {
    let m = b.len() / l2;
    let mut out = Vec::new();
    for j in 0..m {
        let bj = &b[j * l2..(j + 1) * l2];
        let c: Vec<f64> = bj.iter().zip(mu).map(|(b, m)| b - m).collect();
        let pc: Vec<f64> = (0..l2)
            .map(|k| (0..l2).map(|r| p[k + r * l2] * c[r]).sum())
            .collect();
        let mut value = 0.5 * c.iter().zip(&pc).map(|(a, b)| a * b).sum::<f64>();
        let mut grad = pc.clone();
        for i in 0..l1 {
            let eta = off[i] + (0..l2).map(|k| x[i + k * l1] * bj[k]).sum::<f64>();
            let w = w[i % w.len()];
            value -= w * (y[i] * eta - eta.exp());
            let s = w * (y[i] - eta.exp());
            for (k, g) in grad.iter_mut().enumerate() {
                *g -= x[i + k * l1] * s;
            }
        }
        out.push(value);
        out.extend(grad);
    }
    out
}

fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "[{i}]: {g} vs {w}"
        );
    }
}

#[test]
fn dense_and_product_grids_match_the_definition() {
    let mut r = Rng(3);
    for &(l1, l2) in &[(1usize, 1usize), (7, 3), (65, 5)] {
        let x = r.vec(l1 * l2, 1.0);
        let off = r.vec(l1, 0.2);
        let mu = r.vec(l2, 0.1);
        let mut p = vec![0.0; l2 * l2];
        for k in 0..l2 {
            p[k + k * l2] = 1.0 + k as f64;
        }
        let y: Vec<f64> = (0..l1).map(|i| (i % 4) as f64).collect();
        let w = 0.75;
        let arr = |shape: Vec<usize>, v: Vec<f64>| Array::from_vec(shape, v).unwrap();
        let fixed = [
            arr(vec![l1], off.clone()),
            arr(vec![l2], mu.clone()),
            arr(vec![l2, l2], p.clone()),
            arr(vec![l1], y.clone()),
            arr(vec![1], vec![w]),
        ];
        let x_arr = arr(vec![l1, l2], x.clone());
        // Dense.
        let m = 11;
        let b = r.vec(l2 * m, 1.0);
        let b_arr = arr(vec![l2, m], b.clone());
        let mut inputs = vec![&x_arr, &b_arr];
        inputs.extend(fixed.iter());
        let got = Array::linear_grid(spec(), GridPoints::Dense, &inputs).unwrap();
        assert_eq!(got.dims(), &[1 + l2, m]);
        close(
            &got.to_vec::<f64>().unwrap(),
            &direct(&x, l1, l2, &b, &off, &mu, &p, &y, &[w]),
        );
        // A product grid of 2 x 3 x ... points, from point 2 on.
        let sets: Vec<Vec<f64>> = (0..l2).map(|k| r.vec(2 + k % 2, 1.0)).collect();
        let total: u64 = sets.iter().map(|s| s.len() as u64).product();
        let (first, count) = (2u64, (total - 2) as usize);
        let mut dense = Vec::new();
        for j in first..first + count as u64 {
            let mut idx = j;
            for s in &sets {
                dense.push(s[(idx % s.len() as u64) as usize]);
                idx /= s.len() as u64;
            }
        }
        let flat: Vec<f64> = sets.iter().flatten().copied().collect();
        let counts: Vec<f64> = sets.iter().map(|s| s.len() as f64).collect();
        let (sets_arr, counts_arr) = (arr(vec![flat.len()], flat), arr(vec![l2], counts));
        let mut inputs = vec![&x_arr, &sets_arr, &counts_arr];
        inputs.extend(fixed.iter());
        let points = GridPoints::Product {
            first,
            count: count as u64,
        };
        let got = Array::linear_grid(spec(), points, &inputs).unwrap();
        close(
            &got.to_vec::<f64>().unwrap(),
            &direct(&x, l1, l2, &dense, &off, &mu, &p, &y, &[w]),
        );
    }
}

#[test]
fn bad_arguments_are_named() {
    let arr = |shape: Vec<usize>, v: Vec<f64>| Array::from_vec(shape, v).unwrap();
    let (l1, l2) = (4, 2);
    let x = arr(vec![l1, l2], vec![0.5; l1 * l2]);
    let b = arr(vec![l2, 3], vec![0.1; 6]);
    let off = arr(vec![l1], vec![0.0; l1]);
    let mu = arr(vec![l2], vec![0.0; l2]);
    let p = Array::eye(l2).unwrap();
    let y = arr(vec![l1], vec![1.0; l1]);
    let w = arr(vec![1], vec![1.0]);
    let err = |inputs: &[&Array], points: GridPoints| {
        Array::linear_grid(spec(), points, inputs)
            .unwrap_err()
            .to_string()
    };
    let e = err(&[&x, &b, &off, &mu, &p, &y], GridPoints::Dense);
    assert!(e.contains("takes 7 arrays"), "{e}");
    let b3 = arr(vec![3, 2], vec![0.1; 6]);
    let e = err(&[&x, &b3, &off, &mu, &p, &y, &w], GridPoints::Dense);
    assert!(e.contains("2 rows"), "{e}");
    let short = arr(vec![3], vec![1.0; 3]);
    let e = err(&[&x, &b, &off, &mu, &p, &short, &w], GridPoints::Dense);
    assert!(e.contains("column 0") && e.contains("4 values"), "{e}");
    let e = err(&[&x, &b, &short, &mu, &p, &y, &w], GridPoints::Dense);
    assert!(e.contains("offset"), "{e}");
    let ints = Array::from_vec([l1], vec![1i64; l1]).unwrap();
    let e = err(&[&x, &b, &off, &mu, &p, &ints, &w], GridPoints::Dense);
    assert!(e.contains("f64"), "{e}");
    // Product grids: counts that are not whole, or do not add up.
    let sets = arr(vec![4], vec![0.0, 1.0, 2.0, 3.0]);
    let product = GridPoints::Product { first: 0, count: 4 };
    for (counts, want) in [
        (vec![1.5, 2.5], "whole number"),
        (vec![2.0, 3.0], "add up to 5"),
    ] {
        let c = arr(vec![2], counts);
        let e = Array::linear_grid(spec(), product, &[&x, &sets, &c, &off, &mu, &p, &y, &w])
            .and_then(|a| a.eval().map(|_| a))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
    // A spec reading a column it was not given.
    let bad = LinearGridSpec {
        value: GridTerm::new(
            &VALUE,
            0,
            &[TermArg::Eta, TermArg::Column(2), TermArg::Column(0)],
        )
        .unwrap(),
        slope: GridTerm::new(
            &SLOPE,
            0,
            &[TermArg::Eta, TermArg::Column(0), TermArg::Column(1)],
        )
        .unwrap(),
        pair: None,
        runs: None,
        columns: 2,
    };
    assert!(bad.intern().unwrap_err().to_string().contains("beyond"));
    assert!(GridTerm::new(&VALUE, 0, &[TermArg::Eta]).is_err());
}

/// value and slope at once: six arguments (value's, then slope's).
static PAIR: ScalarFn = ScalarFn {
    name: "test_pair",
    device_name: "test_pair",
    arity: 6,
    flags: 0,
    eval: |a, f| (VALUE.eval)(&a[..3], f),
    library: &LIB,
    partials: None,
};

/// A pair that claims a flag the two terms do not have.
static PAIR_WITH_A_FLAG: ScalarFn = ScalarFn { flags: 1, ..PAIR };

#[test]
fn a_pair_takes_the_value_arguments_then_the_slope_arguments() {
    let value_args = [TermArg::Eta, TermArg::Column(0), TermArg::Column(1)];
    let slope_args = [TermArg::Eta, TermArg::Column(1), TermArg::Column(0)];
    let spec = LinearGridSpec {
        value: GridTerm::new(&VALUE, 0, &value_args).unwrap(),
        slope: GridTerm::new(&SLOPE, 0, &slope_args).unwrap(),
        pair: Some(FnRef(&PAIR)),
        runs: None,
        columns: 2,
    };
    let pair = spec.pair_term().unwrap().unwrap();
    let both: Vec<TermArg> = value_args.iter().chain(&slope_args).copied().collect();
    assert_eq!(pair.sources(), &both[..]);
    // The CPU evaluates the terms themselves: a pair changes no value.
    let id = spec.intern().unwrap();
    let plain = LinearGridSpec { pair: None, ..spec }.intern().unwrap();
    assert_ne!(id, plain);
    let mut rng = Rng(11);
    let x = Array::from_vec([5, 2], rng.vec(10, 1.0)).unwrap();
    let b = Array::from_vec([2, 3], rng.vec(6, 1.0)).unwrap();
    let zeros = |n: usize| Array::from_vec([n], vec![0.0; n]).unwrap();
    let p = Array::from_vec([2, 2], vec![1.0, 0.0, 0.0, 1.0]).unwrap();
    let y = Array::from_vec([5], rng.vec(5, 4.0)).unwrap();
    let w = Array::from_vec([5], rng.vec(5, 2.0)).unwrap();
    let (o, mu) = (zeros(5), zeros(2));
    let inputs = [&x, &b, &o, &mu, &p, &y, &w];
    let with = Array::linear_grid(id, GridPoints::Dense, &inputs).unwrap();
    let without = Array::linear_grid(plain, GridPoints::Dense, &inputs).unwrap();
    assert_eq!(
        with.to_vec::<f64>().unwrap(),
        without.to_vec::<f64>().unwrap()
    );
    // A pair whose flags are not the two terms' is refused.
    let bad = LinearGridSpec {
        pair: Some(FnRef(&PAIR_WITH_A_FLAG)),
        runs: None,
        ..spec
    };
    let e = bad.intern().unwrap_err().to_string();
    assert!(e.contains("flags of test_value and test_slope"), "{e}");
}

/// How often [`RUNS`] has been called.
static RUN_CALLS: AtomicUsize = AtomicUsize::new(0);

/// [`PAIR`] over a run: `args` are `eta, y, w` twice (the value's, then
/// the slope's).
static RUNS: RunEval = RunEval {
    name: "test_runs",
    eval: |args, _, slopes| {
        RUN_CALLS.fetch_add(1, Ordering::Relaxed);
        let (eta, y, w) = (args[0], args[1], args[2]);
        let mut sum = 0.0;
        for (i, s) in slopes.iter_mut().enumerate() {
            sum += w[i] * (y[i] * eta[i] - eta[i].exp());
            *s = w[i] * (y[i] - eta[i].exp());
        }
        Some(sum)
    },
};

/// The points `first .. first + count` of the product of `sets`, point by
/// point.
fn expand(sets: &[Vec<f64>], first: u64, count: usize) -> Vec<f64> {
    let mut dense = Vec::new();
    for j in first..first + count as u64 {
        let mut idx = j;
        for s in sets {
            dense.push(s[(idx % s.len() as u64) as usize]);
            idx /= s.len() as u64;
        }
    }
    dense
}

#[test]
fn blocks_of_points_match_the_one_point_reference() {
    // The CPU loop takes points in blocks (and a partial block in narrower
    // pieces) and observations in runs of 256: point counts around the
    // block widths, observation counts around the run, coefficient counts
    // around the kernels' tiles, with the terms one at a time and by a run
    // evaluator, dense grids and product grids. Each point of a grid is
    // held to 1e-12 relative of the same point computed alone, and to the
    // definition as the other tests hold it.
    let plain = spec();
    let args = [TermArg::Eta, TermArg::Column(0), TermArg::Column(1)];
    let by_runs = LinearGridSpec {
        value: GridTerm::new(&VALUE, 0, &args).unwrap(),
        slope: GridTerm::new(&SLOPE, 0, &args).unwrap(),
        pair: Some(FnRef(&PAIR)),
        runs: Some(RunRef(&RUNS)),
        columns: 2,
    }
    .intern()
    .unwrap();
    let mut r = Rng(29);
    let arr = |shape: Vec<usize>, v: &[f64]| Array::from_vec(shape, v.to_vec()).unwrap();
    for &l1 in &[1usize, 31, 256, 257, 600] {
        for &l2 in &[1usize, 3, 14, 33] {
            let x = r.vec(l1 * l2, 2.0 / (l2 as f64).sqrt());
            let off = r.vec(l1, 0.4);
            let mu = r.vec(l2, 0.2);
            let p = r.vec(l2 * l2, 1.0);
            let y: Vec<f64> = r.vec(l1, 4.0).iter().map(|v| v + 2.5).collect();
            let w: Vec<f64> = r.vec(l1, 1.0).iter().map(|v| v + 1.0).collect();
            let x_arr = arr(vec![l1, l2], &x);
            let fixed = [
                arr(vec![l1], &off),
                arr(vec![l2], &mu),
                arr(vec![l2, l2], &p),
                arr(vec![l1], &y),
                arr(vec![l1], &w),
            ];
            let grid = |id, points, point_inputs: &[&Array]| {
                let mut inputs = point_inputs.to_vec();
                inputs.extend(fixed.iter());
                let got = Array::linear_grid(id, points, &inputs).unwrap();
                got.to_vec::<f64>().unwrap()
            };
            for m in [1usize, 3, 4, 5, 7, 8, 9, 17] {
                let b = r.vec(l2 * m, 1.0);
                let sets: Vec<Vec<f64>> = (0..l2)
                    .map(|k| r.vec(if k == 0 { m + 1 } else { 2 + k % 2 }, 1.0))
                    .collect();
                let flat: Vec<f64> = sets.iter().flatten().copied().collect();
                let counts: Vec<f64> = sets.iter().map(|s| s.len() as f64).collect();
                let (sets_arr, counts_arr) = (arr(vec![flat.len()], &flat), arr(vec![l2], &counts));
                let product = |first: usize, count: usize| GridPoints::Product {
                    first: first as u64,
                    count: count as u64,
                };
                for id in [plain, by_runs] {
                    let before = RUN_CALLS.load(Ordering::Relaxed);
                    let dense = grid(id, GridPoints::Dense, &[&x_arr, &arr(vec![l2, m], &b)]);
                    let products = grid(id, product(1, m), &[&x_arr, &sets_arr, &counts_arr]);
                    let runs = RUN_CALLS.load(Ordering::Relaxed) > before;
                    assert_eq!(runs, id == by_runs);
                    let what = format!("l1={l1} l2={l2} m={m} runs={runs}");
                    close(&dense, &direct(&x, l1, l2, &b, &off, &mu, &p, &y, &w));
                    let expanded = expand(&sets, 1, m);
                    close(
                        &products,
                        &direct(&x, l1, l2, &expanded, &off, &mu, &p, &y, &w),
                    );
                    let per = 1 + l2;
                    for j in 0..m {
                        let bj = arr(vec![l2, 1], &b[j * l2..(j + 1) * l2]);
                        let alone = grid(id, GridPoints::Dense, &[&x_arr, &bj]);
                        same(
                            &format!("{what} dense [{j}]"),
                            &dense[j * per..][..per],
                            &alone,
                        );
                        let inputs = [&x_arr, &sets_arr, &counts_arr];
                        let alone = grid(id, product(1 + j, 1), &inputs);
                        let got = &products[j * per..][..per];
                        same(&format!("{what} product [{j}]"), got, &alone);
                    }
                }
            }
        }
    }
}

/// `got` within 1e-12 relative of `want`, value by value.
fn same(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-12 * w.abs(), "{what} [{i}]: {g} vs {w}");
    }
}
