//! The CPU executor for fused kernels: one pass over memory per
//! [`KernelIr`].
//!
//! The iteration space is cut into tasks of consecutive positions (a fixed
//! grid that depends only on the kernel's shape) and each task into tiles of
//! [`TILE`] positions (longer, up to [`MAX_TILE`], when the kernel needs
//! little scratch). For each tile every node is evaluated in order into a
//! small scratch buffer of its dtype (the op dispatched once per tile, so the
//! inner loops are tight), the outputs' tiles are written and the reduced
//! node's tile is folded into the task's accumulators. No full-size
//! temporaries exist: memory traffic is the inputs read once and the outputs
//! written once.
//!
//! Tasks run in parallel (rayon) on disjoint pieces of the output buffers;
//! their reduction partials are combined in task order, so results do not
//! depend on the number of threads. Elementwise values are exactly those of
//! the op-by-op CPU path (the same functions compute them); reductions agree
//! to rounding (sums accumulate in f64 per tile, partials combine in a fixed
//! order).
//!
//! A reduction along an inner axis with few tasks (the rows of a tall
//! matrix: one) runs each task's lanes in parallel blocks, every lane
//! still folded in the task's row order (`Reducer::lane_blocks`); a float
//! sum, mean or product of an input read as it is gets the same values
//! from `direct.rs`, which folds rows several at a time without tiles.
//!
//! ```
//! use gearbox_core::fusion::cpu;
//! use gearbox_core::fusion::ir::{Expr, IrNode, KernelIr};
//! use gearbox_core::{BinaryOp, DType, HostBuffer, Shape, UnaryOp};
//!
//! // z = exp(x) * y, over 3 values
//! let node = |expr| IrNode { expr, dtype: DType::F64 };
//! let kernel = KernelIr::new(
//!     Shape::new(vec![3]),
//!     vec![(Shape::new(vec![3]), DType::F64), (Shape::new(vec![3]), DType::F64)],
//!     vec![
//!         node(Expr::Load(0)),
//!         node(Expr::Load(1)),
//!         node(Expr::Unary(UnaryOp::Exp, 0)),
//!         node(Expr::Binary(BinaryOp::Mul, 2, 1)),
//!     ],
//!     vec![3],
//!     None,
//! )?;
//! let x = HostBuffer::F64(vec![0.0, 1.0, 2.0]);
//! let y = HostBuffer::F64(vec![1.0, 2.0, 3.0]);
//! let out = cpu::run(&kernel, &[&x, &y])?;
//! assert_eq!(out.outputs[0], HostBuffer::F64(vec![1.0, 2.0 * 1f64.exp(), 3.0 * 2f64.exp()]));
//! # Ok::<(), gearbox_core::Error>(())
//! ```

mod direct;
mod eval;
mod plan;
mod reduce;

use rayon::prelude::*;

use crate::buffer::HostBuffer;
use crate::error::{Error, Result};
use crate::fusion::ir::{IrReduce, KernelIr};
use crate::memory;
use crate::ops::loops::{worth_parallel, PAR_MIN};
use crate::shape::Shape;

use eval::{internal, OutSlice, Val};
use plan::{CpuProgram, NodePlan, Place, Step, WalkState};
use reduce::{Partial, Reducer};

/// Positions per tile for kernels with scratch buffers to keep in cache:
/// every node's scratch buffer holds this many values.
pub const TILE: usize = 1024;
/// The longest tile: kernels whose tile scratch is small (a reduction of an
/// input read in place has none) take longer tiles, up to this.
pub const MAX_TILE: usize = 8 * TILE;
/// Scratch bytes per tile that longer tiles may use.
const SCRATCH_BYTES: usize = 32 << 10;
/// Positions per task (the unit of parallel work) of kernels with a
/// reduction, unless a reduction along an inner axis asks for more. A
/// multiple of [`MAX_TILE`]. (Reductions keep fixed tasks: their partials
/// combine per task, so the task length is part of their rounding.)
const TASK: usize = 1 << 15;
/// Work per task of elementwise kernels, in [`element_cost`] units: a task
/// of cheap operations covers [`TASK`] positions, one of transcendental
/// chains far fewer, so that 8,192 elements of `exp(x) * y + sin(x)` (36
/// units an element) already run on several cores, and 65,536 in 64 tasks
/// rather than 2 (measured on a 16-core host, docs/perf/cpu.md).
const TASK_WORK: usize = 1 << 16;

