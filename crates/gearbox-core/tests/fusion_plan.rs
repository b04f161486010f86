//! Fusion boundaries: what the planner fuses, what it must not, and that the
//! fused evaluation gives the op-by-op results on random inputs.

mod common;

use std::sync::Mutex;

use common::{assert_close, TestRng};
use gearbox_core::fusion::plan::{plan, Region};
use gearbox_core::runtime::{options, set_options, RuntimeOptions};
use gearbox_core::{Array, DType, Precision, ReduceOp};

static LOCK: Mutex<()> = Mutex::new(());

fn arr(shape: &[usize], seed: u64) -> Array {
    let mut rng = TestRng::new(seed);
    let n = shape.iter().product();
    Array::from_vec(shape.to_vec(), rng.vec(n, 0.1, 2.0)).unwrap()
}

/// The regions of the pending graph behind `a`, described.
fn regions(a: &Array) -> Vec<String> {
    plan(&a.pending_in_order(), &[a], true)
        .unwrap()
        .regions
        .iter()
        .map(Region::describe)
        .collect()
}

/// `build` evaluated with fusion, and again op by op, on fresh graphs.
fn fused_and_unfused(build: impl Fn() -> Array) -> (Vec<f64>, Vec<f64>) {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let fused = build().to_f64_vec().unwrap();
    let saved = set_options(RuntimeOptions {
        fusion: false,
        ..options()
    });
    let unfused = build().to_f64_vec().unwrap();
    set_options(saved);
    (fused, unfused)
}

#[test]
fn an_elementwise_chain_is_one_region() {
    let (x, y) = (arr(&[64, 32], 1), arr(&[64, 32], 2));
    let z = (x.exp().unwrap() * &y + &x.sin().unwrap() - &(2.0 * &y).unwrap()).unwrap();
    assert_eq!(regions(&z), vec!["exp+mul+sin+add+mul+sub"]);
    let p = plan(&z.pending_in_order(), &[&z], true).unwrap();
    let Region::Fused(f) = &p.regions[0] else {
        panic!("fused")
    };
    assert_eq!(f.inputs.len(), 3, "x, y and the scalar 2");
}

#[test]
fn a_trailing_reduction_fuses_and_a_second_one_does_not() {
    let x = arr(&[50, 40], 3);
    assert_eq!(regions(&x.exp().unwrap().sum().unwrap()), vec!["exp+sum"]);
    assert_eq!(
        regions(&x.mul(&x).unwrap().mean_axis(0).unwrap()),
        vec!["mul+mean"]
    );
    // col_means = mean over axis 0, then a reshape (host op)
    assert_eq!(
        regions(&x.exp().unwrap().col_means().unwrap()),
        vec!["exp+mean", "reshape"]
    );
    // sum of a sum: the outer reduction reads the inner one's result
    assert_eq!(
        regions(&x.exp().unwrap().sum_axis(0).unwrap().sum().unwrap()),
        vec!["exp+sum", "sum"]
    );
    // every reduction closes a pass, var and argmax too
    assert_eq!(regions(&x.exp().unwrap().var().unwrap()), vec!["exp+var"]);
    assert_eq!(
        regions(
            &x.exp()
                .unwrap()
                .reduce(gearbox_core::ReduceOp::ArgMax, Some(1))
                .unwrap()
        ),
        vec!["exp+argmax"]
    );
}

#[test]
fn library_calls_and_host_ops_break_chains() {
    let x = arr(&[30, 30], 4);
    let z = x.exp().unwrap().matmul(&x).unwrap().tanh().unwrap();
    assert_eq!(regions(&z), vec!["exp", "matmul", "tanh"]);
    let c = x.exp().unwrap().cumsum().unwrap().sqrt().unwrap();
    assert_eq!(regions(&c), vec!["exp", "cumsum", "sqrt"]);
}

#[test]
fn broadcast_operands_of_another_shape_are_computed_once_not_per_element() {
    let x = arr(&[40, 30], 5);
    let col = arr(&[40], 6);
    // exp(col) has shape [40]; the chain has shape [40 x 30]
    let z = x.mul(&col.exp().unwrap()).unwrap().add_scalar(1.0).unwrap();
    assert_eq!(regions(&z), vec!["exp", "mul+add"]);
}

