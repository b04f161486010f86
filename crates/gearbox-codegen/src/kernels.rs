//! The shared structure of every kernel (the per-element body function, the
//! loads and stores around it, the vectorized grid-stride loop) and the
//! elementwise and full-reduction kernels.

use std::collections::BTreeSet;

use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::{DType, Error};

use super::dialect::{Dialect, KernelParam};
use super::expr::{node_expr, write_helper, Helper};
use super::lanes::LaneAccess;
use super::layout::{classify, live_nodes, used_inputs, vector_width, write_offset_fn, InputClass};
use super::packs::PackAcc;
use super::reduce::{Accum, Count};
use super::tuning::Tuning;
use super::writer::Writer;
use super::{axis, split, KernelKind, Mapping};

/// What [`render_kernel`] produces before hashing.
pub(crate) struct Kernel {
    pub kind: KernelKind,
    pub source: String,
    pub vector_width: usize,
    pub mapping: Mapping,
    pub partial_dtype: Option<DType>,
    pub partial_words: usize,
    pub chunks: usize,
    pub heavy: bool,
}

/// Everything the emitters need to know about one IR.
pub(crate) struct Emitter<'a> {
    pub ir: &'a KernelIr,
    pub d: &'a dyn Dialect,
    /// Elements of the iteration shape.
    pub n: usize,
    pub classes: Vec<InputClass>,
    pub live: Vec<bool>,
    pub used: Vec<bool>,
    pub accum: Option<Accum>,
    pub helpers: BTreeSet<Helper>,
    /// Code-shape knobs (packs in flight, cache hints).
    pub tuning: Tuning,
    /// Inputs a contiguous-lane reduction reaches by lane
    /// ([`super::lanes`]) rather than through their broadcast offset.
    pub lane: Vec<Option<LaneAccess>>,
    /// Chunks each lane of an axis reduction is split into
    /// ([`super::split::strided_split`]; 1: not split).
    pub chunks: usize,
    /// Chunks each strided lane of an axis reduction is split into and
    /// combined within its block ([`super::split::strided_split`]; 1: not
    /// split).
    pub block_chunks: usize,
    /// How the loop being written knows an element's position in its lane
    /// (for the arg reductions).
    pub position: LanePosition,
    /// The name of the per-element function this emitter writes and calls.
    pub body_name: &'static str,
    /// The emitter of the outputs written after each lane's reduction
    /// (an epilogue, [`super::epilogue`]), if the kernel has one.
    pub epilogue: Option<Box<Emitter<'a>>>,
    /// Whether each lane is walked again after its reduction (an
    /// epilogue): its mapping then keeps lanes in cache.
    pub rewalks_lanes: bool,
}

/// How an element's position in its lane is computed where the arg
/// reductions need it: from its flat index in general (a 64-bit division
/// and remainder per element), or from the loop's own indices where the
/// axis loops have them in scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LanePosition {
    /// `(flat / inner) % len`.
    FromFlat,
    /// Contiguous lanes with lane `o` in scope: `flat - o * len`.
    LaneStart,
    /// Strided lanes with the step `k` along the lane in scope: `k`.
    Step,
    /// Strided lanes in a group of packs at steps `k + u`: `k + u`.
    StepInGroup,
}

/// How an element is reached inside a loop.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ctx {
    /// Element `j` of the pack with index `p` (packs of `V` elements, loaded
    /// into `a{k}` and stored from `b{k}`).
    Packed(usize),
    /// The element with index `i`.
    Scalar,
}

