//! The fusion planner: groups the pending graph behind some arrays into
//! regions and lowers each fused region to a [`KernelIr`].
//!
//! Rules (each keeps results equal to op-by-op evaluation):
//! - an elementwise node joins the region of its users when *all* its pending
//!   users are in that one region, it has the region's iteration shape, and it
//!   is not itself asked for (an evaluation root);
//! - a reduction that can close a kernel (`sum prod mean min max`) becomes the
//!   region's trailing reduction and pulls in its elementwise input under the
//!   same rule;
//! - everything else (library calls, data movement, creation, `var`, `argmax`,
//!   cumulative ops) is a single-node region;
//! - a node whose shape differs from the region's (a broadcast operand) is
//!   computed in its own region and loaded with broadcasting, never recomputed
//!   per element;
//! - independent GEMMs of one kind (`matmul`, `crossprod`, `tcrossprod`) with
//!   equal operand shapes, dtype and precision become one batched region, run
//!   where the last of them stood (each is delayed only past regions that do
//!   not read it).
//!
//! Shapes are static in Gearbox, so every fusion decision is made on proven
//! shapes. The plan is data: the executor runs it and `explain` describes it.

use std::collections::HashMap;

use crate::dtype::DType;
use crate::error::Result;
use crate::fusion::ir::{fusable_reduction, Expr, IrNode, IrReduce, KernelIr, KernelOp};
use crate::graph::Array;
use crate::shape::Shape;

/// A unit of work the dispatcher places on one backend.
#[derive(Debug, Clone)]
pub enum Region {
    /// Several elementwise nodes (and maybe a trailing reduction) as one kernel.
    Fused(FusedRegion),
    /// One node evaluated by its own primitive.
    Single(Array),
    /// Independent library calls of one kind with equal operand shapes and
    /// dtype (at least two), run as one batched call where a backend has one.
    Batched(Vec<Array>),
}

/// A fused region: its kernel and the arrays it reads and produces.
#[derive(Debug, Clone)]
pub struct FusedRegion {
    /// The kernel.
    pub kernel: KernelIr,
    /// Arrays read, in the kernel's input order.
    pub inputs: Vec<Array>,
    /// Arrays produced as full-size outputs, in the kernel's output order.
    pub outputs: Vec<Array>,
    /// The array produced by the trailing reduction.
    pub reduced: Option<Array>,
    /// Names of the fused ops, in order (for explain and logs).
    pub ops: Vec<&'static str>,
}

impl Region {
    /// The arrays this region produces.
    pub fn produces(&self) -> Vec<Array> {
        match self {
            Region::Fused(f) => f.outputs.iter().chain(&f.reduced).cloned().collect(),
            Region::Single(a) => vec![a.clone()],
            Region::Batched(members) => members.clone(),
        }
    }

    /// The arrays this region reads.
    pub fn reads(&self) -> Vec<Array> {
        match self {
            Region::Fused(f) => f.inputs.clone(),
            Region::Single(a) => a.inputs(),
            Region::Batched(members) => members.iter().flat_map(|a| a.inputs()).collect(),
        }
    }

    /// A short description: the fused op names joined by `+`, or the op's name.
    pub fn describe(&self) -> String {
        match self {
            Region::Fused(f) => f.ops.join("+"),
            Region::Single(a) => a.op().map_or("leaf", |o| o.name()).to_string(),
            Region::Batched(members) => format!(
                "{} x{}",
                members[0].op().map_or("leaf", |o| o.name()),
                members.len()
            ),
        }
    }
}

/// Regions in an order where each reads only evaluated arrays or arrays
/// produced by earlier regions.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The regions, in execution order.
    pub regions: Vec<Region>,
}

