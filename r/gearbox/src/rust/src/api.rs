//! The R package's computations in plain Rust: everything the savvy
//! functions do between R's values and R's results, on Gearbox types only
//! (no R), so that a Rust program can run exactly this code on a device
//! without R (`crates/gearbox/examples/r_layer.rs` includes this file).

use gearbox::stats::glm::{glm_grid, GlmSpec};
use gearbox::stats::lm::{many_lm, LmOptions, ManyLm};
use gearbox::{Array, BinaryOp, DType, Error, Precision, ReduceOp, Result, UnaryOp};

/// An error of the R layer, naming the R function and the bad value.
fn bad(op: &'static str, value: String, why: &str) -> Error {
    Error::InvalidArgument {
        op,
        name: "argument",
        value,
        why: why.into(),
    }
}

/// A precision mode by its R name.
pub fn precision_of(mode: &str) -> Result<Precision> {
    match mode {
        "strict" => Ok(Precision::Strict),
        "fast" => Ok(Precision::Fast),
        "exact" => Ok(Precision::Exact),
        other => Err(bad(
            "gb_matrix",
            other.into(),
            "mode must be \"strict\", \"fast\" or \"exact\"",
        )),
    }
}

/// An array from R's column-major doubles: float32 in "fast" mode.
pub fn from_values(values: Vec<f64>, dims: Vec<usize>, precision: Precision) -> Result<Array> {
    let a = Array::from_vec(dims, values)?;
    let a = if precision == Precision::Fast {
        a.astype(DType::F32)?
    } else {
        a
    };
    a.with_precision(precision)
}

/// The values of `a` as doubles (R's numeric).
pub fn to_values(a: &Array) -> Result<Vec<f64>> {
    if a.dtype() == DType::F64 {
        a.to_vec::<f64>()
    } else {
        a.astype(DType::F64)?.to_vec::<f64>()
    }
}

/// R's operator symbols as Gearbox's ops.
pub fn binary_op(symbol: &str) -> Result<BinaryOp> {
    Ok(match symbol {
        "+" => BinaryOp::Add,
        "-" => BinaryOp::Sub,
        "*" => BinaryOp::Mul,
        "/" => BinaryOp::Div,
        "^" => BinaryOp::Pow,
        "==" => BinaryOp::Eq,
        "!=" => BinaryOp::Ne,
        "<" => BinaryOp::Lt,
        "<=" => BinaryOp::Le,
        ">" => BinaryOp::Gt,
        ">=" => BinaryOp::Ge,
        "pmin" => BinaryOp::Minimum,
        "pmax" => BinaryOp::Maximum,
        other => {
            return Err(bad(
                "Ops",
                other.into(),
                "this operator is not supported on gb_matrix",
            ))
        }
    })
}

/// A reduction by R's name.
pub fn reduce_op(name: &str) -> Result<ReduceOp> {
    Ok(match name {
        "sum" => ReduceOp::Sum,
        "prod" => ReduceOp::Prod,
        "mean" => ReduceOp::Mean,
        "var" => ReduceOp::Var,
        "sd" => ReduceOp::Sd,
        "min" => ReduceOp::Min,
        "max" => ReduceOp::Max,
        other => return Err(bad("Summary", other.into(), "no such reduction")),
    })
}

/// Comparisons give bool (and integer ops i64): results R sees are
/// floats of `like`'s width.
pub fn as_float(a: Array, like: DType) -> Result<Array> {
    if a.dtype() == DType::Bool || a.dtype() == DType::I64 {
        a.astype(if like == DType::F32 {
            DType::F32
        } else {
            DType::F64
        })
    } else {
        Ok(a)
    }
}

/// `x op y` with R's rules: equal dimensions, or one operand of length one.
pub fn r_binary(x: &Array, y: &Array, op: &str) -> Result<Array> {
    let op = binary_op(op)?;
    let out = if y.numel() == 1 && x.numel() != 1 {
        x.binary(op, &y.reshape(Vec::<usize>::new())?)?
    } else if x.numel() == 1 && y.numel() != 1 {
        x.reshape(Vec::<usize>::new())?.binary(op, y)?
    } else if x.dims() != y.dims() {
        return Err(Error::BadShape {
            op: "Ops",
            shape: y.shape().clone(),
            why: format!("non-conformable arrays: {:?} and {:?}", x.dims(), y.dims()),
        });
    } else {
        x.binary(op, y)?
    };
    as_float(out, x.dtype())
}

