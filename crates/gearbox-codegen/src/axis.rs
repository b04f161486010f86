//! Reductions along one axis: every lane `(i, o)` of the split
//! `(inner, len, outer)` reduces `len` elements `i + k * inner + o * inner * len`
//! into `red[i + o * inner]`. Full-size outputs of the same pass are stored
//! as their elements are computed.

use gearbox_core::DType;

use super::compound::Compound;
use super::dialect::Dialect;
use super::kernels::{count_loop, Ctx, Emitter, LanePosition};
use super::lanes::{lane_access, write_grouped_lanes, LaneAccess, Lanes};
use super::packs::PackAcc;
use super::reduce::{Accum, Count};
use super::split;
use super::writer::Writer;
use super::Mapping;

/// The pack width of a walk over runs of `n` adjacent values: the vector
/// width `full` when it divides `n` (every run then starts on a pack),
/// else 1.
pub(crate) fn pack_width(full: usize, n: usize) -> usize {
    if full > 1 && n.is_multiple_of(full) {
        full
    } else {
        1
    }
}

/// The longest contiguous lanes whose moments a warp folds by pack
/// ([`super::Tuning::fold_moments`]): an H200 ran `var` along 256-value
/// lanes of a 256^3 array 0.062 -> 0.049 ms folded (f32; f64 0.070 ->
/// 0.053) but along 6000-value lanes 0.077 -> 0.085 (f64 0.099 -> 0.132).
pub(crate) const FOLD_WARP_MAX_LEN: usize = 1024;

/// Contiguous lanes shorter than this get one thread each.
pub(crate) const WARP_MIN_LEN: usize = 64;
/// In dialects without shuffles (no warp per lane), contiguous lanes
/// shorter than this get a thread each when there are at least
/// [`NO_SHUFFLE_THREAD_LANES`] of them (enough threads to fill a device).
pub(crate) const NO_SHUFFLE_THREAD_LEN: usize = 1024;
/// See [`NO_SHUFFLE_THREAD_LEN`].
pub(crate) const NO_SHUFFLE_THREAD_LANES: usize = 1 << 15;
/// Contiguous lanes at least this long get one block each (shorter: a warp).
pub(crate) const BLOCK_MIN_LEN: usize = 4096;

/// The shortest contiguous lane of this kernel's reduction that gets a
/// block (shorter: a warp), with `outer` lanes: [`BLOCK_MIN_LEN`], or the
/// tuning's `compound_block_len` for an accumulator of several values
/// when the lanes are many enough to fill a device a warp each (its
/// block-wide tree costs more than a sum's) and the kernel does not walk
/// its lanes again (an epilogue).
///
/// The lengths count values of 4 bytes or more; lanes of narrower values
/// (bools: packs of 16) need proportionally more of them to give a block's
/// threads as many packs each (a block per 6000-bool lane left its threads
/// one or two packs and ran at a third of copy bandwidth).
pub(crate) fn block_min_len(plan: &Emitter<'_>, outer: usize) -> usize {
    let len = match plan.accum {
        // A lane walked again after its reduction stays in one SM's
        // cache only with a block on it (a warp per lane of 6000 values
        // read each lane again from memory: docs/perf/ops.md).
        _ if plan.rewalks_lanes => BLOCK_MIN_LEN,
        Some(a) if a.compound.is_some() && outer >= split::SPLIT_TARGET_BLOCKS => {
            plan.tuning.compound_block_len.max(BLOCK_MIN_LEN)
        }
        _ => BLOCK_MIN_LEN,
    };
    len * plan.full_width().max(4) / 4
}

/// What reduces one contiguous lane.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Thread,
    /// A group of this many (a power of two below the warp size) of a
    /// warp's threads: short lanes walked again after their reduction
    /// (an epilogue), each thread keeping a pack or two in its cache.
    Group(usize),
    Warp,
    Block,
}

impl Unit {
    /// The unit's first thread within its warp (an int expression; `0`
    /// for a warp, and for a thread or a block, which need none).
    pub(crate) fn leader(self) -> String {
        match self {
            Unit::Group(g) => format!("gb_sub * {g}"),
            _ => "0".to_string(),
        }
    }
}

