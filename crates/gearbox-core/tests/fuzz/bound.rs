//! How far a fused result may be from the op-by-op (unfused) one.
//!
//! For every element of every node, [`bounds`] gives `e`, a bound on
//! `|fused - unfused|`, propagated through the graph from the unfused values:
//!
//! - `e = 0`: the two must be identical (bit for bit; any NaN matches any
//!   NaN). Elementwise ops on identical operands are identical: the fused
//!   kernels call the same scalar functions as the op-by-op path;
//! - `0 < e < inf`: a finite unfused value `v` needs a finite fused value
//!   within `e` of it; a NaN or infinite `v` needs the identical value (a
//!   non-finite value that could differ is given `e = inf` instead);
//! - `e = inf`: not checked (the paths may legitimately differ, e.g. a
//!   comparison of two values that rounding could reorder).
//!
//! Rounding differences enter only where the fused path adds in another
//! order: sums and means (`|Δ| <= 2 (n + 1) u Σ|x|`, `u` the float64 unit
//! roundoff, both paths accumulate in float64) and products
//! (`2 (n + 1) u |Π x|` while no partial product can overflow or underflow;
//! otherwise unchecked, issue 10 item 6). They then grow through later ops:
//! an op that is monotone in each operand over the box of possible operand
//! values takes its extremes at the box's corners, so `e` is the largest
//! distance from `v` to the op at a corner, plus a few units in the last
//! place (`8 ulp` of the result dtype: the math functions are within an ulp
//! or two of exact). Lipschitz ops (`neg abs sin cos clamp min max`) pass
//! `e` on; step functions (`sign floor ceil round`, casts to integer or bool,
//! comparisons) give `0` when every corner gives the same value, else `inf`.
//! A result whose box could reach past the dtype's largest finite value is
//! `inf` (overflow may happen on one path only).

use gearbox_core::{BinaryOp, DType, ReduceOp, UnaryOp};

use super::graph::{Op, FUNCTIONS};

/// A node's unfused values.
#[derive(Debug, Clone)]
pub struct NodeVal {
    /// Dimensions.
    pub dims: Vec<usize>,
    /// Dtype.
    pub dtype: DType,
    /// Values as f64.
    pub v: Vec<f64>,
}

const INF: f64 = f64::INFINITY;

/// Unit in the last place, relative, of a dtype's values.
fn ulp(d: DType) -> f64 {
    match d {
        DType::F32 => f32::EPSILON as f64,
        DType::F64 => f64::EPSILON,
        _ => 0.0,
    }
}

/// Smallest subnormal step of a dtype (absolute rounding near zero).
fn tiny(d: DType) -> f64 {
    match d {
        DType::F32 => 1.5e-45,
        DType::F64 => 5e-324,
        _ => 0.0,
    }
}

/// Largest finite value of a dtype (for the overflow rule).
fn max_of(d: DType) -> f64 {
    match d {
        DType::F32 => f32::MAX as f64,
        DType::F64 => f64::MAX,
        _ => 9.0e15,
    }
}

/// A few units in the last place of `m` in dtype `d`.
fn slack(d: DType, m: f64) -> f64 {
    8.0 * (ulp(d) * m + tiny(d))
}

/// The final rules: `inf` stays; a non-finite `v` with a finite bound is
/// identical (`0`); a box reaching past the largest finite value is `inf`.
fn finish(d: DType, v: f64, e: f64) -> f64 {
    if e == INF || e.is_nan() {
        INF
    } else if !v.is_finite() {
        0.0
    } else if e > 0.0 && v.abs() + e > max_of(d) {
        INF
    } else {
        e
    }
}

/// Whether every value is bit-identical (NaN matching NaN).
fn identical(xs: &[f64]) -> bool {
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    xs.iter().all(|&x| same(x, xs[0]))
}

/// The corners of the box `v ± e` of each operand (one point where `e = 0`).
fn corner_points(ins: &[(f64, f64)]) -> Vec<Vec<f64>> {
    let mut pts = vec![vec![]];
    for &(v, e) in ins {
        let sides: &[f64] = if e == 0.0 { &[v] } else { &[v - e, v + e] };
        pts = pts
            .iter()
            .flat_map(|p| {
                sides.iter().map(move |&s| {
                    let mut q = p.clone();
                    q.push(s);
                    q
                })
            })
            .collect();
    }
    pts
}

