//! The backend-neutral kernel IR that fused regions lower to.
//!
//! A [`KernelIr`] describes one pass over an iteration shape: it loads its
//! inputs (each broadcast to the iteration shape), evaluates a DAG of
//! elementwise expressions in SSA order, stores some of them as full-size
//! outputs and optionally reduces one of them (over everything or one axis).
//! Along an axis, outputs may also read the reduced results of their own
//! lane ([`Expr::Reduced`]: an *epilogue*, such as `x - logsumexp(x)`):
//! [`KernelIr::split_epilogue`] gives the same work as two plain passes for
//! executors that do not run it in one.
//! Every binary and select node's operands already share one dtype (the
//! planner inserts explicit casts), so renderers and interpreters never apply
//! promotion rules themselves. [`KernelIr::new`] checks all of this, so a
//! `KernelIr` that exists is well formed.
//!
//! The CPU backend interprets the IR ([`crate::fusion::cpu`]); GPU backends
//! render it to their dialect and compile it.

use std::hash::{Hash, Hasher};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::Array;
use crate::ops::binary::BinaryOp;
use crate::ops::reduce::ReduceOp;
use crate::ops::unary::UnaryOp;
use crate::shape::Shape;

/// Where the device source of a family of [`ScalarFn`]s comes from: one
/// assembler per library, so that functions sharing callees are assembled
/// together and every callee is defined once per kernel.
#[derive(Debug)]
pub struct DeviceLibrary {
    /// The library's name (`"nmath"`).
    pub name: &'static str,
    /// The device source defining the named functions and everything they
    /// call, callees first.
    pub assemble: fn(&[&str]) -> Result<String>,
}

/// A float64 scalar function that fused kernels may call, such as R's
/// `dbinom`: `arity` float64 arguments (at most [`MAX_CALL_ARGS`]) and up to
/// eight boolean flags (`give_log`, `lower_tail`, ...), float64 result. The
/// CPU evaluates `eval`; a GPU calls `device_name`, defined by `library`.
#[derive(Debug)]
pub struct ScalarFn {
    /// The user-facing name (`"dbinom"`).
    pub name: &'static str,
    /// The device function's name (`"gb_dbinom"`).
    pub device_name: &'static str,
    /// Number of float64 arguments.
    pub arity: usize,
    /// Number of flags, passed after the arguments as `int` 0 or 1.
    pub flags: usize,
    /// The CPU implementation: `eval(args, flag_bits)`, flag `i` in bit `i`.
    pub eval: fn(&[f64], u8) -> f64,
    /// The library that supplies the device source.
    pub library: &'static DeviceLibrary,
    /// The partial derivatives, for [`crate::autodiff`]: `None` when the
    /// function has no derivative rule (differentiating through it is then
    /// an error naming it). See [`Partials`].
    pub partials: Option<Partials>,
}

/// The partial derivatives of a [`ScalarFn`] `f` at `args` (float64 arrays,
/// one per argument, as the call received them before broadcasting), with
/// the call's flag bits and its result `y` (float64, of the broadcast
/// shape): one [`Partial`] per argument, `∂f/∂args[i]` elementwise, written
/// with array operations (and other scalar functions), so that gradients
/// stay lazy graphs that fuse and can be differentiated again. The call's
/// vector-Jacobian product multiplies each partial by the cotangent and sums
/// it down to the argument's shape.
pub type Partials = fn(args: &[Array], flags: u8, y: &Array) -> Result<Vec<Partial>>;

/// The derivative of a [`ScalarFn`] in one argument; see [`Partials`].
#[derive(Debug, Clone)]
pub enum Partial {
    /// `∂f/∂arg`: any shape that broadcasts to the result's.
    Of(Array),
    /// The argument is discrete (a count, a number of trials): it carries
    /// no gradient, as integer arrays carry none.
    Discrete,
    /// The function has no rule for this argument (named): a gradient that
    /// needs it is an error naming the function and the argument (when it
    /// is evaluated; arguments the differentiated function's inputs do not
    /// reach are never asked for).
    Missing(&'static str),
}

/// The most float64 arguments a [`ScalarFn`] takes.
pub const MAX_CALL_ARGS: usize = 8;

/// A reference to a [`ScalarFn`], compared and hashed by name so that IR
/// holding it stays a plain value.
#[derive(Clone, Copy)]
pub struct FnRef(pub &'static ScalarFn);

impl FnRef {
    /// The function.
    pub fn get(self) -> &'static ScalarFn {
        self.0
    }
}

impl std::fmt::Debug for FnRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl PartialEq for FnRef {
    fn eq(&self, other: &FnRef) -> bool {
        self.0.name == other.0.name && self.0.library.name == other.0.library.name
    }
}

impl Eq for FnRef {}

impl Hash for FnRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.library.name.hash(state);
        self.0.name.hash(state);
    }
}

