//! Split lanes: how an axis reduction whose lanes are too few to fill a
//! device cuts each lane into chunks reduced by separate threads, and the
//! code that combines them: within a block (block-shared slots, a tree
//! over the chunks) or by a second pass, `gb_finish`.

use super::axis::{block_min_len, pack_width};
use super::dialect::Dialect;
use super::kernels::{count_loop, Emitter};
use super::lanes::lane_access;
use super::reduce::{Accum, Count};
use super::writer::Writer;

/// The shortest chunk a split lane gets: the partials written and read
/// again stay below 1/32 of the values read (f64 partials of f32 values).
pub(crate) const SPLIT_MIN_CHUNK: usize = 64;

/// The most chunks of a strided lane one block combines itself (through
/// block-shared memory, no second pass): the chunks of
/// `BLOCK_SIZE / chunks` adjacent work items share a block.
pub(crate) const MAX_BLOCK_CHUNKS: usize = 32;
/// The shortest chunk of a lane split within a block (its partials never
/// leave the block, so shorter than [`SPLIT_MIN_CHUNK`]).
pub(crate) const BLOCK_MIN_CHUNK: usize = 8;

/// How the strided lanes (`inner > 1`) of an axis reduction of `shape`
/// along `axis` split to keep `target` threads busy
/// ([`super::Tuning::lane_threads`]): `(chunks, block_chunks)`, the
/// chunks combined by `gb_finish` (1: none) and those combined within the
/// block (1: none); at most one is above 1. There are `(inner / v) *
/// outer` work items of `v` lanes each, `v` the vector width `full` when
/// it divides `inner`. Lanes that need at most [`MAX_BLOCK_CHUNKS`]
/// chunks to fill the device take them (a power of two, at least
/// [`BLOCK_MIN_CHUNK`] long) within blocks: one launch, not two (the
/// 65536 lanes of a 256^3 array reduced along axis 1 or 2: f32 sums 0.047
/// -> 0.032 ms on an H200). Fewer items split into chunks of at least
/// [`SPLIT_MIN_CHUNK`] for `gb_finish`.
pub(crate) fn strided_split(
    shape: &gearbox_core::Shape,
    axis: usize,
    full: usize,
    target: usize,
) -> (usize, usize) {
    let (inner, len, outer) = shape.split_at_axis(axis);
    if inner <= 1 || inner * outer == 0 {
        return (1, 1);
    }
    let items = inner / pack_width(full, inner) * outer;
    let wanted = target.div_ceil(items);
    if wanted > MAX_BLOCK_CHUNKS {
        return (wanted.min(len / SPLIT_MIN_CHUNK).max(1), 1);
    }
    let mut c = wanted.next_power_of_two().min(MAX_BLOCK_CHUNKS);
    while c > 1 && len / c < BLOCK_MIN_CHUNK {
        c /= 2;
    }
    (1, c)
}

/// Split lanes at least this many, of at most
/// [`FINISH_THREAD_MAX_CHUNKS`] chunks each, are finished a thread per
/// lane (reading the partials of neighbouring lanes side by side), not a
/// block per lane: a block's tree for four partials cost more than the
/// main pass (the 65536 lanes of a 256^3 array reduced along axis 1 or 2,
/// before such lanes were split within blocks).
pub(crate) const FINISH_THREAD_MIN_LANES: usize = 1024;
/// See [`FINISH_THREAD_MIN_LANES`]: a thread combines its lane's chunks
/// one after the other, so only a few.
pub(crate) const FINISH_THREAD_MAX_CHUNKS: usize = 16;

/// How `gb_finish` maps its threads onto the lanes' chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FinishMapping {
    /// A thread per lane walks its chunks in order.
    ThreadPerLane,
    /// A block per [`FINISH_TILE_LANES`] adjacent lanes: each lane's
    /// chunks in [`FINISH_TILE_GROUPS`] consecutive runs, a thread each
    /// (the tile's threads read adjacent partials), then the runs in order.
    TileOfLanes,
    /// A block per lane, its threads taking every `blockDim`-th chunk.
    BlockPerLane,
}

/// Adjacent lanes one block of a [`FinishMapping::TileOfLanes`] finish
/// combines.
pub(crate) const FINISH_TILE_LANES: usize = 32;
/// Runs of chunks each lane of a tile splits into, a thread each.
pub(crate) const FINISH_TILE_GROUPS: usize = super::FINISH_BLOCK_SIZE as usize / FINISH_TILE_LANES;
/// Lanes from which chunks beyond [`FINISH_THREAD_MAX_CHUNKS`] are
/// finished by tiles of lanes, not a block per lane: a block per lane
/// reads its partials `lanes` apart, a sector per value (6000 lanes of 87
/// chunks, f32 sums along the rows of a 6000^2 matrix on an H200: 10.2 µs
/// beside the main pass's 36.5).
pub(crate) const FINISH_TILE_MIN_LANES: usize = 2048;

