//! Expressions: one C expression per IR node, and the small device helpers
//! they call where a plain operator would not reproduce the CPU semantics
//! (NaN-propagating minimum/maximum, stable sigmoid and softplus, wrapping
//! integer arithmetic, saturating float-to-integer casts, bit-level NaN tests).

use std::collections::BTreeSet;

use gearbox_core::fusion::ir::Expr;
use gearbox_core::{BinaryOp, DType, UnaryOp};

use super::dialect::Dialect;
use super::writer::Writer;

/// A device helper function; the variant order is the emission order, so a
/// helper only calls helpers of earlier variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Helper {
    /// `gb_isnan_{f32,f64}`: bit-level NaN test.
    IsNan(DType),
    /// `gb_isfinite_{f32,f64}`: bit-level finiteness test.
    IsFinite(DType),
    /// `gb_sign_*`: -1, 0 or 1; zeros and NaN map to themselves.
    Sign(DType),
    /// `gb_sigmoid_*`: the stable logistic function.
    Sigmoid(DType),
    /// `gb_softplus_*`: `max(x, 0) + log1p(exp(-|x|))`.
    Softplus(DType),
    /// `gb_minimum_*`: NaN if either operand is NaN.
    Minimum(DType),
    /// `gb_maximum_*`: NaN if either operand is NaN.
    Maximum(DType),
    /// `gb_neg_i64`: wrapping negation.
    NegI64,
    /// `gb_abs_i64`: wrapping absolute value.
    AbsI64,
    /// `gb_add_i64`: wrapping addition.
    AddI64,
    /// `gb_sub_i64`: wrapping subtraction.
    SubI64,
    /// `gb_mul_i64`: wrapping multiplication.
    MulI64,
    /// `gb_{f32,f64}_to_i64`: truncation toward zero, saturating, NaN to 0.
    ToI64(DType),
}

/// Short dtype tag used in helper names.
pub(crate) fn tag(d: DType) -> &'static str {
    d.name()
}

/// Adds `h` and the helpers it calls to `set`.
pub(crate) fn require(set: &mut BTreeSet<Helper>, h: Helper) {
    match h {
        Helper::Minimum(d) | Helper::Maximum(d) | Helper::ToI64(d) if d.is_float() => {
            set.insert(Helper::IsNan(d));
        }
        _ => {}
    }
    set.insert(h);
}

/// The C expression of a node whose operands are the SSA values `v{j}` and
/// whose loads are the body parameters `x{i}`. `operand` gives each operand
/// node's dtype. Records the helpers the expression calls.
pub(crate) fn node_expr(
    d: &dyn Dialect,
    expr: Expr,
    dtype: DType,
    operand: impl Fn(usize) -> DType,
    helpers: &mut BTreeSet<Helper>,
) -> String {
    match expr {
        Expr::Load(i) => format!("x{i}"),
        // The epilogue renderer loads a lane's results as inputs
        // (`KernelIr::split_epilogue`); this name is never declared.
        Expr::Reduced(c) => format!("gb_reduced{c}"),
        Expr::Unary(op, a) => unary(d, op, operand(a), &format!("v{a}"), helpers),
        Expr::Binary(op, a, b) => binary(
            d,
            op,
            operand(a),
            &format!("v{a}"),
            &format!("v{b}"),
            helpers,
        ),
        Expr::Select(m, a, b) => d.select(&format!("v{m}"), &format!("v{a}"), &format!("v{b}")),
        Expr::Cast(a) => cast(d, operand(a), dtype, &format!("v{a}"), helpers),
        Expr::Call(f, _, flags) => {
            let f = f.get();
            let args: Vec<String> = expr
                .operands()
                .map(|j| format!("v{j}"))
                .chain((0..f.flags).map(|i| ((flags >> i) & 1).to_string()))
                .collect();
            format!("{}({})", f.device_name, args.join(", "))
        }
    }
}

/// Marks a kernel to be compiled without FMA contraction (`--fmad=false`):
/// scalar functions (R's nmath) then round like the CPU reference, so the
/// two agree to 1e-13 where cancellation would amplify a contracted
/// multiply-add into a visible difference.
pub const NO_FMA_MARKER: &str = "// gearbox: compile with --fmad=false";