/// What an elementwise primitive computes, as a kernel expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelOp {
    /// A unary op on one operand.
    Unary(UnaryOp),
    /// A binary op on two operands.
    Binary(BinaryOp),
    /// `mask ? a : b`.
    Select,
    /// A dtype conversion.
    Cast(DType),
    /// The operand unchanged.
    Identity,
    /// A scalar function of float64 operands with these flag bits.
    Call(FnRef, u8),
}

/// One expression of the DAG. Operands are indices of earlier nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expr {
    /// Input `i`, read at the broadcast position.
    Load(usize),
    /// A unary op.
    Unary(UnaryOp, usize),
    /// A binary op; both operands have the same dtype.
    Binary(BinaryOp, usize, usize),
    /// `mask ? a : b`; `a` and `b` have the node's dtype.
    Select(usize, usize, usize),
    /// Conversion of the operand to the node's dtype.
    Cast(usize),
    /// A scalar function on its first `arity` operands (float64), with
    /// these flag bits; the node is float64.
    Call(FnRef, [usize; MAX_CALL_ARGS], u8),
    /// Reduced result `c` of the kernel's axis reduction (0: the
    /// reduction's, 1: its companion's) for the lane of the current
    /// element, in the reduction's dtype. Only full-size outputs read it
    /// (the reduction cannot depend on its own result).
    Reduced(usize),
}

impl Expr {
    /// The nodes this expression reads, in argument order.
    pub fn operands(&self) -> impl Iterator<Item = usize> {
        let mut v = [0usize; MAX_CALL_ARGS];
        let n = match *self {
            Expr::Load(_) | Expr::Reduced(_) => 0,
            Expr::Unary(_, a) | Expr::Cast(a) => {
                v[0] = a;
                1
            }
            Expr::Binary(_, a, b) => {
                v[..2].copy_from_slice(&[a, b]);
                2
            }
            Expr::Select(m, a, b) => {
                v[..3].copy_from_slice(&[m, a, b]);
                3
            }
            Expr::Call(f, args, _) => {
                v = args;
                f.0.arity.min(MAX_CALL_ARGS)
            }
        };
        v.into_iter().take(n)
    }
}

impl Expr {
    /// The same expression reading node `at(j)` wherever it read node `j`.
    pub fn renumbered(self, at: impl Fn(usize) -> usize) -> Expr {
        match self {
            Expr::Load(_) | Expr::Reduced(_) => self,
            Expr::Unary(op, a) => Expr::Unary(op, at(a)),
            Expr::Binary(op, a, b) => Expr::Binary(op, at(a), at(b)),
            Expr::Select(m, a, b) => Expr::Select(at(m), at(a), at(b)),
            Expr::Cast(a) => Expr::Cast(at(a)),
            Expr::Call(f, args, flags) => {
                let mut moved = args;
                for slot in moved.iter_mut().take(f.0.arity.min(MAX_CALL_ARGS)) {
                    *slot = at(*slot);
                }
                Expr::Call(f, moved, flags)
            }
        }
    }
}

/// An expression and the dtype of its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IrNode {
    /// The expression.
    pub expr: Expr,
    /// The dtype of its value.
    pub dtype: DType,
}

/// A reduction fused at the end of the pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IrReduce {
    /// Which reduction (any: see [`fusable_reduction`]).
    pub op: ReduceOp,
    /// Over everything, or along one axis (kept with length 1).
    pub axis: Option<usize>,
    /// The node reduced.
    pub node: usize,
    /// dtype of the reduced result.
    pub dtype: DType,
    /// A second reduction of the same node whose result the accumulator
    /// also holds ([`ReduceOp::companions`]: the mean beside `var` or
    /// `sd`), written as a second reduced result of the same shape and
    /// dtype, so that `x - mean` over `sd` reads `x` twice, not three
    /// times.
    pub companion: Option<ReduceOp>,
}