/// The unit that reduces each of `outer` contiguous lanes of `len`
/// values: a thread for short lanes (or, without shuffles, for many
/// middle ones), a warp for middle ones, a block for long ones.
pub(crate) fn lane_unit(plan: &Emitter<'_>, len: usize, outer: usize) -> Unit {
    let d = plan.d;
    // A product of f64 values costs per value what a sum does (a
    // multiplication and a range test, `gb_mul`), and a warp per 64-value
    // lane ran it 2x faster than a thread (H200: 0.35 -> 0.18 ms); f32
    // products fold their packs and stay with a thread (0.15 against 0.18).
    let thread_len = match plan.accum {
        Some(a) if a.compound == Some(Compound::Scaled) && a.input == DType::F64 => WARP_MIN_LEN,
        Some(a) if a.compound.is_some() => plan.tuning.compound_thread_len.max(WARP_MIN_LEN),
        _ => WARP_MIN_LEN,
    };
    let block_len = block_min_len(plan, outer);
    // Without shuffles a lane between a thread's and a block's length
    // would get a block of mostly idle threads: many such lanes take a
    // thread each instead.
    let no_warp =
        !d.has_shuffles() && len < NO_SHUFFLE_THREAD_LEN && outer >= NO_SHUFFLE_THREAD_LANES;
    if plan.rewalks_lanes && len < block_len && d.has_shuffles() {
        // About two packs a thread: the lanes of a warp's groups stay in
        // its SM's cache for the second walk. A log-sum-exp holds its
        // lanes (`held`): four packs a thread spread the thread's own
        // exps, tree and log over more values.
        let v = pack_width(plan.full_width(), len);
        let ws = d.warp_size as usize;
        let lse = plan
            .accum
            .is_some_and(|a| a.compound == Some(Compound::LogSumExp));
        let per_thread = if lse { plan.tuning.held_packs } else { 2 };
        return match (len / v)
            .div_ceil(per_thread)
            .next_power_of_two()
            .clamp(2, ws)
        {
            g if g == ws => Unit::Warp,
            g => Unit::Group(g),
        };
    }
    if len < thread_len.min(block_len) || no_warp {
        Unit::Thread
    } else if len < block_len && d.has_shuffles() {
        Unit::Warp
    } else {
        Unit::Block
    }
}

/// Writes `gb_main` of an axis reduction; returns its vector width and
/// thread mapping.
pub(crate) fn write_axis_reduce(plan: &mut Emitter<'_>, w: &mut Writer) -> (usize, Mapping) {
    let (Some(r), Some(a)) = (plan.ir.reduce().copied(), plan.accum) else {
        return (1, Mapping::Elements);
    };
    let axis = r.axis.unwrap_or(0);
    let (inner, len, outer) = plan.ir.shape().split_at_axis(axis);
    let params = plan.main_params();
    plan.open_kernel(w, "gb_main", &params);
    w.line(format!(
        "// Axis {axis}: inner {inner}, len {len}, outer {outer}; red[i + o * {inner}] reduces elements i + k * {inner} + o * {}.",
        inner * len
    ));
    if inner * outer == 0 {
        w.line("// No lanes: nothing to do.");
        w.close();
        return (1, Mapping::ThreadPerLane { items: 0 });
    }
    // Blocks walking lanes (or items) by their own index need no grid ids.
    let by_block = (inner == 1 && len >= block_min_len(plan, outer)) || plan.block_chunks > 1;
    plan.write_prologue(w, !by_block);
    let lanes = Split {
        axis,
        inner,
        len,
        outer,
    };
    if inner == 1 {
        contiguous_lanes(plan, w, a, lanes)
    } else {
        strided_lanes(plan, w, a, lanes)
    }
}

/// The split of the iteration shape around the reduced axis.
#[derive(Clone, Copy)]
struct Split {
    axis: usize,
    inner: usize,
    len: usize,
    outer: usize,
}

/// What both lane layouts write with.
struct Locals {
    /// The index type.
    ll: &'static str,
    /// The vector width of the full-size buffers.
    full: usize,
    /// The accumulator's type and identity.
    acc_ty: &'static str,
    ident: String,
}

