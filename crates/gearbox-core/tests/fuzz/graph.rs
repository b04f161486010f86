//! Random graphs for the fused-against-unfused differential fuzz.
//!
//! A [`Graph`] is a list of [`Op`]s, each over earlier nodes, so that the
//! same graph can be built into fresh [`Array`]s as often as needed (once
//! evaluated with fusion, once without). [`random_graph`] draws one from a
//! seed: inputs of broadcast-compatible shapes and every dtype, holding NaN,
//! infinities, signed zeros, subnormal, tiny, huge, negative and half-integer
//! values; elementwise ops of every kind, scalar operands, comparisons and
//! `where`, casts, scalar-function calls, full and axis reductions, scans,
//! matrix products and data movement; and a random order in which parts of
//! the graph are evaluated before the rest.
//!
//! Integer overflow and float-to-integer conversion of NaN or huge values
//! are kept out by construction (issue 10 items 4 and 6 settle them): the
//! generator tracks a bound on every integer node's magnitude and converts
//! floats to integers only after clamping finite values to `[-1e6, 1e6]`.

use std::fmt;

use gearbox_core::fusion::ir::{DeviceLibrary, ScalarFn};
use gearbox_core::{Array, BinaryOp, DType, HostBuffer, ReduceOp, Result, Shape, UnaryOp};

use crate::common::TestRng;

/// One node of a graph, over the nodes before it.
#[derive(Debug, Clone)]
pub enum Op {
    /// A materialized input.
    Input(Shape, HostBuffer),
    /// A 0-d array from [`Array::scalar_like`] of node `a`.
    ScalarLike(usize, f64),
    /// A unary op.
    Unary(UnaryOp, usize),
    /// A binary op with broadcasting.
    Binary(BinaryOp, usize, usize),
    /// `binary_scalar(op, value)`.
    BinaryScalar(BinaryOp, usize, f64),
    /// `where_(mask, a, b)`.
    Where(usize, usize, usize),
    /// `clamp(lo, hi)`.
    Clamp(usize, f64, f64),
    /// `astype(dtype)`.
    Cast(usize, DType),
    /// A call of [`FUNCTIONS`]`[f]` with flags.
    Call(usize, Vec<usize>, u8),
    /// A reduction over all elements or one axis.
    Reduce(ReduceOp, Option<usize>, usize),
    /// `cumsum` (flattened) or `cumsum_axis`; `cumprod` with `true`.
    Scan(bool, Option<usize>, usize),
    /// `matmul`.
    Matmul(usize, usize),
    /// `t()` of a matrix.
    Transpose(usize),
    /// `reshape`.
    Reshape(usize, Shape),
    /// `slice(axis, lo..hi)`.
    Slice(usize, usize, usize, usize),
}

/// A graph and the order in which its nodes are evaluated: each batch is
/// evaluated together (`eval_all`), then every node (those fused away
/// before are then computed again, from whatever is evaluated by then).
#[derive(Debug, Clone)]
pub struct Graph {
    /// The seed it was drawn from.
    pub seed: u64,
    /// The nodes.
    pub ops: Vec<Op>,
    /// Batches of nodes evaluated, in order, before all of them.
    pub batches: Vec<Vec<usize>>,
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "graph of seed {}:", self.seed)?;
        for (i, op) in self.ops.iter().enumerate() {
            match op {
                Op::Input(s, b) => {
                    let v = values(b);
                    let shown: Vec<String> = v.iter().take(12).map(|x| format!("{x:e}")).collect();
                    let more = if v.len() > 12 { ", ..." } else { "" };
                    writeln!(
                        f,
                        "  n{i} = input {} {s} [{}{more}]",
                        b.dtype(),
                        shown.join(", ")
                    )?
                }
                other => writeln!(f, "  n{i} = {other:?}")?,
            }
        }
        write!(f, "  evaluated first: {:?}", self.batches)
    }
}