/// `x op value`, or `value op x` when `value_first`.
pub fn r_binary_scalar(x: &Array, value: f64, op: &str, value_first: bool) -> Result<Array> {
    let op = binary_op(op)?;
    let s = x.scalar_like(value);
    let out = if value_first {
        s.binary(op, x)?
    } else {
        x.binary(op, &s)?
    };
    as_float(out, x.dtype())
}

/// An elementwise math function by name.
pub fn r_math(x: &Array, name: &str) -> Result<Array> {
    let op = UnaryOp::ALL
        .iter()
        .copied()
        .find(|o| o.name() == name)
        .ok_or_else(|| bad("Math", name.into(), "no such elementwise function"))?;
    as_float(x.unary(op)?, x.dtype())
}

/// A reduction over everything (`axis` None) or one axis, as an R vector.
pub fn r_reduce(x: &Array, name: &str, axis: Option<usize>) -> Result<Array> {
    let op = reduce_op(name)?;
    match axis {
        None => x.reduce(op, None),
        Some(a) => {
            let r = x.reduce(op, Some(a))?;
            r.reshape(vec![r.numel()])
        }
    }
}

/// A factorization's result computed now (a singular matrix is an error
/// where R's `solve` and `chol` give one).
pub fn eager(a: Result<Array>) -> Result<Array> {
    let a = a?;
    a.eval()?;
    Ok(a)
}

/// glmbayes's `f2_f3`: `qf` (one per column of `b`) and the gradient with
/// one row per point.
#[allow(clippy::too_many_arguments)]
pub fn glm_grid_r(
    family: &str,
    link: Option<&str>,
    dispersion: Option<f64>,
    b: &Array,
    y: &Array,
    x: &Array,
    mu: &Array,
    p: &Array,
    alpha: &Array,
    wt: &Array,
) -> Result<(Array, Array)> {
    let vector = |a: &Array| a.reshape(vec![a.numel()]);
    let spec = GlmSpec::parse(family, link, dispersion)?;
    let grid = glm_grid(
        x,
        &vector(y)?,
        &vector(wt)?,
        &vector(alpha)?,
        &vector(mu)?,
        p,
        b,
        &spec,
    )?;
    Ok((vector(&grid.qf)?, grid.gradient.t()?))
}

/// nmath function `name` on equal-length argument vectors with its flags
/// in nmath's order.
pub fn nmath(name: &str, args: Vec<Vec<f64>>, flags: &[bool]) -> Result<Vec<f64>> {
    let f = gearbox::stats::elementwise::ALL
        .iter()
        .copied()
        .find(|f| f.name == name)
        .ok_or_else(|| bad("nmath", name.into(), "no such nmath function"))?;
    if args.len() != f.arity || flags.len() != f.flags {
        return Err(bad(
            "nmath",
            format!("{} arguments and {} flags", args.len(), flags.len()),
            &format!("{name} takes {} arguments and {} flags", f.arity, f.flags),
        ));
    }
    let arrays: Vec<Array> = args
        .into_iter()
        .map(|v| Array::from_vec(vec![v.len()], v))
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = arrays.iter().collect();
    let bits = flags
        .iter()
        .enumerate()
        .fold(0u8, |acc, (i, &on)| acc | (u8::from(on) << i));
    Array::call_fn(f, &refs, bits)?.to_vec::<f64>()
}

/// A linear layer's initial parameters (weight out x in; bias 1 x out).
pub fn linear_init(
    input: usize,
    output: usize,
    bias: bool,
    seed: u64,
) -> Result<Vec<(String, Array)>> {
    use gearbox::nn::Module;
    let layer = gearbox::nn::Linear::new(input, output, bias, seed)?;
    layer
        .parameters()
        .iter()
        .map(|(name, a)| {
            let a = if name == "bias" {
                a.reshape(vec![1, a.numel()])?
            } else {
                a.clone()
            };
            Ok((name.to_string(), a))
        })
        .collect()
}

/// `positions` as one range, when they are adjacent and ascending (and
/// there is at least one).
fn one_run(positions: &[usize]) -> Option<std::ops::Range<usize>> {
    let first = *positions.first()?;
    let adjacent = positions.iter().enumerate().all(|(k, &p)| p == first + k);
    adjacent.then(|| first..first + positions.len())
}