/// Plans the pending nodes `pending` (inputs before users, as
/// [`Array::pending_in_order`] gives them), of which `roots` are asked for.
/// With `fuse` off every node is its own region.
pub fn plan(pending: &[Array], roots: &[&Array], fuse: bool) -> Result<Plan> {
    if !fuse {
        return Ok(Plan {
            regions: pending.iter().cloned().map(Region::Single).collect(),
        });
    }
    let index: HashMap<usize, usize> = pending
        .iter()
        .enumerate()
        .map(|(i, a)| (a.node_id(), i))
        .collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); pending.len()];
    for (i, a) in pending.iter().enumerate() {
        for input in a.inputs() {
            if let Some(&j) = index.get(&input.node_id()) {
                if !users[j].contains(&i) {
                    users[j].push(i);
                }
            }
        }
    }
    let is_root = |i: usize| roots.iter().any(|r| r.node_id() == pending[i].node_id());

    // group[i]: the region of node i, named by its head's index.
    let mut group: Vec<usize> = (0..pending.len()).collect();
    // The iteration shape of each fusable group, by head.
    let mut group_shape: HashMap<usize, Shape> = HashMap::new();
    for i in (0..pending.len()).rev() {
        let a = &pending[i];
        let Some(op) = a.op() else { continue };
        if let Some((rop, _)) = op.as_reduction() {
            if fusable_reduction(rop) {
                let input_shape = a.inputs()[0].shape().clone();
                group_shape.insert(i, input_shape);
            }
            continue;
        }
        if op.kernel_op().is_none() {
            continue;
        }
        let us = &users[i];
        let joined = (!is_root(i) && !us.is_empty())
            .then(|| group[us[0]])
            .filter(|&g| us.iter().all(|&u| group[u] == g))
            .filter(|g| group_shape.get(g) == Some(a.shape()));
        match joined {
            Some(g) => group[i] = g,
            None => {
                group_shape.insert(i, a.shape().clone());
            }
        }
    }

    let mut regions = Vec::new();
    for head in 0..pending.len() {
        if group[head] != head {
            continue;
        }
        let members: Vec<usize> = (0..=head).filter(|&i| group[i] == head).collect();
        // Every group with an iteration shape is a kernel: an elementwise
        // chain, or a reduction (of a chain, or of a plain input).
        if group_shape.contains_key(&head) {
            regions.push(Region::Fused(lower(pending, &members, head)?));
        } else {
            regions.push(Region::Single(pending[head].clone()));
        }
    }
    Ok(Plan {
        regions: batch_gemms(regions),
    })
}

/// What must agree for GEMMs to share a batch: the call, operand shapes,
/// dtypes and the precision.
type BatchKey = (
    crate::runtime::backend::LibraryCall,
    Vec<(Shape, DType)>,
    DType,
    crate::precision::Precision,
);

fn batch_key(region: &Region) -> Option<BatchKey> {
    let Region::Single(a) = region else {
        return None;
    };
    let call = a.op()?.library_call().filter(|c| c.is_gemm())?;
    let operands = a
        .inputs()
        .iter()
        .map(|x| (x.shape().clone(), x.dtype()))
        .collect();
    Some((call, operands, a.dtype(), a.precision()))
}

/// Groups independent GEMMs of one key into batched regions. A GEMM joins
/// an open group of its key; a group is emitted just before the first region
/// that reads one of its results (or at the end), so every member is only
/// delayed past regions that do not depend on it.
fn batch_gemms(regions: Vec<Region>) -> Vec<Region> {
    let mut out = Vec::with_capacity(regions.len());
    let mut open: Vec<(BatchKey, Vec<Array>)> = Vec::new();
    let emit = |out: &mut Vec<Region>, mut members: Vec<Array>| {
        out.push(if members.len() == 1 {
            Region::Single(members.remove(0))
        } else {
            Region::Batched(members)
        });
    };
    for region in regions {
        let reads: Vec<usize> = region.reads().iter().map(Array::node_id).collect();
        let mut k = 0;
        while k < open.len() {
            if open[k].1.iter().any(|m| reads.contains(&m.node_id())) {
                let (_, members) = open.remove(k);
                emit(&mut out, members);
            } else {
                k += 1;
            }
        }
        match batch_key(&region) {
            Some(key) => {
                let Region::Single(a) = region else {
                    unreachable!("only single regions have a batch key")
                };
                match open.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, members)) => members.push(a),
                    None => open.push((key, vec![a])),
                }
            }
            None => out.push(region),
        }
    }
    for (_, members) in open {
        emit(&mut out, members);
    }
    out
}