/// The device source of every scalar function the kernel calls (see
/// [`scalar_fns_source`]); empty when the kernel calls none.
pub(crate) fn scalar_fn_sources(
    ir: &gearbox_core::fusion::ir::KernelIr,
) -> Result<String, gearbox_core::Error> {
    scalar_fns_source(ir.nodes().iter().filter_map(|node| match node.expr {
        Expr::Call(f, _, _) => Some(f.get()),
        _ => None,
    }))
}

/// The device source of `fns`, each library assembled once (so shared
/// callees are defined once), in a stable order, after the
/// [`NO_FMA_MARKER`]; empty when there are none.
pub fn scalar_fns_source(
    fns: impl IntoIterator<Item = &'static gearbox_core::fusion::ir::ScalarFn>,
) -> Result<String, gearbox_core::Error> {
    use std::collections::BTreeMap;
    let mut by_library: BTreeMap<&str, (&gearbox_core::fusion::ir::DeviceLibrary, BTreeSet<&str>)> =
        BTreeMap::new();
    for f in fns {
        by_library
            .entry(f.library.name)
            .or_insert((f.library, BTreeSet::new()))
            .1
            .insert(f.device_name);
    }
    let mut src = String::new();
    if !by_library.is_empty() {
        src.push_str(NO_FMA_MARKER);
        src.push('\n');
    }
    for (lib, names) in by_library.values() {
        let names: Vec<&str> = names.iter().copied().collect();
        src.push_str(&format!("// Device functions from library {}.\n", lib.name));
        src.push_str(&(lib.assemble)(&names)?);
        src.push('\n');
    }
    Ok(src)
}

fn call(set: &mut BTreeSet<Helper>, h: Helper, name: &str, args: &[&str]) -> String {
    require(set, h);
    format!("{name}({})", args.join(", "))
}

fn unary(d: &dyn Dialect, op: UnaryOp, dt: DType, x: &str, hs: &mut BTreeSet<Helper>) -> String {
    use UnaryOp::*;
    let t = tag(dt);
    let float = dt.is_float();
    match op {
        Neg if float => format!("-{x}"),
        Neg => call(hs, Helper::NegI64, "gb_neg_i64", &[x]),
        Abs if float => format!("{}({x})", d.math("fabs", dt)),
        Abs => call(hs, Helper::AbsI64, "gb_abs_i64", &[x]),
        Sign => call(hs, Helper::Sign(dt), &format!("gb_sign_{t}"), &[x]),
        // floor, ceil and round of an integer are the integer itself.
        Floor | Ceil | Round if !float => x.to_string(),
        Floor => format!("{}({x})", d.math("floor", dt)),
        Ceil => format!("{}({x})", d.math("ceil", dt)),
        // rint rounds half to even in the default rounding mode.
        Round => format!("{}({x})", d.math("rint", dt)),
        Sqrt => format!("{}({x})", d.math("sqrt", dt)),
        Exp => format!("{}({x})", d.math("exp", dt)),
        Expm1 => format!("{}({x})", d.math("expm1", dt)),
        Log => format!("{}({x})", d.math("log", dt)),
        Log1p => format!("{}({x})", d.math("log1p", dt)),
        Sin => format!("{}({x})", d.math("sin", dt)),
        Cos => format!("{}({x})", d.math("cos", dt)),
        Tan => format!("{}({x})", d.math("tan", dt)),
        Tanh => format!("{}({x})", d.math("tanh", dt)),
        Sigmoid => call(hs, Helper::Sigmoid(dt), &format!("gb_sigmoid_{t}"), &[x]),
        Softplus => call(hs, Helper::Softplus(dt), &format!("gb_softplus_{t}"), &[x]),
        // Integers and bools are never NaN and always finite.
        IsNan if float => call(hs, Helper::IsNan(dt), &format!("gb_isnan_{t}"), &[x]),
        IsNan => "false".into(),
        IsFinite if float => call(hs, Helper::IsFinite(dt), &format!("gb_isfinite_{t}"), &[x]),
        IsFinite => "true".into(),
        Not => format!("!{x}"),
    }
}

