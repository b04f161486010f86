//! The documented conventions of the derivative rules (ties, boundaries,
//! zeros), exactly, and the transformations' errors and argument handling.

use std::sync::Arc;

use gearbox_core::{autodiff, Array, DType, Error, HostBuffer, Operand, Primitive, Result, Spec};

fn v(data: &[f64]) -> Array {
    Array::from_vec([data.len()], data.to_vec()).unwrap()
}

fn grad1(f: impl FnOnce(&Array) -> Result<Array>, x: &Array) -> Vec<f64> {
    autodiff::grad(|a| f(&a[0]), std::slice::from_ref(x)).unwrap()[0]
        .to_f64_vec()
        .unwrap()
}

fn autodiff_error(r: Result<Vec<Array>>) -> (&'static str, String) {
    match r {
        Err(Error::Autodiff { op, why }) => (op, why),
        Err(e) => panic!("an autodiff error, not {e}"),
        Ok(_) => panic!("an autodiff error, not a result"),
    }
}

// ---- prod and cumprod at zeros -------------------------------------------

/// The product of every element but `i`, by brute force.
fn others(x: &[f64], i: usize) -> f64 {
    x.iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .map(|(_, v)| v)
        .product()
}

#[test]
fn prod_is_exact_at_zeros() {
    for x in [
        vec![2.0, 3.0, 0.5, -4.0],
        vec![2.0, 0.0, 0.5, -4.0],
        vec![0.0, 3.0, 0.0, -4.0],
        vec![0.0],
    ] {
        let g = grad1(|a| a.prod(), &v(&x));
        let want: Vec<f64> = (0..x.len()).map(|i| others(&x, i)).collect();
        assert_eq!(g, want, "prod at {x:?}");
    }
    // Along an axis: each column by itself (one zero, two zeros, none).
    let m = Array::from_vec([3, 3], vec![0.0, 2.0, 3.0, 0.0, 0.0, 5.0, 1.5, 2.0, -1.0]).unwrap();
    let g = grad1(|a| a.prod_axis(0)?.sum(), &m);
    assert_eq!(g, vec![6.0, 0.0, 0.0, 0.0, 0.0, 0.0, -2.0, -1.5, 3.0]);
}

#[test]
fn cumprod_is_exact_at_zeros() {
    // d/dx_j sum_k cumprod(x)_k = sum_{k >= j} prod_{i <= k, i != j} x_i
    let brute = |x: &[f64]| -> Vec<f64> {
        (0..x.len())
            .map(|j| (j..x.len()).map(|k| others(&x[..=k], j)).sum())
            .collect()
    };
    for x in [
        vec![2.0, 3.0, 0.5, -4.0],
        vec![2.0, 0.0, 0.5, -4.0],
        vec![0.0, 3.0, 0.0, -4.0],
        vec![1.5, 2.0, -1.0, 0.0],
    ] {
        let g = grad1(|a| a.cumprod()?.sum(), &v(&x));
        assert_eq!(g, brute(&x), "cumprod at {x:?}");
    }
}

#[test]
fn cumsum_reverses_without_cancellation() {
    // The cotangent of cumsum is the reversed cumulative sum; computed as
    // a scan of the flipped cotangent, small tails stay exact next to a
    // large head (sum - cumsum + g would lose them in f32).
    let x = Array::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let u = Array::from_vec([3], vec![1.0e10f32, 1.0, 1.0]).unwrap();
    let (_, g) = autodiff::vjp(|a| Ok(vec![a[0].cumsum()?]), &[x], &[u]).unwrap();
    assert_eq!(g[0].dtype(), DType::F32);
    assert_eq!(g[0].to_vec::<f32>().unwrap(), vec![1.0e10 + 2.0, 2.0, 1.0]);
}

// ---- min, max: ties ---------------------------------------------------------