impl<'a> Emitter<'a> {
    pub(crate) fn new(d: &'a dyn Dialect, ir: &'a KernelIr, tuning: Tuning) -> Emitter<'a> {
        let n = ir.shape().numel();
        let classes = ir
            .inputs()
            .iter()
            .map(|(s, _)| classify(s, ir.shape(), n))
            .collect();
        let live = live_nodes(ir);
        let used = used_inputs(ir, &live);
        let accum = ir.reduce().map(|r| Accum::new(d, ir, r));
        Emitter {
            ir,
            d,
            n,
            classes,
            live,
            used,
            accum,
            helpers: BTreeSet::new(),
            tuning,
            lane: vec![None; ir.inputs().len()],
            chunks: 1,
            block_chunks: 1,
            position: LanePosition::FromFlat,
            body_name: "gb_body",
            epilogue: None,
            rewalks_lanes: false,
        }
    }

    /// Indices of the inputs the kernel reads, with their class and dtype.
    pub(crate) fn read_inputs(&self) -> impl Iterator<Item = (usize, &InputClass, DType)> + '_ {
        (0..self.classes.len())
            .filter(|&k| self.used[k])
            .map(|k| (k, &self.classes[k], self.ir.inputs()[k].1))
    }

    /// Whether any read input is a broadcast (the loops then need `i`).
    pub(crate) fn has_broadcast(&self) -> bool {
        self.read_inputs()
            .any(|(k, c, _)| matches!(c, InputClass::Broadcast(_)) && self.lane[k].is_none())
    }

    /// Whether an element needs its index (`i`, or the pack index `p`):
    /// a full-size input, an output, or a broadcast reached by offset.
    pub(crate) fn needs_index(&self) -> bool {
        !self.ir.outputs().is_empty()
            || self.accum.is_some_and(|a| a.needs_position())
            || self.has_broadcast()
            || self.read_inputs().any(|(_, c, _)| *c == InputClass::Full)
    }

    /// 16-byte vector width over the full-size inputs read and the outputs.
    pub(crate) fn full_width(&self) -> usize {
        let inputs = self
            .read_inputs()
            .filter(|(_, c, _)| **c == InputClass::Full)
            .map(|(_, _, d)| d);
        let outputs = self.ir.outputs().iter().map(|&o| self.ir.nodes()[o].dtype);
        let sizes = inputs.chain(outputs).map(|t| self.d.storage_bytes(t));
        vector_width(self.d.pack_bytes(), sizes)
    }

    pub(crate) fn out_dtype(&self, m: usize) -> DType {
        self.ir.nodes()[self.ir.outputs()[m]].dtype
    }

    /// The `gb_main` parameter list.
    pub(crate) fn main_params(&self) -> Vec<KernelParam> {
        let d = self.d;
        let mut p: Vec<KernelParam> = self
            .ir
            .inputs()
            .iter()
            .enumerate()
            .map(|(k, (_, t))| KernelParam::input(d.storage_type(*t), format!("in{k}")))
            .collect();
        let writer = self.epilogue.as_deref().unwrap_or(self);
        for m in 0..writer.ir.outputs().len() {
            p.push(KernelParam::output(
                d.storage_type(writer.out_dtype(m)),
                format!("out{m}"),
            ));
        }
        if let (Some(a), Some(r)) = (self.accum, self.ir.reduce()) {
            match r.axis {
                // The results themselves.
                Some(_) if !self.single_lane() && self.chunks == 1 => {
                    p.extend(result_params(d, a, "red"))
                }
                // Partial accumulators, for gb_finish.
                _ => p.push(KernelParam::output(a.ty(d), "red")),
            }
        }
        p.push(KernelParam::Count("n".into()));
        p
    }

    /// Whether an axis reduction has one lane (rendered as a full reduction).
    pub(crate) fn single_lane(&self) -> bool {
        match self.ir.reduce().and_then(|r| r.axis) {
            Some(a) => {
                let (inner, _, outer) = self.ir.shape().split_at_axis(a);
                inner * outer == 1
            }
            None => false,
        }
    }

    /// Writes the kernel's head and opens its body.
    pub(crate) fn open_kernel(&self, w: &mut Writer, name: &str, params: &[KernelParam]) {
        for line in self.d.kernel_signature(name, params).lines() {
            w.line(line);
        }
        w.indent();
        if let Some(tree) = self
            .accum
            .and_then(|a| super::reduce::kernel_tree(self.d, a.ty(self.d)))
        {
            w.line(tree);
        }
        if !self.d.shared_at_module_scope() && name == "gb_main" {
            self.write_shared_slots(w);
        }
    }

    /// The block-shared slots `gb_main` needs beyond the block tree: an
    /// epilogue's broadcast slots, a block-split lane's partials.
    pub(crate) fn write_shared_slots(&self, w: &mut Writer) {
        let slots = super::epilogue::broadcast_slots(self);
        for slots in slots.into_iter().chain(split::block_chunk_slots(self)) {
            w.line(slots);
        }
    }

    /// `gb_tid` and `gb_stride` (when `grid_ids`) and the one-element
    /// inputs, at kernel start.
    pub(crate) fn write_prologue(&self, w: &mut Writer, grid_ids: bool) {
        let d = self.d;
        if grid_ids {
            self.write_grid_ids(w);
        }
        let epilogue_only = self
            .epilogue
            .iter()
            .flat_map(|e| e.read_inputs())
            .filter(|&(k, _, _)| k < self.used.len() && !self.used[k]);
        for (k, c, t) in self.read_inputs().chain(epilogue_only) {
            if *c == InputClass::Scalar {
                let value = to_value(t, &format!("in{k}[0]"));
                w.line(d.let_stmt(d.value_type(t), &format!("s{k}"), &value));
            }
        }
    }

    /// `gb_tid` (the thread's index in the grid) and `gb_stride` (the
    /// grid's threads).
    pub(crate) fn write_grid_ids(&self, w: &mut Writer) {
        let d = self.d;
        let ll = d.index_type;
        let tid = format!(
            "{} * {} + {}",
            d.cast(ll, d.block_idx),
            d.block_dim,
            d.thread_idx
        );
        w.line(d.let_stmt(ll, "gb_tid", &tid));
        let stride = format!("{} * {}", d.cast(ll, d.grid_dim), d.block_dim);
        w.line(d.let_stmt(ll, "gb_stride", &stride));
    }

    /// Writes the per-element function ([`Emitter::body_name`]): loads in,
    /// the live nodes in SSA order, outputs and the reduced value out.
    pub(crate) fn write_body(&mut self, w: &mut Writer) {
        let d = self.d;
        let ir = self.ir;
        let mut params: Vec<String> = self
            .read_inputs()
            .map(|(k, _, t)| d.value_param(d.value_type(t), &format!("x{k}")))
            .collect();
        for (m, &o) in ir.outputs().iter().enumerate() {
            params.push(d.out_param(d.value_type(ir.nodes()[o].dtype), &format!("y{m}")));
        }
        if let Some(r) = ir.reduce() {
            params.push(d.out_param(d.value_type(ir.nodes()[r.node].dtype), "r"));
        }
        w.line("// One element of the fused expression.");
        w.open(d.fn_head(None, self.body_name, &params));
        let nodes = ir.nodes();
        for (k, node) in nodes.iter().enumerate() {
            if !self.live[k] {
                continue;
            }
            let e = node_expr(
                d,
                node.expr,
                node.dtype,
                |j| nodes[j].dtype,
                &mut self.helpers,
            );
            w.line(d.let_stmt(d.value_type(node.dtype), &format!("v{k}"), &e));
        }
        for (m, &o) in ir.outputs().iter().enumerate() {
            w.line(d.out_assign(&format!("y{m}"), &format!("v{o}")));
        }
        if let Some(r) = ir.reduce() {
            w.line(d.out_assign("r", &format!("v{}", r.node)));
        }
        w.close();
    }

    /// One element: its loads, `gb_body`, its stores and its accumulation
    /// into the lvalue `acc`.
    pub(crate) fn write_element(&mut self, w: &mut Writer, ctx: Ctx, acc: Option<&str>) {
        let d = self.d;
        let ll = d.index_type;
        if let Ctx::Packed(v) = ctx {
            if self.has_broadcast() {
                w.line(d.let_stmt(ll, "i", &format!("p * {v} + j")));
            }
        }
        let mut args: Vec<String> = Vec::new();
        for (k, c, t) in self.read_inputs() {
            match (self.lane[k], ctx) {
                (Some(LaneAccess::AlongLane), Ctx::Packed(_)) => {
                    args.push(to_value(t, &d.pack_element(&format!("gb_al{k}"), "j")));
                    continue;
                }
                (Some(LaneAccess::AlongLane), Ctx::Scalar) => {
                    args.push(format!("gb_al{k}"));
                    continue;
                }
                (Some(LaneAccess::LaneConst), _) => {
                    args.push(format!("gb_lc{k}"));
                    continue;
                }
                (None, _) => {}
            }
            args.push(match (c, ctx) {
                (InputClass::Full, Ctx::Packed(_)) => {
                    to_value(t, &d.pack_element(&format!("a{k}"), "j"))
                }
                (InputClass::Full, Ctx::Scalar) => to_value(t, &format!("in{k}[i]")),
                (InputClass::Scalar, _) => format!("s{k}"),
                (InputClass::Broadcast(_), _) => to_value(
                    t,
                    &d.load_readonly(&format!("in{k}"), &format!("gb_off{k}(i)")),
                ),
            });
        }
        for m in 0..self.ir.outputs().len() {
            w.line(d.var_stmt(d.value_type(self.out_dtype(m)), &format!("y{m}"), None));
            args.push(d.out_arg(&format!("y{m}")));
        }
        let reduced = self.ir.reduce().map(|r| self.ir.nodes()[r.node].dtype);
        if let Some(t) = reduced {
            w.line(d.var_stmt(d.value_type(t), "r", None));
            args.push(d.out_arg("r"));
        }
        w.line(format!("{}({});", self.body_name, args.join(", ")));
        for m in 0..self.ir.outputs().len() {
            let t = self.out_dtype(m);
            let value = if t == DType::Bool {
                d.cast(d.bool_storage, &format!("y{m}"))
            } else {
                format!("y{m}")
            };
            match ctx {
                Ctx::Packed(_) => w.line(format!(
                    "{} = {value};",
                    d.pack_element(&format!("b{m}"), "j")
                )),
                Ctx::Scalar => w.line(format!("out{m}[i] = {value};")),
            }
        }
        if let (Some(a), Some(lv)) = (self.accum, acc) {
            let flat = match ctx {
                Ctx::Packed(v) => format!("p * {v} + j"),
                Ctx::Scalar => "i".to_string(),
            };
            w.line(a.fold_into(d, lv, "r", &flat, self.position, &mut self.helpers));
        }
    }

    /// Packs in flight for a thread that walks a long stretch of a
    /// reduction alone (a full reduction, a lane a thread or a block
    /// reduces): [`Tuning::compound_packs`] for the accumulators that
    /// fold by arithmetic, which branch ([`Compound::walks_packed`]), else
    /// [`Tuning::reduce_packs`].
    pub(crate) fn walk_packs(&self) -> usize {
        let t = self.tuning;
        match self.accum.and_then(|a| a.compound) {
            Some(c) if c.walks_packed() => t.reduce_packs.max(t.compound_packs),
            _ => t.reduce_packs,
        }
    }

    /// The grid-stride loop over all `n` elements, in packs of `v` with a
    /// scalar tail, accumulating into `acc` when there is a reduction
    /// (`packed_acc` in the pack loop, which may be one accumulator per
    /// value of the pack).
    fn write_flat_loop(
        &mut self,
        w: &mut Writer,
        v: usize,
        acc: Option<&str>,
        packed_acc: Option<PackAcc<'_>>,
    ) {
        let d = self.d;
        let ll = d.index_type;
        if v == 1 {
            if let (Some(lv), Some(a)) = (acc, self.accum) {
                let unroll = self.walk_packs();
                if d.pack_bytes() == 1 && unroll > 1 {
                    self.write_unrolled_reduction(w, lv, a, unroll);
                    return;
                }
            }
            w.open(d.for_head(Some((ll, "i", "gb_tid")), "i < n", "i += gb_stride"));
            self.write_element(w, Ctx::Scalar, acc);
            w.close();
            return;
        }
        w.line(d.let_stmt(ll, "gb_npack", &format!("n / {v}")));
        let packs = if acc.is_some() {
            self.walk_packs()
        } else {
            self.tuning.elementwise_packs
        };
        if packs > 1 {
            w.line(d.var_stmt(ll, "gb_p0", Some("gb_tid")));
            w.open(d.for_head(
                None,
                &format!("gb_p0 + {} * gb_stride < gb_npack", packs - 1),
                &format!("gb_p0 += {packs} * gb_stride"),
            ));
            let pack_acc = packed_acc.or(acc.map(PackAcc::Shared));
            self.write_pack_group(w, v, packs, "gb_p0", "gb_stride", pack_acc);
            w.close();
            w.open(d.for_head(None, "gb_p0 < gb_npack", "gb_p0 += gb_stride"));
            w.line(d.let_stmt(ll, "p", "gb_p0"));
        } else {
            w.hint(d.unroll(Some(2)));
            w.open(d.for_head(Some((ll, "p", "gb_tid")), "p < gb_npack", "p += gb_stride"));
        }
        self.write_pack_loads(w, v);
        self.write_pack_elements(w, v, packed_acc.or(acc.map(PackAcc::Shared)));
        self.write_pack_stores(w, v);
        w.close();
        w.line(format!(
            "// The last n % {v} elements, one each for the first threads of the grid."
        ));
        w.open("");
        w.line(d.let_stmt(ll, "i", &format!("gb_npack * {v} + gb_tid")));
        w.open("if (i < n)");
        self.write_element(w, Ctx::Scalar, acc);
        w.close();
        w.close();
    }
}

