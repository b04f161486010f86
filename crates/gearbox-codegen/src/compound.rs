//! Accumulators of several values, for the reductions whose state is more
//! than one number. Each is a struct `gb_acc` of float fields (the
//! dialect's float accumulator type) with four functions every kernel of
//! the reduction calls:
//!
//! - `gb_acc_identity()`: the accumulator of no values;
//! - `gb_lift(x[, pos])`: the accumulator of one value (at position `pos`
//!   of its lane, for the arg reductions);
//! - `gb_combine(a, b)`: the accumulator of both operands' values, where
//!   `a`'s come first (every combination is associative, so the trees and
//!   partials of the kernels may group values as they like);
//! - `gb_final(acc)`: the result, in the accumulator type;
//! - for the moments, `gb_push(acc, x, rn)`: `gb_combine(acc, gb_lift(x))`
//!   with the reciprocal of the new count given;
//! - for the scaled product, `gb_mul(acc, x)`: `gb_combine(acc,
//!   gb_lift(x))` with one range test where nothing needs rescaling.
//!
//! The kinds:
//! - **moments** (`var`, `sd`): `x` the count, `y` the mean, `z` the sum of
//!   squared deviations from it, merged by Chan et al.'s rule
//!   `n = na + nb`, `δ = mb − ma`, `m = ma + δ·nb/n`,
//!   `M2 = M2a + M2b + δ²·na·nb/n` (one value at a time it is Welford's
//!   update; stable, one pass). The result is `M2 / (n − 1)` (its square
//!   root for `sd`), NaN below two values, as R's;
//! - **extreme** (`argmin`, `argmax`): `x` the value, `y` its position.
//!   A NaN beats every number, a more extreme value beats a less extreme
//!   one, and of two equal values (or two NaNs) the earlier position wins:
//!   R's first extreme, and the first NaN, whatever the grouping. Positions
//!   are exact below 2^53 (an f64 field; the result dtype is i64, so only
//!   dialects with 64-bit values render these); the value is compared in
//!   its own dtype (an f32 field for f32 values, exact and cheaper);
//! - **scaled** (`prod`): `x` a mantissa, `y` an exponent in units of `S`
//!   (2^400 in f64, 2^60 in f32): the product is `x · S^y`. After each
//!   multiplication a mantissa above `S` or below `1/S` in magnitude (not
//!   zero) is scaled by an exact power of two, so partial products never
//!   overflow or underflow on the way (the CPU's `Scaled` rule: `prod` of
//!   `1e300, 1e300, 0` is 0), a zero product resets the exponent, and
//!   infinities and NaN propagate as in a plain product (`Inf · 0` is NaN);
//! - **log-sum-exp** (`logsumexp`): `x` the running maximum `m`, `y` the
//!   sum `s` of `exp(v − m)` over the values. Two accumulators merge at the
//!   larger maximum, the other's sum scaled by `exp(m_lo − m_hi)` (not
//!   scaled when the maxima are equal, so infinite maxima never meet
//!   `Inf − Inf`). The result is `m + log(s)`: `-Inf` over nothing or
//!   `-Inf`s, `+Inf` with a `+Inf`, NaN with a NaN (whose comparisons
//!   fail, so a NaN reaches `s` through `exp(NaN)` and stays there).

use std::collections::BTreeSet;

use gearbox_core::{DType, ReduceOp};

use super::dialect::Dialect;
use super::expr::{require, Helper};
use super::writer::Writer;

/// The kinds of accumulators of several values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compound {
    /// `var`, `sd`: count, mean, sum of squared deviations.
    Moments,
    /// `argmin`, `argmax`: value and position.
    Extreme,
    /// `prod`: mantissa and exponent.
    Scaled,
    /// `logsumexp`: running maximum and the sum of `exp(v - max)`.
    LogSumExp,
}

/// The test that mantissa `x` (of dtype `acc`) lies in `[inv, s]` in
/// magnitude (so is neither zero nor NaN).
fn in_scale(d: &dyn Dialect, acc: DType, x: &str, s: &str, inv: &str) -> String {
    let m = format!("{}({x})", d.math("fabs", acc));
    format!("{m} <= {s} && {inv} <= {m}")
}

/// The struct's name.
pub(crate) const TYPE: &str = "gb_acc";

