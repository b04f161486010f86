//! Backward graphs fuse: the gradient of a five-op elementwise chain is one
//! kernel on the CPU backend (one fused region in the plan, one compute
//! step in the metrics, named so by `explain`), and plans of second
//! derivatives cover every node.

mod common;

use std::sync::Mutex;

use common::{assert_close, TestRng};
use gearbox_core::fusion::plan::{plan, Region};
use gearbox_core::runtime::{backend_plan, metrics, metrics_reset};
use gearbox_core::{autodiff, Array, Result};

/// Metrics are per process: tests that count compute steps take turns.
static LOCK: Mutex<()> = Mutex::new(());

fn input(n: usize, seed: u64) -> (Array, Vec<f64>) {
    let v = TestRng::new(seed).vec(n, -1.5, 1.5);
    (Array::from_vec([n], v.clone()).unwrap(), v)
}

/// y = sum(exp(sin(x) * 2 + x) / 3): five elementwise ops and a sum.
fn chain(x: &Array) -> Result<Array> {
    (((x.sin()? * 2.0)? + x)?.exp()? / 3.0)?.sum()
}

fn regions(a: &Array) -> Vec<Region> {
    plan(&a.pending_in_order(), &[a], true).unwrap().regions
}

#[test]
fn the_backward_of_a_five_op_chain_is_one_kernel() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (x, v) = input(10_000, 1);
    let g = autodiff::grad(|a| chain(&a[0]), &[x]).unwrap().remove(0);

    // The plan: one fused region, the forward ops recomputed inside it
    // beside the backward ones, no reduction, nothing else.
    let rs = regions(&g);
    assert_eq!(
        rs.len(),
        1,
        "regions: {:?}",
        rs.iter().map(Region::describe).collect::<Vec<_>>()
    );
    let Region::Fused(f) = &rs[0] else {
        panic!("a fused region, not {}", rs[0].describe())
    };
    assert!(f.reduced.is_empty());
    for op in ["sin", "mul", "add", "exp", "div", "cos"] {
        assert!(f.ops.contains(&op), "{op} in {:?}", f.ops);
    }
    // explain names that one kernel.
    let p = backend_plan(&g).unwrap();
    assert_eq!(p.op, rs[0].describe());
    assert_eq!(p.chosen, "cpu");

    // One compute step when it runs.
    metrics_reset();
    let got = g.to_f64_vec().unwrap();
    assert_eq!(metrics().of("cpu").compute.count, 1, "compute steps");

    // d/dx = exp(sin(x) 2 + x) / 3 * (2 cos(x) + 1)
    let want: Vec<f64> = v
        .iter()
        .map(|&x| ((x.sin() * 2.0 + x).exp() / 3.0) * (2.0 * x.cos() + 1.0))
        .collect();
    assert_close(&got, &want, 1e-14, "gradient");
}

#[test]
fn a_mean_and_an_axis_reduction_spread_inside_the_kernel() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let v = TestRng::new(2).vec(600, -1.0, 1.0);
    let x = Array::from_vec([20, 30], v).unwrap();
    // The cotangent of a mean and of column sums reaches x through
    // broadcast_to, an elementwise identity: no region of its own.
    let g = autodiff::grad(
        |a| {
            let t = a[0].tanh()?;
            (&t * &a[0])?.sum_axis(0)?.mean()
        },
        &[x],
    )
    .unwrap()
    .remove(0);
    let rs = regions(&g);
    let big: Vec<String> = rs
        .iter()
        .filter(|r| r.produces().iter().any(|a| a.numel() == 600))
        .map(Region::describe)
        .collect();
    assert_eq!(big.len(), 1, "full-size regions: {big:?}");
}

#[test]
fn plans_of_second_derivatives_cover_every_node() {
    // grad of grad of sd once planned a cycle between fused regions (a
    // merge joined two groups through a third that held a reduction), and
    // the region left waiting was dropped: its value was never set.
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (x, _) = input(6, 3);
    let x = x.reshape([3, 2]).unwrap();
    let v = Array::from_vec([3, 2], vec![0.5, -1.0, 2.5, 0.1, 0.2, 0.3]).unwrap();
    let h = autodiff::grad(
        |a| {
            let g = autodiff::grad(|b| b[0].sd(), a)?;
            (&g[0] * &v)?.sum()
        },
        &[x],
    )
    .unwrap()
    .remove(0);
    let produced: Vec<usize> = regions(&h)
        .iter()
        .flat_map(Region::produces)
        .map(|a| a.node_id())
        .collect();
    assert!(
        produced.contains(&h.node_id()),
        "the plan produces the result"
    );
    assert!(h.to_f64_vec().unwrap().iter().all(|v| v.is_finite()));
}