/// The head of a loop of counter `name` (the dialect's int) over
/// `0 .. end`.
pub(crate) fn count_loop(d: &dyn Dialect, name: &str, end: usize) -> String {
    d.for_head(
        Some((d.int_type, name, "0")),
        &format!("{name} < {end}"),
        &d.increment(name),
    )
}

impl Emitter<'_> {
    /// The grid-stride reduction loop written out `unroll` times, each
    /// copy into its own accumulator, for languages with neither wide
    /// loads nor an unrolling hint: the copies' loads are independent, so a
    /// thread keeps `unroll` of them in flight (one otherwise, as each add
    /// waits for its load). The accumulators are combined in a fixed order
    /// after the loop (deterministic; a different summation order than one
    /// accumulator).
    fn write_unrolled_reduction(&mut self, w: &mut Writer, acc: &str, a: Accum, unroll: usize) {
        let d = self.d;
        let ll = d.index_type;
        let name = |u: usize| {
            if u == 0 {
                acc.to_string()
            } else {
                format!("gb_acc{u}")
            }
        };
        for u in 1..unroll {
            w.line(d.var_stmt(a.ty(d), &name(u), Some(&a.identity(d))));
        }
        w.line(d.var_stmt(ll, "gb_i", Some("gb_tid")));
        w.open(d.for_head(
            None,
            &format!("gb_i + {} * gb_stride < n", unroll - 1),
            &format!("gb_i += {unroll} * gb_stride"),
        ));
        for u in 0..unroll {
            w.open("");
            w.line(d.let_stmt(ll, "i", &format!("gb_i + {u} * gb_stride")));
            self.write_element(w, Ctx::Scalar, Some(&name(u)));
            w.close();
        }
        w.close();
        w.open(d.for_head(None, "gb_i < n", "gb_i += gb_stride"));
        w.line(d.let_stmt(ll, "i", "gb_i"));
        self.write_element(w, Ctx::Scalar, Some(acc));
        w.close();
        for u in 1..unroll {
            w.line(format!("{acc} = gb_combine({acc}, {});", name(u)));
        }
    }
}

