//! Accumulators of the fused reductions: their type, identity, combination
//! and final value, and the warp- and block-level tree reductions.

use std::collections::BTreeSet;

use gearbox_core::fusion::ir::IrReduce;
use gearbox_core::ops::reduce::{Identity, Monoid};
use gearbox_core::{DType, ReduceOp};

use super::dialect::Dialect;
use super::expr::{binary, cast, Helper};
use super::writer::Writer;
use super::BLOCK_SIZE;

/// How one reduction accumulates.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accum {
    /// Which reduction.
    pub op: ReduceOp,
    /// dtype of the reduced node's values.
    pub input: DType,
    /// dtype of the result.
    pub output: DType,
    /// dtype of the accumulator: i64 for integer results (sums wrap, min and
    /// max stay exact), the dialect's float accumulator (f64 where the
    /// device has it) for everything else.
    pub acc: DType,
}

impl Accum {
    pub(crate) fn new(d: &dyn Dialect, r: &IrReduce, input: DType) -> Accum {
        let acc = if r.dtype == DType::I64 {
            DType::I64
        } else {
            d.float_accumulator()
        };
        Accum {
            op: r.op,
            input,
            output: r.dtype,
            acc,
        }
    }

    /// The accumulator's type name.
    pub(crate) fn ty(&self, d: &dyn Dialect) -> &'static str {
        d.value_type(self.acc)
    }

    /// How the reduction accumulates (its definition's [`Monoid`]).
    fn monoid(&self) -> Monoid {
        self.op
            .monoid()
            .expect("only reductions with a monoid close a fused pass")
    }

    /// The monoid's identity in the accumulator's type.
    pub(crate) fn identity(&self, d: &dyn Dialect) -> String {
        let int = self.acc == DType::I64;
        match (self.monoid().identity, int) {
            (Identity::One, _) => "1.0".into(),
            (Identity::Highest, true) => d.i64_max(),
            (Identity::Lowest, true) => d.i64_min(),
            (Identity::Highest, false) => d.inf(self.acc),
            (Identity::Lowest, false) => format!("-{}", d.inf(self.acc)),
            (Identity::Zero, true) => d.i64_lit(0),
            (Identity::Zero, false) => "0.0".into(),
        }
    }

    /// `gb_combine`'s body: the monoid's binary op on accumulators `a` and
    /// `b`, spelled as the op is spelled everywhere (recording its helpers).
    fn combine(&self, d: &dyn Dialect, hs: &mut BTreeSet<Helper>) -> String {
        binary(d, self.monoid().combine, self.acc, "a", "b", hs)
    }

    /// A reduced value `x` converted to the accumulator type.
    pub(crate) fn widen(&self, d: &dyn Dialect, x: &str, hs: &mut BTreeSet<Helper>) -> String {
        cast(d, self.input, self.acc, x, hs)
    }

    /// Records the helpers `gb_combine` calls (the helpers are written
    /// before it).
    pub(crate) fn require_helpers(&self, d: &dyn Dialect, hs: &mut BTreeSet<Helper>) {
        self.combine(d, hs);
    }

    /// The final value of accumulator `acc` over `count` elements, in the
    /// result's register type: mean divides (NaN when `count` is 0),
    /// narrower results round to nearest.
    pub(crate) fn finalize(&self, d: &dyn Dialect, acc: &str, count: Count<'_>) -> String {
        let value = match (self.monoid().divides_by_count, count) {
            (true, Count::Const(0)) => d.nan(self.acc),
            (true, Count::Const(c)) => format!("{acc} / {c}.0"),
            (true, Count::Var(n)) => {
                let mean = format!("{acc} / {}", d.index_to_float(self.acc, n));
                format!(
                    "({})",
                    d.select(&format!("{n} == 0"), &d.nan(self.acc), &mean)
                )
            }
            _ => acc.to_string(),
        };
        match (self.acc, self.output) {
            (DType::F64, DType::F32) => format!("{}({value})", d.f64_to_f32),
            _ => value,
        }
    }

    /// Writes `gb_combine` and the block reduction `gb_block_reduce`
    /// (through `gb_warp_reduce` where the dialect has shuffles).
    pub(crate) fn write_tree(&self, w: &mut Writer, d: &dyn Dialect) {
        let ty = self.ty(d);
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
        if d.has_shuffles() {
            self.write_warp_tree(w, d);
        } else {
            self.write_shared_tree(w, d);
        }
    }

    /// `gb_warp_reduce` (shuffles) and `gb_block_reduce` over warps.
    fn write_warp_tree(&self, w: &mut Writer, d: &dyn Dialect) {
        let ty = self.ty(d);
        let ws = d.warp_size;
        let int = d.int_type;
        w.line("// Tree reduction over one full warp; the result is in lane 0.");
        open_with_v(w, d, ty, "gb_warp_reduce");
        w.hint(d.unroll(None));
        let start = (ws / 2).to_string();
        w.open(d.for_head(Some((int, "o", &start)), "o > 0", "o >>= 1"));
        w.line(format!("v = gb_combine(v, {});", d.shuffle_down("v", "o")));
        w.close();
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
        let first = d.select(
            &format!("lane < {warps}"),
            "gb_warp_acc[lane]",
            &self.identity(d),
        );
        w.line(format!("v = {first};"));
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

/// The number of elements a reduction covered.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Count<'a> {
    /// Known when the source is rendered.
    Const(usize),
    /// A runtime variable of the kernel.
    Var(&'a str),
}