#[test]
fn min_and_max_send_the_gradient_to_the_first_extreme() {
    let x = v(&[3.0, 1.0, 5.0, 1.0, 5.0]);
    assert_eq!(grad1(|a| a.min(), &x), vec![0.0, 1.0, 0.0, 0.0, 0.0]);
    assert_eq!(grad1(|a| a.max(), &x), vec![0.0, 0.0, 1.0, 0.0, 0.0]);
    // Along an axis: the first of each column's ties, scaled by the cotangent.
    let m = Array::from_vec([3, 2], vec![2.0, 2.0, 1.0, 4.0, 7.0, 7.0]).unwrap();
    let g = grad1(|a| (a.max_axis(0)? * 3.0)?.sum(), &m);
    assert_eq!(g, vec![3.0, 0.0, 0.0, 0.0, 3.0, 0.0]);
    // Rows (2, 2), (5, 3), (1, 1): ties go to the first column.
    let m = Array::from_vec([3, 2], vec![2.0, 5.0, 1.0, 2.0, 3.0, 1.0]).unwrap();
    let g = grad1(|a| a.min_axis(1)?.sum(), &m);
    assert_eq!(g, vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
    // A lane holding NaN: its first NaN (where argmin points).
    let x = v(&[3.0, f64::NAN, 1.0, f64::NAN]);
    assert_eq!(grad1(|a| a.min(), &x), vec![0.0, 1.0, 0.0, 0.0]);
    // Elementwise minimum/maximum: a tie goes to the first operand.
    let (a, b) = (v(&[1.0, 2.0]), v(&[1.0, 3.0]));
    let g = autodiff::grad(|x| x[0].minimum(&x[1])?.sum(), &[a.clone(), b.clone()]).unwrap();
    assert_eq!(g[0].to_f64_vec().unwrap(), vec![1.0, 1.0]);
    assert_eq!(g[1].to_f64_vec().unwrap(), vec![0.0, 0.0]);
    let g = autodiff::grad(|x| x[0].maximum(&x[1])?.sum(), &[a, b]).unwrap();
    assert_eq!(g[0].to_f64_vec().unwrap(), vec![1.0, 0.0]);
    assert_eq!(g[1].to_f64_vec().unwrap(), vec![0.0, 1.0]);
}

// ---- clamp: boundaries --------------------------------------------------------

#[test]
fn clamp_passes_the_gradient_on_the_closed_interval() {
    let x = v(&[-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0]);
    assert_eq!(
        grad1(|a| a.clamp(-1.0, 1.0)?.sum(), &x),
        vec![0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    );
}

// ---- where: the chosen branch, broadcasting ---------------------------------

#[test]
fn where_sends_each_element_to_its_branch_summed_over_broadcasting() {
    // mask [3, 1], a [1, 2], b a scalar: the result is [3, 2].
    let mask = Array::from_vec([3, 1], vec![true, false, true]).unwrap();
    let a = Array::from_vec([1, 2], vec![1.0, 2.0]).unwrap();
    let b = Array::scalar(5.0);
    let g = autodiff::grad(|x| Array::where_(&mask, &x[0], &x[1])?.sum(), &[a, b]).unwrap();
    assert_eq!(g[0].dims(), &[1, 2]);
    assert_eq!(g[0].to_f64_vec().unwrap(), vec![2.0, 2.0]);
    assert_eq!(g[1].dims(), &[] as &[usize]);
    assert_eq!(g[1].to_f64_vec().unwrap(), vec![2.0]);
}

// ---- var, sd: divisor and degenerate lanes ---------------------------------------

#[test]
fn var_and_sd_use_the_sample_divisor() {
    let x = v(&[1.0, 2.0, 4.0]);
    // mean 7/3; d var / dx = 2 (x - m) / (n - 1) = x - m
    let m = 7.0 / 3.0;
    let want: Vec<f64> = [1.0, 2.0, 4.0].iter().map(|x| x - m).collect();
    let g = grad1(|a| a.var(), &x);
    for (g, w) in g.iter().zip(&want) {
        assert!((g - w).abs() < 1e-15, "{g} {w}");
    }
    // One value: var and its gradient are NaN, as R's var is.
    assert!(grad1(|a| a.var(), &v(&[3.0]))[0].is_nan());
    // Equal values: sd is 0 and its gradient NaN (sqrt's at 0).
    assert!(grad1(|a| a.sd(), &v(&[2.0, 2.0]))
        .iter()
        .all(|g| g.is_nan()));
}

// ---- dtypes ------------------------------------------------------------------------

#[test]
fn float32_gradients_stay_float32_and_casts_pass_them() {
    let x = Array::from_vec([3], vec![0.5f32, 1.0, 2.0]).unwrap();
    let g = autodiff::grad(|a| a[0].exp()?.sum(), &[x]).unwrap();
    assert_eq!(g[0].dtype(), DType::F32);
    let want: Vec<f32> = [0.5f32, 1.0, 2.0].iter().map(|x| x.exp()).collect();
    assert_eq!(g[0].to_vec::<f32>().unwrap(), want);
    // Through a cast to f32 and back, the gradient is exactly one, in f64.
    let x = v(&[0.1, 0.2]);
    let g = autodiff::grad(|a| a[0].astype(DType::F32)?.astype(DType::F64)?.sum(), &[x]).unwrap();
    assert_eq!(g[0].dtype(), DType::F64);
    assert_eq!(g[0].to_f64_vec().unwrap(), vec![1.0, 1.0]);
}

#[test]
fn integer_arguments_are_refused() {
    let i = Array::from_vec([2], vec![1i64, 2]).unwrap();
    let (op, why) = autodiff_error(autodiff::grad(|a| a[0].sum(), std::slice::from_ref(&i)));
    assert_eq!(op, "grad");
    assert!(why.contains("i64") && why.contains("astype"), "{why}");
    let (op, _) = autodiff_error(
        autodiff::vjp(|a| Ok(vec![a[0].clone()]), &[i], &[v(&[1.0, 1.0])]).map(|r| r.1),
    );
    assert_eq!(op, "vjp");
}

// ---- errors ------------------------------------------------------------------------

/// An op defined outside the crate, with no derivative rule.
#[derive(Debug)]
struct Twice;

impl Primitive for Twice {
    fn name(&self) -> &'static str {
        "twice_without_rule"
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        Ok(inputs[0].clone())
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], _: &Spec) -> Result<Arc<HostBuffer>> {
        let v: Vec<f64> = inputs[0]
            .buf
            .to_f64_vec()?
            .iter()
            .map(|x| 2.0 * x)
            .collect();
        Ok(Arc::new(HostBuffer::F64(v)))
    }
}