/// A storage value read as a register value (bytes to bool).
pub(crate) fn to_value(t: DType, load: &str) -> String {
    if t == DType::Bool {
        format!("({load} != 0)")
    } else {
        load.to_string()
    }
}

/// Refuses an IR whose inputs, nodes or reduction use a dtype the
/// dialect lacks.
fn check_dtypes(d: &dyn Dialect, ir: &KernelIr) -> Result<(), Error> {
    let used = ir
        .inputs()
        .iter()
        .map(|(_, t)| *t)
        .chain(ir.nodes().iter().map(|node| node.dtype))
        .chain(ir.reduce().map(|r| r.dtype));
    for dtype in used {
        if !d.has_dtype(dtype) {
            return Err(Error::InvalidArgument {
                op: "render",
                name: "dtype",
                value: dtype.to_string(),
                why: format!(
                    "the {} dialect has no {dtype} values on this device",
                    d.name
                ),
            });
        }
    }
    Ok(())
}

/// Renders the whole translation unit for `ir`.
pub(crate) fn render_kernel(
    d: &dyn Dialect,
    ir: &KernelIr,
    tuning: Tuning,
) -> Result<Kernel, Error> {
    check_dtypes(d, ir)?;
    if ir.has_epilogue() {
        return super::epilogue::render(d, ir, tuning);
    }
    let reduce = ir.reduce().copied();
    let heavy = reduce.is_none() && super::heavy::heavy_body(ir);
    let mut plan = Emitter::new(d, ir, tuning);
    let mut body = Writer::default();
    plan.write_body(&mut body);
    let mut main = Writer::default();
    let (kind, v, mapping) = match reduce {
        None => {
            let v = plan.full_width();
            if heavy {
                plan.tuning.elementwise_packs =
                    plan.tuning.elementwise_packs.max(tuning.heavy_packs);
            }
            write_elementwise(&mut plan, &mut main, v);
            (KernelKind::Elementwise, v, Mapping::Elements)
        }
        Some(r) if r.axis.is_none() || plan.single_lane() => {
            let v = plan.full_width();
            write_full_reduce(&mut plan, &mut main, v);
            (KernelKind::FullReduce, v, Mapping::Elements)
        }
        Some(r) => {
            if let Some(axis) = r.axis {
                (plan.chunks, plan.block_chunks) = match ir.shape().split_at_axis(axis).0 {
                    1 => (split::contiguous_chunks(&plan, axis), 1),
                    _ => {
                        let target = plan.tuning.lane_threads;
                        split::strided_split(ir.shape(), axis, plan.full_width(), target)
                    }
                };
            }
            let (v, mapping) = axis::write_axis_reduce(&mut plan, &mut main);
            (KernelKind::AxisReduce, v, mapping)
        }
    };
    let source = translation_unit(d, ir, &mut plan, kind, v, body, main)?;
    let partials = (kind == KernelKind::FullReduce || plan.chunks > 1)
        .then(|| plan.accum.map(|a| a.partials(d)))
        .flatten();
    let (partial_dtype, partial_words) = match partials {
        Some((t, words)) => (Some(t), words),
        None => (None, 1),
    };
    Ok(Kernel {
        kind,
        source,
        vector_width: v,
        mapping,
        partial_dtype,
        partial_words,
        chunks: plan.chunks,
        heavy,
    })
}