/// The nodes an op reads.
pub fn operands(op: &Op) -> Vec<usize> {
    match op {
        Op::Input(..) => vec![],
        Op::ScalarLike(a, _)
        | Op::Unary(_, a)
        | Op::BinaryScalar(_, a, _)
        | Op::Clamp(a, ..)
        | Op::Cast(a, _)
        | Op::Reduce(_, _, a)
        | Op::Scan(_, _, a)
        | Op::Transpose(a)
        | Op::Reshape(a, _)
        | Op::Slice(a, ..) => vec![*a],
        Op::Binary(_, a, b) | Op::Matmul(a, b) => vec![*a, *b],
        Op::Where(m, a, b) => vec![*m, *a, *b],
        Op::Call(_, args, _) => args.clone(),
    }
}

/// A buffer's values as f64 (exact for the test's inputs).
pub fn values(b: &HostBuffer) -> Vec<f64> {
    match b {
        HostBuffer::F64(v) => v.clone(),
        HostBuffer::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        HostBuffer::I64(v) => v.iter().map(|&x| x as f64).collect(),
        HostBuffer::Bool(v) => v.iter().map(|&x| f64::from(u8::from(x))).collect(),
    }
}

/// f64 values (of a node of dtype `d`, so exact in it) as a buffer of `d`.
pub fn typed(v: &[f64], d: DType) -> HostBuffer {
    match d {
        DType::F64 => HostBuffer::F64(v.to_vec()),
        DType::F32 => HostBuffer::F32(v.iter().map(|&x| x as f32).collect()),
        DType::I64 => HostBuffer::I64(v.iter().map(|&x| x as i64).collect()),
        DType::Bool => HostBuffer::Bool(v.iter().map(|&x| x != 0.0).collect()),
    }
}

/// Builds every node of `ops` as a fresh array.
pub fn build(ops: &[Op]) -> Result<Vec<Array>> {
    let mut nodes: Vec<Array> = Vec::with_capacity(ops.len());
    for op in ops {
        let a = apply(op, &nodes)?;
        nodes.push(a);
    }
    Ok(nodes)
}

/// The array of one op over the nodes built so far.
pub fn apply(op: &Op, n: &[Array]) -> Result<Array> {
    match op {
        Op::Input(s, b) => Array::from_buffer(s.clone(), b.clone()),
        Op::ScalarLike(a, v) => Ok(n[*a].scalar_like(*v)),
        Op::Unary(u, a) => n[*a].unary(*u),
        Op::Binary(b, x, y) => n[*x].binary(*b, &n[*y]),
        Op::BinaryScalar(b, x, v) => n[*x].binary_scalar(*b, *v),
        Op::Where(m, x, y) => Array::where_(&n[*m], &n[*x], &n[*y]),
        Op::Clamp(a, lo, hi) => n[*a].clamp(*lo, *hi),
        Op::Cast(a, d) => n[*a].astype(*d),
        Op::Call(f, args, flags) => {
            let args: Vec<&Array> = args.iter().map(|&i| &n[i]).collect();
            Array::call_fn(FUNCTIONS[*f], &args, *flags)
        }
        Op::Reduce(r, axis, a) => n[*a].reduce(*r, *axis),
        Op::Scan(false, None, a) => n[*a].cumsum(),
        Op::Scan(false, Some(axis), a) => n[*a].cumsum_axis(*axis),
        Op::Scan(true, None, a) => n[*a].cumprod(),
        Op::Scan(true, Some(axis), a) => n[*a].cumprod_axis(*axis),
        Op::Matmul(a, b) => n[*a].matmul(&n[*b]),
        Op::Transpose(a) => n[*a].t(),
        Op::Reshape(a, s) => n[*a].reshape(s.clone()),
        Op::Slice(a, axis, lo, hi) => n[*a].slice(*axis, *lo..*hi),
    }
}

static FUZZ_LIBRARY: DeviceLibrary = DeviceLibrary {
    name: "fuzz",
    assemble: |names| Ok(names.iter().map(|n| format!("// {n}\n")).collect()),
};

/// `a * b + c`.
pub fn affine(a: &[f64], _flags: u8) -> f64 {
    a[0] * a[1] + a[2]
}

/// `softplus(a) - 2 b`, negated with flag 0.
pub fn softplus_minus(a: &[f64], flags: u8) -> f64 {
    let s = if a[0] > 30.0 {
        a[0]
    } else {
        a[0].exp().ln_1p()
    };
    let r = s - 2.0 * a[1];
    if flags & 1 == 1 {
        -r
    } else {
        r
    }
}