#[test]
fn an_op_without_a_rule_is_an_error_naming_it() {
    let x = v(&[1.0, 2.0]);
    let r = autodiff::grad(
        |a| Array::from_op(Twice, vec![a[0].exp()?])?.sum(),
        std::slice::from_ref(&x),
    );
    let (op, why) = autodiff_error(r);
    assert_eq!(op, "twice_without_rule");
    assert!(why.contains("no derivative rule"), "{why}");
    // The op itself evaluates: only differentiating it fails.
    let y = Array::from_op(Twice, vec![x]).unwrap();
    assert_eq!(y.to_f64_vec().unwrap(), vec![2.0, 4.0]);
}

/// A traced function's body.
type Body<'a> = &'a dyn Fn(&Array) -> Result<Array>;

#[test]
fn reading_values_inside_the_traced_function_is_an_error() {
    let x = v(&[1.0, 2.0]);
    let reads: [Body; 4] = [
        &|a| {
            let s = a.sum()?.item()?;
            a * s
        },
        &|a| {
            let host = a.exp()?.to_vec::<f64>()?;
            Array::from_vec([2], host)?.sum()
        },
        &|a| {
            a.sin()?.eval()?;
            a.sum()
        },
        &|a| {
            let _ = a.to_f64_vec()?;
            a.sum()
        },
    ];
    for f in reads {
        let (op, why) = autodiff_error(autodiff::grad(|a| f(&a[0]), std::slice::from_ref(&x)));
        assert_eq!(op, "grad");
        assert!(
            why.contains("read the values") && why.contains("leaves the graph"),
            "{why}"
        );
    }
    // Values that do not depend on the arguments may be read.
    let c = v(&[3.0, 4.0]);
    let g = autodiff::grad(
        |a| {
            let k = c.sum()?.item()?;
            (&a[0] * k)?.sum()
        },
        &[x],
    )
    .unwrap();
    assert_eq!(g[0].to_f64_vec().unwrap(), vec![7.0, 7.0]);
}

#[test]
fn a_result_that_does_not_depend_on_the_arguments_is_an_error() {
    let x = v(&[1.0, 2.0]);
    let (op, why) = autodiff_error(autodiff::grad(
        |_| Ok(Array::scalar(1.0)),
        std::slice::from_ref(&x),
    ));
    assert_eq!(op, "grad");
    assert!(why.contains("does not depend on its arguments"), "{why}");
    let c = v(&[3.0, 4.0]);
    let (_, why) = autodiff_error(autodiff::grad(|_| c.exp()?.sum(), &[x]));
    assert!(why.contains("does not depend"), "{why}");
}

#[test]
fn a_non_scalar_result_is_refused_by_grad() {
    let (op, why) = autodiff_error(autodiff::grad(|a| a[0].exp(), &[v(&[1.0, 2.0])]));
    assert_eq!(op, "grad");
    assert!(why.contains("scalar") && why.contains("vjp"), "{why}");
}

// ---- transformations ----------------------------------------------------------------

#[test]
fn grad_wrt_picks_arguments() {
    // f(a, b, c) = sum(a b + c^2)
    let (a, b, c) = (v(&[1.0, 2.0]), v(&[3.0, 4.0]), v(&[5.0, 6.0]));
    let f = |x: &[Array]| ((&x[0] * &x[1])? + &(&x[2] * &x[2])?)?.sum();
    let g = autodiff::grad_wrt(f, &[a.clone(), b.clone(), c.clone()], &[2, 0]).unwrap();
    assert_eq!(g.len(), 2);
    assert_eq!(g[0].to_f64_vec().unwrap(), vec![10.0, 12.0]);
    assert_eq!(g[1].to_f64_vec().unwrap(), vec![3.0, 4.0]);
    let (_, why) = autodiff_error(autodiff::grad_wrt(f, &[a, b, c], &[3]));
    assert!(why.contains("argument 3"), "{why}");
}

