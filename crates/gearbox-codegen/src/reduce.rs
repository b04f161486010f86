//! Accumulators of the fused reductions: their type, identity, combination
//! and final value, and the warp- and block-level tree reductions.

use std::collections::BTreeSet;

use gearbox_core::fusion::ir::IrReduce;
use gearbox_core::ops::reduce::{Identity, Monoid};
use gearbox_core::{DType, ReduceOp};

use super::dialect::Dialect;
use super::expr::{binary, cast, Helper};
use super::writer::Writer;

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
    /// max stay exact), f64 for everything else.
    pub acc: DType,
}

impl Accum {
    pub(crate) fn new(r: &IrReduce, input: DType) -> Accum {
        let acc = if r.dtype == DType::I64 {
            DType::I64
        } else {
            DType::F64
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
            (Identity::Highest, false) => d.f64_inf(),
            (Identity::Lowest, false) => format!("-{}", d.f64_inf()),
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
            (true, Count::Const(0)) => d.f64_nan(),
            (true, Count::Const(c)) => format!("{acc} / {c}.0"),
            (true, Count::Var(n)) => format!(
                "({n} == 0 ? {} : {acc} / {}({n}))",
                d.f64_nan(),
                d.i64_to_f64
            ),
            _ => acc.to_string(),
        };
        match (self.acc, self.output) {
            (DType::F64, DType::F32) => format!("{}({value})", d.f64_to_f32),
            _ => value,
        }
    }

    /// Writes `gb_combine`, `gb_warp_reduce` and `gb_block_reduce`.
    pub(crate) fn write_tree(&self, w: &mut Writer, d: &dyn Dialect) {
        let ty = self.ty(d);
        let f = d.device_fn;
        let ws = d.warp_size;
        let body = self.combine(d, &mut BTreeSet::new());
        w.line(format!(
            "// The {} accumulator's combination.",
            self.op.name()
        ));
        w.open(format!("{f} {ty} gb_combine(const {ty} a, const {ty} b)"));
        w.line(format!("return {body};"));
        w.close();
        w.line("");
        w.line("// Tree reduction over one full warp; the result is in lane 0.");
        w.open(format!("{f} {ty} gb_warp_reduce({ty} v)"));
        w.hint(d.unroll(None));
        w.open(format!("for (int o = {}; o > 0; o >>= 1)", ws / 2));
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
        w.open(format!("{f} {ty} gb_block_reduce({ty} v)"));
        w.line(format!("{} {ty} gb_warp_acc[{ws}];", d.shared));
        let int = |x: String| d.cast("int", &format!("({x})"));
        w.line(format!(
            "const int lane = {};",
            int(format!("{} % {ws}", d.thread_idx))
        ));
        w.line(format!(
            "const int warp = {};",
            int(format!("{} / {ws}", d.thread_idx))
        ));
        w.line("v = gb_warp_reduce(v);");
        w.open("if (lane == 0)");
        w.line("gb_warp_acc[warp] = v;");
        w.close();
        w.line(format!("{};", d.barrier));
        w.open("if (warp == 0)");
        w.line(format!(
            "v = lane < {} ? gb_warp_acc[lane] : {};",
            int(format!("{} / {ws}", d.block_dim)),
            self.identity(d)
        ));
        w.line("v = gb_warp_reduce(v);");
        w.close();
        w.line("// Lets the block call this again (e.g. for its next lane).");
        w.line(format!("{};", d.barrier));
        w.line("return v;");
        w.close();
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