impl IrReduce {
    /// The reductions whose results the kernel writes, in the order of its
    /// reduced buffers: the reduction's own, then its companion's.
    pub fn results(&self) -> impl Iterator<Item = ReduceOp> {
        std::iter::once(self.op).chain(self.companion)
    }
}

/// A fused elementwise pass with an optional trailing reduction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelIr {
    shape: Shape,
    inputs: Vec<(Shape, DType)>,
    nodes: Vec<IrNode>,
    outputs: Vec<usize>,
    reduce: Option<IrReduce>,
}

impl Hash for KernelIr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.shape.hash(state);
        self.inputs.hash(state);
        self.nodes.hash(state);
        self.outputs.hash(state);
        self.reduce.hash(state);
    }
}

/// Whether reduction `op` can close a fused pass: every reduction can.
/// Those with a one-value accumulator ([`ReduceOp::monoid`]) accumulate as
/// they go everywhere; the CPU interpreter evaluates the others (`var`,
/// `sd`, `argmin`, `argmax`) over the fused values with the op-by-op
/// reduction, and GPU renderers accumulate them in several values.
pub fn fusable_reduction(op: ReduceOp) -> bool {
    ReduceOp::ALL.contains(&op)
}

/// Whether reduction `op` at `precision` closes a fused pass. No `exact`
/// reduction does: `exact` results must have the same bits with fusion on
/// or off, and op by op a reduction sums in its own order (pairwise along
/// contiguous lanes, R's two-pass mean) where a fused pass accumulates as
/// it goes. The elementwise work before it still fuses.
pub fn closes_a_pass(op: ReduceOp, precision: crate::precision::Precision) -> bool {
    fusable_reduction(op) && precision != crate::precision::Precision::Exact
}

fn malformed(why: String) -> Error {
    Error::InvalidArgument {
        op: "kernel_ir",
        name: "ir",
        value: "<kernel>".into(),
        why,
    }
}