/// The C expression of binary `op` on operands `a` and `b` of dtype `dt`
/// (recording the helpers it calls).
pub(crate) fn binary(
    d: &dyn Dialect,
    op: BinaryOp,
    dt: DType,
    a: &str,
    b: &str,
    hs: &mut BTreeSet<Helper>,
) -> String {
    use BinaryOp::*;
    let t = tag(dt);
    let int = dt == DType::I64;
    match op {
        Add if int => call(hs, Helper::AddI64, "gb_add_i64", &[a, b]),
        Sub if int => call(hs, Helper::SubI64, "gb_sub_i64", &[a, b]),
        Mul if int => call(hs, Helper::MulI64, "gb_mul_i64", &[a, b]),
        Add => format!("{a} + {b}"),
        Sub => format!("{a} - {b}"),
        Mul => format!("{a} * {b}"),
        Div => format!("{a} / {b}"),
        Pow => format!("{}({a}, {b})", d.math("pow", dt)),
        Atan2 => format!("{}({a}, {b})", d.math("atan2", dt)),
        Minimum => call(hs, Helper::Minimum(dt), &format!("gb_minimum_{t}"), &[a, b]),
        Maximum => call(hs, Helper::Maximum(dt), &format!("gb_maximum_{t}"), &[a, b]),
        Eq => format!("{a} == {b}"),
        Ne => format!("{a} != {b}"),
        Lt => format!("{} < {}", d.ordered(dt, a), d.ordered(dt, b)),
        Le => format!("{} <= {}", d.ordered(dt, a), d.ordered(dt, b)),
        Gt => format!("{} > {}", d.ordered(dt, a), d.ordered(dt, b)),
        Ge => format!("{} >= {}", d.ordered(dt, a), d.ordered(dt, b)),
        And => format!("{a} && {b}"),
        Or => format!("{a} || {b}"),
    }
}

/// `x` (of dtype `from`) converted to `to` with the CPU's rules: float to
/// integer truncates toward zero, saturating, NaN to 0; anything to bool is
/// `!= 0` (NaN is true); bool to a number is 0 or 1; narrowing and integer
/// to float round to nearest.
pub(crate) fn cast(
    d: &dyn Dialect,
    from: DType,
    to: DType,
    x: &str,
    hs: &mut BTreeSet<Helper>,
) -> String {
    use DType::*;
    match (from, to) {
        _ if from == to => x.to_string(),
        (_, Bool) => format!("{x} != 0"),
        (F32 | F64, I64) => call(
            hs,
            Helper::ToI64(from),
            &format!("gb_{}_to_i64", tag(from)),
            &[x],
        ),
        (F64, F32) => format!("{}({x})", d.f64_to_f32),
        (I64, F32) => format!("{}({x})", d.i64_to_f32),
        (I64, F64) => format!("{}({x})", d.i64_to_f64),
        // f32 to f64 is exact; bool to a number gives 0 or 1.
        (_, to) => d.cast(d.value_type(to), x),
    }
}

/// Writes the definition of helper `h`.
pub(crate) fn write_helper(w: &mut Writer, d: &dyn Dialect, h: Helper) {
    match h {
        Helper::IsNan(dt) | Helper::IsFinite(dt) => write_bit_test(w, d, h, dt),
        Helper::Sign(DType::I64) => write_sign_i64(w, d),
        Helper::Sign(dt) => write_sign(w, d, dt),
        Helper::Sigmoid(dt) => write_sigmoid(w, d, dt),
        Helper::Softplus(dt) => write_softplus(w, d, dt),
        Helper::Minimum(dt) | Helper::Maximum(dt) => write_min_max(w, d, h, dt),
        Helper::NegI64 | Helper::AbsI64 => write_neg_abs_i64(w, d, h),
        Helper::AddI64 | Helper::SubI64 | Helper::MulI64 => write_wrapping_i64(w, d, h),
        Helper::ToI64(dt) => write_to_i64(w, d, dt),
    }
}

