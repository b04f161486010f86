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

/// Which values an R summary keeps: R's `na.rm` and `range`'s `finite`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Every value (`na.rm = FALSE`): a NaN (R's `NA` or `NaN`) propagates.
    All,
    /// The values that are not NaN (`na.rm = TRUE`; R's `NA` is a NaN here).
    NotNan,
    /// The finite values (`range(x, finite = TRUE)`).
    Finite,
}

/// A [`Keep`] by the name the R layer passes: "all", "not_nan" or "finite".
pub fn keep_of(name: &str) -> Result<Keep> {
    match name {
        "all" => Ok(Keep::All),
        "not_nan" => Ok(Keep::NotNan),
        "finite" => Ok(Keep::Finite),
        other => Err(bad(
            "Summary",
            other.into(),
            "keep must be \"all\", \"not_nan\" or \"finite\"",
        )),
    }
}

/// The mask (bool, `x`'s shape) of the values `keep` removes; `None` for
/// [`Keep::All`].
fn removed(x: &Array, keep: Keep) -> Result<Option<Array>> {
    Ok(match keep {
        Keep::All => None,
        Keep::NotNan => Some(x.isnan()?),
        Keep::Finite => Some(x.isfinite()?.not()?),
    })
}

/// How many values are not removed by `removed`, over everything (a 0-d
/// array) or along `axis` (kept with length 1), in `x`'s float dtype.
fn kept_count(x: &Array, removed: &Array, axis: Option<usize>) -> Result<Array> {
    removed
        .not()?
        .reduce(ReduceOp::Sum, axis)?
        .astype(x.dtype().float_of())
}

/// `x` with the removed values replaced by `value`.
fn filled(x: &Array, removed: &Array, value: f64) -> Result<Array> {
    Array::where_(removed, &x.scalar_like(value), x)
}

/// The mean of the values not removed (over everything, or along `axis`
/// kept with length 1): the sum over the count, then R's refinement (the
/// mean of the residuals added, where the first mean is finite), as R's
/// `mean` computes it. NaN where nothing is kept.
fn kept_mean(x: &Array, removed: &Array, axis: Option<usize>) -> Result<Array> {
    let n = kept_count(x, removed, axis)?;
    let first = filled(x, removed, 0.0)?
        .reduce(ReduceOp::Sum, axis)?
        .div(&n)?;
    let residuals = filled(&x.sub(&first)?, removed, 0.0)?;
    let refined = first.add(&residuals.reduce(ReduceOp::Sum, axis)?.div(&n)?)?;
    Array::where_(&first.isfinite()?, &refined, &first)
}

/// The sample variance (divisor n - 1) of the values not removed, around
/// their refined mean, as R's `var(x, na.rm = TRUE)` of a vector; NaN
/// where fewer than two are kept (R gives `NA`).
fn kept_var(x: &Array, removed: &Array, axis: Option<usize>) -> Result<Array> {
    let n = kept_count(x, removed, axis)?;
    let mean = kept_mean(x, removed, axis)?;
    let d = filled(&x.sub(&mean)?, removed, 0.0)?;
    let v = d
        .mul(&d)?
        .reduce(ReduceOp::Sum, axis)?
        .div(&n.sub_scalar(1.0)?)?;
    Array::where_(&n.lt_scalar(2.0)?, &v.scalar_like(f64::NAN), &v)
}

/// R's summaries with `na.rm = TRUE` (`keep` [`Keep::NotNan`]) or
/// `range`'s `finite = TRUE` ([`Keep::Finite`]): `sum`, `prod`, `min`,
/// `max`, `mean`, `var` and `sd` of the kept values, over everything
/// (`axis` None, a 0-d array) or along one axis (an R vector), computed
/// where `x` is by masked reductions (the removed values replaced by the
/// reduction's identity, counts from the mask). What R returns when
/// nothing is kept: `sum` 0, `prod` 1, `min` Inf, `max` -Inf (R warns;
/// the R layer does, from [`r_count_kept`]), `mean` NaN, `var` and `sd`
/// NaN (R: `NA`). [`Keep::All`] is [`r_reduce`].
pub fn r_reduce_kept(x: &Array, name: &str, axis: Option<usize>, keep: Keep) -> Result<Array> {
    let op = reduce_op(name)?;
    let Some(removed) = removed(x, keep)? else {
        return r_reduce(x, name, axis);
    };
    let out = match op {
        ReduceOp::Sum => filled(x, &removed, 0.0)?.reduce(op, axis)?,
        ReduceOp::Prod => filled(x, &removed, 1.0)?.reduce(op, axis)?,
        ReduceOp::Min => filled(x, &removed, f64::INFINITY)?.reduce(op, axis)?,
        ReduceOp::Max => filled(x, &removed, f64::NEG_INFINITY)?.reduce(op, axis)?,
        ReduceOp::Mean => kept_mean(x, &removed, axis)?,
        ReduceOp::Var => kept_var(x, &removed, axis)?,
        ReduceOp::Sd => kept_var(x, &removed, axis)?.sqrt()?,
        other => {
            return Err(bad(
                "Summary",
                other.name().into(),
                "no such reduction with na.rm",
            ))
        }
    };
    match axis {
        None => Ok(out),
        Some(_) => out.reshape(vec![out.numel()]),
    }
}

/// How many values of `x` `keep` keeps (all of them for [`Keep::All`]),
/// as a number: whether `min`/`max` had any values to look at.
pub fn r_count_kept(x: &Array, keep: Keep) -> Result<f64> {
    match removed(x, keep)? {
        None => Ok(x.numel() as f64),
        Some(removed) => Ok(kept_count(x, &removed, None)?.to_f64_vec()?[0]),
    }
}