impl Locals {
    fn of(plan: &Emitter<'_>, a: Accum) -> Locals {
        let d = plan.d;
        Locals {
            ll: d.index_type,
            full: plan.full_width(),
            acc_ty: a.ty(d),
            ident: a.identity(d),
        }
    }
}

/// Contiguous lanes (`inner == 1`): lane `o` is elements `o * len ..
/// o * len + len`, reduced by a thread, a warp or a block by length.
fn contiguous_lanes(
    plan: &mut Emitter<'_>,
    w: &mut Writer,
    a: Accum,
    s: Split,
) -> (usize, Mapping) {
    let Split {
        axis, len, outer, ..
    } = s;
    let d = plan.d;
    let lit = |v: usize| d.index_lit(v as u64);
    let Locals {
        ll,
        full,
        acc_ty,
        ident,
    } = Locals::of(plan, a);
    // Contiguous lanes: lane o is elements o * len .. o * len + len.
    let unit = lane_unit(plan, len, outer);
    if unit == Unit::Warp && len > FOLD_WARP_MAX_LEN {
        plan.tuning.fold_moments = false;
    }
    // Lane starts are aligned to packs only when len is a multiple of V.
    let v = pack_width(full, len);
    let steps = len / v;
    // Every loop below has its lane `o` in scope.
    plan.position = LanePosition::LaneStart;
    let (lane0, lane_step, q0, q_step) = unit_indices(w, d, unit);
    if matches!(unit, Unit::Warp | Unit::Block) {
        let access = lane_access(&plan.classes, plan.ir.inputs(), &plan.used, axis);
        if access.iter().any(Option::is_some) {
            let along = access.contains(&Some(LaneAccess::AlongLane));
            plan.lane = access;
            // Grouping pays only when something is shared by the group,
            // and only with a warp per group: lanes of a block are long
            // and few, and grouping them leaves too few blocks to fill
            // a large GPU (measured in docs/perf/cuda.md).
            let group = if along && unit == Unit::Warp {
                plan.tuning.axis_group
            } else {
                1
            };
            write_grouped_lanes(
                plan,
                w,
                &Lanes {
                    outer,
                    len,
                    v,
                    steps,
                    group,
                    lane0: &lane0,
                    lane_step: &lane_step,
                    q0: &q0,
                    q_step: &q_step,
                    block: unit == Unit::Block,
                },
            );
            w.close();
            let lanes = outer.div_ceil(group);
            let mapping = if unit == Unit::Block {
                Mapping::BlockPerLane { lanes }
            } else {
                Mapping::WarpPerLane { lanes }
            };
            return (v, mapping);
        }
    }
    let chunks = plan.chunks;
    let held = super::held::held_lane(plan, unit, (v, steps));
    // A split lane: block u takes chunk u / outer of lane u % outer, packs
    // gb_qa .. gb_qb.
    let (q0, q_end) = if chunks > 1 {
        let chunk = steps.div_ceil(chunks);
        w.line(format!(
            "// Lanes split in {chunks} chunks of {chunk} packs, a block each."
        ));
        w.open(d.for_head(
            Some((ll, "gb_u", &lane0)),
            &format!("gb_u < {}", lit(outer * chunks)),
            &format!("gb_u += {lane_step}"),
        ));
        w.line(d.let_stmt(ll, "o", &format!("gb_u % {}", lit(outer))));
        w.line(d.let_stmt(ll, "gb_c", &format!("gb_u / {}", lit(outer))));
        w.line(d.let_stmt(ll, "gb_qa", &format!("gb_c * {}", lit(chunk))));
        let end = d.select(
            &format!("gb_qa + {} < {}", lit(chunk), lit(steps)),
            &format!("gb_qa + {}", lit(chunk)),
            &lit(steps),
        );
        w.line(d.let_stmt(ll, "gb_qb", &end));
        (format!("gb_qa + {q0}"), "gb_qb".to_string())
    } else if let Unit::Group(_) = unit {
        // Whole warps go round the loop together (their shuffles need
        // every thread); a group past the last lane walks nothing.
        w.open(d.for_head(
            Some((ll, "gb_o0", &lane0)),
            &format!("gb_o0 < {}", lit(outer)),
            &format!("gb_o0 += {lane_step}"),
        ));
        w.line(d.let_stmt(ll, "o", "gb_o0 + gb_sub"));
        let start = d.select(&format!("o < {}", lit(outer)), &q0, &lit(steps));
        (format!("({start})"), lit(steps))
    } else {
        w.open(d.for_head(
            Some((ll, "o", &lane0)),
            &format!("o < {}", lit(outer)),
            &format!("o += {lane_step}"),
        ));
        (q0, lit(steps))
    };
    if let Some(h) = held {
        // A group past the last lane walks nothing (its warp still
        // shuffles); a warp's lane always exists.
        let live = match unit {
            Unit::Group(_) => format!("o < {}", lit(outer)),
            _ => "true".to_string(),
        };
        plan.write_held_lane(w, a, h, &live);
        w.close();
        w.close();
        return (v, unit_mapping(d, unit, outer, chunks));
    }
    w.line(d.var_stmt(acc_ty, "acc", Some(&ident)));
    // Warps and groups share a lane's packs; a thread or a block's
    // threads walk long stretches alone.
    let packs = match unit {
        Unit::Thread | Unit::Block => plan.walk_packs(),
        Unit::Warp | Unit::Group(_) => plan.tuning.reduce_packs,
    };
    if v > 1 && packs > 1 {
        // Groups of packs in flight, then the rest one pack at a time
        // (the same summation order).
        w.line(d.var_stmt(ll, "q", Some(&q0)));
        w.open(d.for_head(
            None,
            &format!("q + {} * {q_step} < {q_end}", packs - 1),
            &format!("q += {packs} * {q_step}"),
        ));
        let base = format!("o * {} + q", lit(steps));
        plan.write_pack_group(w, v, packs, &base, &q_step, Some(PackAcc::Shared("acc")));
        w.close();
        w.open(d.for_head(None, &format!("q < {q_end}"), &format!("q += {q_step}")));
    } else {
        w.open(d.for_head(
            Some((ll, "q", &q0)),
            &format!("q < {q_end}"),
            &format!("q += {q_step}"),
        ));
    }
    if v > 1 {
        w.line(d.let_stmt(ll, "p", &format!("o * {} + q", lit(steps))));
        plan.write_pack_loads(w, v);
        plan.write_pack_elements(w, v, Some(PackAcc::Shared("acc")));
        plan.write_pack_stores(w, v);
    } else {
        w.line(d.let_stmt(ll, "i", &format!("o * {} + q", lit(len))));
        plan.write_element(w, Ctx::Scalar, Some("acc"));
    }
    w.close();
    // A chunk leaves its accumulator in the partials for gb_finish.
    let slot = if chunks > 1 {
        format!("gb_c * {} + o", lit(outer))
    } else {
        "o".to_string()
    };
    let stores = if chunks > 1 {
        format!("red[{slot}] = acc;")
    } else {
        a.store_results(d, "red", &slot, "acc", Count::Const(len))
    };
    match unit {
        Unit::Thread => w.lines(&stores),
        Unit::Group(g) => {
            a.write_shuffle_tree(w, d, "acc", g as u32, &unit.leader());
            w.open(format!("if (o < {} && gb_lane == 0)", lit(outer)));
            w.lines(&stores);
            w.close();
        }
        Unit::Warp => {
            w.line("acc = gb_warp_reduce(acc);");
            w.open("if (gb_lane == 0)");
            w.lines(&stores);
            w.close();
        }
        Unit::Block => {
            w.line(format!("acc = {};", super::reduce::block_reduce(d, "acc")));
            w.open(format!("if ({} == 0)", d.thread_idx));
            w.lines(&stores);
            w.close();
        }
    }
    let walk = super::epilogue::LaneWalk {
        unit,
        len,
        q0: &q0,
        q_step: &q_step,
    };
    super::epilogue::write_lane_epilogue(plan, w, a, &walk);
    w.close();
    w.close();
    if chunks > 1 {
        split::write_split_finish(plan, w, a, len);
    }
    (v, unit_mapping(d, unit, outer, chunks))
}