static AFFINE: ScalarFn = ScalarFn {
    name: "affine",
    device_name: "gb_affine",
    arity: 3,
    flags: 0,
    eval: affine,
    library: &FUZZ_LIBRARY,
    partials: None,
};

static SOFTPLUS_MINUS: ScalarFn = ScalarFn {
    name: "softplus_minus",
    device_name: "gb_softplus_minus",
    arity: 2,
    flags: 1,
    eval: softplus_minus,
    library: &FUZZ_LIBRARY,
    partials: None,
};

/// The scalar functions graphs call; both are monotone in each argument,
/// which the error bounds rely on.
pub static FUNCTIONS: [&ScalarFn; 2] = [&AFFINE, &SOFTPLUS_MINUS];

/// Largest magnitude an integer node may reach (well inside i64 and exact in
/// f64, so no integer op can overflow).
const INT_LIMIT: f64 = (1u64 << 40) as f64;

/// The most elements a node may have (the largest base shape has 36,000).
const MAX_ELEMENTS: usize = 40_000;

/// A graph under construction: the ops, a built copy of each node (for
/// shapes, dtypes and to reject ops the API refuses) and a bound on each
/// integer node's magnitude.
struct Gen {
    rng: TestRng,
    base: Vec<usize>,
    ops: Vec<Op>,
    nodes: Vec<Array>,
    int_bound: Vec<f64>,
}

