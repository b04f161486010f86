//! The derivative catalog: every differentiable op's vector-Jacobian and
//! Jacobian-vector products against central finite differences in float64,
//! on random inputs (never zeros, away from kinks and poles), at shapes that
//! broadcast; reductions with and without an axis; the zero-gradient and
//! no-gradient ops; second derivatives (grad of grad) of a handful.
//!
//! The op lists are exhaustive matches with no wildcard over `UnaryOp`,
//! `BinaryOp` and `ReduceOp`: a new variant does not compile until it has
//! an entry here, and a test fails unless every op (and every shape op in
//! [`SHAPE_OPS`]) was exercised.

mod common;

use std::cell::RefCell;
use std::collections::BTreeSet;

use common::TestRng;
use gearbox_core::{autodiff, Array, BinaryOp, DType, Precision, ReduceOp, Result, UnaryOp};

/// Central-difference step.
const H: f64 = 1e-5;
/// The largest error allowed, relative to `max(1, |finite difference|)`.
const TOL: f64 = 1e-6;

/// Where an op's random inputs come from.
#[derive(Debug, Clone, Copy)]
enum Domain {
    /// `±[0.3, 1.5]`: never zero, away from `abs`'s kink.
    Any,
    /// `[0.5, 2]`: `log`, `sqrt`, a power's base.
    Pos,
    /// `±[0.2, 0.9]`: `tan` far from its poles.
    Small,
    /// `±[0.3, 1.5]` on a grid of step 0.1 offset by 0.03: never within
    /// 0.04 of [`Domain::Other`]'s values (`minimum`, `maximum`).
    Grid,
    /// The grid offset by 0.07.
    Other,
    /// Distinct values (at least 1e-3 apart): `min`, `max` without ties.
    Distinct,
    /// `±[0.3, 1.5]` but not within 0.05 of ±1 (`clamp(-1, 1)`).
    AwayFromOne,
}

fn draw(rng: &mut TestRng, domain: Domain, n: usize) -> Vec<f64> {
    let sign = |rng: &mut TestRng| {
        if rng.uniform(0.0, 1.0) < 0.5 {
            -1.0
        } else {
            1.0
        }
    };
    let mut out: Vec<f64> = Vec::with_capacity(n);
    while out.len() < n {
        let v = match domain {
            Domain::Any => sign(rng) * rng.uniform(0.3, 1.5),
            Domain::Pos => rng.uniform(0.5, 2.0),
            Domain::Small => sign(rng) * rng.uniform(0.2, 0.9),
            Domain::Grid | Domain::Other => {
                let k = (rng.uniform(3.0, 15.0)).floor();
                let off = if matches!(domain, Domain::Grid) {
                    0.03
                } else {
                    0.07
                };
                sign(rng) * (0.1 * k + off)
            }
            Domain::Distinct => {
                let v = sign(rng) * rng.uniform(0.3, 1.5);
                if out.iter().any(|&o| (o - v).abs() < 1e-3) {
                    continue;
                }
                v
            }
            Domain::AwayFromOne => {
                let v = sign(rng) * rng.uniform(0.3, 1.5);
                if (v.abs() - 1.0).abs() < 0.05 {
                    continue;
                }
                v
            }
        };
        out.push(v);
    }
    out
}

type Fun<'a> = &'a dyn Fn(&[Array]) -> Result<Array>;

/// The worst errors seen, and the names of every op the cases built.
#[derive(Default)]
struct Stats {
    worst_vjp: (f64, String),
    worst_jvp: (f64, String),
    worst_second: (f64, String),
    cases: usize,
    ops: BTreeSet<String>,
}

thread_local! {
    static STATS: RefCell<Stats> = RefCell::new(Stats::default());
}

fn note(which: fn(&mut Stats) -> &mut (f64, String), err: f64, what: &str) {
    STATS.with(|s| {
        let mut s = s.borrow_mut();
        let w = which(&mut s);
        if err > w.0 {
            *w = (err, what.to_string());
        }
    });
}

/// Counts a case and the ops its graph `y` holds.
fn record(y: &Array) {
    STATS.with(|s| {
        let mut s = s.borrow_mut();
        s.cases += 1;
        for a in y.pending_in_order() {
            if let Some(op) = a.op() {
                s.ops.insert(op.name().to_string());
            }
        }
    });
}

