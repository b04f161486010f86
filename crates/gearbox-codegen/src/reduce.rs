//! Accumulators of the fused reductions: their type, identity, combination
//! and final value, and the warp- and block-level tree reductions.

use std::collections::BTreeSet;

use gearbox_core::fusion::ir::{IrReduce, KernelIr};
use gearbox_core::ops::reduce::{Identity, Monoid};
use gearbox_core::{DType, ReduceOp};

use super::compound::{self, Compound};
use super::dialect::Dialect;
use super::expr::{binary, cast, Helper};
use super::kernels::LanePosition;
use super::writer::Writer;
use super::BLOCK_SIZE;

/// The buffer a kernel writes the companion result into, beside `buffer`
/// (`red`, `result`) holding the reduction's.
pub(crate) fn companion_buffer(buffer: &str) -> String {
    format!("{buffer}_companion")
}

/// How one reduction accumulates.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accum {
    /// Which reduction.
    pub op: ReduceOp,
    /// dtype of the reduced node's values.
    pub input: DType,
    /// dtype of the result.
    pub output: DType,
    /// dtype of the accumulator (of each field of a compound one): i64 for
    /// integer results (sums wrap, min and max stay exact), f32 for the
    /// selections (`min`, `max`, `any`, `all`) of f32 and bool values, the
    /// dialect's float accumulator (f64 where the device has it) for
    /// everything else.
    pub acc: DType,
    /// dtype of the accumulated values: `acc`, but f32 for the arg and
    /// log-sum-exp reductions of f32 values (compared exactly in f32, and
    /// `exp` of their differences taken in f32; positions and sums stay in
    /// `acc`).
    pub value: DType,
    /// The accumulator of several values, if the reduction has one.
    pub compound: Option<Compound>,
    /// The companion reduction whose result the accumulator also gives
    /// (the mean of a moments accumulator), written beside the result.
    pub companion: Option<ReduceOp>,
    /// `(inner, len, outer)` of the reduced lanes: a value's position in
    /// its lane is `(flat / inner) % len` of its flat index.
    lane: (usize, usize, usize),
}

impl Accum {
    pub(crate) fn new(d: &dyn Dialect, ir: &KernelIr, r: &IrReduce) -> Accum {
        let compound = Compound::of(r.op);
        let input = ir.nodes()[r.node].dtype;
        let acc = if r.dtype == DType::I64 && compound.is_none() {
            DType::I64
        } else if selects(r.op) && matches!(input, DType::F32 | DType::Bool) {
            // Exact in f32: the result is one of the values (0 or 1 for
            // bools), and half the registers and shuffles of f64.
            DType::F32
        } else {
            d.float_accumulator()
        };
        let value = match compound {
            Some(Compound::Extreme | Compound::LogSumExp) if input == DType::F32 => DType::F32,
            _ => acc,
        };
        let lane = match r.axis {
            Some(a) => ir.shape().split_at_axis(a),
            None => (1, ir.shape().numel(), 1),
        };
        Accum {
            op: r.op,
            input,
            output: r.dtype,
            acc,
            value,
            compound,
            companion: r.companion,
            lane,
        }
    }