/// Uniform integer in `0..n`.
fn below(rng: &mut TestRng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// A float drawn to stress the ops: specials, extremes and ordinary values.
fn nasty(rng: &mut TestRng, dtype: DType) -> f64 {
    let (huge, tiny, sub) = match dtype {
        DType::F32 => (3.0e38, 1.0e-37, 1.0e-42),
        _ => (1.0e306, 1.0e-300, 4.0e-320),
    };
    let sign = if rng.next_u64().is_multiple_of(2) {
        1.0
    } else {
        -1.0
    };
    match below(rng, 40) {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => 0.0,
        4 => -0.0,
        5 => sign * huge * rng.uniform(0.5, 1.0),
        6 => sign * tiny * rng.uniform(0.5, 2.0),
        7 => sign * sub,
        8 => sign * (below(rng, 6) as f64 + 0.5),
        9 => sign * below(rng, 5) as f64,
        10..=13 => sign * rng.uniform(1.0, 1.0e6),
        14..=16 => sign * rng.uniform(1e-6, 1e-2),
        _ => rng.uniform(-4.0, 4.0),
    }
}

fn input_buffer(rng: &mut TestRng, dtype: DType, n: usize) -> HostBuffer {
    match dtype {
        DType::F64 => HostBuffer::F64((0..n).map(|_| nasty(rng, dtype)).collect()),
        DType::F32 => HostBuffer::F32((0..n).map(|_| nasty(rng, dtype) as f32).collect()),
        DType::I64 => HostBuffer::I64((0..n).map(|_| (rng.next_u64() % 61) as i64 - 30).collect()),
        DType::Bool => HostBuffer::Bool((0..n).map(|_| rng.next_u64().is_multiple_of(2)).collect()),
    }
}

/// A base shape: mostly small, sometimes empty, sometimes past the fused
/// executor's tile (1024) or long-tile (8192) sizes.
fn base_shape(rng: &mut TestRng) -> Vec<usize> {
    const SMALL: [usize; 12] = [1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 33];
    let ndim = below(rng, 4);
    let mut dims: Vec<usize> = (0..ndim).map(|_| SMALL[below(rng, SMALL.len())]).collect();
    match below(rng, 100) {
        0..=1 if ndim > 0 => dims[below(rng, ndim)] = 0,
        1 => dims = vec![1025 + below(rng, 40), 1 + below(rng, 3)],
        2 => dims = vec![3, 8193 + below(rng, 9)],
        3 => dims = vec![129, 1 + below(rng, 3), 9],
        _ => {}
    }
    dims
}

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        below(&mut self.rng, n)
    }

    fn shape(&self, i: usize) -> &Shape {
        self.nodes[i].shape()
    }

    fn dtype(&self, i: usize) -> DType {
        self.nodes[i].dtype()
    }

    /// Adds `op` if the API accepts it, its size stays within
    /// [`MAX_ELEMENTS`] and integer results stay bounded; returns its index.
    fn push(&mut self, op: Op) -> Option<usize> {
        let a = apply(&op, &self.nodes).ok()?;
        if a.numel() > MAX_ELEMENTS {
            return None; // e.g. [n] against [1, n]: n^2 elements
        }
        let bound = self.int_bound_of(&op, &a)?;
        self.ops.push(op);
        self.nodes.push(a);
        self.int_bound.push(bound);
        Some(self.nodes.len() - 1)
    }

    /// A bound on the magnitude of an integer result (`None` when it could
    /// pass [`INT_LIMIT`]); 0 for non-integer results.
    fn int_bound_of(&self, op: &Op, a: &Array) -> Option<f64> {
        if a.dtype() != DType::I64 {
            return Some(0.0);
        }
        let b = |i: usize| match self.dtype(i) {
            DType::Bool => 1.0,
            DType::I64 => self.int_bound[i],
            _ => INT_LIMIT,
        };
        let bound = match op {
            Op::Input(_, buf) => values(buf).iter().fold(0.0f64, |m, v| m.max(v.abs())),
            Op::ScalarLike(_, v) => v.abs(),
            Op::Unary(_, x) | Op::Transpose(x) | Op::Reshape(x, _) | Op::Slice(x, ..) => b(*x),
            Op::Binary(BinaryOp::Mul, x, y) => b(*x) * b(*y),
            Op::Binary(_, x, y) => b(*x) + b(*y),
            Op::BinaryScalar(BinaryOp::Mul, x, v) => b(*x) * v.abs(),
            Op::BinaryScalar(_, x, v) => b(*x) + v.abs(),
            Op::Where(_, x, y) => b(*x).max(b(*y)),
            Op::Clamp(x, lo, hi) => b(*x).min(lo.abs().max(hi.abs())),
            Op::Cast(x, _) => match self.dtype(*x) {
                DType::Bool | DType::I64 => b(*x),
                _ => 1.0e6, // only after clamping, see `as_int`
            },
            Op::Reduce(_, _, x) | Op::Scan(_, _, x) => b(*x) * self.shape(*x).numel() as f64,
            Op::Call(..) | Op::Matmul(..) => INT_LIMIT,
        };
        (bound <= INT_LIMIT).then_some(bound)
    }

    fn input(&mut self, shape: Vec<usize>, dtype: DType) -> Option<usize> {
        let n = shape.iter().product();
        if n > MAX_ELEMENTS {
            return None;
        }
        let buf = input_buffer(&mut self.rng, dtype, n);
        self.push(Op::Input(Shape::new(shape), buf))
    }

    fn random_dtype(&mut self) -> DType {
        match self.below(20) {
            0..=10 => DType::F64,
            11..=14 => DType::F32,
            15..=18 => DType::I64,
            _ => DType::Bool,
        }
    }

    /// A shape that broadcasts against `of`: each axis kept or set to 1,
    /// trailing axes sometimes dropped.
    fn sub_shape(&mut self, of: &[usize]) -> Vec<usize> {
        let mut d: Vec<usize> = of
            .iter()
            .map(|&x| if self.below(3) == 0 { 1 } else { x })
            .collect();
        if !d.is_empty() && self.below(4) == 0 {
            d.truncate(self.below(d.len()));
        }
        d
    }

    /// A node, most often one of the latest (so chains grow deep).
    fn pick(&mut self) -> usize {
        let n = self.nodes.len();
        if self.below(10) < 6 {
            n - 1 - self.below(n.min(3))
        } else {
            self.below(n)
        }
    }

    /// A node, preferring one that is computed rather than an input (so
    /// that reductions close fused chains).
    fn pick_computed(&mut self) -> usize {
        let mut a = self.pick();
        for _ in 0..3 {
            if !matches!(self.ops[a], Op::Input(..)) {
                break;
            }
            a = self.pick();
        }
        a
    }

    /// A node of a float dtype (converting one if needed).
    fn pick_float(&mut self) -> usize {
        let a = self.pick();
        if self.dtype(a).is_float() {
            return a;
        }
        self.push(Op::Cast(a, DType::F64)).unwrap_or(a)
    }

    /// A node whose shape broadcasts with node `a`'s, often a new input.
    fn partner(&mut self, a: usize) -> Option<usize> {
        for _ in 0..8 {
            let b = self.pick();
            if Shape::broadcast(self.shape(a), self.shape(b)).is_ok() {
                return Some(b);
            }
        }
        let of = if self.below(2) == 0 {
            self.shape(a).dims().to_vec()
        } else {
            self.base.clone()
        };
        let shape = self.sub_shape(&of);
        let dtype = self.random_dtype();
        self.input(shape, dtype)
    }

    /// A bool node: a comparison of a node with another or with a scalar.
    fn mask(&mut self) -> Option<usize> {
        let a = self.pick();
        if self.dtype(a) == DType::Bool && self.below(2) == 0 {
            return Some(a);
        }
        const CMP: [BinaryOp; 6] = [
            BinaryOp::Eq,
            BinaryOp::Ne,
            BinaryOp::Lt,
            BinaryOp::Le,
            BinaryOp::Gt,
            BinaryOp::Ge,
        ];
        let op = CMP[self.below(CMP.len())];
        if self.below(2) == 0 {
            let v = [0.0, 0.5, 1.0, -2.0][self.below(4)];
            self.push(Op::BinaryScalar(op, a, v))
        } else {
            let b = self.partner(a)?;
            self.push(Op::Binary(op, a, b))
        }
    }

    /// Node `a` converted to i64 safely: non-finite values replaced by 0,
    /// then clamped to `[-1e6, 1e6]` (so item 4's conversions never arise).
    fn as_int(&mut self, a: usize) -> Option<usize> {
        if !self.dtype(a).is_float() {
            return self.push(Op::Cast(a, DType::I64));
        }
        let finite = self.push(Op::Unary(UnaryOp::IsFinite, a))?;
        let zero = self.push(Op::ScalarLike(a, 0.0))?;
        let w = self.push(Op::Where(finite, a, zero))?;
        let c = self.push(Op::Clamp(w, -1.0e6, 1.0e6))?;
        self.push(Op::Cast(c, DType::I64))
    }

    /// Adds one random op (or a few, for composite steps).
    fn step(&mut self) -> Option<usize> {
        use BinaryOp::*;
        use UnaryOp::*;
        const UNARY: &[UnaryOp] = UnaryOp::ALL;
        const ARITH: [BinaryOp; 8] = [Add, Sub, Mul, Div, Pow, Minimum, Maximum, Atan2];
        const REDUCE: [ReduceOp; 13] = [
            ReduceOp::Sum,
            ReduceOp::Prod,
            ReduceOp::Mean,
            ReduceOp::Min,
            ReduceOp::Max,
            ReduceOp::Sum,
            ReduceOp::Var,
            ReduceOp::Sd,
            ReduceOp::ArgMax,
            ReduceOp::ArgMin,
            ReduceOp::Any,
            ReduceOp::All,
            ReduceOp::Mean,
        ];
        match self.below(100) {
            0..=21 => {
                let u = UNARY[self.below(UNARY.len())];
                let a = if u == Not { self.mask()? } else { self.pick() };
                self.push(Op::Unary(u, a))
            }
            22..=45 => {
                let op = ARITH[self.below(ARITH.len())];
                let a = self.pick();
                let b = self.partner(a)?;
                self.push(Op::Binary(op, a, b))
            }
            46..=53 => {
                let op = ARITH[self.below(ARITH.len())];
                let v = [2.0, -1.5, 0.5, 0.0, 1e300, 3.0][self.below(6)];
                let a = self.pick();
                self.push(Op::BinaryScalar(op, a, v))
            }
            54..=59 => {
                let m = self.mask()?;
                let a = self.partner(m)?;
                let b = self.partner(a)?;
                self.push(Op::Where(m, a, b))
            }
            60..=62 => {
                let m = self.mask()?;
                let b = self.partner(m)?;
                let op = if self.below(2) == 0 { And } else { Or };
                let b = if self.dtype(b) == DType::Bool {
                    b
                } else {
                    self.push(Op::Cast(b, DType::Bool))?
                };
                self.push(Op::Binary(op, m, b))
            }
            63..=66 => {
                let a = self.pick();
                let d = [DType::F64, DType::F32, DType::Bool, DType::I64][self.below(4)];
                if d == DType::I64 {
                    self.as_int(a)
                } else {
                    self.push(Op::Cast(a, d))
                }
            }
            67..=69 => {
                let a = self.pick();
                let (lo, hi) = [(-1.0, 1.0), (0.0, 1e6), (-0.0, 0.0)][self.below(3)];
                self.push(Op::Clamp(a, lo, hi))
            }
            70..=73 => {
                let f = self.below(FUNCTIONS.len());
                let flags = (self.rng.next_u64() % 2) as u8 & ((1u8 << FUNCTIONS[f].flags) - 1);
                let a = self.pick();
                let mut args = vec![a];
                while args.len() < FUNCTIONS[f].arity {
                    let b = self.partner(a)?;
                    args.push(b);
                }
                self.push(Op::Call(f, args, flags))
            }
            74..=87 => {
                let r = REDUCE[self.below(REDUCE.len())];
                let a = if matches!(r, ReduceOp::Any | ReduceOp::All) {
                    self.mask()?
                } else {
                    self.pick_computed()
                };
                let nd = self.shape(a).ndim();
                let axis = (nd > 0 && self.below(3) > 0).then(|| self.below(nd));
                self.push(Op::Reduce(r, axis, a))
            }
            88..=89 => {
                let a = self.pick();
                let nd = self.shape(a).ndim();
                let axis = (nd > 0 && self.below(2) == 0).then(|| self.below(nd));
                let product = self.below(3) == 0;
                self.push(Op::Scan(product, axis, a))
            }
            90..=92 => {
                let a = self.pick_float();
                let d = self.shape(a).dims().to_vec();
                if d.len() != 2 || d[0] * d[1] > 4096 {
                    return None;
                }
                let cols = [1, 2, 3, 5][self.below(4)];
                let dtype = self.dtype(a);
                let b = if self.below(2) == 0 {
                    self.input(vec![d[1], cols], dtype)?
                } else {
                    let t = self.push(Op::Transpose(a))?;
                    return self.push(Op::Matmul(t, a));
                };
                self.push(Op::Matmul(a, b))
            }
            93..=94 => {
                let a = self.pick();
                self.push(Op::Transpose(a))
            }
            95..=96 => {
                let a = self.pick();
                let n = self.shape(a).numel();
                let shape = match self.below(3) {
                    0 => vec![n],
                    1 => vec![1, n],
                    _ => self.base.clone(),
                };
                self.push(Op::Reshape(a, Shape::new(shape)))
            }
            _ => {
                let a = self.pick();
                let d = self.shape(a).dims().to_vec();
                if d.is_empty() {
                    return None;
                }
                let axis = self.below(d.len());
                let lo = self.below(d[axis] + 1);
                let hi = lo + self.below(d[axis] - lo + 1);
                self.push(Op::Slice(a, axis, lo, hi))
            }
        }
    }
}

