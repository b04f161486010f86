//! Pack folds: the values of one 16-byte pack that all meet one
//! accumulator ([`super::packs::PackAcc::Shared`]) reduced among
//! themselves first, so that the accumulator's costly combination runs
//! once per pack, not per value:
//! - the arg reductions: the pack's first extreme and its index (a
//!   position converted, a value-position pair combined once per pack);
//! - the moments (`var`, `sd`), where [`Tuning::fold_moments`] says so:
//!   the pack's count, mean and sum of squared deviations, merged by
//!   Chan's rule (one division per pack); where each value of a pack
//!   meets its own accumulator, one reciprocal of their equal counts
//!   serves the pack (`gb_push`). (Folding a strided lane's
//!   values over a group of steps the same way ran `var` along the rows
//!   of a 64 x 10^6 f32 matrix 1.4x slower on an H200, so they stay per
//!   value.)
//! - the scaled product (`prod`): the pack's plain product, where the
//!   values' dtype cannot overflow or lose bits in it (f32, i64 and bool
//!   values in an f64 accumulator), then one rescaling test.

use gearbox_core::{DType, ReduceOp};

use super::compound::Compound;
use super::expr::{cast, require, Helper};
use super::kernels::{count_loop, Ctx, Emitter};
use super::reduce::Accum;
use super::writer::Writer;
use super::Tuning;

/// How the values of one pack meeting one accumulator fold first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PackFold {
    /// The pack's first maximum (`argmax`) and its index.
    Max,
    /// The pack's first minimum (`argmin`) and its index.
    Min,
    /// The pack's moments.
    Moments,
    /// The pack's plain product in the accumulator's dtype, where no
    /// product of a pack's values can leave its normal range.
    Product,
}

/// The binary exponents bounding the magnitude of a nonzero value of `dt`
/// (`2^min <= |x| < 2^max`), where a product of several stays finite.
fn exponent_range(dt: DType) -> Option<(i32, i32)> {
    match dt {
        DType::Bool => Some((0, 1)),
        DType::I64 => Some((0, 64)),
        DType::F32 => Some((-149, 128)),
        DType::F64 => None,
    }
}

/// Whether the plain product of `v` values of `input`, taken in f64,
/// stays in f64's normal range (no overflow, no lost bits), so that the
/// scaled accumulator may take it as one value.
fn product_fits(input: DType, acc: DType, v: usize) -> bool {
    let v = v as i32;
    acc == DType::F64
        && exponent_range(input).is_some_and(|(min, max)| v * max < 1024 && v * min > -1022)
}

/// How the values of a `v`-value pack that all meet one accumulator of
/// `a` fold before they meet it, if they do (only packs of more than one
/// value).
pub(crate) fn pack_fold(a: &Accum, v: usize, tuning: Tuning) -> Option<PackFold> {
    if v < 2 {
        return None;
    }
    match a.op {
        ReduceOp::ArgMax => Some(PackFold::Max),
        ReduceOp::ArgMin => Some(PackFold::Min),
        _ if a.compound == Some(Compound::Moments) && tuning.fold_moments => {
            Some(PackFold::Moments)
        }
        _ if a.compound == Some(Compound::Scaled) && product_fits(a.input, a.acc, v) => {
            Some(PackFold::Product)
        }
        _ => None,
    }
}