#[test]
fn value_and_grad_gives_both() {
    let x = v(&[1.0, 2.0, 3.0]);
    let (y, g) = autodiff::value_and_grad(|a| (&a[0] * &a[0])?.sum(), &[x]).unwrap();
    assert_eq!(y.item().unwrap(), 14.0);
    assert_eq!(g[0].to_f64_vec().unwrap(), vec![2.0, 4.0, 6.0]);
}

#[test]
fn vjp_of_non_scalar_outputs() {
    // f(x) = (x * x, column sums of sin(x)) for x [2, 2]
    let xv = [0.5f64, 1.0, 1.5, 2.0];
    let x = Array::from_vec([2, 2], xv.to_vec()).unwrap();
    let u0 = Array::from_vec([2, 2], vec![1.0, -1.0, 2.0, 0.5]).unwrap();
    let u1 = Array::from_vec([1, 2], vec![3.0, -2.0]).unwrap();
    let (outs, g) = autodiff::vjp(
        |a| Ok(vec![(&a[0] * &a[0])?, a[0].sin()?.sum_axis(0)?]),
        &[x],
        &[u0, u1],
    )
    .unwrap();
    assert_eq!(outs[1].dims(), &[1, 2]);
    let (u0, u1) = ([1.0, -1.0, 2.0, 0.5], [3.0, 3.0, -2.0, -2.0]);
    let want: Vec<f64> = (0..4)
        .map(|i| u0[i] * 2.0 * xv[i] + u1[i] * xv[i].cos())
        .collect();
    let got = g[0].to_f64_vec().unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-14, "{got:?} {want:?}");
    }
    // A cotangent of the wrong shape is refused.
    let r = autodiff::vjp(|a| Ok(vec![a[0].exp()?]), &[v(&[1.0])], &[v(&[1.0, 2.0])]);
    let (op, _) = autodiff_error(r.map(|r| r.1));
    assert_eq!(op, "vjp");
}

#[test]
fn jvp_of_a_multi_output_function() {
    // f(x, y) = (x y, sum(exp(x)), argmax(y)) along tangents (tx, ty)
    let (xv, yv) = ([0.5f64, -1.0, 2.0], [1.5f64, 3.0, -0.5]);
    let (tx, ty) = ([1.0, 0.5, -1.0], [0.25, -2.0, 1.0]);
    let (outs, t) = autodiff::jvp(
        |a| Ok(vec![(&a[0] * &a[1])?, a[0].exp()?.sum()?, a[1].argmax()?]),
        &[v(&xv), v(&yv)],
        &[v(&tx), v(&ty)],
    )
    .unwrap();
    assert_eq!(outs.len(), 3);
    let want0: Vec<f64> = (0..3).map(|i| tx[i] * yv[i] + xv[i] * ty[i]).collect();
    let got0 = t[0].to_f64_vec().unwrap();
    for (g, w) in got0.iter().zip(&want0) {
        assert!((g - w).abs() < 1e-14, "{got0:?} {want0:?}");
    }
    let want1: f64 = (0..3).map(|i| xv[i].exp() * tx[i]).sum();
    assert!((t[1].item().unwrap() - want1).abs() < 1e-13);
    // An integer output has a zero tangent of its dtype.
    assert_eq!(t[2].dtype(), DType::I64);
    assert_eq!(t[2].to_vec::<i64>().unwrap(), vec![0]);
    // Structurally zero derivatives give zero tangents, not an error.
    let (_, t) = autodiff::jvp(|a| Ok(vec![a[0].sign()?]), &[v(&xv)], &[v(&tx)]).unwrap();
    assert_eq!(t[0].to_f64_vec().unwrap(), vec![0.0; 3]);
}

#[test]
fn zero_gradient_ops_give_zeros() {
    let x = v(&[-1.7, -0.2, 0.4, 2.6]);
    // d/dx (f(x) x) = f'(x) x + f(x) = f(x): f contributes nothing.
    for f in [
        Array::sign as fn(&Array) -> Result<Array>,
        Array::floor,
        Array::ceil,
        Array::round,
    ] {
        let want = f(&x).unwrap().to_f64_vec().unwrap();
        assert_eq!(grad1(|a| (f(a)? * a)?.sum(), &x), want);
    }
    // Comparisons give no gradient: only the other factor's path counts.
    let g = grad1(|a| (a.gt_scalar(0.0)?.astype(DType::F64)? * a)?.sum(), &x);
    assert_eq!(g, vec![0.0, 0.0, 1.0, 1.0]);
}