/// R's `use` argument of `var` (and `cov`), as the R layer resolves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CovUse {
    /// "everything": a NaN makes every covariance it enters NaN.
    Everything,
    /// "all.obs": a NaN anywhere is an error.
    AllObs,
    /// "complete.obs": the rows with no NaN (in `x` or `y`); an error
    /// when there are none.
    CompleteObs,
    /// "na.or.complete" (`na.rm = TRUE`): the rows with no NaN; NaN
    /// (R: `NA`) when there are none.
    NaOrComplete,
}

/// A [`CovUse`] by R's full name ("pairwise.complete.obs" is refused:
/// a covariance per pair of columns over that pair's complete rows is
/// not implemented).
pub fn cov_use(name: &str) -> Result<CovUse> {
    match name {
        "everything" => Ok(CovUse::Everything),
        "all.obs" => Ok(CovUse::AllObs),
        "complete.obs" => Ok(CovUse::CompleteObs),
        "na.or.complete" => Ok(CovUse::NaOrComplete),
        other => Err(Error::InvalidArgument {
            op: "var",
            name: "use",
            value: other.into(),
            why: "must be \"everything\", \"all.obs\", \"complete.obs\" or \"na.or.complete\" \
                  on a gb_matrix (\"pairwise.complete.obs\" is not supported)"
                .into(),
        }),
    }
}

/// `a` as a matrix: a vector (R's one-column results) is one column, a
/// number is 1 x 1.
fn as_matrix(a: &Array, op: &'static str) -> Result<Array> {
    match a.ndim() {
        2 => Ok(a.clone()),
        0 | 1 => a.reshape(vec![a.numel(), 1]),
        _ => Err(Error::BadShape {
            op,
            shape: a.shape().clone(),
            why: "takes a matrix".into(),
        }),
    }
}

/// How many NaN `a` holds.
fn nan_count(a: &Array) -> Result<f64> {
    Ok(a.isnan()?
        .reduce(ReduceOp::Sum, None)?
        .astype(DType::F64)?
        .to_f64_vec()?[0])
}

/// R's `var(x, y, use = ...)` of matrices: the covariances (divisor n - 1)
/// of `x`'s columns with `y`'s (with `x`'s own when `y` is None), one row
/// per column of `x`, as base R's `var` and `cov` compute them for a
/// matrix: column means with R's refinement, then the cross products of
/// the centred columns (`crossprod`), where the data is. `use` picks the
/// rows ([`CovUse`]); fewer than two rows give NaN (R: `NA`).
pub fn r_cov(x: &Array, y: Option<&Array>, use_: CovUse) -> Result<Array> {
    let x = as_matrix(x, "var")?;
    let y = match y {
        Some(y) => {
            let y = as_matrix(y, "var")?;
            if y.dims()[0] != x.dims()[0] {
                return Err(Error::InvalidArgument {
                    op: "var",
                    name: "y",
                    value: format!("{} rows", y.dims()[0]),
                    why: format!("incompatible dimensions: x has {} rows", x.dims()[0]),
                });
            }
            Some(y)
        }
        None => None,
    };
    let both = |f: &dyn Fn(&Array) -> Result<f64>| -> Result<f64> {
        Ok(f(&x)? + y.as_ref().map_or(Ok(0.0), f)?)
    };
    let rows = match use_ {
        CovUse::Everything => None,
        CovUse::AllObs => {
            if both(&nan_count)? > 0.0 {
                return Err(Error::InvalidArgument {
                    op: "var",
                    name: "use",
                    value: "all.obs".into(),
                    why: "missing observations in cov/cor".into(),
                });
            }
            None
        }
        CovUse::CompleteObs | CovUse::NaOrComplete => {
            // The rows with a NaN in x or y, as a mask of x's (and y's) shape.
            let mut incomplete = x.isnan()?.any_axis(1)?;
            if let Some(y) = &y {
                incomplete = incomplete.or(&y.isnan()?.any_axis(1)?)?;
            }
            if use_ == CovUse::CompleteObs {
                let complete = incomplete
                    .not()?
                    .reduce(ReduceOp::Sum, None)?
                    .astype(DType::F64)?
                    .to_f64_vec()?[0];
                if complete == 0.0 {
                    return Err(Error::InvalidArgument {
                        op: "var",
                        name: "use",
                        value: "complete.obs".into(),
                        why: "no complete element pairs".into(),
                    });
                }
            }
            Some(incomplete)
        }
    };
    let centred = |a: &Array| -> Result<(Array, Array)> {
        match &rows {
            None => {
                let n = a.scalar_like(a.dims()[0] as f64);
                Ok((a.sub(&a.reduce(ReduceOp::Mean, Some(0))?)?, n))
            }
            Some(incomplete) => {
                let removed = incomplete.broadcast_to(a.dims().to_vec())?;
                let mean = kept_mean(a, &removed, Some(0))?;
                let n = kept_count(a, incomplete, None)?;
                Ok((filled(&a.sub(&mean)?, &removed, 0.0)?, n))
            }
        }
    };
    let (cx, n) = centred(&x)?;
    let cy = match &y {
        Some(y) => centred(y)?.0,
        None => cx.clone(),
    };
    let cov = cx.crossprod(&cy)?.div(&n.sub_scalar(1.0)?)?;
    Array::where_(&n.lt_scalar(2.0)?, &cov.scalar_like(f64::NAN), &cov)
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
        "var" => r_cov(x, None, CovUse::Everything),
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