/// `gb_isnan_*` / `gb_isfinite_*`: tests on the bits.
fn write_bit_test(w: &mut Writer, d: &dyn Dialect, h: Helper, dt: DType) {
    let (ty, bits, mask, exp) = match dt {
        DType::F32 => (
            d.f32_type,
            d.f32_bits,
            format!("0x7fffffff{}", d.u32_literal_suffix),
            format!("0x7f800000{}", d.u32_literal_suffix),
        ),
        _ => (
            d.f64_type,
            d.f64_bits,
            d.i64_digits("0x7fffffffffffffff"),
            d.i64_digits("0x7ff0000000000000"),
        ),
    };
    let (name, body) = if matches!(h, Helper::IsNan(_)) {
        ("isnan", format!("({bits}(x) & {mask}) > {exp}"))
    } else {
        ("isfinite", format!("({bits}(x) & {exp}) != {exp}"))
    };
    let head = d.fn_head(
        Some(d.bool_type),
        &format!("gb_{name}_{}", tag(dt)),
        &[d.value_param(ty, "x")],
    );
    w.open(head);
    w.line(format!("return {body};"));
    w.close();
}

/// The head of one-argument helper `name` from `ty` to `ret`.
fn unary_head(d: &dyn Dialect, ret: &str, name: &str, ty: &str) -> String {
    d.fn_head(Some(ret), name, &[d.value_param(ty, "x")])
}

/// The head of two-argument helper `name` on `ty`.
fn binary_head(d: &dyn Dialect, name: &str, ty: &str) -> String {
    d.fn_head(
        Some(ty),
        name,
        &[d.value_param(ty, "a"), d.value_param(ty, "b")],
    )
}

/// `gb_sign_i64`.
fn write_sign_i64(w: &mut Writer, d: &dyn Dialect) {
    let ty = d.i64_type;
    w.open(unary_head(d, ty, "gb_sign_i64", ty));
    // Each comparison cast on its own: languages whose bools are not
    // integers (WGSL) cannot subtract them.
    let (above, below) = (d.cast(ty, "(x > 0)"), d.cast(ty, "(x < 0)"));
    w.line(format!("return {above} - {below};"));
    w.close();
}

/// `gb_sign_*` of a float: zeros and NaN map to themselves.
fn write_sign(w: &mut Writer, d: &dyn Dialect, dt: DType) {
    let ty = d.value_type(dt);
    let (zero, one) = (d.float_lit("0.0", dt), d.float_lit("1.0", dt));
    w.open(unary_head(d, ty, &format!("gb_sign_{}", tag(dt)), ty));
    w.line("// Zeros and NaN map to themselves.");
    let inner = d.select(&format!("x < {zero}"), &format!("-{one}"), "x");
    let sign = d.select(&format!("x > {zero}"), &one, &format!("({inner})"));
    w.line(format!("return {sign};"));
    w.close();
}

/// `gb_sigmoid_*`: the stable logistic function, as the CPU computes it
/// (`vmath::sigmoid`): one `exp(-|x|)` and one division for every sign,
/// without a branch (a branch per sign ran both paths in every warp of
/// mixed signs; f64 division and `exp` made that compute bound).
fn write_sigmoid(w: &mut Writer, d: &dyn Dialect, dt: DType) {
    let ty = d.value_type(dt);
    let (zero, one) = (d.float_lit("0.0", dt), d.float_lit("1.0", dt));
    let (exp, fabs) = (d.math("exp", dt), d.math("fabs", dt));
    w.open(unary_head(d, ty, &format!("gb_sigmoid_{}", tag(dt)), ty));
    w.line(d.let_stmt(ty, "e", &format!("{exp}(-{fabs}(x))")));
    w.line(d.let_stmt(ty, "s", &format!("{one} / ({one} + e)")));
    w.line(format!(
        "return {};",
        d.select(&format!("x >= {zero}"), "s", "e * s")
    ));
    w.close();
}

/// `gb_softplus_*`.
fn write_softplus(w: &mut Writer, d: &dyn Dialect, dt: DType) {
    let ty = d.value_type(dt);
    let zero = d.float_lit("0.0", dt);
    let (log1p, exp, fabs) = (d.math("log1p", dt), d.math("exp", dt), d.math("fabs", dt));
    w.open(unary_head(d, ty, &format!("gb_softplus_{}", tag(dt)), ty));
    let positive = d.select(&format!("x > {zero}"), "x", &zero);
    w.line(format!("return ({positive}) + {log1p}({exp}(-{fabs}(x)));"));
    w.close();
}