/// How `gb_finish` of `lanes` lanes split in `chunks` chunks maps its
/// threads.
pub(crate) fn finish_mapping(lanes: usize, chunks: usize) -> FinishMapping {
    if lanes >= FINISH_THREAD_MIN_LANES && chunks <= FINISH_THREAD_MAX_CHUNKS {
        FinishMapping::ThreadPerLane
    } else if lanes >= FINISH_TILE_MIN_LANES {
        FinishMapping::TileOfLanes
    } else {
        FinishMapping::BlockPerLane
    }
}

/// The blocks `gb_finish` of `lanes` lanes split in `chunks` chunks needs
/// to cover them (a grid-stride loop takes any fewer).
pub(crate) fn finish_blocks(lanes: usize, chunks: usize) -> usize {
    match finish_mapping(lanes, chunks) {
        FinishMapping::ThreadPerLane => lanes.div_ceil(super::FINISH_BLOCK_SIZE as usize),
        FinishMapping::TileOfLanes => lanes.div_ceil(FINISH_TILE_LANES),
        FinishMapping::BlockPerLane => lanes,
    }
}

/// Blocks a reduction of few long contiguous lanes aims for: fewer lanes
/// than this split into chunks, a block each.
pub(crate) const SPLIT_TARGET_BLOCKS: usize = 1024;
/// The shortest chunk of a split contiguous lane.
pub(crate) const SPLIT_MIN_BLOCK_CHUNK: usize = 8192;

/// The chunks each of `outer` contiguous lanes of `len` values is split
/// into (1: not split): only lanes a block each reduces, too few to give
/// [`SPLIT_TARGET_BLOCKS`] blocks, and only where no input is read by
/// lane (the grouped path of [`super::lanes`] does not split).
pub(crate) fn contiguous_chunks(plan: &Emitter<'_>, axis: usize) -> usize {
    let (inner, len, outer) = plan.ir.shape().split_at_axis(axis);
    let access = lane_access(&plan.classes, plan.ir.inputs(), &plan.used, axis);
    if inner != 1
        || outer == 0
        || len < block_min_len(plan, outer)
        || access.iter().any(Option::is_some)
    {
        return 1;
    }
    SPLIT_TARGET_BLOCKS
        .div_ceil(outer)
        .min(len / SPLIT_MIN_BLOCK_CHUNK)
        .max(1)
}

/// The name of the block-shared slots of lanes split within a block.
pub(crate) const BLOCK_CHUNK_SLOTS: &str = "gb_part";

/// The declaration of the block-shared slots of `plan`'s lanes split
/// within a block (an accumulator per thread of a block of at most
/// `BLOCK_SIZE` and per pack value, value-major), if they are.
pub(crate) fn block_chunk_slots(plan: &Emitter<'_>) -> Option<String> {
    let (Some(a), Some(axis)) = (plan.accum, plan.ir.reduce().and_then(|r| r.axis)) else {
        return None;
    };
    if plan.block_chunks <= 1 {
        return None;
    }
    let v = pack_width(plan.full_width(), plan.ir.shape().split_at_axis(axis).0);
    let slots = super::BLOCK_SIZE as usize * v;
    Some(plan.d.shared_array(a.ty(plan.d), BLOCK_CHUNK_SLOTS, slots))
}

/// Opens the block-uniform loop over groups of `gb_per = blockDim /
/// chunks` work items (of `items`) whose `chunks` chunks a block's threads
/// take, thread `t` chunk `t / gb_per` of item `t % gb_per`, and defines
/// `gb_item` and `gb_c` (barriers inside are reached by the whole block;
/// blocks of at most `BLOCK_SIZE` threads, a multiple of `chunks`).
pub(crate) fn open_block_items(w: &mut Writer, d: &dyn Dialect, items: usize, chunks: usize) {
    let ll = d.index_type;
    let lit = |v: usize| d.index_lit(v as u64);
    let per = format!("{} / {}", d.cast(ll, d.block_dim), lit(chunks));
    w.line(d.let_stmt(ll, "gb_per", &per));
    w.open(d.for_head(
        Some((ll, "gb_b", &format!("{} * gb_per", d.cast(ll, d.block_idx)))),
        &format!("gb_b < {}", lit(items)),
        &format!("gb_b += {} * gb_per", d.cast(ll, d.grid_dim)),
    ));
    w.line(format!(
        "// Each lane in {chunks} chunks, gb_per work items a block: thread t takes chunk t / gb_per of item t % gb_per."
    ));
    let t = d.cast(ll, d.thread_idx);
    w.line(d.let_stmt(ll, "gb_item", &format!("gb_b + {t} % gb_per")));
    w.line(d.let_stmt(ll, "gb_c", &format!("{t} / gb_per")));
}

