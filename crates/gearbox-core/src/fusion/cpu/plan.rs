//! What the CPU executor does for each node of a kernel, decided once per run.
//!
//! - Nodes that are the same at every position (loads of one-element inputs
//!   and everything computed only from them) are evaluated once, here, with
//!   the tile functions of [`super::eval`] on one value.
//! - Loads of inputs that have the iteration shape read the input directly
//!   (no copy); other loads fill a scratch slot through a [`Walk`].
//! - Every other node writes a scratch slot of `TILE` values. Slots are
//!   reused once their node's last user has run, so a long chain needs only
//!   a few tile-sized buffers (which stay in cache).

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::fusion::ir::{Expr, FnRef, KernelIr, MAX_CALL_ARGS};
use crate::ops::binary::BinaryOp;
use crate::ops::unary::UnaryOp;
use crate::shape::Shape;

use super::eval::{self, Scalar, Val};

/// Where a node's values over the current tile are found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Place {
    /// Nowhere: the node is a constant that only feeds other nodes.
    None,
    /// The input's own values at the tile's positions.
    Input(usize),
    /// A scratch slot.
    Slot(usize),
}

/// The work a node does for each tile.
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// Nothing (a constant, or a load read in place).
    Nothing,
    /// Gather a broadcast input into the node's slot.
    Walk(usize, Walk),
    /// A unary op of an earlier node.
    Unary(UnaryOp, usize),
    /// A binary op of two earlier nodes.
    Binary(BinaryOp, usize, usize),
    /// `mask ? a : b`.
    Select(usize, usize, usize),
    /// A conversion to the node's dtype.
    Cast(usize),
    /// A scalar function of earlier float64 nodes.
    Call(FnRef, [usize; MAX_CALL_ARGS], u8),
}

/// The executor's view of one node.
#[derive(Debug, Clone)]
pub(super) struct NodePlan {
    /// The node's value when it is the same at every position.
    pub konst: Option<Scalar>,
    /// Where its tile values are (for constants: only when reduced).
    pub place: Place,
    /// What to compute per tile.
    pub step: Step,
    /// Indices of the kernel outputs that store this node.
    pub outputs: Vec<usize>,
    /// Whether the trailing reduction reads this node.
    pub reduced: bool,
}

/// Per-node plans and the scratch slots they use.
#[derive(Debug, Clone)]
pub(super) struct CpuProgram {
    /// One plan per kernel node, in order.
    pub nodes: Vec<NodePlan>,
    /// dtype of each scratch slot, and the constant it holds for good (if any).
    pub slots: Vec<(DType, Option<Scalar>)>,
}

