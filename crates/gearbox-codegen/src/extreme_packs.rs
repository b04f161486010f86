//! The arg reductions' pack fold: each 16-byte pack's first extreme and its
//! index found among the pack's own values, so that a position is
//! converted and a value-position pair combined once per pack.

use gearbox_core::ReduceOp;

use super::expr::{cast, require, Helper};
use super::kernels::{count_loop, Ctx, Emitter};
use super::reduce::Accum;
use super::writer::Writer;

/// Whether the values of one pack that all meet one accumulator
/// ([`super::packs::PackAcc::Shared`]) are reduced among themselves
/// first ([`Emitter::write_pack_elements`]), and to what: `Some(true)` the
/// pack's first maximum and its index (`argmax`), `Some(false)` its first
/// minimum (`argmin`). Only where the pack holds more than one value.
pub(crate) fn pack_extreme(a: &Accum, v: usize) -> Option<bool> {
    if v < 2 {
        return None;
    }
    match a.op {
        ReduceOp::ArgMax => Some(true),
        ReduceOp::ArgMin => Some(false),
        _ => None,
    }
}

impl Emitter<'_> {
    /// The pack's first extreme (maximum when `max`) and its index found
    /// in the pack's own dtype, then combined into `lv` once: one position
    /// conversion and one combination of value-position pairs per pack,
    /// not per value (argmax along 6000-long lanes of f32 on an H200:
    /// 0.083 ms to 0.063). The moments of `var` and `sd` folded the same
    /// way (one division per pack) ran such lanes slower (f64: 0.095 ms to
    /// 0.133), so they stay per value.
    pub(crate) fn write_pack_extreme(
        &mut self,
        w: &mut Writer,
        v: usize,
        lv: &str,
        a: Accum,
        max: bool,
    ) {
        let d = self.d;
        let vt = d.value_type(a.value);
        w.line(d.var_stmt(vt, "gb_pv", None));
        w.line(d.var_stmt(d.int_type, "gb_pj", Some("0")));
        w.hint(d.unroll(None));
        w.open(count_loop(d, "j", v));
        self.write_element(w, Ctx::Packed(v), None);
        let x = cast(d, a.input, a.value, "r", &mut self.helpers);
        w.line(d.let_stmt(vt, "gb_x", &x));
        let cmp = if max { ">" } else { "<" };
        // Strictly better only: of equal values (or NaNs) the earlier
        // element stays, R's first extreme; a NaN beats every number.
        let better = if a.value.is_float() {
            let isnan = format!("gb_isnan_{}", a.value.name());
            require(&mut self.helpers, Helper::IsNan(a.value));
            format!("({isnan}(gb_x) && !{isnan}(gb_pv)) || gb_x {cmp} gb_pv")
        } else {
            format!("gb_x {cmp} gb_pv")
        };
        w.open(format!("if (j == 0 || {better})"));
        w.line("gb_pv = gb_x;");
        w.line("gb_pj = j;");
        w.close();
        w.close();
        let flat = format!("p * {v} + gb_pj");
        let pack = a.lift_value(d, "gb_pv", &flat, self.position);
        w.line(format!("{lv} = gb_combine({lv}, {pack});"));
    }
}