/// Lowers the members of one group (ascending topological order, `head`
/// last) to a kernel, inserting the casts that promotion implies.
fn lower(pending: &[Array], members: &[usize], head: usize) -> Result<FusedRegion> {
    let mut builder = Builder::default();
    let head_array = &pending[head];
    let reduction = head_array.op().and_then(|o| o.as_reduction());
    let body = if reduction.is_some() {
        &members[..members.len() - 1]
    } else {
        members
    };
    let mut ops = Vec::new();
    for &m in body {
        let a = &pending[m];
        let op = a
            .op()
            .and_then(|o| o.kernel_op())
            .expect("fused members are elementwise");
        if op != KernelOp::Identity {
            ops.push(a.op().map_or("?", |o| o.name()));
        }
        let operands: Vec<usize> = a.inputs().iter().map(|x| builder.value_of(x)).collect();
        let out = a.dtype();
        let value = match op {
            KernelOp::Identity => operands[0],
            KernelOp::Cast(_) => builder.cast(operands[0], out),
            KernelOp::Unary(u) if u.is_predicate() => {
                builder.push(Expr::Unary(u, operands[0]), out)
            }
            KernelOp::Unary(u) => {
                let x = builder.cast(operands[0], out);
                builder.push(Expr::Unary(u, x), out)
            }
            KernelOp::Binary(b) => {
                let (da, db) = (builder.dtype(operands[0]), builder.dtype(operands[1]));
                let compute = b.compute_dtype(da, db)?;
                let (x, y) = (
                    builder.cast(operands[0], compute),
                    builder.cast(operands[1], compute),
                );
                builder.push(Expr::Binary(b, x, y), out)
            }
            KernelOp::Call(f, flags) => {
                let mut args = [0usize; crate::fusion::ir::MAX_CALL_ARGS];
                for (slot, &v) in args.iter_mut().zip(&operands) {
                    *slot = builder.cast(v, DType::F64);
                }
                builder.push(Expr::Call(f, args, flags), out)
            }
            KernelOp::Select => {
                let (x, y) = (
                    builder.cast(operands[1], out),
                    builder.cast(operands[2], out),
                );
                builder.push(Expr::Select(operands[0], x, y), out)
            }
        };
        builder.alias.insert(a.node_id(), value);
    }
    let (outputs, reduced, reduce, shape) = match reduction {
        Some((op, axis)) => {
            ops.push(head_array.op().map_or("?", |o| o.name()));
            let reduced_input = &head_array.inputs()[0];
            let node = builder.value_of(reduced_input);
            let r = IrReduce {
                op,
                axis,
                node,
                dtype: head_array.dtype(),
            };
            (
                vec![],
                Some(head_array.clone()),
                Some(r),
                reduced_input.shape().clone(),
            )
        }
        None => {
            let node = builder.value_of(head_array);
            builder.outputs.push(node);
            (
                vec![head_array.clone()],
                None,
                None,
                head_array.shape().clone(),
            )
        }
    };
    let kernel = KernelIr::new(
        shape,
        builder.input_specs,
        builder.nodes,
        builder.outputs,
        reduce,
    )?;
    Ok(FusedRegion {
        kernel,
        inputs: builder.inputs,
        outputs,
        reduced,
        ops,
    })
}

/// Accumulates IR nodes and external inputs while lowering a group.
#[derive(Default)]
struct Builder {
    nodes: Vec<IrNode>,
    inputs: Vec<Array>,
    input_specs: Vec<(Shape, DType)>,
    outputs: Vec<usize>,
    /// IR value of each array already lowered or loaded, by node id.
    alias: HashMap<usize, usize>,
}

impl Builder {
    fn push(&mut self, expr: Expr, dtype: DType) -> usize {
        self.nodes.push(IrNode { expr, dtype });
        self.nodes.len() - 1
    }

    fn dtype(&self, v: usize) -> DType {
        self.nodes[v].dtype
    }

    /// `v` converted to `dtype` (itself when it already has it).
    fn cast(&mut self, v: usize, dtype: DType) -> usize {
        if self.dtype(v) == dtype {
            v
        } else {
            self.push(Expr::Cast(v), dtype)
        }
    }

    /// The IR value of `a`: lowered already, or a new load of an external input.
    fn value_of(&mut self, a: &Array) -> usize {
        if let Some(&v) = self.alias.get(&a.node_id()) {
            return v;
        }
        self.inputs.push(a.clone());
        self.input_specs.push((a.shape().clone(), a.dtype()));
        let v = self.push(Expr::Load(self.inputs.len() - 1), a.dtype());
        self.alias.insert(a.node_id(), v);
        v
    }
}
