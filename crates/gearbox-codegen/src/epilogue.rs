//! Axis reductions with an epilogue: outputs that read their lane's
//! reduced results ([`Expr::Reduced`](gearbox_core::fusion::ir::Expr),
//! `x - logsumexp(x)`, `(x - mean) / sd`) written by the kernel that
//! reduces the lane. The thread, warp or block that reduced a contiguous
//! lane shares its results in registers and walks the lane again, writing
//! the outputs: the second walk reads what the first has just read, so it
//! comes from cache, and the pass costs one read and one write of the data
//! where the two passes of [`KernelIr::split_epilogue`] cost two reads.
//!
//! Only contiguous lanes that a block, or a warp when short, reduces whole
//! ([`fuses_epilogue`]) are written this way; every other kernel with an
//! epilogue runs as its two passes ([`crate::run_fused_into`] splits it).

use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::{DType, Error};

use super::axis::{self, lane_unit, Unit};
use super::dialect::Dialect;
use super::kernels::{translation_unit, Ctx, Emitter, Kernel};
use super::lanes::{lane_access, LaneAccess};
use super::reduce::{Accum, Count};
use super::tuning::Tuning;
use super::writer::Writer;
use super::KernelKind;

/// The longest lane (in values) whose epilogue runs in the reducing
/// kernel: a block's lane of 16,384 f64 values is 128 KiB, which the
/// second walk still finds in an SM's cache; longer lanes split.
pub const MAX_LANE: usize = 16384;

/// The most bytes of a lane a warp walks again: the lanes of the warps an
/// SM holds (64) then fit its L1 (128 KiB of them). A warp per lane of
/// 6000 f32 values read its lane again from memory, and a thread per
/// lane (64 values) too: both ran slower than two passes (H200,
/// docs/perf/ops.md). Shorter lanes get a group of a warp's threads
/// ([`Unit::Group`]), longer ones a block.
pub(crate) const MAX_WARP_LANE_BYTES: usize = 2048;

/// Whether `ir`, a kernel with an epilogue, runs in one kernel in dialect
/// `d` with `tuning` (else as the two passes of
/// [`KernelIr::split_epilogue`]): a float reduction along contiguous
/// lanes (more than one, each at most [`MAX_LANE`] long) that a block
/// reduces whole, or a warp (or a group of a warp's threads) when the
/// lane's inputs hold at most 2 KiB, reading no input by lane.
pub fn fuses_epilogue(d: &dyn Dialect, ir: &KernelIr, tuning: Tuning) -> bool {
    ir.split_epilogue()
        .is_some_and(|(pre, _)| one_kernel(d, &pre, tuning))
}

fn one_kernel(d: &dyn Dialect, pre: &KernelIr, tuning: Tuning) -> bool {
    let Some(r) = pre.reduce() else {
        return false;
    };
    let Some(axis) = r.axis else {
        return false;
    };
    let (inner, len, outer) = pre.shape().split_at_axis(axis);
    if inner != 1 || outer < 2 || len == 0 || len > MAX_LANE {
        return false;
    }
    if !matches!(r.dtype, DType::F32 | DType::F64) {
        return false;
    }
    let mut plan = Emitter::new(d, pre, tuning);
    plan.rewalks_lanes = true;
    let access = lane_access(&plan.classes, pre.inputs(), &plan.used, axis);
    if access.iter().any(Option::is_some) || super::split::contiguous_chunks(&plan, axis) > 1 {
        return false;
    }
    // The bytes per lane position of the full-size inputs read.
    let bytes = pre
        .inputs()
        .iter()
        .zip(&plan.used)
        .filter(|&((s, _), &used)| used && s == pre.shape())
        .map(|((_, t), _)| d.storage_bytes(*t))
        .sum::<usize>();
    let broadcasts = d.shuffle_from("v", "0").is_some();
    match lane_unit(&plan, len, outer) {
        Unit::Thread => false,
        Unit::Group(_) => broadcasts,
        Unit::Warp => len * bytes <= MAX_WARP_LANE_BYTES && broadcasts,
        Unit::Block => true,
    }
}

/// Renders `ir` (with an epilogue) as one axis-reduction kernel; an error
/// when [`fuses_epilogue`] is false.
pub(crate) fn render(d: &dyn Dialect, ir: &KernelIr, tuning: Tuning) -> Result<Kernel, Error> {
    let refuse = |why: &str| Error::InvalidArgument {
        op: "render",
        name: "ir",
        value: "a kernel with an epilogue".into(),
        why: why.into(),
    };
    let (pre, epi) = ir
        .split_epilogue()
        .ok_or_else(|| refuse("its epilogue cannot be split from its reduction"))?;
    if !one_kernel(d, &pre, tuning) {
        return Err(refuse(
            "its lanes are not contiguous lanes one unit reduces whole: run its two passes",
        ));
    }
    let first = pre.inputs().len();
    let mut plan = Emitter::new(d, &pre, tuning);
    plan.rewalks_lanes = true;
    let mut after = Emitter::new(d, &epi, tuning);
    after.body_name = "gb_epilogue";
    for c in 0..ir.reduced_results() {
        after.lane[first + c] = Some(LaneAccess::LaneConst);
    }
    let mut body = Writer::default();
    plan.write_body(&mut body);
    body.line("");
    after.write_body(&mut body);
    plan.epilogue = Some(Box::new(after));
    let mut main = Writer::default();
    let (v, mapping) = axis::write_axis_reduce(&mut plan, &mut main);
    let source = translation_unit(d, ir, &mut plan, KernelKind::AxisReduce, v, body, main)?;
    Ok(Kernel {
        kind: KernelKind::AxisReduce,
        source,
        vector_width: v,
        mapping,
        partial_dtype: None,
        partial_words: 1,
        chunks: 1,
        heavy: false,
    })
}