impl KernelIr {
    /// Builds and checks a kernel: operand indices point to earlier nodes,
    /// loads name existing inputs whose shapes broadcast to `shape`, operand
    /// dtypes agree, outputs and the reduction name existing nodes.
    pub fn new(
        shape: Shape,
        inputs: Vec<(Shape, DType)>,
        nodes: Vec<IrNode>,
        outputs: Vec<usize>,
        reduce: Option<IrReduce>,
    ) -> Result<KernelIr> {
        for (i, (s, _)) in inputs.iter().enumerate() {
            if Shape::broadcast(s, &shape).ok().as_ref() != Some(&shape) {
                return Err(malformed(format!(
                    "input {i} of shape {s} does not broadcast to {shape}"
                )));
            }
        }
        for (k, n) in nodes.iter().enumerate() {
            let earlier = |j: usize| -> Result<DType> {
                if j < k {
                    Ok(nodes[j].dtype)
                } else {
                    Err(malformed(format!(
                        "node {k} uses node {j}, which is not earlier"
                    )))
                }
            };
            let ok = match n.expr {
                Expr::Load(i) => inputs.get(i).map(|inp| inp.1) == Some(n.dtype),
                Expr::Unary(op, a) => {
                    let da = earlier(a)?;
                    op.result_dtype(da)? == n.dtype && (op.is_predicate() || da == n.dtype)
                }
                Expr::Binary(op, a, b) => {
                    let (da, db) = (earlier(a)?, earlier(b)?);
                    da == db
                        && op.compute_dtype(da, db)? == da
                        && op.result_dtype(da, db)? == n.dtype
                }
                Expr::Select(m, a, b) => {
                    earlier(m)? == DType::Bool && earlier(a)? == n.dtype && earlier(b)? == n.dtype
                }
                Expr::Cast(a) => earlier(a).is_ok(),
                Expr::Reduced(c) => match &reduce {
                    Some(r) if r.axis.is_some() => {
                        r.results().nth(c).is_some() && n.dtype == r.dtype
                    }
                    _ => {
                        return Err(malformed(format!(
                            "node {k} reads a reduced result, but the kernel has no axis reduction"
                        )))
                    }
                },
                Expr::Call(f, args, flags) => {
                    let f = f.get();
                    f.arity <= MAX_CALL_ARGS
                        && f.flags <= 8
                        && (f.flags == 8 || u32::from(flags) >> f.flags == 0)
                        && n.dtype == DType::F64
                        && args[..f.arity]
                            .iter()
                            .map(|&a| earlier(a).map(|d| d == DType::F64))
                            .collect::<Result<Vec<bool>>>()?
                            .into_iter()
                            .all(|ok| ok)
                }
            };
            if !ok {
                return Err(malformed(format!(
                    "node {k} ({:?}, {}) has operands of the wrong dtype",
                    n.expr, n.dtype
                )));
            }
        }
        if let Some(&o) = outputs.iter().find(|&&o| o >= nodes.len()) {
            return Err(malformed(format!(
                "output names node {o} of {}",
                nodes.len()
            )));
        }
        if let Some(r) = &reduce {
            if r.node >= nodes.len() || !fusable_reduction(r.op) {
                return Err(malformed(format!(
                    "reduction {:?} cannot close this kernel",
                    r.op
                )));
            }
            if let Some(a) = r.axis {
                shape.check_axis(r.op.name(), a)?;
            }
            if reaches_reduced(&nodes, r.node) {
                return Err(malformed(format!(
                    "the reduced node {} depends on the reduction's own result",
                    r.node
                )));
            }
            if r.op.result_dtype(nodes[r.node].dtype)? != r.dtype {
                return Err(malformed(format!(
                    "reduction dtype {} does not follow from its input",
                    r.dtype
                )));
            }
            if let Some(c) = r.companion {
                if !r.op.companions().contains(&c)
                    || c.result_dtype(nodes[r.node].dtype)? != r.dtype
                {
                    return Err(malformed(format!(
                        "{} cannot be the companion of {} here",
                        c.name(),
                        r.op.name()
                    )));
                }
            }
        }
        if outputs.is_empty() && reduce.is_none() {
            return Err(malformed("a kernel must produce something".into()));
        }
        Ok(KernelIr {
            shape,
            inputs,
            nodes,
            outputs,
            reduce,
        })
    }

    /// The iteration shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Shape and dtype of each input.
    pub fn inputs(&self) -> &[(Shape, DType)] {
        &self.inputs
    }

    /// The expression DAG, operands before users.
    pub fn nodes(&self) -> &[IrNode] {
        &self.nodes
    }

    /// Nodes stored as full-size outputs, in output order.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// The trailing reduction, if any.
    pub fn reduce(&self) -> Option<&IrReduce> {
        self.reduce.as_ref()
    }

    /// How many reduced results the kernel writes (each of
    /// [`KernelIr::reduced_shape`] and the reduction's dtype): none, one,
    /// or two with a companion.
    pub fn reduced_results(&self) -> usize {
        self.reduce.map_or(0, |r| r.results().count())
    }

    /// Shape of the reduction's result.
    pub fn reduced_shape(&self) -> Option<Shape> {
        self.reduce.map(|r| match r.axis {
            None => Shape::scalar(),
            Some(a) => self.shape.with_dim(a, 1),
        })
    }

    /// Bytes read and written by one pass, for cost estimates and metrics
    /// (saturating: the inputs of a kernel that is only being explained
    /// may be pending arrays too large to exist together).
    pub fn bytes_moved(&self) -> usize {
        let read = self
            .inputs
            .iter()
            .map(|(s, d)| s.numel().saturating_mul(d.size_bytes()))
            .fold(0, usize::saturating_add);
        let n = self.shape.numel();
        let written = self
            .outputs
            .iter()
            .map(|&o| n.saturating_mul(self.nodes[o].dtype.size_bytes()))
            .fold(0, usize::saturating_add);
        let reduced = self.reduce.map_or(0, |r| {
            let count = self.reduced_shape().map_or(0, |s| s.numel());
            count
                .saturating_mul(r.dtype.size_bytes())
                .saturating_mul(r.results().count())
        });
        read.saturating_add(written).saturating_add(reduced)
    }