#[test]
fn shared_intermediates_fuse_when_every_user_is_in_the_region() {
    let x = arr(&[20, 20], 7);
    let e = x.exp().unwrap();
    let z = e.mul(&e).unwrap().add(&e).unwrap(); // e used twice, same region
    assert_eq!(regions(&z), vec!["exp+mul+add"]);
    // e also feeds a reduction (another region): e is materialized once
    let s = e.sum().unwrap();
    let both = z.add(&s).unwrap();
    assert_eq!(regions(&both), vec!["exp", "sum", "mul+add+add"]);
}

#[test]
fn an_array_asked_for_is_materialized_even_inside_a_chain() {
    let x = arr(&[10, 10], 8);
    let e = x.exp().unwrap();
    let z = e.sin().unwrap();
    let p = plan(&[e.clone(), z.clone()], &[&e, &z], true).unwrap();
    let described: Vec<String> = p.regions.iter().map(Region::describe).collect();
    assert_eq!(described, vec!["exp", "sin"]);
}

#[test]
fn fused_results_equal_op_by_op_results() {
    type Build = Box<dyn Fn() -> Array>;
    let cases: Vec<(&str, Build)> = vec![
        (
            "chain",
            Box::new(|| {
                let (x, y) = (arr(&[257, 129], 10), arr(&[257, 129], 11));
                (x.exp().unwrap() * &y + &x.sin().unwrap() - &(2.0 * &y).unwrap()).unwrap()
            }),
        ),
        (
            "broadcast column and row",
            Box::new(|| {
                let (x, c, r) = (arr(&[257, 129], 12), arr(&[257], 13), arr(&[1, 129], 14));
                x.sub(&c)
                    .unwrap()
                    .mul(&r)
                    .unwrap()
                    .abs()
                    .unwrap()
                    .sqrt()
                    .unwrap()
            }),
        ),
        (
            "mixed dtypes with casts",
            Box::new(|| {
                let x = arr(&[100, 7], 15).astype(DType::F32).unwrap();
                let i = arr(&[100, 7], 16)
                    .mul_scalar(10.0)
                    .unwrap()
                    .astype(DType::I64)
                    .unwrap();
                x.mul(&i)
                    .unwrap()
                    .add_scalar(0.5)
                    .unwrap()
                    .log()
                    .unwrap()
                    .astype(DType::F64)
                    .unwrap()
            }),
        ),
        (
            "where and comparisons",
            Box::new(|| {
                let (x, y) = (arr(&[99, 33], 17), arr(&[99, 33], 18));
                let m = x.gt(&y).unwrap().and(&x.lt_scalar(1.5).unwrap()).unwrap();
                Array::where_(&m, &x.exp().unwrap(), &y.neg().unwrap()).unwrap()
            }),
        ),
        (
            "nan propagation",
            Box::new(|| {
                let x = arr(&[64, 3], 19).sub_scalar(1.0).unwrap();
                x.log()
                    .unwrap()
                    .minimum(&x)
                    .unwrap()
                    .isnan()
                    .unwrap()
                    .astype(DType::F64)
                    .unwrap()
            }),
        ),
        (
            "full sum",
            Box::new(|| arr(&[1000, 70], 20).exp().unwrap().sum().unwrap()),
        ),
        (
            "column means",
            Box::new(|| arr(&[333, 77], 21).sin().unwrap().col_means().unwrap()),
        ),
        (
            "row maxima",
            Box::new(|| arr(&[333, 77], 22).cos().unwrap().max_axis(1).unwrap()),
        ),
        (
            "3-d middle axis product",
            Box::new(|| arr(&[5, 6, 7], 23).sqrt().unwrap().prod_axis(1).unwrap()),
        ),
        (
            "f32 mean",
            Box::new(|| {
                arr(&[4096, 3], 24)
                    .astype(DType::F32)
                    .unwrap()
                    .tanh()
                    .unwrap()
                    .mean()
                    .unwrap()
            }),
        ),
    ];
    for (name, build) in cases {
        let (fused, unfused) = fused_and_unfused(build);
        assert_close(&fused, &unfused, 1e-13, name);
    }
}

