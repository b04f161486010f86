//! Shared, unevaluated graphs evaluated from several threads at once: every
//! thread gets the value, each node is computed once, nothing panics, errs
//! or deadlocks. Each round builds a fresh graph, releases eight threads at
//! one barrier onto it, and compares what each got with the same graph
//! built again and evaluated on one thread.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use common::TestRng;
use gearbox_core::{Array, HostBuffer, Operand, Primitive, Result, Spec};

const THREADS: usize = 8;

/// `x + 1`, computed by its own CPU code only (never fused), counting how
/// many times it runs.
#[derive(Debug)]
struct CountedAddOne(Arc<AtomicUsize>);

impl Primitive for CountedAddOne {
    fn name(&self) -> &'static str {
        "counted_add_one"
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        Ok(inputs[0].clone())
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _out: &Spec) -> Result<Arc<HostBuffer>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let values: Vec<f64> = inputs[0]
            .buf
            .to_f64_vec()?
            .iter()
            .map(|v| v + 1.0)
            .collect();
        Ok(Arc::new(HostBuffer::from_vec(values)))
    }
}

/// Several roots over one graph with shared intermediates: fused chains,
/// a multi-output kernel, axis and full reductions, a product, a counted
/// node and a slice, so that threads asking for different roots overlap.
fn build(x: &Array, y: &Array, counter: &Arc<AtomicUsize>) -> Vec<Array> {
    let counted = Array::from_op(CountedAddOne(Arc::clone(counter)), vec![x.clone()]).unwrap();
    let a = (&counted * 2.0).unwrap().add(y).unwrap();
    let b = a.exp().unwrap().sub_scalar(1.0).unwrap();
    let c = a.tanh().unwrap().mul(&b).unwrap();
    let p = a.matmul(&c.t().unwrap()).unwrap();
    vec![
        b.clone(),
        c.sum().unwrap(),
        c.col_means().unwrap(),
        p.clone(),
        (&p + 1.0).unwrap().row_sums().unwrap(),
        b.slice(0, 1..3)
            .unwrap()
            .mul(&a.slice(0, 0..2).unwrap())
            .unwrap(),
        a.cumsum().unwrap(),
    ]
}

fn inputs(seed: u64) -> (Array, Array) {
    let mut rng = TestRng::new(seed);
    let (rows, cols) = (3 + (seed % 5) as usize, 2 + (seed % 7) as usize);
    let x = rng.vec(rows * cols, -2.0, 2.0);
    let y = rng.vec(cols, -2.0, 2.0);
    (
        Array::from_vec([rows, cols], x).unwrap(),
        Array::from_vec([1, cols], y).unwrap(),
    )
}

/// One round: eight threads evaluate roots of one shared graph at once.
fn round(seed: u64) {
    let (x, y) = inputs(seed);
    let reference: Vec<Vec<f64>> = build(&x, &y, &Arc::new(AtomicUsize::new(0)))
        .iter()
        .map(|r| r.to_vec::<f64>().unwrap())
        .collect();
    let counter = Arc::new(AtomicUsize::new(0));
    let roots = Arc::new(build(&x, &y, &counter));
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (roots, barrier) = (Arc::clone(&roots), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                // Half the threads take every root (in turn, from a different
                // start), a quarter evaluate a pair together, a quarter plan
                // a root and then read it.
                let n = roots.len();
                if t % 4 == 3 {
                    // Planning (explain) races the evaluations too.
                    let k = t % n;
                    let planned = gearbox_core::runtime::backend_plan(&roots[k]);
                    let values = planned.and_then(|_| roots[k].to_vec::<f64>());
                    vec![(k, values)]
                } else if t % 2 == 0 {
                    (0..n)
                        .map(|k| (t + k) % n)
                        .map(|k| (k, roots[k].to_vec::<f64>()))
                        .collect::<Vec<_>>()
                } else {
                    let (i, j) = (t % n, (t * 3 + 1) % n);
                    let r = Array::eval_all(&[&roots[i], &roots[j]]);
                    [i, j]
                        .into_iter()
                        .map(|k| (k, r.clone().and_then(|_| roots[k].to_vec::<f64>())))
                        .collect()
                }
            })
        })
        .collect();
    for h in handles {
        let got = h.join().expect("an evaluating thread panicked");
        for (k, values) in got {
            let values = values.unwrap_or_else(|e| panic!("seed {seed}, root {k}: {e}"));
            assert_eq!(values, reference[k], "seed {seed}, root {k}");
        }
    }
    assert_eq!(
        counter.load(Ordering::SeqCst),
        1,
        "seed {seed}: the shared node ran more than once"
    );
}

#[test]
fn shared_graphs_evaluate_once_from_many_threads() {
    for fusion in [true, false] {
        let mut o = gearbox_core::runtime::options();
        o.fusion = fusion;
        gearbox_core::runtime::set_options(o);
        for seed in 0..150 {
            round(seed);
        }
    }
}

#[test]
fn a_failing_shared_evaluation_gives_every_thread_the_error() {
    // A singular solve fails in every thread; none hangs on another's claim.
    for seed in 0..20 {
        let a = Array::from_vec([2, 2], vec![1.0, 2.0, 2.0, 4.0]).unwrap();
        let b = Array::from_vec([2, 1], vec![seed as f64, 1.0]).unwrap();
        let x = Arc::new(a.add_scalar(0.0).unwrap().solve(&b).unwrap());
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (x, barrier) = (Arc::clone(&x), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    x.to_vec::<f64>()
                })
            })
            .collect();
        for h in handles {
            let err = h.join().expect("no panic").expect_err("singular");
            assert!(err.to_string().contains("singular"), "{err}");
        }
    }
}