impl CpuProgram {
    /// Plans `kernel` over these (already checked) inputs.
    pub(super) fn new(kernel: &KernelIr, inputs: &[&HostBuffer]) -> Result<CpuProgram> {
        let shape = kernel.shape();
        let n = shape.numel();
        let nodes = kernel.nodes();
        let mut konst: Vec<Option<Scalar>> = Vec::with_capacity(nodes.len());
        for node in nodes {
            let c = |j: usize| konst[j];
            let value = match node.expr {
                Expr::Load(i) if kernel.inputs()[i].0.numel() == 1 => Scalar::first(inputs[i]),
                Expr::Load(_) => None,
                Expr::Reduced(_) => {
                    return Err(eval::internal("an epilogue reaches the tiled fold unsplit"))
                }
                Expr::Unary(op, a) => fold(node.dtype, &[c(a)], |v, out| {
                    eval::unary(op, v[0], out, 1, 0)
                })?,
                Expr::Binary(op, a, b) => fold(node.dtype, &[c(a), c(b)], |v, out| {
                    eval::binary(op, v[0], v[1], out, 1, 0)
                })?,
                Expr::Select(m, a, b) => fold(node.dtype, &[c(m), c(a), c(b)], |v, out| {
                    eval::select(v[0], v[1], v[2], out, 1)
                })?,
                Expr::Cast(a) => fold(node.dtype, &[c(a)], |v, out| eval::cast(v[0], out, 1, 0))?,
                Expr::Call(f, _, flags) => {
                    let args: Vec<Option<Scalar>> = node.expr.operands().map(c).collect();
                    fold(node.dtype, &args, |v, out| eval::call(f, flags, v, out, 1))?
                }
            };
            konst.push(value);
        }

        let reduced = kernel.reduce().map(|r| r.node);
        let mut outputs = vec![Vec::new(); nodes.len()];
        for (o, &k) in kernel.outputs().iter().enumerate() {
            outputs[k].push(o);
        }

        // Last tile-time user of each node.
        let mut last_use: Vec<Option<usize>> = vec![None; nodes.len()];
        for (k, node) in nodes.iter().enumerate() {
            if konst[k].is_none() {
                for j in node.expr.operands() {
                    last_use[j] = Some(k);
                }
            }
        }

        let mut slots: Vec<(DType, Option<Scalar>)> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        let mut alloc = |dtype: DType, hold: Option<Scalar>, free: &mut Vec<usize>| {
            if hold.is_none() {
                if let Some(pos) = free.iter().position(|&s| slots[s].0 == dtype) {
                    return free.swap_remove(pos);
                }
            }
            slots.push((dtype, hold));
            slots.len() - 1
        };
        let mut plans: Vec<NodePlan> = Vec::with_capacity(nodes.len());
        for (k, node) in nodes.iter().enumerate() {
            let is_reduced = reduced == Some(k);
            let (place, step) = match (konst[k], node.expr) {
                (Some(c), _) if is_reduced => (
                    Place::Slot(alloc(node.dtype, Some(c), &mut free)),
                    Step::Nothing,
                ),
                (Some(_), _) => (Place::None, Step::Nothing),
                (None, Expr::Load(i)) if kernel.inputs()[i].0.numel() == n => {
                    (Place::Input(i), Step::Nothing)
                }
                (None, expr) => {
                    let step = match expr {
                        Expr::Load(i) => Step::Walk(i, Walk::new(&kernel.inputs()[i].0, shape)),
                        Expr::Unary(op, a) => Step::Unary(op, a),
                        Expr::Binary(op, a, b) => Step::Binary(op, a, b),
                        Expr::Select(m, a, b) => Step::Select(m, a, b),
                        Expr::Cast(a) => Step::Cast(a),
                        Expr::Call(f, args, flags) => Step::Call(f, args, flags),
                        Expr::Reduced(_) => {
                            return Err(eval::internal(
                                "an epilogue reaches the tiled fold unsplit",
                            ))
                        }
                    };
                    (Place::Slot(alloc(node.dtype, None, &mut free)), step)
                }
            };
            plans.push(NodePlan {
                konst: konst[k],
                place,
                step,
                outputs: std::mem::take(&mut outputs[k]),
                reduced: is_reduced,
            });
            // Release the slots whose last user was this node (or, for a node
            // nobody uses later, its own slot once it has been stored).
            let mut done: Vec<usize> = Vec::new();
            if konst[k].is_none() {
                done.extend(node.expr.operands().filter(|&j| last_use[j] == Some(k)));
            }
            if last_use[k].is_none() {
                done.push(k);
            }
            done.sort_unstable();
            done.dedup();
            for j in done {
                if let Place::Slot(s) = plans[j].place {
                    if plans[j].konst.is_none() {
                        free.push(s);
                    }
                }
            }
        }
        Ok(CpuProgram {
            nodes: plans,
            slots,
        })
    }

    /// The tile length: `min`, doubled while the next length's scratch would
    /// stay within `budget` bytes, up to `max`.
    pub(super) fn tile_len(&self, min: usize, max: usize, budget: usize) -> usize {
        let per_position: usize = self.slots.iter().map(|(d, _)| d.size_bytes()).sum();
        let mut tile = min;
        while tile < max && 2 * tile * per_position <= budget {
            tile *= 2;
        }
        tile
    }