/// `e` of an op monotone in each operand: the largest distance from `out`
/// to its value at a corner, plus rounding in dtype `d`.
fn continuous(d: DType, out: f64, f: &dyn Fn(&[f64]) -> f64, ins: &[(f64, f64)]) -> f64 {
    if ins.iter().all(|&(_, e)| e == 0.0) {
        return 0.0;
    }
    if ins.iter().any(|&(_, e)| e == INF) {
        return INF;
    }
    let vals: Vec<f64> = corner_points(ins).iter().map(|p| f(p)).collect();
    if !out.is_finite() {
        let mut all = vals.clone();
        all.push(out);
        return if identical(&all) { 0.0 } else { INF };
    }
    if vals.iter().any(|c| !c.is_finite()) {
        return INF;
    }
    let dev = vals.iter().fold(0.0f64, |m, c| m.max((c - out).abs()));
    let mag = vals.iter().fold(out.abs(), |m, c| m.max(c.abs()));
    dev * (1.0 + 1e-9) + slack(d, mag)
}

/// `e` of a step function: `0` when every corner (and `out`) agrees.
fn discrete(out: f64, f: &dyn Fn(&[f64]) -> f64, ins: &[(f64, f64)]) -> f64 {
    if ins.iter().all(|&(_, e)| e == 0.0) {
        return 0.0;
    }
    if ins.iter().any(|&(_, e)| e == INF) {
        return INF;
    }
    let mut vals: Vec<f64> = corner_points(ins).iter().map(|p| f(p)).collect();
    vals.push(out);
    if identical(&vals) {
        0.0
    } else {
        INF
    }
}

/// Whether the box `v ± e` excludes zero.
fn off_zero(v: f64, e: f64) -> bool {
    v - e > 0.0 || v + e < 0.0
}

/// For each position of `out`, the position of a broadcast operand.
fn broadcast_map(out: &[usize], inp: &[usize]) -> Vec<usize> {
    let n: usize = out.iter().product();
    let mut map = Vec::with_capacity(n);
    let mut idx = vec![0usize; out.len()];
    for _ in 0..n {
        let (mut off, mut stride) = (0, 1);
        for (i, &c) in idx.iter().enumerate() {
            let d = inp.get(i).copied().unwrap_or(1);
            if d != 1 {
                off += c * stride;
            }
            stride *= d;
        }
        map.push(off);
        for (i, c) in idx.iter_mut().enumerate() {
            *c += 1;
            if *c < out[i] {
                break;
            }
            *c = 0;
        }
    }
    map
}

fn unary_bound(u: UnaryOp, d: DType, out: f64, v: f64, e: f64) -> f64 {
    use UnaryOp::*;
    let f = |p: &[f64]| u.apply(p[0]);
    let ins = [(v, e)];
    if e == 0.0 || e == INF {
        return e;
    }
    match u {
        Neg | Abs => e,
        Sin | Cos => e.min(2.0) + slack(d, 1.0),
        Tan => {
            if e > 0.5 || (v - e).cos() * (v + e).cos() <= 0.0 {
                INF
            } else {
                continuous(d, out, &f, &ins)
            }
        }
        Sign | Floor | Ceil | Round | IsNan | IsFinite | Not => discrete(out, &f, &ins),
        _ => continuous(d, out, &f, &ins),
    }
}

fn binary_bound(op: BinaryOp, d: DType, out: f64, a: (f64, f64), b: (f64, f64)) -> f64 {
    use BinaryOp::*;
    let ins = [a, b];
    if a.1 == 0.0 && b.1 == 0.0 {
        return 0.0;
    }
    if a.1 == INF || b.1 == INF {
        return INF;
    }
    let f = |p: &[f64]| op.apply(p[0], p[1]);
    let g = |p: &[f64]| op.apply(p[0], p[1]);
    match op {
        Add | Sub | Mul | Minimum | Maximum => continuous(d, out, &f, &ins),
        Div if off_zero(b.0, b.1) => continuous(d, out, &f, &ins),
        Pow if (a.0 - a.1 > 0.0) || (b.1 == 0.0 && off_zero(a.0, a.1)) => {
            continuous(d, out, &f, &ins)
        }
        Atan2 if off_zero(b.0, b.1) && (b.0 - b.1 > 0.0 || off_zero(a.0, a.1)) => {
            continuous(d, out, &f, &ins)
        }
        Lt | Le | Gt | Ge => discrete(out, &g, &ins),
        Eq | Ne => {
            let apart =
                a.0.is_nan() || b.0.is_nan() || a.0 + a.1 < b.0 - b.1 || b.0 + b.1 < a.0 - a.1;
            if apart {
                0.0
            } else {
                INF
            }
        }
        _ => INF,
    }
}