/// A rough cost of one element of `kernel` in units of a simple
/// arithmetic operation: each op's own cost (`UnaryOp::cost`,
/// `BinaryOp::cost`), scalar-function calls (nmath densities and the like)
/// 64, loads, selections and casts 1.
pub fn element_cost(kernel: &KernelIr) -> usize {
    use crate::fusion::ir::Expr;
    kernel
        .nodes()
        .iter()
        .map(|node| match node.expr {
            Expr::Unary(op, _) => op.cost(),
            Expr::Binary(op, _, _) => op.cost(),
            Expr::Call(..) => 64,
            Expr::Load(_) | Expr::Select(..) | Expr::Cast(_) | Expr::Reduced(_) => 1,
        })
        .sum::<usize>()
        .max(1)
}

/// Positions per task, and whether tasks run in parallel, for an
/// elementwise kernel of `n` positions at `cost` units each: tasks of
/// about [`TASK_WORK`] units (whole tiles, at most [`TASK`] positions),
/// in parallel when there are two or more and the work pays for handing
/// them to the pool ([`crate::ops::handoff::parallel_min_units`]). On a pool thread
/// that is when the work fills four tasks or the kernel is as long as
/// [`PAR_MIN`].
fn elementwise_tasks(n: usize, cost: usize) -> (usize, bool) {
    let task = (TASK_WORK / cost.max(1)).clamp(TILE, TASK) / TILE * TILE;
    let work = n.saturating_mul(cost);
    let floor = if n >= PAR_MIN { 0 } else { 4 * TASK_WORK };
    let enough = work >= crate::ops::handoff::parallel_min_units(floor);
    (task, enough && n > task)
}

/// What one run of a kernel produces.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelOutputs {
    /// The full-size outputs, in [`KernelIr::outputs`] order, each of its
    /// node's dtype and of the iteration shape's length.
    pub outputs: Vec<HostBuffer>,
    /// The reduced results ([`KernelIr::reduced_results`]: the reduction's,
    /// then its companion's), each of [`KernelIr::reduced_shape`]'s length
    /// and the reduction's dtype; none when the kernel has no reduction.
    pub reduced: Vec<HostBuffer>,
}

/// Runs `kernel` on `inputs` (one buffer per kernel input, column-major, of
/// the input's dtype and shape).
///
/// Errors when the inputs do not match the kernel (count, dtype or length),
/// when a min/max reduction has an empty lane, or when an i64 result
/// overflows ([`Error::IntegerOverflow`], the same error as op-by-op
/// evaluation gives: see [`crate::ops::integer`]).
pub fn run(kernel: &KernelIr, inputs: &[&HostBuffer]) -> Result<KernelOutputs> {
    if let Some((pre, epi)) = kernel.split_epilogue() {
        return run_with_epilogue(&pre, &epi, inputs);
    }
    if let Some(reduced) = reduce_an_input(kernel, inputs)? {
        return Ok(reduced);
    }
    if let Some(r) = kernel
        .reduce()
        .filter(|r| r.op.monoid().is_none() || r.companion.is_some())
    {
        return run_then_reduce(kernel, inputs, *r);
    }
    match run_tiled(kernel, inputs, false) {
        // Tiles and tasks meet elementwise overflows in position order; one
        // tile over everything meets them node by node, as op-by-op
        // evaluation does, so it finds the same first one. (An overflowing
        // sum is found after every node succeeded: it is that error already.)
        Err(Error::IntegerOverflow { op, .. }) if op != "sum" => run_tiled(kernel, inputs, true),
        done => done,
    }
}

/// A kernel with an epilogue, as its two passes
/// ([`KernelIr::split_epilogue`]): the reduction, then the outputs reading
/// the reduced results.
fn run_with_epilogue(
    pre: &KernelIr,
    epi: &KernelIr,
    inputs: &[&HostBuffer],
) -> Result<KernelOutputs> {
    let first = run(pre, inputs)?;
    let mut all: Vec<&HostBuffer> = inputs.to_vec();
    all.extend(first.reduced.iter());
    let second = run(epi, &all)?;
    Ok(KernelOutputs {
        outputs: second.outputs,
        reduced: first.reduced,
    })
}