/// How threads map to `outer` lanes (each in `chunks` chunks) that `unit`
/// reduces.
fn unit_mapping(d: &dyn Dialect, unit: Unit, outer: usize, chunks: usize) -> Mapping {
    match unit {
        Unit::Thread => Mapping::ThreadPerLane { items: outer },
        Unit::Group(g) => Mapping::WarpPerLane {
            lanes: outer.div_ceil(d.warp_size as usize / g),
        },
        Unit::Warp => Mapping::WarpPerLane { lanes: outer },
        Unit::Block => Mapping::BlockPerLane {
            lanes: outer * chunks,
        },
    }
}

/// Writes the indices a unit of `unit` walks lanes by, and returns them:
/// the first lane, the lane step, the first in-lane position and its step.
fn unit_indices(w: &mut Writer, d: &dyn Dialect, unit: Unit) -> (String, String, String, String) {
    let ws = d.warp_size;
    let ll = d.index_type;
    match unit {
        Unit::Thread => (
            "gb_tid".to_string(),
            "gb_stride".to_string(),
            "0".to_string(),
            "1".to_string(),
        ),
        Unit::Warp => {
            w.line(d.let_stmt(ll, "gb_warp", &format!("gb_tid / {ws}")));
            w.line(d.let_stmt(ll, "gb_warps", &format!("gb_stride / {ws}")));
            let lane = d.cast(d.int_type, &format!("({} % {ws})", d.thread_idx));
            w.line(d.let_stmt(d.int_type, "gb_lane", &lane));
            (
                "gb_warp".into(),
                "gb_warps".into(),
                "gb_lane".into(),
                ws.to_string(),
            )
        }
        Unit::Group(g) => {
            let per_warp = ws as usize / g;
            w.line(d.let_stmt(ll, "gb_warp", &format!("gb_tid / {ws}")));
            w.line(d.let_stmt(ll, "gb_warps", &format!("gb_stride / {ws}")));
            let in_warp = format!("({} % {ws})", d.thread_idx);
            let sub = d.cast(d.int_type, &format!("({in_warp} / {g})"));
            w.line(d.let_stmt(d.int_type, "gb_sub", &sub));
            let lane = d.cast(d.int_type, &format!("({in_warp} % {g})"));
            w.line(d.let_stmt(d.int_type, "gb_lane", &lane));
            (
                format!("gb_warp * {per_warp}"),
                format!("gb_warps * {per_warp}"),
                "gb_lane".into(),
                g.to_string(),
            )
        }
        Unit::Block => (
            d.cast(ll, d.block_idx),
            d.cast(ll, d.grid_dim),
            d.cast(ll, d.thread_idx),
            d.cast(ll, d.block_dim),
        ),
    }
}