    /// The accumulator's type name.
    pub(crate) fn ty(&self, d: &dyn Dialect) -> &'static str {
        match self.compound {
            Some(_) => compound::TYPE,
            None => d.value_type(self.acc),
        }
    }

    /// The element type of a partials buffer and the elements it holds per
    /// accumulator: the accumulator's type, one each; for a compound
    /// accumulator, opaque 8-byte words (f64, or i64 when its fields are
    /// narrower: no dialect then views the buffer as f32 packs), enough
    /// for one struct.
    pub(crate) fn partials(&self, d: &dyn Dialect) -> (DType, usize) {
        match self.compound {
            None => (self.acc, 1),
            Some(c) => {
                // Every field padded to the widest (C's struct layout).
                let widest = d.storage_bytes(self.acc).max(d.storage_bytes(self.value));
                let bytes = c.fields().len() * widest;
                let word = if self.acc == DType::F64 {
                    DType::F64
                } else {
                    DType::I64
                };
                (word, bytes.div_ceil(8))
            }
        }
    }

    /// How the reduction accumulates (its definition's [`Monoid`]); only
    /// asked of one-value accumulators.
    fn monoid(&self) -> Monoid {
        self.op
            .monoid()
            .expect("a one-value accumulator is a monoid's")
    }

    /// The accumulator of no values.
    pub(crate) fn identity(&self, d: &dyn Dialect) -> String {
        if self.compound.is_some() {
            return "gb_acc_identity()".into();
        }
        let int = self.acc == DType::I64;
        match (self.monoid().identity, int) {
            (Identity::One, true) => d.i64_lit(1),
            (Identity::One, false) => "1.0".into(),
            (Identity::Highest, true) => d.i64_max(),
            (Identity::Lowest, true) => d.i64_min(),
            (Identity::Highest, false) => d.inf(self.acc),
            (Identity::Lowest, false) => format!("-{}", d.inf(self.acc)),
            (Identity::Zero, true) => d.i64_lit(0),
            (Identity::Zero, false) => "0.0".into(),
        }
    }

    /// `gb_combine`'s body for a one-value accumulator: the monoid's
    /// binary op on accumulators `a` and `b`, spelled as the op is spelled
    /// everywhere (recording its helpers).
    ///
    /// `any` and `all` accumulate bools as 0 and 1, never NaN, so their
    /// maximum and minimum skip the NaN rule (a plain select: the NaN
    /// tests cost more than the rest of a bool reduction's work).
    fn combine(&self, d: &dyn Dialect, hs: &mut BTreeSet<Helper>) -> String {
        match self.op {
            ReduceOp::Any => d.select("a > b", "a", "b"),
            ReduceOp::All => d.select("a < b", "a", "b"),
            _ => binary(d, self.monoid().combine, self.acc, "a", "b", hs),
        }
    }

    /// Whether folding a value needs its position ([`Accum::lift`]).
    pub(crate) fn needs_position(&self) -> bool {
        self.compound.is_some_and(Compound::needs_position)
    }

    /// The accumulator of one reduced value `x`, whose flat index in the
    /// iteration space is `flat` (read only where the position matters,
    /// and then as `position` says).
    pub(crate) fn lift(
        &self,
        d: &dyn Dialect,
        x: &str,
        flat: &str,
        position: LanePosition,
        hs: &mut BTreeSet<Helper>,
    ) -> String {
        let value = cast(d, self.input, self.value, x, hs);
        self.lift_value(d, &value, flat, position)
    }

    /// The statement folding the reduced value `x` (flat index `flat`)
    /// into accumulator `lv`: `gb_combine(lv, gb_lift(x))`, or for the
    /// scaled product `gb_mul(lv, x)`, the same result with one range
    /// test where the value needs no rescaling.
    pub(crate) fn fold_into(
        &self,
        d: &dyn Dialect,
        lv: &str,
        x: &str,
        flat: &str,
        position: LanePosition,
        hs: &mut BTreeSet<Helper>,
    ) -> String {
        if self.compound == Some(Compound::Scaled) {
            let value = cast(d, self.input, self.value, x, hs);
            return format!("{lv} = gb_mul({lv}, {value});");
        }
        let lifted = self.lift(d, x, flat, position, hs);
        format!("{lv} = gb_combine({lv}, {lifted});")
    }

    /// [`Accum::lift`] of `value`, already of the accumulated dtype
    /// `self.value`.
    pub(crate) fn lift_value(
        &self,
        d: &dyn Dialect,
        value: &str,
        flat: &str,
        position: LanePosition,
    ) -> String {
        match self.compound {
            None => value.to_string(),
            Some(c) if c.needs_position() => {
                let (inner, len, outer) = self.lane;
                let lit = |v: usize| d.index_lit(v as u64);
                let pos = match (inner, outer) {
                    (1, 1) => flat.to_string(),
                    (1, _) if position == LanePosition::LaneStart => {
                        format!("{flat} - o * {}", lit(len))
                    }
                    (_, _) if inner > 1 && position == LanePosition::Step => "k".to_string(),
                    (_, _) if inner > 1 && position == LanePosition::StepInGroup => {
                        "(k + u)".to_string()
                    }
                    (1, _) => format!("({flat}) % {}", lit(len)),
                    (_, 1) => format!("({flat}) / {}", lit(inner)),
                    _ => format!("(({flat}) / {}) % {}", lit(inner), lit(len)),
                };
                format!("gb_lift({value}, {})", d.index_to_float(self.acc, &pos))
            }
            Some(_) => format!("gb_lift({value})"),
        }
    }

    /// Records the helpers the accumulator's functions call (the helpers
    /// are written before them).
    pub(crate) fn require_helpers(&self, d: &dyn Dialect, hs: &mut BTreeSet<Helper>) {
        match self.compound {
            Some(c) => c.require_helpers(self.acc, self.value, hs),
            None => {
                self.combine(d, hs);
            }
        }
    }

    /// The final value of accumulator `acc` over `count` elements, as the
    /// result's storage takes it: mean divides (NaN when `count` is 0),
    /// compound accumulators finish through `gb_final`, narrower results
    /// round to nearest, bools are `acc != 0`.
    pub(crate) fn finalize(&self, d: &dyn Dialect, acc: &str, count: Count<'_>) -> String {
        let value = match (self.compound, count) {
            (Some(_), _) => format!("gb_final({acc})"),
            (None, _) if !self.monoid().divides_by_count => acc.to_string(),
            (None, Count::Const(0)) => d.nan(self.acc),
            (None, Count::Const(c)) => format!("{acc} / {c}.0"),
            (None, Count::Var(n)) => {
                let mean = format!("{acc} / {}", d.index_to_float(self.acc, n));
                format!(
                    "({})",
                    d.select(&format!("{n} == 0"), &d.nan(self.acc), &mean)
                )
            }
        };
        self.narrow(d, value)
    }

    /// The statements (one per line) storing every result of accumulator `acc` over
    /// `count` elements at `index` ([`Accum::result_values`]): the
    /// reduction's into `buffer`, then its companion's into
    /// [`companion_buffer`].
    pub(crate) fn store_results(
        &self,
        d: &dyn Dialect,
        buffer: &str,
        index: &str,
        acc: &str,
        count: Count<'_>,
    ) -> String {
        let buffers = [buffer.to_string(), companion_buffer(buffer)];
        self.result_values(d, acc, count)
            .into_iter()
            .zip(buffers)
            .map(|(value, buffer)| format!("{buffer}[{index}] = {value};"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The value of every result of accumulator `acc` over `count`
    /// elements, as the results' storage takes them: the reduction's
    /// ([`Accum::finalize`]), then its companion's (the mean of a moments
    /// accumulator: its `y`, NaN over no values).
    pub(crate) fn result_values(
        &self,
        d: &dyn Dialect,
        acc: &str,
        count: Count<'_>,
    ) -> Vec<String> {
        let mut values = vec![self.finalize(d, acc, count)];
        if let Some(op) = self.companion {
            debug_assert!(
                self.compound == Some(Compound::Moments) && op == ReduceOp::Mean,
                "only a moments accumulator has a companion (the mean)"
            );
            let empty = format!("{acc}.x == {}", d.float_lit("0.0", self.acc));
            let mean = d.select(&empty, &d.nan(self.acc), &format!("{acc}.y"));
            values.push(self.narrow(d, format!("({mean})")));
        }
        values
    }

    /// `value`, in the accumulator's type, as the result's storage takes
    /// it: narrower floats round to nearest, bools are `value != 0`.
    fn narrow(&self, d: &dyn Dialect, value: String) -> String {
        match (self.acc, self.output) {
            (DType::F64, DType::F32) => format!("{}({value})", d.f64_to_f32),
            (a, DType::I64) if a != DType::I64 => {
                d.cast(d.value_type(DType::I64), &format!("({value})"))
            }
            (_, DType::Bool) => d.cast(d.bool_storage, &format!("({value} != 0.0)")),
            _ => value,
        }
    }

    /// Writes `gb_combine` and the block reduction `gb_block_reduce`
    /// (through `gb_warp_reduce` where the dialect has shuffles).
    pub(crate) fn write_tree(&self, w: &mut Writer, d: &dyn Dialect) {
        let ty = self.ty(d);
        if let Some(c) = self.compound {
            c.write(w, d, self.op, self.acc, self.value);
            w.line("");
            if d.has_shuffles() {
                c.write_shuffle(w, d);
            }
        } else {
            let body = self.combine(d, &mut BTreeSet::new());
            w.line(format!(
                "// The {} accumulator's combination.",
                self.op.name()
            ));
            let ab = [d.value_param(ty, "a"), d.value_param(ty, "b")];
            w.open(d.fn_head(Some(ty), "gb_combine", &ab));
            w.line(format!("return {body};"));
            w.close();
            w.line("");
        }
        if d.has_shuffles() {
            self.write_warp_tree(w, d);
        } else {
            self.write_shared_tree(w, d);
        }
    }

    /// Writes the reduction of accumulator `v` over `width` adjacent lanes
    /// of a warp (a power of two; the group's first lane `leader`, an int
    /// expression) with shuffles, the result in the leader: a
    /// log-sum-exp's maximum-first tree where the dialect broadcasts
    /// ([`Compound::write_shuffle_tree`]), else `gb_combine` with the
    /// accumulator `width / 2, ..., 1` lanes down.
    pub(crate) fn write_shuffle_tree(
        &self,
        w: &mut Writer,
        d: &dyn Dialect,
        v: &str,
        width: u32,
        leader: &str,
    ) {
        let types = (self.value, self.acc);
        if self
            .compound
            .is_some_and(|c| c.write_shuffle_tree(w, d, types, v, width, leader))
        {
            return;
        }
        w.hint(d.unroll(None));
        let start = (width / 2).to_string();
        w.open(d.for_head(Some((d.int_type, "gb_s", &start)), "gb_s > 0", "gb_s >>= 1"));
        let moved = match self.compound {
            Some(_) => format!("gb_shuffle_acc({v}, gb_s)"),
            None => d.shuffle_down(v, "gb_s"),
        };
        w.line(format!("{v} = gb_combine({v}, {moved});"));
        w.close();
    }

    /// `gb_warp_reduce` (shuffles) and `gb_block_reduce` over warps.
    fn write_warp_tree(&self, w: &mut Writer, d: &dyn Dialect) {
        let ty = self.ty(d);
        let ws = d.warp_size;
        let int = d.int_type;
        w.line("// Tree reduction over one full warp; the result is in lane 0.");
        open_with_v(w, d, ty, "gb_warp_reduce");
        self.write_shuffle_tree(w, d, "v", ws, "0");
        w.line("return v;");
        w.close();
        w.line("");
        w.line(format!(
            "// Reduction over the block (a multiple of {ws} threads, at most {} warps);",
            ws
        ));
        w.line("// the result is in thread 0. Every thread of the block must call it.");
        if d.shared_at_module_scope() {
            w.line(d.shared_array(ty, "gb_warp_acc", ws as usize));
        }
        open_with_v(w, d, ty, "gb_block_reduce");
        if !d.shared_at_module_scope() {
            w.line(d.shared_array(ty, "gb_warp_acc", ws as usize));
        }
        let cast_int = |x: String| d.cast(int, &format!("({x})"));
        let lane = cast_int(format!("{} % {ws}", d.thread_idx));
        w.line(d.let_stmt(int, "lane", &lane));
        let warp = cast_int(format!("{} / {ws}", d.thread_idx));
        w.line(d.let_stmt(int, "warp", &warp));
        w.line("v = gb_warp_reduce(v);");
        w.open("if (lane == 0)");
        w.line("gb_warp_acc[warp] = v;");
        w.close();
        w.line(format!("{};", d.barrier));
        w.open("if (warp == 0)");
        let warps = cast_int(format!("{} / {ws}", d.block_dim));
        if self.compound.is_some() {
            // (A struct is no operand of WGSL's `select`.)
            w.line(format!("v = {};", self.identity(d)));
            w.open(format!("if (lane < {warps})"));
            w.line("v = gb_warp_acc[lane];");
            w.close();
        } else {
            let first = d.select(
                &format!("lane < {warps}"),
                "gb_warp_acc[lane]",
                &self.identity(d),
            );
            w.line(format!("v = {first};"));
        }
        w.line("v = gb_warp_reduce(v);");
        w.close();
        w.line("// Lets the block call this again (e.g. for its next lane).");
        w.line(format!("{};", d.barrier));
        w.line("return v;");
        w.close();
    }

    /// `gb_block_reduce` as a tree in block-shared memory, for blocks of
    /// exactly [`BLOCK_SIZE`] threads (dialects without shuffles).
    fn write_shared_tree(&self, w: &mut Writer, d: &dyn Dialect) {
        let ty = self.ty(d);
        let int = d.int_type;
        let size = BLOCK_SIZE as usize;
        if d.shared_at_module_scope() {
            w.line(d.shared_array(ty, "gb_tree", size));
            w.line("");
        }
        w.line(format!(
            "// Reduction over the block ({size} threads) by a tree in shared memory; the"
        ));
        w.line("// result is in thread 0. Every thread of the block must call it.");
        let mut params = vec![d.value_param(ty, "v")];
        if d.shared_in_kernels() {
            params.push(d.shared_param(ty, "gb_tree"));
        }
        w.open(d.fn_head(Some(ty), "gb_block_reduce", &params));
        if !d.shared_at_module_scope() && !d.shared_in_kernels() {
            w.line(d.shared_array(ty, "gb_tree", size));
        }
        w.line(d.let_stmt(int, "t", &d.cast(int, d.thread_idx)));
        w.line("gb_tree[t] = v;");
        w.line(format!("{};", d.barrier));
        let half = (size / 2).to_string();
        w.open(d.for_head(Some((int, "s", &half)), "s > 0", "s >>= 1"));
        w.open("if (t < s)");
        w.line("gb_tree[t] = gb_combine(gb_tree[t], gb_tree[t + s]);");
        w.close();
        w.line(format!("{};", d.barrier));
        w.close();
        w.line(d.let_stmt(ty, "r", "gb_tree[0]"));
        w.line("// Lets the block call this again (e.g. for its next lane).");
        w.line(format!("{};", d.barrier));
        w.line("return r;");
        w.close();
    }
}

/// Opens helper `name(v)` returning `ty`, in which `v` is a variable the
/// body may assign: the parameter itself where parameters are mutable (C),
/// else a copy of it.
/// The call of the block reduction on `x`, passing the kernel's tree
/// where the dialect declares shared arrays in kernels.
pub(crate) fn block_reduce(d: &dyn Dialect, x: &str) -> String {
    if d.shared_in_kernels() {
        format!("gb_block_reduce({x}, gb_tree)")
    } else {
        format!("gb_block_reduce({x})")
    }
}

/// The kernel-scope declaration of the block tree of accumulators of type
/// `ty`, for dialects that declare shared arrays in kernels (else `None`).
pub(crate) fn kernel_tree(d: &dyn Dialect, ty: &str) -> Option<String> {
    d.shared_in_kernels()
        .then(|| d.shared_array(ty, "gb_tree", BLOCK_SIZE as usize))
}

fn open_with_v(w: &mut Writer, d: &dyn Dialect, ty: &str, name: &str) {
    if d.params_mutable() {
        w.open(d.fn_head(Some(ty), name, &[format!("{ty} v")]));
    } else {
        w.open(d.fn_head(Some(ty), name, &[d.value_param(ty, "v_in")]));
        w.line(d.var_stmt(ty, "v", Some("v_in")));
    }
}

/// Whether reduction `op` selects one of its values (`min`, `max`, and
/// `any`/`all` of bools), so that it accumulates exactly in its input's
/// dtype.
fn selects(op: ReduceOp) -> bool {
    matches!(
        op,
        ReduceOp::Min | ReduceOp::Max | ReduceOp::Any | ReduceOp::All
    )
}

/// The number of elements a reduction covered.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Count<'a> {
    /// Known when the source is rendered.
    Const(usize),
    /// A runtime variable of the kernel.
    Var(&'a str),
}