/// Leaves each thread's accumulators (`acc`, or `acc[j]` for `v` pack
/// values) in the block's slots and combines each item's chunks by a tree
/// (chunk `c` takes chunk `c + s` for `s` = chunks / 2, ..., 1: a fixed
/// order, deterministic), leaving open the block of chunk 0's threads,
/// which hold their lanes' results.
pub(crate) fn write_block_chunks(
    w: &mut Writer,
    d: &dyn Dialect,
    (v, chunks): (usize, usize),
    items: usize,
) {
    let ll = d.index_type;
    let t = d.cast(ll, d.thread_idx);
    let slots = BLOCK_CHUNK_SLOTS;
    let lit = |v: usize| d.index_lit(v as u64);
    let acc = if v > 1 { "acc[j]" } else { "acc" };
    // Value-major slots (pack value `j` of every thread side by side):
    // thread-major ones put a warp's threads `v` slots apart, a `v`-way
    // bank conflict on every access (bool `any` along axis 1 of a 256^3
    // array: 16 values a pack, 16-way).
    let slot = |base: &str| {
        if v > 1 {
            format!("j * {} + {base}", lit(super::BLOCK_SIZE as usize))
        } else {
            base.to_string()
        }
    };
    let each = |w: &mut Writer, lines: String| {
        if v > 1 {
            w.hint(d.unroll(None));
            w.open(count_loop(d, "j", v));
            w.lines(&lines);
            w.close();
        } else {
            w.lines(&lines);
        }
    };
    each(w, format!("{slots}[{}] = {acc};", slot(&t)));
    w.line(format!("{};", d.barrier));
    w.open(d.for_head(
        Some((ll, "gb_s", &lit(chunks / 2))),
        &format!("gb_s > {}", lit(0)),
        "gb_s >>= 1",
    ));
    w.open("if (gb_c < gb_s)");
    let other = slot(&format!("{t} + gb_s * gb_per"));
    each(
        w,
        format!(
            "{acc} = gb_combine({acc}, {slots}[{other}]);\n{slots}[{}] = {acc};",
            slot(&t)
        ),
    );
    w.close();
    w.line(format!("{};", d.barrier));
    w.close();
    w.open(format!("if (gb_c == 0 && gb_item < {})", lit(items)));
}

/// `gb_finish` of a split axis reduction: `gb_finish(partials, result,
/// num_partials, n)` with `n` the lanes and `num_partials` the chunks per
/// lane; a block per lane (grid-stride), its threads combining every
/// `blockDim`-th chunk and the block tree combining theirs (a fixed order:
/// deterministic; a thread per lane would walk thousands of chunks one
/// dependent load at a time).
pub(crate) fn write_split_finish(plan: &mut Emitter<'_>, w: &mut Writer, a: Accum, len: usize) {
    let d = plan.d;
    let ll = d.index_type;
    let lanes = plan.ir.reduced_shape().map_or(1, |s| s.numel());
    w.line("");
    let mapping = finish_mapping(lanes, plan.chunks);
    if mapping == FinishMapping::TileOfLanes {
        write_tile_finish(plan, w, a, len);
        return;
    }
    if mapping == FinishMapping::ThreadPerLane {
        w.line("// Second pass: a thread per lane combines the lane's chunks in order.");
        plan.open_kernel(w, "gb_finish", &super::kernels::finish_params(d, a));
        plan.write_grid_ids(w);
        w.open(d.for_head(Some((ll, "l", "gb_tid")), "l < n", "l += gb_stride"));
        w.line(d.var_stmt(a.ty(d), "acc", Some(&a.identity(d))));
        w.open(d.for_head(Some((ll, "c", "0")), "c < num_partials", &d.increment("c")));
        w.line("acc = gb_combine(acc, partials[c * n + l]);");
        w.close();
        w.lines(&a.store_results(d, "result", "l", "acc", Count::Const(len)));
        w.close();
        w.close();
        return;
    }
    w.line("// Second pass: a block per lane combines the lane's chunks.");
    plan.open_kernel(w, "gb_finish", &super::kernels::finish_params(d, a));
    let (lane0, lane_step) = (d.cast(ll, d.block_idx), d.cast(ll, d.grid_dim));
    w.open(d.for_head(
        Some((ll, "l", &lane0)),
        "l < n",
        &format!("l += {lane_step}"),
    ));
    w.line(d.var_stmt(a.ty(d), "acc", Some(&a.identity(d))));
    w.open(d.for_head(
        Some((ll, "c", &d.cast(ll, d.thread_idx))),
        "c < num_partials",
        &format!("c += {}", d.cast(ll, d.block_dim)),
    ));
    w.line("acc = gb_combine(acc, partials[c * n + l]);");
    w.close();
    w.line(format!("acc = {};", super::reduce::block_reduce(d, "acc")));
    w.open(format!("if ({} == 0)", d.thread_idx));
    w.lines(&a.store_results(d, "result", "l", "acc", Count::Const(len)));
    w.close();
    w.close();
    w.close();
}