    /// Fresh scratch: one buffer of `tile` values per slot, constants filled in.
    pub(super) fn scratch(&self, tile: usize) -> Vec<HostBuffer> {
        self.slots
            .iter()
            .map(|&(dtype, hold)| {
                let mut buf = HostBuffer::scratch(dtype, tile);
                if let Some(c) = hold {
                    c.fill(&mut buf);
                }
                buf
            })
            .collect()
    }
}

/// The value of a node whose operands are all constants, computed by `f` on
/// one position; `None` when some operand varies.
fn fold(
    dtype: DType,
    args: &[Option<Scalar>],
    f: impl FnOnce(&[Val<'static>], &mut HostBuffer) -> Result<()>,
) -> Result<Option<Scalar>> {
    let Some(vals) = args
        .iter()
        .map(|a| a.map(Scalar::val))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let mut out = HostBuffer::scratch(dtype, 1);
    f(&vals, &mut out)?;
    Ok(Scalar::first(&out))
}

/// Gathers a broadcast input along consecutive output positions.
///
/// The same mapping as [`crate::shape::BroadcastWalker`], but by runs: output
/// axes of length 1 are dropped and neighbouring axes that are both broadcast
/// or both not are merged, so each step copies a contiguous run of the input
/// (or repeats one value) instead of moving one position at a time.
#[derive(Debug, Clone)]
pub(super) struct Walk {
    dims: Vec<usize>,
    strides: Vec<usize>,
}

/// Where a [`Walk`] is: the output index (merged axes) and the input offset.
#[derive(Debug, Clone)]
pub(super) struct WalkState {
    index: Vec<usize>,
    offset: usize,
}

impl Walk {
    /// The walk of `input` (which broadcasts to `out`) over `out`.
    pub(super) fn new(input: &Shape, out: &Shape) -> Walk {
        let mut dims: Vec<usize> = Vec::new();
        let mut strides: Vec<usize> = Vec::new();
        let mut acc = 1;
        for (i, &d) in out.dims().iter().enumerate() {
            let di = input.dim(i);
            let stride = if di == 1 { 0 } else { acc };
            acc *= di;
            if d == 1 {
                continue;
            }
            match (dims.last_mut(), strides.last()) {
                (Some(ld), Some(&ls)) if (ls == 0) == (stride == 0) => *ld *= d,
                _ => {
                    dims.push(d);
                    strides.push(stride);
                }
            }
        }
        Walk { dims, strides }
    }

    /// The state at output position `pos`.
    pub(super) fn start(&self, pos: usize) -> WalkState {
        let mut rem = pos;
        let mut offset = 0;
        let mut index = vec![0; self.dims.len()];
        for (i, &d) in self.dims.iter().enumerate() {
            index[i] = rem % d;
            rem /= d;
            offset += index[i] * self.strides[i];
        }
        WalkState { index, offset }
    }

    /// Fills `out` with the input values of the next `out.len()` positions.
    pub(super) fn fill<T: Copy>(&self, st: &mut WalkState, src: &[T], out: &mut [T]) {
        let (Some(&d0), Some(&s0)) = (self.dims.first(), self.strides.first()) else {
            // No axis longer than 1: a single position.
            if let Some(&v) = src.first() {
                out.fill(v);
            }
            return;
        };
        let mut done = 0;
        while done < out.len() {
            let run = (d0 - st.index[0]).min(out.len() - done);
            let o = &mut out[done..done + run];
            if s0 == 0 {
                o.fill(src[st.offset]);
            } else {
                // A non-broadcast first axis has stride 1.
                o.copy_from_slice(&src[st.offset..st.offset + run]);
            }
            done += run;
            st.index[0] += run;
            st.offset += run * s0;
            if st.index[0] == d0 {
                st.offset -= d0 * s0;
                st.index[0] = 0;
                for i in 1..self.dims.len() {
                    st.index[i] += 1;
                    st.offset += self.strides[i];
                    if st.index[i] < self.dims[i] {
                        break;
                    }
                    st.offset -= self.strides[i] * self.dims[i];
                    st.index[i] = 0;
                }
            }
        }
    }
}