#[test]
fn a_transposed_gemm_operand_is_never_materialized() {
    let (x, y) = (arr(&[30, 20], 30), arr(&[40, 20], 31));
    let z = x.matmul(&y.t().unwrap()).unwrap();
    assert_eq!(regions(&z), vec!["tcrossprod"]);
    let w = y.t().unwrap().matmul(&arr(&[40, 5], 32)).unwrap();
    assert_eq!(regions(&w), vec!["crossprod"]);
    // same values as the materialized transpose
    let yt = y.t().unwrap();
    yt.eval().unwrap();
    let want = x.matmul(&yt).unwrap();
    assert_eq!(regions(&want), vec!["matmul"]);
    assert_close(
        &z.to_vec::<f64>().unwrap(),
        &want.to_vec::<f64>().unwrap(),
        1e-14,
        "tcrossprod rewrite",
    );
}

#[test]
fn independent_gemms_of_one_shape_are_batched_and_dependent_ones_are_not() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let (a, b) = (arr(&[16, 8], 20), arr(&[8, 12], 21));
    let products: Vec<Array> = (0..4)
        .map(|i| {
            let ai = (&a * (i as f64 + 1.0)).unwrap();
            ai.matmul(&b).unwrap()
        })
        .collect();
    // A product of another shape, and one that reads the first product.
    let other = b.matmul(&arr(&[12, 5], 22)).unwrap();
    let dependent = products[0].matmul(&arr(&[12, 3], 23)).unwrap();
    let mut roots: Vec<&Array> = products.iter().collect();
    roots.extend([&other, &dependent]);
    let mut pending = Vec::new();
    for r in &roots {
        for x in r.pending_in_order() {
            if !pending.iter().any(|p: &Array| p.node_id() == x.node_id()) {
                pending.push(x);
            }
        }
    }
    let p = plan(&pending, &roots, true).unwrap();
    let described: Vec<String> = p.regions.iter().map(Region::describe).collect();
    assert!(
        described.contains(&"matmul x4".to_string()),
        "{described:?}"
    );
    let batch = p
        .regions
        .iter()
        .position(|r| matches!(r, Region::Batched(_)))
        .unwrap();
    let dep = p
        .regions
        .iter()
        .position(|r| r.produces()[0].node_id() == dependent.node_id())
        .unwrap();
    assert!(
        batch < dep,
        "the batch runs before the product that reads it"
    );
    // Every region reads only arrays produced earlier or already evaluated.
    let mut produced = std::collections::HashSet::new();
    for r in &p.regions {
        for x in r.reads() {
            assert!(
                x.is_evaluated() || produced.contains(&x.node_id()),
                "{} reads a later result",
                r.describe()
            );
        }
        produced.extend(r.produces().iter().map(Array::node_id));
    }
    // Batched evaluation gives the op-by-op values.
    drop(_g);
    let build = || {
        let (a, b) = (arr(&[16, 8], 20), arr(&[8, 12], 21));
        let ps: Vec<Array> = (0..3)
            .map(|i| (&a * (i as f64 + 1.0)).unwrap().matmul(&b).unwrap())
            .collect();
        Array::eval_all(&ps.iter().collect::<Vec<_>>()).unwrap();
        Array::concat(&ps.iter().collect::<Vec<_>>(), 1).unwrap()
    };
    let (fused, unfused) = fused_and_unfused(build);
    assert_close(&fused, &unfused, 1e-14, "batched matmuls");
}