/// `gb_finish` by tiles of [`FINISH_TILE_LANES`] adjacent lanes
/// ([`FinishMapping::TileOfLanes`]): thread `t` of a block takes run
/// `t / FINISH_TILE_LANES` of the chunks of lane `t % FINISH_TILE_LANES`
/// of the tile, the runs meet in block-shared slots, and the first run's
/// thread combines them in order: the chunks combine in their own order,
/// as one thread walking them would.
fn write_tile_finish(plan: &mut Emitter<'_>, w: &mut Writer, a: Accum, len: usize) {
    let d = plan.d;
    let ll = d.index_type;
    let lit = |v: usize| d.index_lit(v as u64);
    let (tile, groups) = (FINISH_TILE_LANES, FINISH_TILE_GROUPS);
    let slots = d.shared_array(a.ty(d), "gb_fin", super::FINISH_BLOCK_SIZE as usize);
    w.line(format!(
        "// Second pass: a block per {tile} adjacent lanes, each lane's chunks in {groups} runs, a thread each."
    ));
    if d.shared_at_module_scope() {
        w.line(&slots);
    }
    plan.open_kernel(w, "gb_finish", &super::kernels::finish_params(d, a));
    if !d.shared_at_module_scope() {
        w.line(&slots);
    }
    let t = d.cast(ll, d.thread_idx);
    w.line(d.let_stmt(ll, "gb_t", &t));
    w.line(d.let_stmt(ll, "gb_lo", &format!("gb_t % {}", lit(tile))));
    w.line(d.let_stmt(ll, "gb_g", &format!("gb_t / {}", lit(tile))));
    let run = format!("(num_partials + {}) / {}", lit(groups - 1), lit(groups));
    w.line(d.let_stmt(ll, "gb_run", &run));
    w.line(d.let_stmt(ll, "gb_c0", "gb_g * gb_run"));
    let end = d.select(
        "gb_c0 + gb_run < num_partials",
        "gb_c0 + gb_run",
        "num_partials",
    );
    w.line(d.let_stmt(ll, "gb_c1", &end));
    w.open(d.for_head(
        Some((
            ll,
            "gb_l0",
            &format!("{} * {}", d.cast(ll, d.block_idx), lit(tile)),
        )),
        "gb_l0 < n",
        &format!("gb_l0 += {} * {}", d.cast(ll, d.grid_dim), lit(tile)),
    ));
    w.line(d.let_stmt(ll, "l", "gb_l0 + gb_lo"));
    w.line(d.var_stmt(a.ty(d), "acc", Some(&a.identity(d))));
    w.open("if (l < n)");
    w.open(d.for_head(Some((ll, "c", "gb_c0")), "c < gb_c1", &d.increment("c")));
    w.line("acc = gb_combine(acc, partials[c * n + l]);");
    w.close();
    w.close();
    w.line("gb_fin[gb_t] = acc;");
    w.line(format!("{};", d.barrier));
    w.open("if (gb_g == 0 && l < n)");
    w.open(d.for_head(
        Some((ll, "gb_r", &lit(1))),
        &format!("gb_r < {}", lit(groups)),
        &d.increment("gb_r"),
    ));
    w.line(format!(
        "acc = gb_combine(acc, gb_fin[gb_r * {} + gb_lo]);",
        lit(tile)
    ));
    w.close();
    w.lines(&a.store_results(d, "result", "l", "acc", Count::Const(len)));
    w.close();
    w.line("// Lets the block reuse its slots for its next tile.");
    w.line(format!("{};", d.barrier));
    w.close();
    w.close();
}