/// The input a kernel only reduces as it is (a full-size input loaded
/// without broadcasting, in its own dtype, with nothing else stored), and
/// the reduction; `None` for any other kernel.
fn reduced_input<'b>(
    kernel: &KernelIr,
    inputs: &[&'b HostBuffer],
) -> Result<Option<(&'b HostBuffer, IrReduce)>> {
    use crate::fusion::ir::Expr;
    let Some(r) = kernel.reduce() else {
        return Ok(None);
    };
    let Expr::Load(i) = kernel.nodes()[r.node].expr else {
        return Ok(None);
    };
    let whole = kernel.inputs().get(i).map(|(s, _)| s) == Some(kernel.shape());
    if !whole || !kernel.outputs().is_empty() {
        return Ok(None);
    }
    check_inputs(kernel, inputs)?;
    if kernel.nodes()[r.node].dtype != inputs[i].dtype() {
        return Ok(None);
    }
    Ok(Some((inputs[i], *r)))
}

/// [`run`] for a kernel that only reduces one of its inputs as it is
/// ([`reduced_input`]): by a reduction whose value does not depend on the
/// order it is read in (`min`, `max`, `any`, `all`) or that is evaluated op
/// by op anyway (`var`, `sd`, `argmin`, `argmax`), the op-by-op reduction on
/// the input's buffer, with no copy; a float sum, mean or product along an
/// inner axis, the fused fold's values computed row block by row block
/// ([`direct`]). `None` for any other kernel: the others keep the tiled
/// fold, so that reducing a value gives the same bits whether it was stored
/// first or computed in the same pass.
fn reduce_an_input(kernel: &KernelIr, inputs: &[&HostBuffer]) -> Result<Option<KernelOutputs>> {
    use crate::ops::reduce::ReduceOp;
    let Some((x, r)) = reduced_input(kernel, inputs)? else {
        return Ok(None);
    };
    if matches!(r.op, ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Prod) {
        return direct::fold_an_input(kernel, &r, x);
    }
    // In r.dtype already: a KernelIr's reduction dtype follows from its
    // node's, which is the input's here.
    Ok(Some(KernelOutputs {
        outputs: Vec::new(),
        reduced: reduce_op_by_op(&r, x, kernel.shape())?,
    }))
}

/// [`run`] for a reduction whose accumulator holds several values (`var`,
/// `sd`, `argmin`, `argmax`): the reduced node is computed as one more
/// full-size output, then reduced by the op-by-op reduction, so the result
/// has its bits (R's two-pass variance, the first extreme).
fn run_then_reduce(
    kernel: &KernelIr,
    inputs: &[&HostBuffer],
    r: IrReduce,
) -> Result<KernelOutputs> {
    let mut outputs = kernel.outputs().to_vec();
    let at = match outputs.iter().position(|&o| o == r.node) {
        Some(at) => at,
        None => {
            outputs.push(r.node);
            outputs.len() - 1
        }
    };
    let values = KernelIr::new(
        kernel.shape().clone(),
        kernel.inputs().to_vec(),
        kernel.nodes().to_vec(),
        outputs,
        None,
    )?;
    let mut out = run(&values, inputs)?;
    let reduced_values = out
        .outputs
        .get(at)
        .ok_or_else(|| internal("the reduced node's values"))?;
    let reduced = reduce_op_by_op(&r, reduced_values, kernel.shape())?;
    if at == kernel.outputs().len() {
        // The values were only computed to be reduced.
        out.outputs.pop();
    }
    Ok(KernelOutputs {
        outputs: out.outputs,
        reduced,
    })
}

/// Every result of reduction `r` (its own, then its companion's) over
/// `values` of `shape`, by the op-by-op reductions.
fn reduce_op_by_op(r: &IrReduce, values: &HostBuffer, shape: &Shape) -> Result<Vec<HostBuffer>> {
    r.results()
        .map(|op| crate::ops::reduce::reduce_host(op, r.axis, values, shape))
        .collect()
}