/// Bounds of a reduction lane holding `xs` (values, bounds); `out` is the
/// unfused result, `d` its dtype, `int` whether the input is integral.
fn lane_bound(op: ReduceOp, d: DType, int: bool, out: f64, xs: &[(f64, f64)]) -> f64 {
    let exact = xs.iter().all(|&(_, e)| e == 0.0);
    if xs.iter().any(|&(_, e)| e == INF) {
        return INF;
    }
    let n = xs.len() as f64;
    let u = f64::EPSILON / 2.0;
    match op {
        ReduceOp::Sum if int => 0.0,
        ReduceOp::Sum | ReduceOp::Mean => {
            if xs.is_empty() {
                return 0.0;
            }
            let s: f64 = xs
                .iter()
                .filter(|(v, _)| v.is_finite())
                .map(|(v, _)| v.abs())
                .sum();
            let has_nan = xs.iter().any(|(v, _)| v.is_nan());
            let could_overflow = s * (1.0 + 4.0 * (n + 1.0) * u) >= f64::MAX;
            if could_overflow {
                // A partial sum could overflow on one path only.
                return if has_nan { 0.0 } else { INF };
            }
            if xs.iter().any(|(v, _)| !v.is_finite()) {
                return 0.0;
            }
            let es: f64 = xs.iter().map(|(_, e)| e).sum();
            let e = es + 2.0 * (n + 1.0) * u * s;
            let e = if op == ReduceOp::Mean { e / n } else { e };
            e * (1.0 + 1e-9) + slack(d, out.abs())
        }
        ReduceOp::Prod => {
            if xs.iter().any(|(v, _)| v.is_nan()) {
                return 0.0;
            }
            let log_big: f64 = xs
                .iter()
                .filter(|(v, _)| v.is_finite() && v.abs() > 1.0)
                .map(|(v, e)| (v.abs() + e).log2())
                .sum();
            let log_small: f64 = xs
                .iter()
                .filter(|(v, _)| v.abs() < 1.0 && *v != 0.0)
                .map(|(v, e)| (v.abs() - e).max(0.0).log2())
                .sum();
            if log_big > 1000.0 || log_small < -1000.0 {
                return INF; // partial products over- or underflow: item 6
            }
            if exact {
                return 2.0 * (n + 1.0) * u * out.abs() * (1.0 + 1e-9) + slack(d, out.abs());
            }
            if xs.iter().any(|&(v, e)| !v.is_finite() || !off_zero(v, e)) {
                return INF;
            }
            let rel = xs.iter().fold(1.0, |r, &(v, e)| r * (1.0 + e / v.abs())) - 1.0;
            (rel + 2.0 * (n + 1.0) * u) * out.abs() * (1.0 + 1e-6) + slack(d, out.abs())
        }
        ReduceOp::Min | ReduceOp::Max => xs.iter().fold(0.0, |m, &(_, e)| m.max(e)),
        _ => {
            if exact {
                0.0
            } else {
                INF
            }
        }
    }
}

/// The bound of every element of every node (see the module docs); `vals`
/// are the unfused values of the nodes `ops` built.
pub fn bounds(ops: &[Op], vals: &[NodeVal]) -> Vec<Vec<f64>> {
    let mut es: Vec<Vec<f64>> = Vec::with_capacity(ops.len());
    for (k, op) in ops.iter().enumerate() {
        let node = &vals[k];
        let raw = node_bound(op, node, vals, &es);
        let e = raw
            .iter()
            .zip(&node.v)
            .map(|(&e, &v)| finish(node.dtype, v, e))
            .collect();
        es.push(e);
    }
    es
}