#[test]
fn siblings_of_one_shape_merge_into_a_multi_output_kernel() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let build = || {
        let x = arr(&[64, 24], 30);
        let p = x.sigmoid().unwrap();
        // p feeds an output (r) and a column reduction (s): one kernel.
        let r = (&p * 3.0).unwrap().sub(&x).unwrap();
        let s = p.log().unwrap().sum_axis(0).unwrap();
        (r, s)
    };
    let (r, s) = build();
    let mut pending = r.pending_in_order();
    for a in s.pending_in_order() {
        if !pending.iter().any(|p| p.node_id() == a.node_id()) {
            pending.push(a);
        }
    }
    let p = plan(&pending, &[&r, &s], true).unwrap();
    assert_eq!(
        p.regions.len(),
        1,
        "{:?}",
        p.regions.iter().map(Region::describe).collect::<Vec<_>>()
    );
    let Region::Fused(f) = &p.regions[0] else {
        panic!("fused")
    };
    assert_eq!(f.outputs.len(), 1);
    assert_eq!(f.reduced.len(), 1);
    Array::eval_all(&[&r, &s]).unwrap();
    let (rf, sf) = (r.to_vec::<f64>().unwrap(), s.to_vec::<f64>().unwrap());
    let saved = set_options(RuntimeOptions {
        fusion: false,
        ..options()
    });
    let (r2, s2) = build();
    let (ru, su) = (r2.to_vec::<f64>().unwrap(), s2.to_vec::<f64>().unwrap());
    set_options(saved);
    assert_close(&rf, &ru, 1e-15, "output");
    assert_close(&sf, &su, 1e-14, "reduction");
}

#[test]
fn siblings_do_not_merge_across_a_path_out_and_back_or_with_two_reductions() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let x = arr(&[16, 16], 31);
    let e = x.exp().unwrap();
    // e -> a -> matmul -> c, and e -> c: merging a and c would make the
    // kernel wait on its own output through the matmul.
    let a = (&e + 1.0).unwrap();
    let m = a.matmul(&x).unwrap();
    let c = (&e * &m).unwrap().sqrt().unwrap();
    let described: Vec<String> = plan(&c.pending_in_order(), &[&c], true)
        .unwrap()
        .regions
        .iter()
        .map(Region::describe)
        .collect();
    assert_eq!(described, vec!["exp", "add", "matmul", "mul+sqrt"]);
    // Two reductions of the same values stay two kernels.
    let s0 = e.sum_axis(0).unwrap();
    let s1 = e.sum_axis(1).unwrap();
    let mut pending = s0.pending_in_order();
    pending.extend(
        s1.pending_in_order()
            .into_iter()
            .filter(|n| n.node_id() == s1.node_id()),
    );
    let n_fused = plan(&pending, &[&s0, &s1], true)
        .unwrap()
        .regions
        .iter()
        .filter(|r| matches!(r, Region::Fused(_)))
        .count();
    assert!(n_fused >= 2);
    let (v, w) = (c.to_vec::<f64>().unwrap(), m.to_vec::<f64>().unwrap());
    let (ev, av) = (e.to_vec::<f64>().unwrap(), a.to_vec::<f64>().unwrap());
    for i in 0..v.len() {
        assert!((v[i] - (ev[i] * w[i]).sqrt()).abs() <= 1e-12 * v[i].abs().max(1.0));
        assert!((av[i] - ev[i] - 1.0).abs() <= 1e-12 * av[i]);
    }
}

#[test]
fn a_long_chain_splits_into_bounded_kernels_in_order() {
    use gearbox_core::fusion::plan::MAX_FUSED_MEMBERS;
    let n = 5 * MAX_FUSED_MEMBERS + 7;
    let x = arr(&[4], 11);
    let chain = || {
        let mut y = x.clone();
        for i in 0..n {
            y = if i % 3 == 0 {
                y.exp().unwrap().neg().unwrap()
            } else {
                y.tanh().unwrap()
            };
        }
        y
    };
    let y = chain();
    let regions = plan(&y.pending_in_order(), &[&y], true).unwrap().regions;
    let mut ops = 0;
    for r in &regions {
        let Region::Fused(f) = r else {
            panic!("a chain of elementwise ops plans only fused regions")
        };
        assert!(f.kernel.nodes().len() <= 2 * MAX_FUSED_MEMBERS);
        assert!(f.ops.len() <= MAX_FUSED_MEMBERS);
        ops += f.ops.len();
    }
    assert_eq!(ops, y.pending_in_order().len(), "every op planned once");
    assert!(regions.len() > 5, "{} regions", regions.len());
    let (fused, unfused) = fused_and_unfused(chain);
    assert_eq!(fused, unfused);
}

