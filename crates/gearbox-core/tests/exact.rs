//! `exact` means bit-identical: the same bits with fusion on or off, on one
//! thread or all of them, run after run, for work large enough that the
//! CPU splits it into parallel tasks (reductions, fused chains, products,
//! scans, axis reductions).

mod common;

use common::TestRng;
use gearbox_core::runtime::{options, set_options, RuntimeOptions};
use gearbox_core::{Array, Precision, ReduceOp};

/// The work, from fresh inputs each time (nothing cached between runs).
fn work() -> Vec<Array> {
    let mut rng = TestRng::new(7);
    let (rows, cols) = (1500, 333);
    let x = Array::from_vec([rows, cols], rng.vec(rows * cols, -3.0, 3.0))
        .unwrap()
        .with_precision(Precision::Exact)
        .unwrap();
    let y = Array::from_vec([rows, cols], rng.vec(rows * cols, 0.5, 2.0))
        .unwrap()
        .with_precision(Precision::Exact)
        .unwrap();
    let chain = ((x.exp().unwrap() * &y).unwrap() + &x.sin().unwrap()).unwrap();
    let long = Array::from_vec([1 << 20], rng.vec(1 << 20, -1.0, 1.0))
        .unwrap()
        .with_precision(Precision::Exact)
        .unwrap();
    vec![
        chain.sum().unwrap(),
        chain.clone(),
        (&chain * &y).unwrap().reduce(ReduceOp::Mean, None).unwrap(),
        chain.reduce(ReduceOp::Var, None).unwrap(),
        chain.reduce(ReduceOp::Sd, Some(0)).unwrap(),
        chain.col_sums().unwrap(),
        chain.row_means().unwrap(),
        x.log1p().unwrap().reduce(ReduceOp::Prod, Some(1)).unwrap(),
        long.cumsum().unwrap(),
        long.sum().unwrap(),
        (&long * &long).unwrap().sum().unwrap(),
        x.crossprod(&y).unwrap(),
        x.t().unwrap().matmul(&y).unwrap(),
    ]
}

fn bits(a: &Array) -> Vec<u64> {
    a.to_vec::<f64>()
        .unwrap()
        .into_iter()
        .map(f64::to_bits)
        .collect()
}

fn run(fusion: bool, threads: Option<usize>) -> Vec<Vec<u64>> {
    let saved = set_options(RuntimeOptions {
        fusion,
        ..options()
    });
    let eval = || work().iter().map(bits).collect::<Vec<_>>();
    let out = match threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
            .install(eval),
        None => eval(),
    };
    set_options(saved);
    out
}

#[test]
fn exact_results_have_the_same_bits_however_they_run() {
    let reference = run(true, None);
    for (label, fusion, threads) in [
        ("again", true, None),
        ("fusion off", false, None),
        ("one thread", true, Some(1)),
        ("one thread, fusion off", false, Some(1)),
        ("three threads", true, Some(3)),
        ("sixteen threads, fusion off", false, Some(16)),
    ] {
        let other = run(fusion, threads);
        for (k, (a, b)) in reference.iter().zip(&other).enumerate() {
            let differ = a.iter().zip(b).filter(|(p, q)| p != q).count();
            assert_eq!(
                differ,
                0,
                "work {k}, {label}: {differ} of {} values differ",
                a.len()
            );
        }
    }
}