/// The bounds of one node before [`finish`].
fn node_bound(op: &Op, node: &NodeVal, vals: &[NodeVal], es: &[Vec<f64>]) -> Vec<f64> {
    let n = node.v.len();
    let d = node.dtype;
    let at = |i: usize| -> (Vec<usize>, &[f64], &[f64]) {
        (broadcast_map(&node.dims, &vals[i].dims), &vals[i].v, &es[i])
    };
    match op {
        Op::Input(..) | Op::ScalarLike(..) => vec![0.0; n],
        Op::Unary(u, a) => (0..n)
            .map(|p| unary_bound(*u, d, node.v[p], vals[*a].v[p], es[*a][p]))
            .collect(),
        Op::Binary(op, x, y) => {
            let ((mx, vx, ex), (my, vy, ey)) = (at(*x), at(*y));
            (0..n)
                .map(|p| {
                    let a = (vx[mx[p]], ex[mx[p]]);
                    let b = (vy[my[p]], ey[my[p]]);
                    binary_bound(*op, d, node.v[p], a, b)
                })
                .collect()
        }
        Op::BinaryScalar(op, x, s) => {
            let sv = scalar_like_value(vals[*x].dtype, *s);
            let (mx, vx, ex) = at(*x);
            (0..n)
                .map(|p| binary_bound(*op, d, node.v[p], (vx[mx[p]], ex[mx[p]]), (sv, 0.0)))
                .collect()
        }
        Op::Where(m, x, y) => {
            let ((mm, vm, em), (mx, _, ex), (my, _, ey)) = (at(*m), at(*x), at(*y));
            (0..n)
                .map(|p| match em[mm[p]] {
                    e if e != 0.0 => INF,
                    _ if vm[mm[p]] != 0.0 => ex[mx[p]],
                    _ => ey[my[p]],
                })
                .collect()
        }
        Op::Clamp(a, ..) => es[*a].clone(),
        Op::Cast(a, to) => {
            let from = vals[*a].dtype;
            (0..n)
                .map(|p| cast_bound(from, *to, node.v[p], vals[*a].v[p], es[*a][p]))
                .collect()
        }
        Op::Call(f, args, flags) => {
            let maps: Vec<_> = args.iter().map(|&i| at(i)).collect();
            let eval = FUNCTIONS[*f].eval;
            let g = |x: &[f64]| eval(x, *flags);
            (0..n)
                .map(|p| {
                    let ins: Vec<(f64, f64)> =
                        maps.iter().map(|(m, v, e)| (v[m[p]], e[m[p]])).collect();
                    continuous(DType::F64, node.v[p], &g, &ins)
                })
                .collect()
        }
        Op::Reduce(r, axis, a) => reduce_bound(*r, *axis, node, &vals[*a], &es[*a]),
        Op::Scan(_, axis, a) => scan_bound(*axis, &vals[*a].dims, &es[*a]),
        Op::Matmul(a, b) => {
            let exact = es[*a].iter().chain(&es[*b]).all(|&e| e == 0.0);
            vec![if exact { 0.0 } else { INF }; n]
        }
        Op::Transpose(a) => {
            let dims = &vals[*a].dims;
            if dims.len() < 2 {
                return es[*a].clone();
            }
            let (r, c) = (dims[0], dims[1]);
            (0..n).map(|p| es[*a][(p / c) + r * (p % c)]).collect()
        }
        Op::Reshape(a, _) => es[*a].clone(),
        Op::Slice(a, axis, lo, hi) => {
            let dims = &vals[*a].dims;
            let inner: usize = dims[..*axis].iter().product();
            let len = dims[*axis];
            let width = hi - lo;
            (0..n)
                .map(|p| {
                    let (i, rest) = (p % inner.max(1), p / inner.max(1));
                    let (k, o) = (rest % width.max(1), rest / width.max(1));
                    es[*a][i + inner * (k + lo + len * o)]
                })
                .collect()
        }
    }
}

/// The value [`gearbox_core::Array::scalar_like`] gives, as f64.
fn scalar_like_value(dtype: DType, s: f64) -> f64 {
    match dtype {
        DType::F32 => s as f32 as f64,
        DType::I64 | DType::Bool if s.fract() == 0.0 && s.abs() < 9.0e15 => s,
        _ => s,
    }
}

fn cast_bound(from: DType, to: DType, out: f64, v: f64, e: f64) -> f64 {
    if e == 0.0 || e == INF {
        return e;
    }
    let ins = [(v, e)];
    match to {
        DType::F64 => e,
        DType::F32 if from == DType::F64 => e + slack(DType::F32, v.abs() + e),
        DType::F32 => e,
        DType::I64 => discrete(out, &|p| (p[0] as i64) as f64, &ins),
        DType::Bool => discrete(out, &|p| (p[0] != 0.0) as u8 as f64, &ins),
    }
}

fn reduce_bound(
    r: ReduceOp,
    axis: Option<usize>,
    node: &NodeVal,
    input: &NodeVal,
    e_in: &[f64],
) -> Vec<f64> {
    let total: usize = input.dims.iter().product();
    let (inner, len, outer) = match axis {
        None => (1, total, 1),
        Some(a) => (
            input.dims[..a].iter().product(),
            input.dims[a],
            input.dims[a + 1..].iter().product(),
        ),
    };
    let int = matches!(input.dtype, DType::I64 | DType::Bool);
    (0..inner * outer)
        .map(|l| {
            let (i, o) = (l % inner, l / inner);
            let xs: Vec<(f64, f64)> = (0..len)
                .map(|k| {
                    let at = i + inner * (k + len * o);
                    (input.v[at], e_in[at])
                })
                .collect();
            lane_bound(r, node.dtype, int, node.v[l], &xs)
        })
        .collect()
}

/// Scans (cumulative sums and products) run op by op on both paths: an
/// element is exact while every element before it in its lane is.
fn scan_bound(axis: Option<usize>, dims: &[usize], e_in: &[f64]) -> Vec<f64> {
    let total: usize = dims.iter().product();
    let (inner, len, outer) = match axis {
        None => (1, total, 1),
        Some(a) => (
            dims[..a].iter().product(),
            dims[a],
            dims[a + 1..].iter().product(),
        ),
    };
    let mut out = vec![0.0; total];
    for o in 0..outer {
        for i in 0..inner {
            let mut exact = true;
            for k in 0..len {
                let at = i + inner * (k + len * o);
                exact &= e_in[at] == 0.0;
                out[at] = if exact { 0.0 } else { INF };
            }
        }
    }
    out
}