#[test]
fn a_chain_of_a_hundred_thousand_ops_plans_in_linear_time() {
    // Quadratic planning took minutes here (2 s at this length in a release
    // build); linear planning takes a fraction of a second.
    let x = arr(&[3], 12);
    let mut y = x.clone();
    for i in 0..100_000 {
        y = if i % 2 == 0 {
            y.add_scalar(1.0).unwrap()
        } else {
            y.sub_scalar(0.5).unwrap()
        };
    }
    let got = y.to_vec::<f64>().unwrap();
    let want: Vec<f64> = x
        .to_vec::<f64>()
        .unwrap()
        .iter()
        .map(|v| v + 25_000.0)
        .collect();
    assert_close(&got, &want, 1e-12, "chain");
}

#[test]
fn planning_an_evaluated_array_is_a_clear_error() {
    let x = arr(&[3], 13);
    let y = x.exp().unwrap();
    let pending = y.pending_in_order();
    y.eval().unwrap();
    let err = plan(&pending, &[&y], true).unwrap_err().to_string();
    assert!(err.contains("only pending nodes"), "{err}");
}

/// The regions of the pending graphs behind `roots`, all asked for.
fn regions_of_all(roots: &[&Array]) -> Vec<Region> {
    let mut pending: Vec<Array> = Vec::new();
    for r in roots {
        for a in r.pending_in_order() {
            if !pending.iter().any(|p| p.node_id() == a.node_id()) {
                pending.push(a);
            }
        }
    }
    plan(&pending, roots, true).unwrap().regions
}

#[test]
fn a_mean_beside_an_sd_of_the_same_values_shares_its_pass() {
    for axis in [None, Some(0), Some(1)] {
        let x = arr(&[40, 30], 21);
        let (m, s) = (
            x.reduce(ReduceOp::Mean, axis).unwrap(),
            x.reduce(ReduceOp::Sd, axis).unwrap(),
        );
        let z = ((&x - &m).unwrap() / &s).unwrap();
        let p = regions_of_all(&[&z, &m]);
        let described: Vec<String> = p.iter().map(Region::describe).collect();
        // Along an axis the division reads its lane's results: one kernel.
        let want: &[&str] = match axis {
            None => &["sd+mean", "sub+div"],
            Some(_) => &["sub+div+sd+mean"],
        };
        assert_eq!(described, want, "axis {axis:?}");
        let Region::Fused(f) = &p[0] else {
            panic!("fused")
        };
        let r = f.kernel.reduce().expect("a reduction");
        assert_eq!((r.op, r.companion), (ReduceOp::Sd, Some(ReduceOp::Mean)));
        assert_eq!(f.kernel.reduced_results(), 2);
        assert!(f.reduced[0].same_node(&s) && f.reduced[1].same_node(&m));
        // The values: the fused pass's against op-by-op evaluation.
        let build = || {
            let x = arr(&[40, 30], 21);
            let m = x.reduce(ReduceOp::Mean, axis).unwrap();
            let s = x.reduce(ReduceOp::Sd, axis).unwrap();
            ((&x - &m).unwrap() / &s).unwrap()
        };
        let (fused, unfused) = fused_and_unfused(build);
        assert_close(&fused, &unfused, 1e-13, "standardized");
    }
}

