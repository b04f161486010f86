//! `gearbox explain`: the dispatch plan for one operation on arrays of a
//! given shape, or the strategy a GLM grid of a given shape would take,
//! without computing anything.

use clap::Args;
use gearbox::runtime::{backend_plan, backend_plan_probed};
use gearbox::{set_default_precision, Array, DType, Error, Precision, Result, Shape};

use gearbox_stats::glm::{GlmModel, GlmSpec, StrategyChoice};

use crate::output::{CliResult, Out};

/// Options of `gearbox explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The operation: matmul, crossprod, tcrossprod, solve, inv, inv_upper, cholesky,
    /// add, mul, exp, sin, sqrt, tanh, sum, mean, col_means, row_means, chain
    /// (exp(x)*y + sin(x) - 2*y), transpose (the axes reversed), flip (along
    /// axis 0), or glm_grid (the GLM grid strategy the
    /// cost model picks and why; the shape is observations x coefficients x
    /// points).
    #[arg(long)]
    pub op: String,
    /// Shape of the operands, e.g. 4096x4096 (glm_grid: 300x14x1000000).
    #[arg(long)]
    pub shape: String,
    /// The GLM family for glm_grid (its default link).
    #[arg(long, default_value = "binomial")]
    pub family: String,
    /// Precision: fast, strict or exact.
    #[arg(long, default_value = "strict")]
    pub precision: String,
    /// Element type: f32 or f64.
    #[arg(long, default_value = "f64")]
    pub dtype: String,
    /// Plan without probing backends not probed yet (the plan then says
    /// where the work would run if their probes pass).
    #[arg(long)]
    pub no_probe: bool,
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
    if args.op == "glm_grid" {
        return out.text(glm_strategy(&shape, &args.family)?);
    }
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
        "transpose" => x.transpose(&(0..x.ndim()).rev().collect::<Vec<_>>())?,
        "flip" => x.flip(0)?,
        other => return Err(bad("op", other, "see gearbox explain --help for the list").into()),
    };
    let plan = if args.no_probe {
        backend_plan(&z)?
    } else {
        backend_plan_probed(&z)?
    };
    out.text(plan)
}

/// The strategy a GLM grid of `l1 x l2 x m1` would take for `family`, on a
/// simulated model of that shape whose design lives where a fresh array
/// would (nothing is evaluated but the model's checks).
fn glm_strategy(shape: &Shape, family: &str) -> Result<StrategyChoice> {
    let &[l1, l2, m1] = shape.dims() else {
        return Err(bad(
            "shape",
            &format!("{shape}"),
            "glm_grid takes observations x coefficients x points, e.g. 300x14x1000000",
        ));
    };
    let spec = GlmSpec::parse(family, None, None)?;
    // Responses every family accepts: 0/1 proportions, counts or positive values.
    let lowest = match family {
        "binomial" | "quasibinomial" => 0.0,
        _ => 1.0,
    };
    let y: Vec<f64> = (0..l1).map(|i| lowest + (i % 2) as f64).collect();
    let x = Array::randn([l1, l2], 1)?;
    let model = GlmModel::with_standard_prior(&x, &Array::from_vec([l1], y)?, &spec)?;
    model.choose(m1 as u64, None)
}