/// The block-shared slots through which a block's thread 0 hands its
/// lane's results to the other threads: declared only for an epilogue
/// kernel whose lanes a block each reduces.
pub(crate) fn broadcast_slots(plan: &Emitter<'_>) -> Option<String> {
    let (Some(a), Some(_), Some(r)) = (plan.accum, &plan.epilogue, plan.ir.reduce()) else {
        return None;
    };
    let (_, len, outer) = plan.ir.shape().split_at_axis(r.axis?);
    if axis::lane_unit(plan, len, outer) != Unit::Block {
        return None;
    }
    let results = 1 + usize::from(a.companion.is_some());
    Some(
        plan.d
            .shared_array(plan.d.value_type(a.output), "gb_bcast", results),
    )
}

/// Where the epilogue walks a lane: the unit that reduced it, the lane's
/// length, and the unit's first position in the lane and its step.
pub(crate) struct LaneWalk<'a> {
    pub unit: Unit,
    pub len: usize,
    pub q0: &'a str,
    pub q_step: &'a str,
}

/// After lane `o`'s accumulator `acc` (of `a`) is reduced over its unit:
/// the lane's results in every thread of the unit (`gb_lc{k}`, the
/// epilogue's inputs that hold them), then the walk over the lane writing
/// the outputs. Nothing for a kernel without an epilogue.
pub(crate) fn write_lane_epilogue(
    plan: &mut Emitter<'_>,
    w: &mut Writer,
    a: Accum,
    walk: &LaneWalk<'_>,
) {
    let Some(mut after) = plan.epilogue.take() else {
        return;
    };
    let d = plan.d;
    w.line("// The epilogue: the lane's results in every thread, then the lane again.");
    write_lane_constants(plan, w, a, walk.unit, walk.len);
    let ll = d.index_type;
    let lit = |v: usize| d.index_lit(v as u64);
    let v = axis::pack_width(after.full_width(), walk.len);
    let steps = walk.len / v;
    w.open(d.for_head(
        Some((ll, "q", walk.q0)),
        &format!("q < {}", lit(steps)),
        &format!("q += {}", walk.q_step),
    ));
    if v > 1 {
        w.line(d.let_stmt(ll, "p", &format!("o * {} + q", lit(steps))));
        after.write_pack_loads(w, v);
        after.write_pack_elements(w, v, None);
        after.write_pack_stores(w, v);
    } else {
        w.line(d.let_stmt(ll, "i", &format!("o * {} + q", lit(walk.len))));
        after.write_element(w, Ctx::Scalar, None);
    }
    w.close();
    plan.epilogue = Some(after);
}

/// The results of lane `o` (of `len` values), whose accumulator `acc` of
/// `a` is reduced over `unit`, in every thread of the unit: `gb_lc{k}`,
/// the epilogue's inputs that hold them.
pub(crate) fn write_lane_constants(
    plan: &Emitter<'_>,
    w: &mut Writer,
    a: Accum,
    unit: Unit,
    len: usize,
) {
    let d = plan.d;
    let first = plan.ir.inputs().len();
    let ty = d.value_type(a.output);
    let values = a.result_values(d, "acc", Count::Const(len));
    match unit {
        Unit::Thread => {
            for (c, value) in values.iter().enumerate() {
                w.line(d.let_stmt(ty, &format!("gb_lc{}", first + c), value));
            }
        }
        Unit::Group(_) | Unit::Warp => {
            // From the lane's first thread: the group's, or the warp's.
            let leader = unit.leader();
            for (c, value) in values.iter().enumerate() {
                // `fuses_epilogue` asks for the broadcast before a warp
                // or a group gets an epilogue.
                let shared = d.shuffle_from(value, &leader).unwrap_or_default();
                w.line(d.let_stmt(ty, &format!("gb_lc{}", first + c), &shared));
            }
        }
        Unit::Block => {
            w.open(format!("if ({} == 0)", d.thread_idx));
            for (c, value) in values.iter().enumerate() {
                w.line(format!("gb_bcast[{c}] = {value};"));
            }
            w.close();
            w.line(format!("{};", d.barrier));
            for c in 0..values.len() {
                w.line(d.let_stmt(
                    ty,
                    &format!("gb_lc{}", first + c),
                    &format!("gb_bcast[{c}]"),
                ));
            }
        }
    }
}