    /// Whether some output reads the reduction's results of its lane
    /// ([`Expr::Reduced`]).
    pub fn has_epilogue(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| matches!(n.expr, Expr::Reduced(_)))
    }

    /// The kernel as two plain passes, for executors that do not run an
    /// epilogue in one: the reduction alone (no outputs), then an
    /// elementwise kernel writing every output, whose inputs are this
    /// kernel's followed by the reduced results (one per
    /// [`KernelIr::reduced_results`], of [`KernelIr::reduced_shape`],
    /// loaded with broadcasting where [`Expr::Reduced`] stood). `None`
    /// for a kernel without an epilogue.
    pub fn split_epilogue(&self) -> Option<(KernelIr, KernelIr)> {
        let r = self.reduce.filter(|_| self.has_epilogue())?;
        let reduced = (self.reduced_shape()?, r.dtype);
        // The reduced node never reads a result (`new` refuses that).
        let pre_nodes = subgraph(&self.nodes, &[r.node], Expr::Reduced);
        let pre = KernelIr::new(
            self.shape.clone(),
            self.inputs.clone(),
            pre_nodes.nodes,
            Vec::new(),
            Some(IrReduce {
                node: pre_nodes.roots[0],
                ..r
            }),
        )
        .ok()?;
        let first = self.inputs.len();
        let mut inputs = self.inputs.clone();
        inputs.extend(std::iter::repeat_n(reduced, self.reduced_results()));
        let epi_nodes = subgraph(&self.nodes, &self.outputs, |c| Expr::Load(first + c));
        let epi = KernelIr::new(
            self.shape.clone(),
            inputs,
            epi_nodes.nodes,
            epi_nodes.roots,
            None,
        )
        .ok()?;
        Some((pre, epi))
    }

    /// A stable key for caches of compiled kernels.
    pub fn cache_key(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }
}

/// Whether node `k` is or depends on an [`Expr::Reduced`] node.
fn reaches_reduced(nodes: &[IrNode], k: usize) -> bool {
    let mut seen = vec![false; nodes.len()];
    let mut stack = vec![k];
    while let Some(j) = stack.pop() {
        if std::mem::replace(&mut seen[j], true) {
            continue;
        }
        match nodes[j].expr {
            Expr::Reduced(_) => return true,
            e => stack.extend(e.operands().filter(|&o| o < j)),
        }
    }
    false
}

/// The nodes `roots` need, in their order, with each [`Expr::Reduced`]
/// replaced by `reduced(c)`; `roots` renumbered.
struct Subgraph {
    nodes: Vec<IrNode>,
    roots: Vec<usize>,
}

fn subgraph(nodes: &[IrNode], roots: &[usize], reduced: impl Fn(usize) -> Expr) -> Subgraph {
    let mut keep = vec![false; nodes.len()];
    for &r in roots {
        keep[r] = true;
    }
    for k in (0..nodes.len()).rev() {
        if keep[k] {
            for o in nodes[k].expr.operands() {
                keep[o] = true;
            }
        }
    }
    let mut at = vec![usize::MAX; nodes.len()];
    let mut out = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        if !keep[k] {
            continue;
        }
        let expr = match node.expr {
            Expr::Reduced(c) => reduced(c),
            e => e.renumbered(|o| at[o]),
        };
        at[k] = out.len();
        out.push(IrNode { expr, ..*node });
    }
    Subgraph {
        nodes: out,
        roots: roots.iter().map(|&r| at[r]).collect(),
    }
}

/// The small kernel first-use probes run: `x * x + 1` over `n` values of
/// `dtype`, with `x` as input 0 and the scalar `1` as input 1.
pub fn probe_kernel(n: usize, dtype: DType) -> Result<KernelIr> {
    let node = |expr| IrNode { expr, dtype };
    KernelIr::new(
        Shape::new(vec![n]),
        vec![(Shape::new(vec![n]), dtype), (Shape::scalar(), dtype)],
        vec![
            node(Expr::Load(0)),
            node(Expr::Load(1)),
            node(Expr::Binary(BinaryOp::Mul, 0, 0)),
            node(Expr::Binary(BinaryOp::Add, 2, 1)),
        ],
        vec![3],
        None,
    )
}