fn err_of(ad: f64, fd: f64) -> f64 {
    (ad - fd).abs() / fd.abs().max(1.0)
}

fn arrays(shapes: &[&[usize]], data: &[Vec<f64>]) -> Vec<Array> {
    shapes
        .iter()
        .zip(data)
        .map(|(s, d)| Array::from_vec(s.to_vec(), d.clone()).unwrap())
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Random inputs of `shapes` drawn from `domains`.
fn draw_all(rng: &mut TestRng, shapes: &[&[usize]], domains: &[Domain]) -> Vec<Vec<f64>> {
    shapes
        .iter()
        .zip(domains)
        .map(|(s, &d)| draw(rng, d, s.iter().product()))
        .collect()
}

/// Compares `ad` (one vector per input) with central differences of the
/// scalar `at` of the inputs `data`, element by element.
fn compare_partials(
    name: &str,
    worst: fn(&mut Stats) -> &mut (f64, String),
    ad: &[Vec<f64>],
    data: &[Vec<f64>],
    at: &dyn Fn(&[Vec<f64>]) -> f64,
) {
    for (i, ad) in ad.iter().enumerate() {
        for k in 0..data[i].len() {
            let mut p = data.to_vec();
            p[i][k] += H;
            let up = at(&p);
            p[i][k] -= 2.0 * H;
            let fd = (up - at(&p)) / (2.0 * H);
            let err = err_of(ad[k], fd);
            note(worst, err, name);
            assert!(
                err <= TOL,
                "{name}: input {i} at {k}: {} against finite difference {fd} (error {err:e})",
                ad[k]
            );
        }
    }
}

/// Checks `f`'s vjp and jvp at random inputs of `shapes` drawn from
/// `domains` against central finite differences.
fn check(name: &str, f: Fun<'_>, shapes: &[&[usize]], domains: &[Domain], seed: u64) {
    let mut rng = TestRng::new(seed);
    let data = draw_all(&mut rng, shapes, domains);
    let xs = arrays(shapes, &data);
    let y = f(&xs).unwrap_or_else(|e| panic!("{name}: {e}"));
    record(&y);
    let eval = |data: &[Vec<f64>]| f(&arrays(shapes, data)).unwrap().to_f64_vec().unwrap();
    let y0 = eval(&data);

    // vjp: <u, f(x ± h e_k)> against the cotangent of x_k.
    let u = rng.vec(y0.len(), -1.0, 1.0);
    let ua = Array::from_vec(y.dims().to_vec(), u.clone()).unwrap();
    let (outs, grads) = autodiff::vjp(|a| Ok(vec![f(a)?]), &xs, &[ua])
        .unwrap_or_else(|e| panic!("{name}: vjp: {e}"));
    assert_eq!(outs[0].to_f64_vec().unwrap(), y0, "{name}: vjp's value");
    for (i, g) in grads.iter().enumerate() {
        assert_eq!(g.shape(), xs[i].shape(), "{name}: cotangent {i}'s shape");
        assert_eq!(g.dtype(), DType::F64, "{name}: cotangent {i}'s dtype");
    }
    let grads: Vec<Vec<f64>> = grads.iter().map(|g| g.to_f64_vec().unwrap()).collect();
    compare_partials(name, |s| &mut s.worst_vjp, &grads, &data, &|p| {
        dot(&u, &eval(p))
    });

    // jvp: f(x ± h t) against the directional derivative along t.
    let ts: Vec<Vec<f64>> = data.iter().map(|d| rng.vec(d.len(), -1.0, 1.0)).collect();
    let ta = arrays(shapes, &ts);
    let (outs, jv) =
        autodiff::jvp(|a| Ok(vec![f(a)?]), &xs, &ta).unwrap_or_else(|e| panic!("{name}: jvp: {e}"));
    assert_eq!(outs[0].to_f64_vec().unwrap(), y0, "{name}: jvp's value");
    assert_eq!(jv[0].shape(), y.shape(), "{name}: jvp's shape");
    let jv = jv[0].to_f64_vec().unwrap();
    let moved = |s: f64| -> Vec<Vec<f64>> {
        data.iter()
            .zip(&ts)
            .map(|(d, t)| d.iter().zip(t).map(|(x, t)| x + s * t).collect())
            .collect()
    };
    let (up, down) = (eval(&moved(H)), eval(&moved(-H)));
    for k in 0..jv.len() {
        let fd = (up[k] - down[k]) / (2.0 * H);
        let err = err_of(jv[k], fd);
        note(|s| &mut s.worst_jvp, err, name);
        assert!(
            err <= TOL,
            "{name}: jvp at {k}: {} against finite difference {fd} (error {err:e})",
            jv[k]
        );
    }
}

/// Shapes of two operands that broadcast: equal, a column against a row,
/// a matrix against a vector (MATLAB's missing trailing dimension), a
/// scalar against a matrix and back, three dimensions against two.
const PAIRS: &[(&[usize], &[usize])] = &[
    (&[3, 4], &[3, 4]),
    (&[3, 1], &[1, 4]),
    (&[3, 4], &[3]),
    (&[1, 4], &[3]),
    (&[], &[3, 4]),
    (&[3, 4], &[]),
    (&[2, 3, 2], &[2, 1]),
];

/// What the catalog does with an op.
enum Class {
    /// Differentiable: checked against finite differences, inputs from these domains.
    Smooth(&'static [Domain]),
    /// Derivative zero wherever it exists (documented): the gradient is zeros.
    ZeroGrad,
    /// No gradient flows (tests, comparisons, logic, positions): zeros reach the arguments.
    NoGrad,
}

fn unary_class(op: UnaryOp) -> Class {
    use Domain::*;
    use UnaryOp::*;
    match op {
        Neg | Abs | Exp | Expm1 | Sin | Cos | Tanh | Sigmoid | Softplus => Class::Smooth(&[Any]),
        Sqrt | Log | Log1p => Class::Smooth(&[Pos]),
        Tan => Class::Smooth(&[Small]),
        Sign | Floor | Ceil | Round => Class::ZeroGrad,
        IsNan | IsFinite | Not => Class::NoGrad,
    }
}

fn binary_class(op: BinaryOp) -> Class {
    use BinaryOp::*;
    use Domain::*;
    match op {
        Add | Sub | Mul | Div | Atan2 => Class::Smooth(&[Any, Any]),
        Pow => Class::Smooth(&[Pos, Any]),
        Minimum | Maximum => Class::Smooth(&[Grid, Other]),
        Eq | Ne | Lt | Le | Gt | Ge | And | Or => Class::NoGrad,
    }
}

fn reduce_class(op: ReduceOp) -> Class {
    use ReduceOp::*;
    match op {
        Sum | Prod | Mean | Var | Sd | LogSumExp => Class::Smooth(&[Domain::Any]),
        Min | Max => Class::Smooth(&[Domain::Distinct]),
        ArgMin | ArgMax | Any | All => Class::NoGrad,
    }
}

/// The shape ops (not enumerated by a type): each must appear in some case.
const SHAPE_OPS: &[&str] = &[
    "identity",
    "reshape",
    "transpose",
    "broadcast_to",
    "flip",
    "slice",
    "concat",
    "take",
    "where",
    "cumsum",
    "cumprod",
    "astype",
];

/// `grad(sum(f(x)))` is all zeros, and so is the jvp.
fn check_zero_gradient(name: &str, f: Fun<'_>, shape: &[usize], seed: u64) {
    let mut rng = TestRng::new(seed);
    let data = vec![draw(&mut rng, Domain::Grid, shape.iter().product())];
    let xs = arrays(&[shape], &data);
    record(&f(&xs).unwrap());
    let g = autodiff::grad(|a| f(a)?.sum(), &xs).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(g[0].shape(), xs[0].shape(), "{name}");
    assert!(
        g[0].to_f64_vec().unwrap().iter().all(|&v| v == 0.0),
        "{name}: the gradient is zero"
    );
    let t = arrays(&[shape], &[rng.vec(data[0].len(), -1.0, 1.0)]);
    let (_, jv) = autodiff::jvp(|a| Ok(vec![f(a)?]), &xs, &t).unwrap();
    assert!(
        jv[0].to_f64_vec().unwrap().iter().all(|&v| v == 0.0),
        "{name}: the jvp is zero"
    );
}

fn f64_of(a: Result<Array>) -> Result<Array> {
    a?.astype(DType::F64)
}

#[test]
fn catalog() {
    let mut seed = 1;
    let mut next = || {
        seed += 1;
        seed
    };

    for &op in UnaryOp::ALL {
        let name = format!("unary {}", op.name());
        match unary_class(op) {
            Class::Smooth(d) => {
                for shape in [&[3, 4][..], &[], &[5]] {
                    check(&name, &|a| a[0].unary(op), &[shape], d, next());
                }
            }
            Class::ZeroGrad => check_zero_gradient(&name, &|a| a[0].unary(op), &[3, 4], next()),
            Class::NoGrad => {
                let f = |a: &[Array]| -> Result<Array> {
                    let x = if op == UnaryOp::Not {
                        a[0].gt_scalar(0.0)?
                    } else {
                        a[0].clone()
                    };
                    f64_of(x.unary(op))
                };
                check_zero_gradient(&name, &f, &[3, 4], next())
            }
        }
    }

    for &op in BinaryOp::ALL {
        let name = format!("binary {}", op.name());
        match binary_class(op) {
            Class::Smooth(d) => {
                for &(sa, sb) in PAIRS {
                    let name = format!("{name} {sa:?} {sb:?}");
                    check(&name, &|a| a[0].binary(op, &a[1]), &[sa, sb], d, next());
                }
            }
            Class::ZeroGrad => unreachable!("no binary op is zero-gradient"),
            Class::NoGrad => {
                let f = |a: &[Array]| -> Result<Array> {
                    let x = &a[0];
                    let (p, q) = if matches!(op, BinaryOp::And | BinaryOp::Or) {
                        (x.gt_scalar(0.0)?, x.lt_scalar(0.5)?)
                    } else {
                        (x.clone(), x.sum_axis(0)?)
                    };
                    f64_of(p.binary(op, &q))
                };
                check_zero_gradient(&name, &f, &[3, 4], next())
            }
        }
    }

    for &op in ReduceOp::ALL {
        let name = format!("reduce {}", op.name());
        match reduce_class(op) {
            Class::Smooth(d) => {
                let cases: &[(&[usize], Option<usize>)] = &[
                    (&[3, 4], None),
                    (&[3, 4], Some(0)),
                    (&[3, 4], Some(1)),
                    (&[5], None),
                    (&[5], Some(0)),
                    (&[2, 3, 2], Some(1)),
                    (&[2, 3, 2], Some(2)),
                ];
                for &(shape, axis) in cases {
                    let name = format!("{name} {shape:?} axis {axis:?}");
                    check(&name, &|a| a[0].reduce(op, axis), &[shape], d, next());
                }
            }
            Class::ZeroGrad => unreachable!("no reduction is zero-gradient"),
            Class::NoGrad => {
                for axis in [None, Some(0), Some(1)] {
                    let f = |a: &[Array]| -> Result<Array> {
                        let x = if matches!(op, ReduceOp::Any | ReduceOp::All) {
                            a[0].gt_scalar(0.0)?
                        } else {
                            a[0].clone()
                        };
                        f64_of(x.reduce(op, axis))
                    };
                    check_zero_gradient(&name, &f, &[3, 4], next())
                }
            }
        }
    }

    shape_ops(&mut next);

    // Coverage: every op of every enum, and every shape op, was built.
    STATS.with(|s| {
        let s = s.borrow();
        let names = UnaryOp::ALL
            .iter()
            .map(|o| o.name())
            .chain(BinaryOp::ALL.iter().map(|o| o.name()))
            .chain(ReduceOp::ALL.iter().map(|o| o.name()))
            .chain(SHAPE_OPS.iter().copied());
        for n in names {
            assert!(s.ops.contains(n), "the catalog has no case for {n}");
        }
        println!(
            "{} cases; worst vjp error {:.2e} ({}), worst jvp error {:.2e} ({})",
            s.cases, s.worst_vjp.0, s.worst_vjp.1, s.worst_jvp.0, s.worst_jvp.1
        );
    });
}

fn shape_ops(next: &mut dyn FnMut() -> u64) {
    use Domain::*;
    // where: the mask broadcast against both branches, a branch a scalar.
    let mask = |shape: &[usize]| {
        let n: usize = shape.iter().product();
        let v: Vec<f64> = (0..n).map(|i| ((i * 7 + 3) % 5) as f64 - 2.0).collect();
        Array::from_vec(shape.to_vec(), v)
            .unwrap()
            .gt_scalar(0.0)
            .unwrap()
    };
    let (m34, m31) = (mask(&[3, 4]), mask(&[3, 1]));
    let m: &[usize] = &[3, 4];
    let cases: &[(&str, Fun<'_>, &[&[usize]])] = &[
        // A pending array re-tagged with a precision is an identity node.
        (
            "identity",
            &|a| a[0].neg()?.with_precision(Precision::Strict),
            &[m],
        ),
        ("reshape", &|a| a[0].reshape([2, 6]), &[m]),
        ("squeeze", &|a| a[0].squeeze(), &[&[3, 1, 4]]),
        ("t of a vector", &|a| a[0].t(), &[&[3]]),
        ("transpose", &|a| a[0].transpose(&[1, 0]), &[m]),
        (
            "transpose 3d",
            &|a| a[0].transpose(&[2, 0, 1]),
            &[&[2, 3, 4]],
        ),
        (
            "broadcast_to a column",
            &|a| a[0].broadcast_to([3, 4]),
            &[&[3, 1]],
        ),
        (
            "broadcast_to a scalar",
            &|a| a[0].broadcast_to([2, 3]),
            &[&[]],
        ),
        (
            "broadcast_to a vector",
            &|a| a[0].broadcast_to([3, 4]),
            &[&[3]],
        ),
        (
            "broadcast_to 3d",
            &|a| a[0].broadcast_to([3, 4, 2]),
            &[&[1, 4]],
        ),
        ("flip 0", &|a| a[0].flip(0), &[&[3, 4, 2]]),
        ("flip 1", &|a| a[0].flip(1), &[&[3, 4, 2]]),
        ("flip 2", &|a| a[0].flip(2), &[&[3, 4, 2]]),
        ("slice 0", &|a| a[0].slice(0, 1..3), &[&[4, 4, 2]]),
        ("slice 1 head", &|a| a[0].slice(1, 0..2), &[&[4, 4, 2]]),
        ("slice 1 tail", &|a| a[0].slice(1, 2..4), &[&[4, 4, 2]]),
        ("slice all", &|a| a[0].slice(0, 0..4), &[&[4, 4, 2]]),
        ("slice 2", &|a| a[0].slice(2, 1..2), &[&[4, 4, 2]]),
        ("take 0", &|a| a[0].take(0, &[3, 0, 3, 1]), &[&[4, 3, 2]]),
        ("take 1 none", &|a| a[0].take(1, &[]), &[&[4, 3, 2]]),
        ("take 2", &|a| a[0].take(2, &[1, 1, 0]), &[&[4, 3, 2]]),
        (
            "concat 1",
            &|a| Array::concat(&[&a[0], &a[1]], 1),
            &[&[3, 2], m],
        ),
        (
            "concat 0",
            &|a| Array::concat(&[&a[0], &a[1]], 0),
            &[&[2, 4], m],
        ),
        // A vector is a column: its missing trailing dimension counts as 1.
        (
            "cbind of a vector",
            &|a| Array::cbind(&[&a[0], &a[1]]),
            &[&[3], &[3, 2]],
        ),
        (
            "rbind",
            &|a| Array::rbind(&[&a[0], &a[1], &a[0]]),
            &[&[4], &[2, 4]],
        ),
        ("cumsum", &|a| a[0].cumsum(), &[m]),
        ("cumsum 0", &|a| a[0].cumsum_axis(0), &[m]),
        ("cumsum 1", &|a| a[0].cumsum_axis(1), &[m]),
        ("cumprod", &|a| a[0].cumprod(), &[m]),
        ("cumprod 0", &|a| a[0].cumprod_axis(0), &[m]),
        ("cumprod 1", &|a| a[0].cumprod_axis(1), &[m]),
        ("where", &|a| Array::where_(&m34, &a[0], &a[1]), &[m, m]),
        (
            "where broadcast",
            &|a| Array::where_(&m31, &a[0], &a[1]),
            &[&[1, 4], &[]],
        ),
        (
            "where by value",
            &|a| Array::where_(&a[0].gt_scalar(0.0)?, &a[0], &a[1]),
            &[m, &[3]],
        ),
        // astype in float64 (a float32 round trip is checked exactly in
        // autodiff_rules.rs: finite differences cannot see through it).
        ("astype", &|a| a[0].astype(DType::F64), &[m]),
        ("col_sums", &|a| a[0].col_sums(), &[m]),
        // Broadcasting on the way: centred squares of the columns.
        (
            "centred squares",
            &|a| {
                let c = (&a[0] - &a[0].mean_axis(0)?)?;
                (&c * &c)?.sum_axis(1)
            },
            &[&[4, 3]],
        ),
    ];
    for &(name, f, shapes) in cases {
        check(name, f, shapes, &[Any, Any][..shapes.len()], next());
    }
    check(
        "clamp",
        &|a| a[0].clamp(-1.0, 1.0),
        &[&[4, 5]],
        &[AwayFromOne],
        next(),
    );
}

/// `grad` of a scalar function of `xs`.
fn gradient(f: Fun<'_>, xs: &[Array]) -> Result<Vec<Array>> {
    autodiff::grad(|a| f(a), xs)
}

/// Second derivatives: the gradient of `<v, grad f>` (a Hessian-vector
/// product, by `grad` of `grad`) against central differences of the
/// first gradient, which `grad` computes.
fn check_second(name: &str, f: Fun<'_>, shapes: &[&[usize]], domains: &[Domain], seed: u64) {
    let mut rng = TestRng::new(seed);
    let data = draw_all(&mut rng, shapes, domains);
    let vs: Vec<Vec<f64>> = data.iter().map(|d| rng.vec(d.len(), -1.0, 1.0)).collect();
    let va = arrays(shapes, &vs);
    // <v, grad f(x)>, evaluated.
    let hv_at = |data: &[Vec<f64>]| -> f64 {
        let g = gradient(f, &arrays(shapes, data)).unwrap();
        g.iter()
            .zip(&vs)
            .map(|(g, v)| dot(&g.to_f64_vec().unwrap(), v))
            .sum()
    };
    let second = autodiff::grad(
        |a| {
            let g = gradient(f, a)?;
            let mut total = (&g[0] * &va[0])?.sum()?;
            for (g, v) in g.iter().zip(&va).skip(1) {
                total = (&total + &(g * v)?.sum()?)?;
            }
            Ok(total)
        },
        &arrays(shapes, &data),
    )
    .unwrap_or_else(|e| panic!("{name}: grad of grad: {e}"));
    let second: Vec<Vec<f64>> = second.iter().map(|s| s.to_f64_vec().unwrap()).collect();
    compare_partials(name, |s| &mut s.worst_second, &second, &data, &hv_at);
}

#[test]
fn second_derivatives() {
    use Domain::*;
    let m = &[3, 4][..];
    check_second("exp", &|a| a[0].exp()?.sum(), &[m], &[Any], 101);
    check_second("tanh", &|a| a[0].tanh()?.sum(), &[m], &[Any], 102);
    check_second("sigmoid", &|a| a[0].sigmoid()?.sum(), &[m], &[Any], 103);
    check_second("log", &|a| a[0].log()?.sum(), &[m], &[Pos], 104);
    check_second(
        "sum of squares",
        &|a| (&a[0] * &a[0])?.sum(),
        &[m],
        &[Any],
        105,
    );
    check_second(
        "mul",
        &|a| (&(&a[0] * &a[1])? * &a[0])?.sum(),
        &[m, &[3, 1]],
        &[Any, Any],
        106,
    );
    check_second(
        "div",
        &|a| (&a[0] / &a[1])?.sum(),
        &[m, &[1, 4]],
        &[Any, Any],
        107,
    );
    // Beyond the handful: reductions and scans whose rules use other ops.
    check_second("var", &|a| a[0].var_axis(0)?.sum(), &[m], &[Any], 108);
    check_second("sd", &|a| a[0].sd(), &[m], &[Any], 109);
    check_second("prod", &|a| a[0].prod_axis(1)?.sum(), &[m], &[Any], 110);
    check_second(
        "cumprod",
        &|a| a[0].cumprod_axis(0)?.sin()?.sum(),
        &[m],
        &[Any],
        111,
    );
    check_second(
        "max",
        &|a| (&a[0].max_axis(0)? * &a[0].max_axis(0)?)?.sum(),
        &[m],
        &[Distinct],
        112,
    );
    check_second(
        "where",
        &|a| Array::where_(&a[0].gt_scalar(0.0)?, &a[0].exp()?, &a[0].sin()?)?.sum(),
        &[m],
        &[Any],
        113,
    );
    STATS.with(|s| {
        let s = s.borrow();
        println!(
            "worst second-derivative error {:.2e} ({})",
            s.worst_second.0, s.worst_second.1
        );
    });
}