/// [`run`] in tiles and parallel tasks, or (`whole`) in one tile covering
/// the iteration space.
fn run_tiled(kernel: &KernelIr, inputs: &[&HostBuffer], whole: bool) -> Result<KernelOutputs> {
    check_inputs(kernel, inputs)?;
    let n = kernel.shape().numel();
    let plan = CpuProgram::new(kernel, inputs)?;
    let reducer = kernel
        .reduce()
        .map(|r| Reducer::new(kernel, r))
        .transpose()?;
    let (task, parallel) = match &reducer {
        _ if whole => (n.max(1), false),
        Some(r) => (r.task_len(TASK), worth_parallel(n, element_cost(kernel))),
        None => elementwise_tasks(n, element_cost(kernel)),
    };
    let mut outputs: Vec<HostBuffer> = kernel
        .outputs()
        .iter()
        .map(|&k| HostBuffer::filled("fused kernel", kernel.nodes()[k].dtype, n, 0.0))
        .collect::<Result<_>>()
        .map_err(|e| name_ops(e, kernel))?;

    // Each task gets its piece of every output. The task table grows with
    // `n` even when nothing full-size is stored (a reduction), so it is
    // allocated fallibly too.
    let ntasks = n.div_ceil(task);
    let tasks = (0..ntasks).map(|_| Vec::with_capacity(outputs.len()));
    let mut work: Vec<Vec<OutSlice<'_>>> =
        memory::collect("fused kernel", tasks).map_err(|e| name_ops(e, kernel))?;
    for buf in outputs.iter_mut() {
        for (w, piece) in work.iter_mut().zip(eval::pieces(buf, task)) {
            w.push(piece);
        }
    }
    let tile = if whole {
        n.max(1)
    } else {
        plan.tile_len(TILE, MAX_TILE, SCRATCH_BYTES)
    };
    let runner = Runner {
        plan: &plan,
        tile,
        reducer: reducer.as_ref(),
        inputs,
        n,
        task,
    };
    // A reduction along an inner axis in few tasks (one, for the rows of
    // a tall matrix) splits each task's lanes into blocks run in parallel:
    // the same folds in the same order, shared out.
    let threads = rayon::current_num_threads().max(1);
    let lane_blocks = match &reducer {
        Some(r) if parallel && kernel.outputs().is_empty() => {
            r.lane_blocks(task, ntasks, threads, tile)
        }
        _ => None,
    };
    let partials: Vec<Option<Partial>> = if let Some(width) = lane_blocks {
        let inner = reducer.as_ref().map_or(1, Reducer::inner);
        let units: Vec<(usize, (usize, usize))> = (0..ntasks)
            .flat_map(|t| {
                (0..inner)
                    .step_by(width)
                    .map(move |i0| (t, (i0, (i0 + width).min(inner))))
            })
            .collect();
        units
            .into_par_iter()
            .map_init(
                || plan.scratch(tile.min(n)),
                |scratch, (t, lanes)| runner.lane_task(t, lanes, scratch),
            )
            .collect::<Result<_>>()?
    } else if parallel {
        work.into_par_iter()
            .enumerate()
            .map_init(
                || plan.scratch(tile.min(n)),
                |scratch, (t, outs)| runner.task(t, outs, scratch),
            )
            .collect::<Result<_>>()?
    } else {
        let mut scratch = plan.scratch(tile.min(n));
        work.into_iter()
            .enumerate()
            .map(|(t, outs)| runner.task(t, outs, &mut scratch))
            .collect::<Result<_>>()?
    };
    let reduced = match &reducer {
        Some(r) => vec![r.finish(partials.into_iter().flatten().collect())?],
        None => Vec::new(),
    };
    Ok(KernelOutputs { outputs, reduced })
}

/// An out-of-memory error `e` renamed after the ops `kernel` computes
/// (`fused kernel (exp, mul, sum)`), which the user wrote; other errors as
/// they are.
fn name_ops(e: Error, kernel: &KernelIr) -> Error {
    use crate::fusion::ir::Expr;
    let Error::OutOfMemory {
        bytes, available, ..
    } = e
    else {
        return e;
    };
    let mut names: Vec<&str> = Vec::new();
    for node in kernel.nodes() {
        let name = match node.expr {
            Expr::Load(_) | Expr::Reduced(_) => continue,
            Expr::Unary(op, _) => op.name(),
            Expr::Binary(op, ..) => op.name(),
            Expr::Select(..) => "where",
            Expr::Cast(_) => "astype",
            Expr::Call(f, ..) => f.get().name,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.extend(kernel.reduce().map(|r| r.op.name()));
    Error::OutOfMemory {
        op: format!("fused kernel ({})", names.join(", ")),
        bytes,
        available,
    }
}

/// Checks that the iteration shape's sizes cannot overflow (every product of
/// its dimensions, zeros counted as one, fits in memory as f64), then the
/// inputs' count, dtypes and lengths against the kernel.
fn check_inputs(kernel: &KernelIr, inputs: &[&HostBuffer]) -> Result<()> {
    let shape = kernel.shape();
    let cap = shape
        .dims()
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d.max(1)));
    if cap.is_none_or(|c| c > isize::MAX as usize / 8) {
        return Err(Error::BadShape {
            op: "fused_kernel",
            shape: shape.clone(),
            why: "its sizes do not fit in memory".into(),
        });
    }
    let want = kernel.inputs();
    if inputs.len() != want.len() {
        return Err(Error::InvalidArgument {
            op: "fused_kernel",
            name: "inputs",
            value: format!("{} buffer(s)", inputs.len()),
            why: format!("the kernel takes {} input(s)", want.len()),
        });
    }
    for (buf, (shape, dtype)) in inputs.iter().zip(want) {
        if buf.dtype() != *dtype {
            return Err(Error::DType {
                op: "fused_kernel",
                got: buf.dtype(),
                expected: dtype.name(),
            });
        }
        if buf.len() != shape.numel() {
            return Err(Error::DataLength {
                op: "fused_kernel",
                len: buf.len(),
                shape: shape.clone(),
                expected: shape.numel(),
            });
        }
    }
    Ok(())
}