/// `gb_minimum_*` / `gb_maximum_*`: NaN-propagating, `-0` below `+0`.
fn write_min_max(w: &mut Writer, d: &dyn Dialect, h: Helper, dt: DType) {
    let ty = d.value_type(dt);
    let (name, cmp) = if matches!(h, Helper::Minimum(_)) {
        ("minimum", "<")
    } else {
        ("maximum", ">")
    };
    w.open(binary_head(d, &format!("gb_{name}_{}", tag(dt)), ty));
    if dt.is_float() {
        // -0.0 below +0.0 (IEEE 754-2019), so a reduction's result
        // does not depend on its order, and matches the CPU's.
        let negative = match dt {
            DType::F32 => format!("({}(b) >> 31) != 0{}", d.f32_bits, d.u32_literal_suffix),
            _ => format!("{}(b) < {}", d.f64_bits, d.i64_digits("0")),
        };
        let pick = if name == "minimum" {
            negative
        } else {
            format!("!({negative})")
        };
        let cond = format!("(b {cmp} a || (b == a && {pick}))");
        // NaN if either operand is NaN (the C library's minimum drops a
        // NaN). Selects, no branch: a reduction's loop keeps its next
        // loads ahead of the comparison.
        let nan = format!("gb_isnan_{t}(a) || gb_isnan_{t}(b)", t = tag(dt));
        w.line(d.let_stmt(ty, "gb_m", &d.select(&cond, "b", "a")));
        w.line(format!("return {};", d.select(&nan, "a + b", "gb_m")));
    } else {
        w.line(format!(
            "return {};",
            d.select(&format!("b {cmp} a"), "b", "a")
        ));
    }
    w.close();
}

/// `gb_neg_i64` / `gb_abs_i64`: wrapping.
fn write_neg_abs_i64(w: &mut Writer, d: &dyn Dialect, h: Helper) {
    let (ty, u) = (d.i64_type, d.u64_type);
    let zero = format!("0{}", d.u64_literal_suffix);
    let neg = d.cast(ty, &format!("({zero} - {})", d.cast(u, "x")));
    if h == Helper::NegI64 {
        w.open(unary_head(d, ty, "gb_neg_i64", ty));
        w.line(format!("return {neg};"));
    } else {
        w.open(unary_head(d, ty, "gb_abs_i64", ty));
        w.line("// Wraps: the absolute value of the smallest i64 is itself.");
        w.line(format!("return {};", d.select("x < 0", &neg, "x")));
    }
    w.close();
}

/// `gb_add_i64`, `gb_sub_i64`, `gb_mul_i64`: wrapping.
fn write_wrapping_i64(w: &mut Writer, d: &dyn Dialect, h: Helper) {
    let (ty, u) = (d.i64_type, d.u64_type);
    let (name, op) = match h {
        Helper::AddI64 => ("add", "+"),
        Helper::SubI64 => ("sub", "-"),
        _ => ("mul", "*"),
    };
    w.open(binary_head(d, &format!("gb_{name}_i64"), ty));
    w.line(format!(
        "return {};",
        d.cast(ty, &format!("({} {op} {})", d.cast(u, "a"), d.cast(u, "b")))
    ));
    w.close();
}

/// `gb_{f32,f64}_to_i64`: truncating, saturating, NaN to 0.
fn write_to_i64(w: &mut Writer, d: &dyn Dialect, dt: DType) {
    let ty = d.value_type(dt);
    let i = d.i64_type;
    let lim = d.float_lit("9223372036854775808.0", dt);
    w.open(unary_head(d, i, &format!("gb_{}_to_i64", tag(dt)), ty));
    w.line("// Truncates toward zero; saturates; NaN gives 0 (a plain cast is UB there).");
    w.open(format!("if (gb_isnan_{}(x))", tag(dt)));
    w.line("return 0;");
    w.close();
    w.open(format!("if (x >= {lim})"));
    w.line(format!("return {};", d.i64_max()));
    w.close();
    w.open(format!("if (x < -{lim})"));
    w.line(format!("return {};", d.i64_min()));
    w.close();
    w.line(format!("return {};", d.cast(i, "x")));
    w.close();
}
