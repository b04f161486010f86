//! Contiguous-lane reductions (along the first non-trivial axis, one warp
//! or block per lane) whose broadcast inputs follow the lanes: an input
//! that varies only along the reduced axis (a column `[len, 1]` next to a
//! `[len, outer]` iteration, such as a GLM's per-observation constants or
//! many_lm's `Q` columns) is read at the in-lane position, once for a
//! group of adjacent lanes, and an input constant along the reduced axis
//! (a row `[1, outer]`, such as many_lm's effects) once per lane, before
//! the lane's loop. Without this each element recomputes a broadcast
//! offset and reloads both from cache, several times the cost of a plain
//! pass over the same matrix (docs/perf/cuda.md).

use gearbox_core::Shape;

use super::kernels::{count_loop, to_value, Ctx, Emitter};
use super::layout::InputClass;
use super::packs::PackAcc;
use super::reduce::Count;
use super::writer::Writer;

/// How a contiguous-lane reduction reaches a broadcast input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LaneAccess {
    /// Varies only along the reduced axis: element `r` of the lane is
    /// element `r` of the input, the same for every lane.
    AlongLane,
    /// Constant along the reduced axis: one value per lane.
    LaneConst,
}

/// The lane access of each input of a reduction along `axis` of `shape`
/// with contiguous lanes (`inner == 1`); `None` for inputs read as before.
pub(crate) fn lane_access(
    classes: &[InputClass],
    inputs: &[(Shape, gearbox_core::DType)],
    used: &[bool],
    axis: usize,
) -> Vec<Option<LaneAccess>> {
    classes
        .iter()
        .zip(inputs)
        .zip(used)
        .map(|((c, (s, _)), &u)| match c {
            InputClass::Broadcast(_) if u => {
                if s.dim(axis) == 1 {
                    Some(LaneAccess::LaneConst)
                } else if s.numel() == s.dim(axis) {
                    Some(LaneAccess::AlongLane)
                } else {
                    None
                }
            }
            _ => None,
        })
        .collect()
}

/// The loop of a grouped contiguous-lane reduction.
pub(crate) struct Lanes<'a> {
    /// Lanes and their length.
    pub outer: usize,
    pub len: usize,
    /// Vector width (packs of `v` along each lane) and packs per lane.
    pub v: usize,
    pub steps: usize,
    /// Lanes per group.
    pub group: usize,
    /// First group and group step of this warp or block; first in-lane
    /// pack and pack step of this thread.
    pub lane0: &'a str,
    pub lane_step: &'a str,
    pub q0: &'a str,
    pub q_step: &'a str,
    /// Whether a block (rather than a warp) shares a group.
    pub block: bool,
}

/// Writes the grouped loop: for each group of `group` adjacent lanes, the
/// lane-constant inputs once per lane, then for each in-lane pack the
/// along-lane inputs once and every lane's full-size packs, one
/// accumulator per lane, and the warp or block reduction of each.
pub(crate) fn write_grouped_lanes(plan: &mut Emitter<'_>, w: &mut Writer, l: &Lanes<'_>) {
    let d = plan.d;
    let ll = d.index_type;
    let lit = |v: usize| d.index_lit(v as u64);
    let Some(a) = plan.accum else { return };
    let (acc_ty, ident) = (a.ty(d), a.identity(d));
    let g = l.group;
    let groups = l.outer.div_ceil(g);
    let inputs: Vec<(usize, gearbox_core::DType)> = (0..plan.ir.inputs().len())
        .filter(|&k| plan.used[k])
        .map(|k| (k, plan.ir.inputs()[k].1))
        .collect();
    let along: Vec<_> = inputs
        .iter()
        .filter(|(k, _)| plan.lane[*k] == Some(LaneAccess::AlongLane))
        .copied()
        .collect();
    let constant: Vec<_> = inputs
        .iter()
        .filter(|(k, _)| plan.lane[*k] == Some(LaneAccess::LaneConst))
        .copied()
        .collect();
    w.line(format!(
        "// Lanes in groups of {g}: along-lane inputs read once per group, lane constants once per lane."
    ));
    w.open(d.for_head(
        Some((ll, "gb_g", l.lane0)),
        &format!("gb_g < {}", lit(groups)),
        &format!("gb_g += {}", l.lane_step),
    ));
    w.line(d.let_stmt(ll, "gb_o0", &format!("gb_g * {}", lit(g))));
    for &(k, t) in &constant {
        w.line(d.array_stmt(d.value_type(t), &format!("gb_hc{k}"), g));
    }
    w.line(d.array_stmt(acc_ty, "acc", g));
    w.hint(d.unroll(None));
    w.open(count_loop(d, "c", g));
    w.line(format!("acc[c] = {ident};"));
    for &(k, t) in &constant {
        let load = d.load_readonly(
            &format!("in{k}"),
            &format!("gb_off{k}((gb_o0 + c) * {})", lit(l.len)),
        );
        let value = d.select(
            &format!("gb_o0 + c < {}", lit(l.outer)),
            &to_value(t, &load),
            &d.cast(d.value_type(t), "0"),
        );
        w.line(format!("gb_hc{k}[c] = {value};"));
    }
    w.close();
    w.open(d.for_head(
        Some((ll, "q", l.q0)),
        &format!("q < {}", lit(l.steps)),
        &format!("q += {}", l.q_step),
    ));
    for &(k, t) in &along {
        let st = d.storage_type(t);
        let name = format!("gb_al{k}");
        if l.v > 1 {
            let load = d.pack_load(&format!("in{k}"), st, l.v, "q", false);
            w.line(d.let_stmt(&d.pack_type(st, l.v), &name, &load));
        } else {
            let load = to_value(t, &format!("in{k}[q]"));
            w.line(d.let_stmt(d.value_type(t), &name, &load));
        }
    }
    w.hint(d.unroll(None));
    w.open(count_loop(d, "c", g));
    w.line(d.let_stmt(ll, "o", "gb_o0 + c"));
    w.open(format!("if (o < {})", lit(l.outer)));
    for &(k, _) in &constant {
        let ty = d.value_type(plan.ir.inputs()[k].1);
        w.line(d.let_stmt(ty, &format!("gb_lc{k}"), &format!("gb_hc{k}[c]")));
    }
    let indexed = plan.needs_index();
    if l.v > 1 {
        if indexed {
            w.line(d.let_stmt(ll, "p", &format!("o * {} + q", lit(l.steps))));
        }
        plan.write_pack_loads(w, l.v);
        plan.write_pack_elements(w, l.v, Some(PackAcc::Shared("acc[c]")));
        plan.write_pack_stores(w, l.v);
    } else {
        if indexed {
            w.line(d.let_stmt(ll, "i", &format!("o * {} + q", lit(l.len))));
        }
        plan.write_element(w, Ctx::Scalar, Some("acc[c]"));
    }
    w.close();
    w.close();
    w.close();
    let stores = a.store_results(d, "red", "gb_o0 + c", "acc[c]", Count::Const(l.len));
    w.hint(d.unroll(None));
    w.open(count_loop(d, "c", g));
    w.open(format!("if (gb_o0 + c < {})", lit(l.outer)));
    if l.block {
        w.line(format!(
            "acc[c] = {};",
            super::reduce::block_reduce(d, "acc[c]")
        ));
        w.open(format!("if ({} == 0)", d.thread_idx));
    } else {
        w.line("acc[c] = gb_warp_reduce(acc[c]);");
        w.open("if (gb_lane == 0)");
    }
    w.lines(&stores);
    w.close();
    w.close();
    w.close();
    w.close();
}