/// Everything a task needs, shared by all tasks.
struct Runner<'a> {
    plan: &'a CpuProgram,
    tile: usize,
    reducer: Option<&'a Reducer>,
    inputs: &'a [&'a HostBuffer],
    n: usize,
    task: usize,
}

impl Runner<'_> {
    /// Runs task `t` tile by tile, writing `outs` (its pieces of the outputs)
    /// and returning its reduction partial.
    fn task(
        &self,
        t: usize,
        mut outs: Vec<OutSlice<'_>>,
        scratch: &mut [HostBuffer],
    ) -> Result<Option<Partial>> {
        let a = t * self.task;
        let b = (a + self.task).min(self.n);
        let mut walks = self.walks(a);
        let mut partial = self.reducer.map(|r| r.partial(a, b)).transpose()?;
        let mut s = a;
        while s < b {
            let e = (s + self.tile).min(b);
            self.tile(s, e, a, &mut walks, scratch, &mut outs, partial.as_mut())?;
            s = e;
        }
        Ok(partial)
    }

    /// Runs the lanes `i0..i1` of task `t` (a task within one slab of a
    /// reduction along an inner axis, storing nothing full-size): the run
    /// of those lanes in each of its rows, in row order, tile by tile. Each
    /// lane meets its values in the order the whole task would fold them,
    /// so the partial holds the same bits.
    fn lane_task(
        &self,
        t: usize,
        (i0, i1): (usize, usize),
        scratch: &mut [HostBuffer],
    ) -> Result<Option<Partial>> {
        let r = self
            .reducer
            .ok_or_else(|| internal("a lane task without a reduction"))?;
        let a = t * self.task;
        let b = (a + self.task).min(self.n);
        let inner = r.inner();
        let mut partial = r.slab_partial(a / (inner * r.lane_len()).max(1), (i0, i1))?;
        for row in a / inner..b.div_ceil(inner) {
            let (lo, hi) = ((row * inner + i0).max(a), (row * inner + i1).min(b));
            if lo >= hi {
                continue;
            }
            let mut walks = self.walks(lo);
            let mut s = lo;
            while s < hi {
                let e = (s + self.tile).min(hi);
                self.tile(s, e, a, &mut walks, scratch, &mut [], Some(&mut partial))?;
                s = e;
            }
        }
        Ok(Some(partial))
    }

    /// Fresh walks of the broadcast loads, from position `at`.
    fn walks(&self, at: usize) -> Vec<Option<WalkState>> {
        self.plan
            .nodes
            .iter()
            .map(|np| match &np.step {
                Step::Walk(_, w) => Some(w.start(at)),
                _ => None,
            })
            .collect()
    }

    /// Positions `s..e` of a task starting at `a`: every node computed,
    /// the outputs' pieces written, the reduced node folded into `partial`.
    #[allow(clippy::too_many_arguments)]
    fn tile(
        &self,
        s: usize,
        e: usize,
        a: usize,
        walks: &mut [Option<WalkState>],
        scratch: &mut [HostBuffer],
        outs: &mut [OutSlice<'_>],
        mut partial: Option<&mut Partial>,
    ) -> Result<()> {
        for (k, np) in self.plan.nodes.iter().enumerate() {
            if let (Place::Slot(slot), false) = (np.place, matches!(np.step, Step::Nothing)) {
                let mut out = std::mem::replace(&mut scratch[slot], HostBuffer::Bool(Vec::new()));
                let done = self.compute(np, &mut walks[k], scratch, &mut out, s, e);
                scratch[slot] = out;
                done?;
            }
            if !np.outputs.is_empty() {
                let v = self.val(k, scratch, s, e)?;
                for &o in &np.outputs {
                    eval::store(v, &mut outs[o], s - a, e - s)?;
                }
            }
            if let (true, Some(r), Some(p)) = (np.reduced, self.reducer, partial.as_deref_mut()) {
                r.fold(p, s, self.place_val(np.place, scratch, s, e)?)?;
            }
        }
        Ok(())
    }

    /// Node `k` over positions `s..e`.
    fn val<'s>(
        &'s self,
        k: usize,
        scratch: &'s [HostBuffer],
        s: usize,
        e: usize,
    ) -> Result<Val<'s>> {
        let np = &self.plan.nodes[k];
        match np.konst {
            Some(c) => Ok(c.val()),
            None => self.place_val(np.place, scratch, s, e),
        }
    }

    /// The values at `place` over positions `s..e`.
    fn place_val<'s>(
        &'s self,
        place: Place,
        scratch: &'s [HostBuffer],
        s: usize,
        e: usize,
    ) -> Result<Val<'s>> {
        match place {
            Place::Input(i) => Ok(eval::window(self.inputs[i], s, e)),
            Place::Slot(q) => Ok(eval::head(&scratch[q], e - s)),
            Place::None => Err(internal("a constant read as a tile")),
        }
    }

    /// Computes node `np` over positions `s..e` into `out`.
    fn compute(
        &self,
        np: &NodePlan,
        walk: &mut Option<WalkState>,
        scratch: &[HostBuffer],
        out: &mut HostBuffer,
        s: usize,
        e: usize,
    ) -> Result<()> {
        use HostBuffer as B;
        let m = e - s;
        let v = |j: usize| self.val(j, scratch, s, e);
        match &np.step {
            Step::Nothing => Ok(()),
            Step::Walk(i, w) => {
                let Some(st) = walk.as_mut() else {
                    return Err(internal("a broadcast load without its walk"));
                };
                match (self.inputs[*i], out) {
                    (B::Bool(x), B::Bool(o)) => w.fill(st, x, &mut o[..m]),
                    (B::I64(x), B::I64(o)) => w.fill(st, x, &mut o[..m]),
                    (B::F32(x), B::F32(o)) => w.fill(st, x, &mut o[..m]),
                    (B::F64(x), B::F64(o)) => w.fill(st, x, &mut o[..m]),
                    _ => return Err(internal("a load of another dtype than its input")),
                }
                Ok(())
            }
            Step::Unary(op, a) => eval::unary(*op, v(*a)?, out, m, s),
            Step::Binary(op, a, b) => eval::binary(*op, v(*a)?, v(*b)?, out, m, s),
            Step::Select(c, a, b) => eval::select(v(*c)?, v(*a)?, v(*b)?, out, m),
            Step::Cast(a) => eval::cast(v(*a)?, out, m, s),
            Step::Call(f, args, flags) => {
                let vals: Vec<eval::Val<'_>> = args[..f.get().arity]
                    .iter()
                    .map(|&j| v(j))
                    .collect::<Result<_>>()?;
                eval::call(*f, *flags, &vals, out, m)
            }
        }
    }
}

