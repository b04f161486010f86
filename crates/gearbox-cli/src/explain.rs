//! `gearbox explain`: the dispatch plan for one operation on arrays of a
//! given shape, without computing anything.

use clap::Args;
use gearbox::runtime::backend_plan;
use gearbox::{set_default_precision, Array, DType, Error, Precision, Result, Shape};

use crate::output::{CliResult, Out};

/// Options of `gearbox explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The operation: matmul, crossprod, tcrossprod, solve, inv, inv_upper, cholesky,
    /// add, mul, exp, sin, sqrt, tanh, sum, mean, col_means, row_means, or chain
    /// (exp(x)*y + sin(x) - 2*y).
    #[arg(long)]
    pub op: String,
    /// Shape of the operands, e.g. 4096x4096.
    #[arg(long)]
    pub shape: String,
    /// Precision: fast, strict or exact.
    #[arg(long, default_value = "strict")]
    pub precision: String,
    /// Element type: f32 or f64.
    #[arg(long, default_value = "f64")]
    pub dtype: String,
}

fn bad(name: &'static str, value: &str, why: &str) -> Error {
    Error::InvalidArgument {
        op: "explain",
        name,
        value: value.into(),
        why: why.into(),
    }
}

fn parse_shape(s: &str) -> Result<Shape> {
    let dims: Option<Vec<usize>> = s
        .split(['x', 'X', ','])
        .map(|d| d.trim().parse().ok())
        .collect();
    dims.filter(|d| !d.is_empty())
        .map(Shape::new)
        .ok_or_else(|| bad("shape", s, "expected sizes joined by x, e.g. 4096x4096"))
}

/// Builds the operation lazily and prints its dispatch plan.
pub fn run(args: &ExplainArgs, out: &mut Out) -> CliResult {
    let shape = parse_shape(&args.shape)?;
    let precision: Precision = args.precision.parse()?;
    let dtype = match args.dtype.as_str() {
        "f32" => DType::F32,
        "f64" => DType::F64,
        other => return Err(bad("dtype", other, "expected f32 or f64").into()),
    };
    let before = set_default_precision(precision);
    let x = Array::full(shape.clone(), 0.5, dtype)?;
    let y = Array::full(shape, 0.25, dtype)?;
    set_default_precision(before);
    let z = match args.op.as_str() {
        "matmul" => x.matmul(&y)?,
        "crossprod" => x.crossprod(&y)?,
        "tcrossprod" => x.tcrossprod(&y)?,
        "solve" => x.solve(&y)?,
        "inv" => x.inv()?,
        "inv_upper" => x.inv_upper()?,
        "cholesky" => x.cholesky()?,
        "add" => x.add(&y)?,
        "mul" => x.mul(&y)?,
        "exp" => x.exp()?,
        "sin" => x.sin()?,
        "sqrt" => x.sqrt()?,
        "tanh" => x.tanh()?,
        "sum" => x.sum()?,
        "mean" => x.mean()?,
        "col_means" => x.mean_axis(0)?,
        "row_means" => x.mean_axis(1)?,
        "chain" => (x.exp()? * &y + &x.sin()? - &(2.0 * &y)?)?,
        other => return Err(bad("op", other, "see gearbox explain --help for the list").into()),
    };
    out.text(backend_plan(&z)?)
}