/// A random graph of about `size` ops, drawn from `seed`.
pub fn random_graph(seed: u64, size: usize) -> Graph {
    let mut rng = TestRng::new(seed);
    let base = base_shape(&mut rng);
    let mut g = Gen {
        rng,
        base,
        ops: vec![],
        nodes: vec![],
        int_bound: vec![],
    };
    for _ in 0..2 + below(&mut g.rng, 3) {
        let shape = g.sub_shape(&g.base.clone());
        let dtype = g.random_dtype();
        g.input(shape, dtype).expect("a sub-shape of the base");
    }
    let mut attempts = 0;
    while g.ops.len() < size && attempts < 4 * size {
        g.step();
        attempts += 1;
    }
    // A few random partial evaluations, then the sinks (the nodes no other
    // node reads) together, where fusion has the most room.
    let n = g.ops.len();
    let mut batches: Vec<Vec<usize>> = (0..g.below(3))
        .map(|_| {
            (0..1 + g.below(3))
                .map(|_| n / 2 + g.below(n - n / 2))
                .collect()
        })
        .collect();
    let mut used = vec![false; n];
    for op in &g.ops {
        for i in operands(op) {
            used[i] = true;
        }
    }
    batches.push((0..n).filter(|&i| !used[i]).collect());
    Graph {
        seed,
        ops: g.ops,
        batches,
    }
}