#[test]
fn only_moments_of_the_same_array_axis_and_precision_pair_with_a_mean() {
    let (x, y) = (arr(&[20, 10], 22), arr(&[20, 10], 23));
    let pass_count = |roots: &[&Array]| regions_of_all(roots).len();
    // Another array, another axis: three passes, two of them alone.
    let (a, b) = (x.mean_axis(0).unwrap(), y.var_axis(0).unwrap());
    assert_eq!(pass_count(&[&a, &b]), 2);
    let (a, b) = (x.mean_axis(0).unwrap(), x.var_axis(1).unwrap());
    assert_eq!(pass_count(&[&a, &b]), 2);
    // A sum is not a companion of var; a mean is not one of a max.
    let (a, b) = (x.sum_axis(0).unwrap(), x.var_axis(0).unwrap());
    assert_eq!(pass_count(&[&a, &b]), 2);
    let (a, b) = (x.mean_axis(0).unwrap(), x.max_axis(0).unwrap());
    assert_eq!(pass_count(&[&a, &b]), 2);
    // An exact mean is R's two-pass mean, op by op: never a companion.
    let exact = x.with_precision(Precision::Exact).unwrap();
    let (a, b) = (exact.mean_axis(0).unwrap(), exact.var_axis(0).unwrap());
    assert_eq!(pass_count(&[&a, &b]), 2);
    // Two means and one var: one pair, one mean alone.
    let (a, b, c) = (
        x.mean_axis(0).unwrap(),
        x.mean_axis(0).unwrap(),
        x.var_axis(0).unwrap(),
    );
    assert_eq!(pass_count(&[&a, &b, &c]), 2);
    // The pair of the same array, axis and precision: one pass.
    let (a, b) = (x.var_axis(1).unwrap(), x.mean_axis(1).unwrap());
    assert_eq!(pass_count(&[&a, &b]), 1);
}

#[test]
fn a_mean_that_feeds_the_moments_pass_is_not_its_companion() {
    // sd(x - mean(x)) reads the mean: it cannot come from the same pass.
    let x = arr(&[30, 12], 24);
    let m = x.mean_axis(0).unwrap();
    let s = (&x - &m).unwrap().sd_axis(0).unwrap();
    let p = regions_of_all(&[&s, &m]);
    assert_eq!(
        p.len(),
        2,
        "{:?}",
        p.iter().map(Region::describe).collect::<Vec<_>>()
    );
    let (fused, unfused) = fused_and_unfused(|| {
        let x = arr(&[30, 12], 24);
        let m = x.mean_axis(0).unwrap();
        (&x - &m).unwrap().sd_axis(0).unwrap()
    });
    assert_close(&fused, &unfused, 1e-13, "sd of the centred values");
}

#[test]
fn an_axis_reduction_read_by_one_elementwise_region_becomes_its_epilogue() {
    for axis in [0, 1] {
        let x = arr(&[40, 30], 31);
        let soft = x.softmax_axis(axis).unwrap();
        let p = plan(&soft.pending_in_order(), &[&soft], true)
            .unwrap()
            .regions;
        assert_eq!(
            p.len(),
            1,
            "{:?}",
            p.iter().map(Region::describe).collect::<Vec<_>>()
        );
        let Region::Fused(f) = &p[0] else {
            panic!("fused")
        };
        assert!(f.kernel.has_epilogue());
        let (pre, epi) = f.kernel.split_epilogue().expect("two passes");
        assert_eq!((pre.outputs().len(), pre.reduced_results()), (0, 1));
        assert_eq!((epi.outputs().len(), epi.inputs().len()), (1, 2));
        let build = || {
            let x = arr(&[40, 30], 31);
            let c = (&x - &x.mean_axis(axis).unwrap()).unwrap();
            (x.softmax_axis(axis).unwrap() + &c).unwrap()
        };
        let (fused, unfused) = fused_and_unfused(build);
        assert_close(&fused, &unfused, 1e-13, "softmax plus centred values");
    }
}

#[test]
fn a_reduction_read_elsewhere_or_over_everything_keeps_its_own_pass() {
    let x = arr(&[40, 30], 32);
    // Over everything: a full reduction cannot feed its own pass.
    let m = x.mean().unwrap();
    let c = (&x - &m).unwrap();
    assert_eq!(regions(&c).len(), 2);
    // Read by a region of another shape too (a lane-shaped log): the
    // reduction stays a pass of its own.
    let s = x.sum_axis(0).unwrap();
    let y = (&x / &s.log().unwrap()).unwrap();
    assert_eq!(regions(&y).len(), 3, "{:?}", regions(&y));
    let (fused, unfused) = fused_and_unfused(|| {
        let x = arr(&[40, 30], 32);
        let s = x.sum_axis(0).unwrap();
        (&x / &s.log().unwrap()).unwrap()
    });
    assert_close(&fused, &unfused, 1e-13, "x over log of its column sums");
}