#[cfg(test)]
mod task_tests {
    use super::*;

    #[test]
    fn transcendental_chains_split_small_arrays_cheap_ones_do_not() {
        // On a pool thread, where handing tasks over costs nothing extra.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        pool.install(|| {
            // exp(x) * y + sin(x) - 2 y: two transcendental and four simple nodes.
            assert_eq!(elementwise_tasks(4096, 36), (TILE, false));
            assert_eq!(elementwise_tasks(8192, 36), (TILE, true));
            // Cheap chains keep long tasks and go parallel from PAR_MIN on.
            assert_eq!(elementwise_tasks(PAR_MIN - 1, 4), (16 * TILE, false));
            assert_eq!(elementwise_tasks(PAR_MIN, 4), (16 * TILE, true));
            // One task's worth never splits; tasks never exceed TASK.
            assert_eq!(elementwise_tasks(TILE, 1000), (TILE, false));
            assert_eq!(elementwise_tasks(1 << 24, 1), (TASK, true));
        });
    }

    #[test]
    fn from_outside_the_pool_small_kernels_stay_on_the_calling_thread() {
        // The round trip's price is the host's, but never below the
        // pool-thread rule, and large kernels always go parallel.
        assert_eq!(elementwise_tasks(4096, 36), (TILE, false));
        assert_eq!(elementwise_tasks(PAR_MIN - 1, 4), (16 * TILE, false));
        assert_eq!(elementwise_tasks(1 << 26, 1), (TASK, true));
    }
}