/// The positions `positions` (in order, repeats allowed) along `axis` of
/// a matrix, where the data is: one run of adjacent positions is a slice,
/// anything else one gather ([`Array::take`]).
fn select(x: &Array, axis: usize, positions: &[usize]) -> Result<Array> {
    let extent = x.dims()[axis];
    if let Some(&p) = positions.iter().find(|&&p| p >= extent) {
        let what = if axis == 0 { "row" } else { "column" };
        return Err(bad(
            "[",
            (p + 1).to_string(),
            &format!("{what} subscript out of bounds (the matrix has {extent})"),
        ));
    }
    if positions.is_empty() {
        return x.slice(axis, 0..0);
    }
    match one_run(positions) {
        Some(all) if all == (0..extent) => Ok(x.clone()),
        Some(run) => x.slice(axis, run),
        None => x.take(axis, positions),
    }
}

/// R's `x[i, j]` on a matrix (a vector counts as one column): rows at
/// `rows` and columns at `cols` (0-based, in order, repeats allowed;
/// `None` keeps every one). Always a matrix.
pub fn r_subset(x: &Array, rows: Option<&[usize]>, cols: Option<&[usize]>) -> Result<Array> {
    let m = match x.ndim() {
        2 => x.clone(),
        0 | 1 => x.reshape(vec![x.numel(), 1])?,
        _ => {
            return Err(Error::BadShape {
                op: "[",
                shape: x.shape().clone(),
                why: "indexing takes a matrix".into(),
            })
        }
    };
    let m = match rows {
        Some(p) => select(&m, 0, p)?,
        None => m,
    };
    match cols {
        Some(p) => select(&m, 1, p),
        None => Ok(m),
    }
}

/// R's operation `op` on `x`, planned and not run: what `gb_explain(x,
/// op)` explains. Operators apply to `x` and `x`, `%*%` is `x %*% t(x)`,
/// `solve` the inverse, `chain` `exp(x) * 2 + x`.
pub fn r_planned_op(x: &Array, op: &str) -> Result<Array> {
    let axis_summary = |name: &str, axis: usize| r_reduce(x, name, Some(axis));
    match op {
        "chain" => (x.exp()? * 2.0)? + x,
        "%*%" | "matmul" => x.matmul(&x.t()?),
        "crossprod" => x.crossprod(x),
        "tcrossprod" => x.tcrossprod(x),
        "solve" => x.inv(),
        "chol" => x.cholesky(),
        "cumsum" => x.cumsum(),
        "t" => x.t(),
        "colSums" => axis_summary("sum", 0),
        "colMeans" => axis_summary("mean", 0),
        "rowSums" => axis_summary("sum", 1),
        "rowMeans" => axis_summary("mean", 1),
        _ if binary_op(op).is_ok() => r_binary(x, x, op),
        _ if reduce_op(op).is_ok() => r_reduce(x, op, None),
        _ if UnaryOp::ALL.iter().any(|o| o.name() == op) => r_math(x, op),
        other => Err(bad(
            "gb_explain",
            other.into(),
            "op must be an operator, a Math or Summary function, colSums, colMeans, rowSums, \
             rowMeans, cumsum, t, %*%, crossprod, tcrossprod, solve, chol or chain",
        )),
    }
}

/// `gb_many_lm(X, Y, intercept)`: one design `x` (n x p) for the columns
/// of `y` (n x k), terms named by `term_names` (X's `colnames`, or none).
pub fn many_lm_r(x: &Array, y: &Array, intercept: bool, term_names: Vec<String>) -> Result<ManyLm> {
    let opts = LmOptions {
        intercept,
        term_names: (!term_names.is_empty()).then_some(term_names),
    };
    many_lm(x, y, &opts)
}

/// R's `sweep` MARGIN (1: rows, 2: columns) as the axis of the matrix the
/// statistics run along.
pub fn sweep_axis(margin: i32) -> Result<usize> {
    match margin {
        1 => Ok(0),
        2 => Ok(1),
        m => Err(bad(
            "gb_sweep_inplace",
            m.to_string(),
            "MARGIN must be 1 (rows) or 2 (columns)",
        )),
    }
}