impl Compound {
    /// The compound accumulator of `op`, if it has one.
    pub(crate) fn of(op: ReduceOp) -> Option<Compound> {
        match op {
            ReduceOp::Var | ReduceOp::Sd => Some(Compound::Moments),
            ReduceOp::ArgMin | ReduceOp::ArgMax => Some(Compound::Extreme),
            ReduceOp::Prod => Some(Compound::Scaled),
            ReduceOp::LogSumExp => Some(Compound::LogSumExp),
            _ => None,
        }
    }

    /// The struct's fields.
    pub(crate) fn fields(self) -> &'static [&'static str] {
        match self {
            Compound::Moments => &["x", "y", "z"],
            Compound::Extreme | Compound::Scaled | Compound::LogSumExp => &["x", "y"],
        }
    }

    /// Whether a thread walking many values of this accumulator alone
    /// keeps [`super::Tuning::compound_packs`] packs in flight: the kinds
    /// that fold by arithmetic behind branches (products, moments,
    /// log-sum-exp); the extremes' selections gain nothing from more.
    pub(crate) fn walks_packed(self) -> bool {
        self != Compound::Extreme
    }

    /// Whether `gb_lift` takes the value's position.
    pub(crate) fn needs_position(self) -> bool {
        self == Compound::Extreme
    }

    /// Records the helpers the functions call (fields of `acc`, values of
    /// `value`).
    pub(crate) fn require_helpers(self, acc: DType, value: DType, hs: &mut BTreeSet<Helper>) {
        match self {
            Compound::Extreme if value.is_float() => require(hs, Helper::IsNan(value)),
            Compound::LogSumExp => require(hs, Helper::IsNan(acc)),
            _ => {}
        }
    }

    /// Writes the struct and its four functions for reduction `op`: fields
    /// of type `acc`, but the value (`x`: the extreme's, or the running
    /// maximum) of type `value`.
    pub(crate) fn write(
        self,
        w: &mut Writer,
        d: &dyn Dialect,
        op: ReduceOp,
        acc: DType,
        value: DType,
    ) {
        let t = d.value_type(acc);
        let vt = d.value_type(value);
        let fields: Vec<(&str, &str)> = self
            .fields()
            .iter()
            .map(|f| (if *f == "x" { vt } else { t }, *f))
            .collect();
        w.line(format!("// The {} accumulator ({self:?}).", op.name()));
        w.lines(&d.struct_decl(TYPE, &fields));
        w.line("");
        self.write_rescale(w, d, acc);
        let make = |w: &mut Writer, values: &[String]| {
            w.line(d.var_stmt(TYPE, "r", None));
            for (f, v) in self.fields().iter().zip(values) {
                w.line(format!("r.{f} = {v};"));
            }
            w.line("return r;");
        };
        let lit = |digits: &str| d.float_lit(digits, acc);
        let (scale, unscale) = scale_literals(d, acc);
        // Identity.
        w.open(d.fn_head(Some(TYPE), "gb_acc_identity", &[]));
        let identity: Vec<String> = match self {
            Compound::Moments => vec![lit("0.0"), lit("0.0"), lit("0.0")],
            Compound::Extreme => {
                let worst = if op == ReduceOp::ArgMax {
                    format!("-{}", d.inf(value))
                } else {
                    d.inf(value)
                };
                vec![worst, d.inf(acc)]
            }
            Compound::Scaled => vec![lit("1.0"), lit("0.0")],
            Compound::LogSumExp => vec![format!("-{}", d.inf(value)), lit("0.0")],
        };
        make(w, &identity);
        w.close();
        w.line("");
        // One value.
        let mut params = vec![d.value_param(vt, "v")];
        if self.needs_position() {
            params.push(d.value_param(t, "pos"));
        }
        w.open(d.fn_head(Some(TYPE), "gb_lift", &params));
        match self {
            Compound::Moments => make(w, &[lit("1.0"), "v".into(), lit("0.0")]),
            Compound::Extreme => make(w, &["v".into(), "pos".into()]),
            Compound::LogSumExp => make(w, &["v".into(), lit("1.0")]),
            Compound::Scaled => {
                w.line(d.var_stmt(TYPE, "r", None));
                w.line("r.x = v;");
                w.line(format!("r.y = {};", lit("0.0")));
                w.line(format!("return gb_rescale(r, {scale}, {unscale});"));
            }
        }
        w.close();
        w.line("");
        if self == Compound::Moments {
            // `gb_combine(a, gb_lift(v))` with the reciprocal of the new
            // count given (`rn = 1 / (a.x + 1)`), the same arithmetic:
            // accumulators of equal counts share one division.
            w.open(d.fn_head(
                Some(TYPE),
                "gb_push",
                &[
                    d.value_param(TYPE, "a"),
                    d.value_param(vt, "v"),
                    d.value_param(t, "rn"),
                ],
            ));
            w.line(d.let_stmt(t, "dm", "v - a.y"));
            make(
                w,
                &[
                    format!("a.x + {}", lit("1.0")),
                    "a.y + dm * rn".into(),
                    "a.z + dm * dm * a.x * rn".into(),
                ],
            );
            w.close();
            w.line("");
        }
        w.open(d.fn_head(
            Some(TYPE),
            "gb_combine",
            &[d.value_param(TYPE, "a"), d.value_param(TYPE, "b")],
        ));
        match self {
            Compound::Moments => {
                w.line(d.let_stmt(t, "n", "a.x + b.x"));
                w.open(format!("if (n == {})", lit("0.0")));
                w.line("return a;");
                w.close();
                w.line(d.let_stmt(t, "f", "b.x / n"));
                w.line(d.let_stmt(t, "dm", "b.y - a.y"));
                make(
                    w,
                    &[
                        "n".into(),
                        "a.y + dm * f".into(),
                        "a.z + b.z + dm * dm * a.x * f".into(),
                    ],
                );
            }
            Compound::Extreme => {
                let (an, bn) = if value.is_float() {
                    let isnan = format!("gb_isnan_{}", value.name());
                    (format!("{isnan}(a.x)"), format!("{isnan}(b.x)"))
                } else {
                    ("false".into(), "false".into())
                };
                w.line(d.let_stmt(d.bool_type, "an", &an));
                w.line(d.let_stmt(d.bool_type, "bn", &bn));
                let cmp = if op == ReduceOp::ArgMax { ">" } else { "<" };
                w.line(d.let_stmt(
                    d.bool_type,
                    "better",
                    &format!("(bn && !an) || (!an && !bn && b.x {cmp} a.x)"),
                ));
                w.line(d.let_stmt(
                    d.bool_type,
                    "tie",
                    "(an && bn) || (!an && !bn && b.x == a.x)",
                ));
                w.open("if (better || (tie && b.y < a.y))");
                w.line("return b;");
                w.close();
                w.line("return a;");
            }
            Compound::LogSumExp => {
                w.line(d.var_stmt(TYPE, "hi", Some("a")));
                w.line(d.var_stmt(TYPE, "lo", Some("b")));
                w.open("if (b.x > a.x)");
                w.line("hi = b;");
                w.line("lo = a;");
                w.close();
                w.open("if (lo.x == hi.x)");
                w.line("hi.y = hi.y + lo.y;");
                w.close();
                w.open("else");
                let exp = widen(
                    d,
                    value,
                    acc,
                    &format!("{}(lo.x - hi.x)", d.math("exp", value)),
                );
                w.line(format!("hi.y = hi.y + lo.y * {exp};"));
                w.close();
                w.line("return hi;");
            }
            Compound::Scaled => {
                w.line(d.var_stmt(TYPE, "r", None));
                w.line("r.x = a.x * b.x;");
                w.line("r.y = a.y + b.y;");
                w.line(format!("return gb_rescale(r, {scale}, {unscale});"));
            }
        }
        w.close();
        w.line("");
        if self == Compound::Scaled {
            // `gb_combine(a, gb_lift(v))`: where the product needs no
            // rescaling, neither did `v` (or rescaling it and the product
            // back were exact), so the plain product is that result.
            w.open(d.fn_head(
                Some(TYPE),
                "gb_mul",
                &[d.value_param(TYPE, "a"), d.value_param(vt, "v")],
            ));
            w.line(d.var_stmt(TYPE, "r", Some("a")));
            w.line("r.x = a.x * v;");
            w.open(format!(
                "if ({})",
                in_scale(d, acc, "r.x", &scale, &unscale)
            ));
            w.line("return r;");
            w.close();
            w.line("return gb_combine(a, gb_lift(v));");
            w.close();
            w.line("");
        }
        w.open(d.fn_head(Some(t), "gb_final", &[d.value_param(TYPE, "acc")]));
        match self {
            Compound::Moments => {
                w.open(format!("if (acc.x < {})", lit("2.0")));
                w.line(format!("return {};", d.nan(acc)));
                w.close();
                let var = format!("acc.z / (acc.x - {})", lit("1.0"));
                if op == ReduceOp::Sd {
                    w.line(format!("return {}({var});", d.math("sqrt", acc)));
                } else {
                    w.line(format!("return {var};"));
                }
            }
            Compound::Extreme => w.line("return acc.y;"),
            Compound::LogSumExp => {
                // A NaN met anywhere is in the sum; else a maximum of ±Inf
                // is the result (its shifted sum is no number).
                w.open(format!("if (gb_isnan_{}(acc.y))", acc.name()));
                w.line("return acc.y;");
                w.close();
                w.open(format!(
                    "if (acc.x == {} || acc.x == -{})",
                    d.inf(value),
                    d.inf(value)
                ));
                let max = widen(d, value, acc, "acc.x");
                w.line(format!("return {max};"));
                w.close();
                w.line(format!("return {max} + {}(acc.y);", d.math("log", acc)));
            }
            Compound::Scaled => {
                // |x| is in [1/S, S] (or 0, Inf, NaN): four units of S
                // either way overflow or underflow whatever x is.
                w.line(d.var_stmt(t, "x", Some("acc.x")));
                w.line(d.var_stmt(t, "e", Some("acc.y")));
                w.open(format!("if (e > {})", lit("3.0")));
                w.line(format!("return x * {};", d.inf(acc)));
                w.close();
                w.open(format!("if (e < -{})", lit("3.0")));
                w.line(format!("return x * {};", lit("0.0")));
                w.close();
                w.open(format!(
                    "for (; e > {}; e = e - {})",
                    lit("0.0"),
                    lit("1.0")
                ));
                w.line(format!("x = x * {scale};"));
                w.close();
                w.open(format!(
                    "for (; e < {}; e = e + {})",
                    lit("0.0"),
                    lit("1.0")
                ));
                w.line(format!("x = x * {unscale};"));
                w.close();
                w.line("return x;");
            }
        }
        w.close();
    }

    /// Writes `gb_rescale` (before the functions that call it): the
    /// scaled accumulator's renormalization.
    fn write_rescale(self, w: &mut Writer, d: &dyn Dialect, acc: DType) {
        if self != Compound::Scaled {
            return;
        }
        let t = d.value_type(acc);
        let lit = |digits: &str| d.float_lit(digits, acc);
        w.line("// A mantissa outside [1/S, S] scaled back by S (exact: S is a power of two).");
        w.open(d.fn_head(
            Some(TYPE),
            "gb_rescale",
            &[
                d.value_param(TYPE, "a"),
                d.value_param(t, "s"),
                d.value_param(t, "inv"),
            ],
        ));
        w.line(d.var_stmt(TYPE, "r", Some("a")));
        // The common case, first: a mantissa in [1/S, S] in magnitude (not
        // zero, not NaN) stays as it is.
        w.open(format!("if ({})", in_scale(d, acc, "r.x", "s", "inv")));
        w.line("return r;");
        w.close();
        w.open(format!("if (r.x == {})", lit("0.0")));
        w.line(format!("r.y = {};", lit("0.0")));
        w.close();
        w.open("if (r.x > s || r.x < -s)");
        w.line("r.x = r.x * inv;");
        w.line(format!("r.y = r.y + {};", lit("1.0")));
        w.close();
        w.open(format!(
            "if ((r.x != {}) && (r.x < inv) && (r.x > -inv))",
            lit("0.0")
        ));
        w.line("r.x = r.x * s;");
        w.line(format!("r.y = r.y - {};", lit("1.0")));
        w.close();
        w.line("return r;");
        w.close();
        w.line("");
    }

    /// Writes the reduction of accumulator `v` over `width` adjacent lanes
    /// of a warp (a power of two; the group's first lane `leader`, an int
    /// expression) with shuffles, the result in the leader, and says
    /// whether it did: `false` where the plain tree of
    /// [`Compound::write_shuffle`]'s moves is the way (every kind but
    /// log-sum-exp, or a dialect without broadcasts).
    ///
    /// A log-sum-exp tree combines at every level, each an `exp`; here
    /// the lanes first find their maximum (no `exp`), every lane rescales
    /// its sum to it once, and the sums are added: one `exp` per lane, not
    /// one per level (f64 softmax lanes of 64 values by groups of 16
    /// threads: four fewer `exp` per thread). A lane whose maximum equals
    /// the group's keeps its sum unscaled, so infinite maxima never meet
    /// `Inf - Inf`; a NaN stays in its sum.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write_shuffle_tree(
        self,
        w: &mut Writer,
        d: &dyn Dialect,
        (value, acc): (DType, DType),
        v: &str,
        width: u32,
        leader: &str,
    ) -> bool {
        if self != Compound::LogSumExp || width < 2 {
            return false;
        }
        let Some(broadcast) = d.shuffle_from("gb_m", leader) else {
            return false;
        };
        let vt = d.value_type(value);
        let half = (width / 2).to_string();
        let level = |w: &mut Writer| {
            w.hint(d.unroll(None));
            w.open(d.for_head(Some((d.int_type, "gb_t", &half)), "gb_t > 0", "gb_t >>= 1"));
        };
        w.line("// The maximum first, then every sum rescaled to it once and the sums added.");
        w.line(d.var_stmt(vt, "gb_m", Some(&format!("{v}.x"))));
        level(w);
        w.line(d.let_stmt(vt, "gb_u", &d.shuffle_down("gb_m", "gb_t")));
        w.line(format!(
            "gb_m = {};",
            d.select("gb_u > gb_m", "gb_u", "gb_m")
        ));
        w.close();
        w.line(format!("gb_m = {broadcast};"));
        w.open(format!("if ({v}.x != gb_m)"));
        let exp = format!("{}({v}.x - gb_m)", d.math("exp", value));
        w.line(format!("{v}.y = {v}.y * {};", widen(d, value, acc, &exp)));
        w.close();
        w.line(format!("{v}.x = gb_m;"));
        level(w);
        let moved = d.shuffle_down(&format!("{v}.y"), "gb_t");
        w.line(format!("{v}.y = {v}.y + {moved};"));
        w.close();
        true
    }

    /// `gb_shuffle_acc(v, o)`: the struct moved down `o` lanes of the
    /// warp, field by field (dialects with shuffles).
    pub(crate) fn write_shuffle(self, w: &mut Writer, d: &dyn Dialect) {
        let int = d.int_type;
        w.open(d.fn_head(
            Some(TYPE),
            "gb_shuffle_acc",
            &[d.value_param(TYPE, "v"), d.value_param(int, "o")],
        ));
        w.line(d.var_stmt(TYPE, "r", None));
        for f in self.fields() {
            w.line(format!(
                "r.{f} = {};",
                d.shuffle_down(&format!("v.{f}"), "o")
            ));
        }
        w.line("return r;");
        w.close();
        w.line("");
    }
}

/// `expr` of dtype `from` as `to` (unchanged when they are one dtype):
/// dialects such as WGSL mix no float widths in one expression.
pub(crate) fn widen(d: &dyn Dialect, from: DType, to: DType, expr: &str) -> String {
    if from == to {
        expr.to_string()
    } else {
        d.cast(d.value_type(to), &format!("({expr})"))
    }
}

/// The scaled accumulator's `S` and `1/S` as literals of `acc` (their
/// shortest round-trip digits, which parse to the powers of two exactly).
fn scale_literals(d: &dyn Dialect, acc: DType) -> (String, String) {
    let (s, inv) = match acc {
        DType::F32 => (
            format!("{:e}", 2f32.powi(60)),
            format!("{:e}", 2f32.powi(-60)),
        ),
        _ => (
            format!("{:e}", 2f64.powi(400)),
            format!("{:e}", 2f64.powi(-400)),
        ),
    };
    (d.float_lit(&s, acc), d.float_lit(&inv, acc))
}