/// The whole translation unit around `plan`'s per-element functions
/// (`body`) and kernels (`main`): the header, the dialect's prelude and
/// packs, the scalar functions and helpers, the broadcast offsets, the
/// accumulator's tree. With an epilogue (`plan.epilogue`) its helpers and
/// offsets too; `ir` is the whole kernel.
pub(crate) fn translation_unit(
    d: &dyn Dialect,
    ir: &KernelIr,
    plan: &mut Emitter<'_>,
    kind: KernelKind,
    v: usize,
    body: Writer,
    main: Writer,
) -> Result<String, Error> {
    if let Some(a) = plan.accum {
        a.require_helpers(d, &mut plan.helpers);
    }
    let mut helpers = plan.helpers.clone();
    let mut packs = v > 1;
    let broadcast =
        |e: &Emitter<'_>, k: usize| e.used[k] && matches!(e.classes[k], InputClass::Broadcast(_));
    let mut offsets: Vec<usize> = (0..plan.classes.len())
        .filter(|&k| broadcast(plan, k))
        .collect();
    if let Some(e) = plan.epilogue.as_deref() {
        helpers.extend(e.helpers.iter().copied());
        packs |= e.full_width() > 1;
        // The reduced results an epilogue reads are registers.
        offsets.extend((0..e.classes.len()).filter(|&k| broadcast(e, k) && e.lane[k].is_none()));
    }
    offsets.sort_unstable();
    offsets.dedup();
    let mut w = Writer::default();
    let what = match kind {
        KernelKind::Elementwise => "elementwise",
        KernelKind::FullReduce => "full reduction (gb_main, then gb_finish)",
        KernelKind::AxisReduce if plan.epilogue.is_some() => "axis reduction with an epilogue",
        KernelKind::AxisReduce => "axis reduction",
    };
    w.line(format!(
        "// Generated by {} ({} dialect): {what}; vector width {v}.",
        d.generator, d.name
    ));
    w.line("// Launch: 1-D, 256 threads per block (a multiple of 32, at most 1024), any grid.");
    if !d.prelude().is_empty() {
        w.line("");
        w.lines(d.prelude());
    }
    if packs {
        w.line("");
        w.lines(d.pack_decl());
        if plan.tuning.streaming {
            w.line("");
            w.lines(d.pack_streaming_decl());
        }
    }
    let scalar_fns = super::expr::scalar_fn_sources(ir)?;
    if !scalar_fns.is_empty() {
        w.line("");
        w.lines(&scalar_fns);
    }
    for h in helpers {
        w.line("");
        write_helper(&mut w, d, h);
    }
    for k in offsets {
        if let InputClass::Broadcast(groups) = &plan.classes[k] {
            w.line("");
            write_offset_fn(&mut w, d, k, groups, plan.n, &ir.inputs()[k].0, ir.shape());
        }
    }
    if let Some(a) = plan.accum {
        w.line("");
        a.write_tree(&mut w, d);
        if d.shared_at_module_scope() {
            plan.write_shared_slots(&mut w);
        }
    }
    w.line("");
    w.lines(&body.finish());
    w.line("");
    w.lines(&main.finish());
    Ok(w.finish())
}