/// Strided lanes (`inner > 1`): one thread per `v` adjacent lanes, so that
/// consecutive threads read consecutive addresses.
fn strided_lanes(plan: &mut Emitter<'_>, w: &mut Writer, a: Accum, s: Split) -> (usize, Mapping) {
    let Split {
        inner, len, outer, ..
    } = s;
    let d = plan.d;
    let lit = |v: usize| d.index_lit(v as u64);
    let Locals {
        ll,
        full,
        acc_ty,
        ident,
    } = Locals::of(plan, a);
    let v = pack_width(full, inner);
    let per_slab = inner / v;
    let items = per_slab * outer;
    let in_block = plan.block_chunks > 1;
    let chunks = plan.chunks.max(plan.block_chunks);
    let chunk = len.div_ceil(chunks);
    // The loop below walks each lane by its step `k`.
    plan.position = LanePosition::Step;
    if in_block {
        split::open_block_items(w, d, items, chunks);
    } else {
        w.open(d.for_head(
            Some((ll, "t", "gb_tid")),
            &format!("t < {}", lit(items * chunks)),
            "t += gb_stride",
        ));
        if chunks > 1 {
            w.line(format!(
                "// Lanes split in {chunks} chunks of {chunk}: work item t % {items}, chunk t / {items}."
            ));
            w.line(d.let_stmt(ll, "gb_item", &format!("t % {}", lit(items))));
            w.line(d.let_stmt(ll, "gb_c", &format!("t / {}", lit(items))));
        } else {
            w.line(d.let_stmt(ll, "gb_item", "t"));
        }
    }
    if outer == 1 {
        w.line(d.let_stmt(ll, "gb_g", "gb_item"));
        w.line(d.let_stmt(ll, "o", "0"));
    } else {
        w.line(d.let_stmt(ll, "gb_g", &format!("gb_item % {}", lit(per_slab))));
        w.line(d.let_stmt(ll, "o", &format!("gb_item / {}", lit(per_slab))));
    }
    if v > 1 {
        w.line(d.array_stmt(acc_ty, "acc", v));
        w.hint(d.unroll(None));
        w.open(count_loop(d, "j", v));
        w.line(format!("acc[j] = {ident};"));
        w.close();
    } else {
        w.line(d.var_stmt(acc_ty, "acc", Some(&ident)));
    }
    let (k0, k1) = if chunks > 1 {
        let start = format!("gb_c * {}", lit(chunk));
        let mut end = d.select(
            &format!("{start} + {} < {}", lit(chunk), lit(len)),
            &format!("{start} + {}", lit(chunk)),
            &lit(len),
        );
        if in_block {
            // The block's items past the last walk no lane.
            end = d.select(&format!("gb_item < {}", lit(items)), &end, &start);
        }
        w.line(d.let_stmt(ll, "gb_k1", &end));
        (start, "gb_k1".to_string())
    } else {
        ("0".to_string(), lit(len))
    };
    let packs = plan.tuning.strided_packs;
    if v > 1 && packs > 1 {
        // Groups of steps in flight, then the rest one step at a time (the
        // same order along every lane).
        w.line(d.var_stmt(ll, "k", Some(&k0)));
        w.open(d.for_head(
            None,
            &format!("k + {} < {k1}", packs - 1),
            &format!("k += {packs}"),
        ));
        let base = format!(
            "gb_g + k * {} + o * {}",
            lit(inner / v),
            lit(inner * len / v)
        );
        plan.position = LanePosition::StepInGroup;
        let acc = Some(PackAcc::PerValue("acc[j]"));
        plan.write_pack_group(w, v, packs, &base, &lit(inner / v), acc);
        plan.position = LanePosition::Step;
        w.close();
        w.open(d.for_head(None, &format!("k < {k1}"), &d.increment("k")));
    } else {
        w.open(d.for_head(
            Some((ll, "k", &k0)),
            &format!("k < {k1}"),
            &d.increment("k"),
        ));
    }
    if v > 1 {
        let p = format!(
            "gb_g + k * {} + o * {}",
            lit(inner / v),
            lit(inner * len / v)
        );
        w.line(d.let_stmt(ll, "p", &p));
        plan.write_pack_loads(w, v);
        plan.write_pack_elements(w, v, Some(PackAcc::PerValue("acc[j]")));
        plan.write_pack_stores(w, v);
    } else {
        let i = format!("gb_g + k * {} + o * {}", lit(inner), lit(inner * len));
        w.line(d.let_stmt(ll, "i", &i));
        plan.write_element(w, Ctx::Scalar, Some("acc"));
    }
    w.close();
    if in_block {
        split::write_block_chunks(w, d, (v, chunks), items);
    }
    // A split lane's chunk leaves its accumulator in the partials (chunk
    // c of lane L at c * lanes + L) for gb_finish; else the result.
    let global = chunks > 1 && !in_block;
    let slot = if global {
        format!("gb_c * {} + ", lit(inner * outer))
    } else {
        String::new()
    };
    let stores = |acc: &str, index: String| {
        if global {
            format!("red[{slot}{index}] = {acc};")
        } else {
            a.store_results(d, "red", &index, acc, Count::Const(len))
        }
    };
    if v > 1 {
        w.hint(d.unroll(None));
        w.open(count_loop(d, "j", v));
        w.lines(&stores(
            "acc[j]",
            format!("gb_g * {v} + j + o * {}", lit(inner)),
        ));
        w.close();
    } else {
        w.lines(&stores("acc", format!("gb_g + o * {}", lit(inner))));
    }
    if in_block {
        w.close();
        w.line("// Lets the block reuse its slots for its next items.");
        w.line(format!("{};", d.barrier));
    }
    w.close();
    w.close();
    if global {
        split::write_split_finish(plan, w, a, len);
    }
    (
        v,
        Mapping::ThreadPerLane {
            items: items * chunks,
        },
    )
}