impl Emitter<'_> {
    /// The pack `p` folded as `fold` says, then combined into `lv`.
    pub(crate) fn write_pack_fold(
        &mut self,
        w: &mut Writer,
        v: usize,
        lv: &str,
        a: Accum,
        fold: PackFold,
    ) {
        match fold {
            PackFold::Max => self.write_pack_extreme(w, v, lv, a, true),
            PackFold::Min => self.write_pack_extreme(w, v, lv, a, false),
            PackFold::Moments => self.write_pack_moments(w, v, lv, a),
            PackFold::Product => self.write_pack_product(w, v, lv, a),
        }
    }

    /// The pack's values multiplied in the accumulator's dtype (exact
    /// range: [`product_fits`]), then folded into `lv` as one value: one
    /// range test per pack, not two per value (f32 `prod` over 2^26
    /// values: the pack of four f32 values is at most 2^512 in magnitude).
    fn write_pack_product(&mut self, w: &mut Writer, v: usize, lv: &str, a: Accum) {
        let d = self.d;
        let t = d.value_type(a.acc);
        w.line(d.var_stmt(t, "gb_pp", Some(&d.float_lit("1.0", a.acc))));
        self.write_pack_values(w, v, a, &|x| format!("gb_pp = gb_pp * {x};"));
        w.line(format!("{lv} = gb_mul({lv}, gb_pp);"));
    }

    /// The unrolled loop over the pack's `v` values, each (as the
    /// accumulator's dtype) given to the statement `store` makes of it.
    fn write_pack_values(
        &mut self,
        w: &mut Writer,
        v: usize,
        a: Accum,
        store: &dyn Fn(&str) -> String,
    ) {
        let d = self.d;
        w.hint(d.unroll(None));
        w.open(count_loop(d, "j", v));
        self.write_element(w, Ctx::Packed(v), None);
        let x = cast(d, a.input, a.acc, "r", &mut self.helpers);
        w.line(store(&x));
        w.close();
    }

    /// The pack's count `v`, mean (its sum times `1 / v`, exact for the
    /// power-of-two pack widths) and sum of squared deviations from that
    /// mean, as one moments accumulator combined into `lv`.
    fn write_pack_moments(&mut self, w: &mut Writer, v: usize, lv: &str, a: Accum) {
        let d = self.d;
        let t = d.value_type(a.acc);
        w.line(d.array_stmt(t, "gb_pr", v));
        self.write_pack_values(w, v, a, &|x| format!("gb_pr[j] = {x};"));
        let lit = |digits: String| d.float_lit(&digits, a.acc);
        let sum = (0..v)
            .map(|j| format!("gb_pr[{j}]"))
            .collect::<Vec<_>>()
            .join(" + ");
        w.line(d.let_stmt(
            t,
            "gb_pm",
            &format!("({sum}) * {}", lit(format!("{:e}", 1.0 / v as f64))),
        ));
        w.line(d.var_stmt(t, "gb_ps", Some(&lit("0.0".into()))));
        w.hint(d.unroll(None));
        w.open(count_loop(d, "j", v));
        w.line(d.let_stmt(t, "gb_pd", "gb_pr[j] - gb_pm"));
        w.line("gb_ps = gb_ps + gb_pd * gb_pd;");
        w.close();
        w.line(d.var_stmt(super::compound::TYPE, "gb_pa", None));
        w.line(format!("gb_pa.x = {};", lit(format!("{v}.0"))));
        w.line("gb_pa.y = gb_pm;");
        w.line("gb_pa.z = gb_ps;");
        w.line(format!("{lv} = gb_combine({lv}, gb_pa);"));
    }

    /// The values of the pack, one per accumulator `lv` (an lvalue
    /// indexed by the pack position `j`), merged into their moments by
    /// `gb_push` with one reciprocal of the new count for all: the
    /// accumulators of a pack each take one value per pack, so their
    /// counts are equal (the arithmetic of a per-value merge, a division
    /// per pack, not per value).
    pub(crate) fn write_pack_moments_pushed(
        &mut self,
        w: &mut Writer,
        v: usize,
        lv: &str,
        a: Accum,
    ) {
        let d = self.d;
        let t = d.value_type(a.acc);
        let first = lv.replace("[j]", "[0]");
        let one = d.float_lit("1.0", a.acc);
        w.line(d.let_stmt(t, "gb_rn", &format!("{one} / ({first}.x + {one})")));
        w.hint(d.unroll(None));
        w.open(count_loop(d, "j", v));
        self.write_element(w, Ctx::Packed(v), None);
        let x = cast(d, a.input, a.value, "r", &mut self.helpers);
        w.line(format!("{lv} = gb_push({lv}, {x}, gb_rn);"));
        w.close();
    }

    /// The pack's first extreme (maximum when `max`) and its index found
    /// in the pack's own dtype, then combined into `lv` once: one position
    /// conversion and one combination of value-position pairs per pack,
    /// not per value (argmax along 6000-long lanes of f32 on an H200:
    /// 0.083 ms to 0.063; the moments fold there only up to
    /// `axis::FOLD_WARP_MAX_LEN`).
    fn write_pack_extreme(&mut self, w: &mut Writer, v: usize, lv: &str, a: Accum, max: bool) {
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