/// `gb_finish`'s parameters: `partials` (accumulators), `result` (and
/// `result_companion` when the reduction has a companion), the counts
/// `num_partials` and `n`.
pub(crate) fn finish_params(d: &dyn Dialect, a: Accum) -> Vec<KernelParam> {
    let mut p = vec![KernelParam::input(a.ty(d), "partials")];
    p.extend(result_params(d, a, "result"));
    p.push(KernelParam::Count("num_partials".into()));
    p.push(KernelParam::Count("n".into()));
    p
}

/// The output parameters of every result of reduction `a`: `name`, then
/// its companion's.
fn result_params(d: &dyn Dialect, a: Accum, name: &str) -> Vec<KernelParam> {
    let mut p = vec![KernelParam::output(d.storage_type(a.output), name)];
    if a.companion.is_some() {
        p.push(KernelParam::output(
            d.storage_type(a.output),
            super::reduce::companion_buffer(name),
        ));
    }
    p
}

fn write_elementwise(plan: &mut Emitter<'_>, w: &mut Writer, v: usize) {
    let params = plan.main_params();
    plan.open_kernel(w, "gb_main", &params);
    plan.write_prologue(w, true);
    plan.write_flat_loop(w, v, None, None);
    w.close();
}

fn write_full_reduce(plan: &mut Emitter<'_>, w: &mut Writer, v: usize) {
    let d = plan.d;
    let Some(a) = plan.accum else { return };
    let params = plan.main_params();
    plan.open_kernel(w, "gb_main", &params);
    plan.write_prologue(w, true);
    let folds = super::pack_folds::pack_fold(&a, v, plan.tuning).is_some();
    if v > 1 && !folds {
        // One accumulator per vector lane: independent dependency chains,
        // combined in a fixed order (deterministic) after the loop.
        w.line(d.array_stmt(a.ty(d), "gb_accs", v));
        w.hint(d.unroll(None));
        let init = format!("gb_accs[j] = {};", a.identity(d));
        w.line(d.one_line_loop(&count_loop(d, "j", v), &init));
        plan.write_flat_loop(
            w,
            v,
            Some("gb_accs[0]"),
            Some(PackAcc::PerValue("gb_accs[j]")),
        );
        w.line(d.var_stmt(a.ty(d), "acc", Some("gb_accs[0]")));
        for j in 1..v {
            w.line(format!("acc = gb_combine(acc, gb_accs[{j}]);"));
        }
    } else {
        w.line(d.var_stmt(a.ty(d), "acc", Some(&a.identity(d))));
        plan.write_flat_loop(w, v, Some("acc"), None);
    }
    w.line(format!("acc = {};", super::reduce::block_reduce(d, "acc")));
    w.open(format!("if ({} == 0)", d.thread_idx));
    w.line(format!("red[{}] = acc;", d.block_idx));
    w.close();
    w.close();

    let ll = d.index_type;
    w.line("");
    w.line("// Second pass, ONE block: combines the partials in a fixed order.");
    plan.open_kernel(w, "gb_finish", &finish_params(d, a));
    w.line(d.var_stmt(a.ty(d), "acc", Some(&a.identity(d))));
    w.open(d.for_head(
        Some((ll, "t", d.thread_idx)),
        "t < num_partials",
        &format!("t += {}", d.block_dim),
    ));
    w.line("acc = gb_combine(acc, partials[t]);");
    w.close();
    w.line(format!("acc = {};", super::reduce::block_reduce(d, "acc")));
    w.open(format!("if ({} == 0)", d.thread_idx));
    w.lines(&a.store_results(d, "result", "0", "acc", Count::Var("n")));
    w.close();
    w.close();
}
