//! `gearbox glm`: the negative log-posterior of a GLM with a normal prior,
//! and its gradient, over a grid of coefficient vectors (glmbayes's `f2` and
//! `f3`), from a CSV file of data to a CSV file with one row per grid point.

use std::collections::HashMap;

use clap::Args;
use gearbox::{Array, Error, Result};
use gearbox_stats::glm::{grid_around, mle, GlmModel, GlmSpec, Strategy};
use gearbox_stats::io::{read_csv, write_csv, Table};
use indicatif::{ProgressBar, ProgressStyle};

use crate::output::note;

/// Options of `gearbox glm`.
#[derive(Debug, Args)]
pub struct GlmArgs {
    /// CSV file of the data: a header row, numeric columns.
    #[arg(long)]
    pub data: String,
    /// The predictor columns, comma-separated, in the order of the
    /// coefficients.
    #[arg(long, value_delimiter = ',', required = true)]
    pub formula_columns: Vec<String>,
    /// Put an intercept (a column of ones, named `intercept`) first.
    #[arg(long)]
    pub intercept: bool,
    /// The response column (binomial: the proportion of successes).
    #[arg(long)]
    pub response: String,
    /// The prior-weight column (binomial: the number of trials); all 1 if
    /// not given.
    #[arg(long)]
    pub weights: Option<String>,
    /// An offset column, added to the linear predictor.
    #[arg(long)]
    pub offset: Option<String>,
    /// binomial, quasibinomial, poisson, quasipoisson, gaussian or Gamma.
    #[arg(long)]
    pub family: String,
    /// logit, probit, cloglog (binomial), log (poisson, Gamma), identity
    /// (gaussian); the family's first when not given.
    #[arg(long)]
    pub link: Option<String>,
    /// The dispersion (gaussian, Gamma, quasi families); when gaussian or
    /// Gamma get none, the maximum-likelihood fit's Pearson estimate is used.
    #[arg(long, allow_negative_numbers = true)]
    pub dispersion: Option<f64>,
    /// Prior mean: one value for every coefficient, or one per coefficient
    /// (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0",
        allow_hyphen_values = true
    )]
    pub prior_mean: Vec<f64>,
    /// Prior precision, diagonal: one value for every coefficient, or one
    /// per coefficient (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub prior_precision: Vec<f64>,
    /// CSV file of grid points, one row each: columns named as the
    /// coefficients (`intercept` and the formula columns), or exactly one
    /// column per coefficient in order.
    #[arg(
        long,
        conflicts_with = "grid_size",
        required_unless_present = "grid_size"
    )]
    pub grid: Option<String>,
    /// Number of grid points drawn around the maximum-likelihood estimate,
    /// from the normal with its estimated covariance.
    #[arg(long, allow_negative_numbers = true)]
    pub grid_size: Option<usize>,
    /// Seed of the random grid (Philox4x32-10).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    pub seed: u64,
    /// Output CSV file: the coefficients, qf, and the gradient (`grad_NAME`)
    /// per grid point.
    #[arg(long)]
    pub out: String,
    /// How the grid is evaluated: `gemm` (X B by GEMM, fused terms, X'
    /// slopes by GEMM) or `per-point` (one kernel, a point per thread);
    /// the cost model chooses when not given.
    #[arg(long, value_parser = ["gemm", "per-point"])]
    pub strategy: Option<String>,
    /// Print the strategy the grid runs by, where, and the cost model's
    /// estimates for both (to standard error).
    #[arg(long, short)]
    pub verbose: bool,
}

fn invalid(name: &'static str, value: String, why: String) -> Error {
    Error::InvalidArgument {
        op: "gearbox glm",
        name,
        value,
        why,
    }
}

/// One value per coefficient from a command-line list of 1 or `l2` values.
fn per_coefficient(name: &'static str, values: &[f64], l2: usize) -> Result<Vec<f64>> {
    match values.len() {
        1 => Ok(vec![values[0]; l2]),
        n if n == l2 => Ok(values.to_vec()),
        n => Err(invalid(
            name,
            format!("{n} values"),
            format!("give one value, or one per coefficient ({l2})"),
        )),
    }
}

/// The grid points as an `l2 x m1` array, from a CSV file.
fn grid_from_file(path: &str, names: &[String]) -> Result<Array> {
    let table = read_csv(path)?;
    let l2 = names.len();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let columns: Vec<&[f64]> = if let Ok(named) = table.columns_named(&names) {
        table.check_finite(path, &names, "a grid value")?;
        named
    } else if table.names.len() == l2 {
        let all: Vec<&str> = table.names.iter().map(String::as_str).collect();
        table.check_finite(path, &all, "a grid value")?;
        table.columns.iter().map(Vec::as_slice).collect()
    } else {
        return Err(invalid(
            "grid",
            path.to_string(),
            format!(
                "needs columns named {} or exactly {l2} columns; it has {}",
                names.join(", "),
                table.listing()
            ),
        ));
    };
    let m1 = table.nrows();
    if m1 == 0 {
        return Err(invalid(
            "grid",
            path.to_string(),
            "the file has no rows: give at least one grid point".to_string(),
        ));
    }
    let mut values = Vec::with_capacity(l2 * m1);
    for j in 0..m1 {
        values.extend(columns.iter().map(|c| c[j]));
    }
    Array::from_vec([l2, m1], values)
}

/// The design matrix and the names of its columns.
fn design(table: &Table, args: &GlmArgs) -> Result<(Array, Vec<String>)> {
    let n = table.nrows();
    let mut names = Vec::new();
    let mut values = Vec::new();
    if args.intercept {
        names.push("intercept".to_string());
        values.extend(std::iter::repeat_n(1.0, n));
    }
    let formula: Vec<&str> = args.formula_columns.iter().map(String::as_str).collect();
    for (name, column) in formula.iter().zip(table.columns_named(&formula)?) {
        names.push(name.to_string());
        values.extend_from_slice(column);
    }
    Ok((Array::from_vec([n, names.len()], values)?, names))
}

/// The output table's header: the coefficients, `qf`, then `grad_NAME` per
/// coefficient. Two equal names are an error naming them, before any work:
/// the table could not be read back (CSV tables need distinct names).
fn output_headers(names: &[String]) -> Result<Vec<String>> {
    let l2 = names.len();
    let mut headers = names.to_vec();
    headers.push("qf".to_string());
    headers.extend(names.iter().map(|n| format!("grad_{n}")));
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(headers.len());
    for (j, header) in headers.iter().enumerate() {
        let Some(first) = seen.insert(header, j) else {
            continue;
        };
        let why = if j < l2 {
            format!(
                "coefficients {} and {} are both named {header:?}; each coefficient needs \
                 its own column (and the output table distinct column names)",
                first + 1,
                j + 1
            )
        } else {
            format!(
                "the output table would have two columns named {header:?} (it holds the \
                 coefficients, qf, and grad_ followed by each coefficient's name); rename \
                 that column of the data"
            )
        };
        return Err(invalid("formula-columns", names.join(","), why));
    }
    Ok(headers)
}

/// `e` with the design column it names by index (`column 2 (counting from
/// 0), ...`, as `mle` names a column whose information overflows) named as
/// the command line names it: `column "big" (index 2, counting from 0),
/// ...`. Any other error is returned as it is.
fn with_column_name(e: Error, names: &[String]) -> Error {
    let Error::InvalidArgument {
        op,
        name: "x",
        value,
        why,
    } = e
    else {
        return e;
    };
    let named = value.strip_prefix("column ").and_then(|rest| {
        let (j, tail) = rest.split_once(" (")?;
        let column = names.get(j.parse::<usize>().ok()?)?;
        Some(format!("column {column:?} (index {j}, {tail}"))
    });
    Error::InvalidArgument {
        op,
        name: "x",
        value: named.unwrap_or(value),
        why,
    }
}

/// Runs `gearbox glm`.
pub fn run(args: &GlmArgs) -> Result<()> {
    let mut spec = GlmSpec::parse(&args.family, args.link.as_deref(), args.dispersion)?;
    if args.grid_size == Some(0) {
        return Err(invalid(
            "grid-size",
            "0".to_string(),
            "give at least one grid point".to_string(),
        ));
    }
    let table = read_csv(&args.data)?;
    // Every column the model reads, checked where the file can be named.
    let used: Vec<&str> = (args.formula_columns.iter())
        .chain([&args.response])
        .chain(args.weights.iter())
        .chain(args.offset.iter())
        .map(String::as_str)
        .collect();
    table.check_finite(&args.data, &used, "a value the model reads")?;
    let n = table.nrows();
    let (x, names) = design(&table, args)?;
    let headers = output_headers(&names)?;
    let l2 = names.len();
    let column_or = |name: &Option<String>, default: f64| -> Result<Array> {
        match name {
            Some(c) => Array::from_vec([n], table.column(c)?.to_vec()),
            None => Array::from_vec([n], vec![default; n]),
        }
    };
    let y = Array::from_vec([n], table.column(&args.response)?.to_vec())?;
    let wt = column_or(&args.weights, 1.0)?;
    let alpha = column_or(&args.offset, 0.0)?;
    let mu = Array::from_vec([l2], per_coefficient("prior-mean", &args.prior_mean, l2)?)?;
    let diagonal = per_coefficient("prior-precision", &args.prior_precision, l2)?;
    let mut p = vec![0.0; l2 * l2];
    for (k, d) in diagonal.iter().enumerate() {
        p[k * l2 + k] = *d;
    }
    let p = Array::from_vec([l2, l2], p)?;

    let needs_fit =
        args.grid.is_none() || (spec.family.needs_dispersion() && spec.dispersion.is_none());
    if needs_fit {
        let fit = mle(&x, &y, &wt, &alpha, &spec).map_err(|e| with_column_name(e, &names))?;
        let beta = fit.beta.to_vec::<f64>()?;
        note(format_args!(
            "maximum likelihood ({} {}): {} iterations{}",
            spec.family,
            spec.link,
            fit.iterations,
            if fit.converged {
                ""
            } else {
                " (NOT converged)"
            }
        ));
        for (name, b) in names.iter().zip(&beta) {
            note(format_args!("  {name:>16} {b:>14.6}"));
        }
        if spec.family.needs_dispersion() && spec.dispersion.is_none() {
            note(format_args!(
                "  dispersion (Pearson estimate) {:.6}",
                fit.dispersion
            ));
            if !(fit.dispersion > 0.0 && fit.dispersion.is_finite()) {
                // An exact fit leaves the posterior no spread: a grid
                // around it (and every density in it) is degenerate.
                return Err(invalid(
                    "dispersion",
                    format!("{} (Pearson estimate)", fit.dispersion),
                    "the fit is exact, so the posterior has no spread; give --dispersion".into(),
                ));
            }
            spec.dispersion = Some(fit.dispersion);
        }
        if let Some(m1) = args.grid_size {
            let grid = grid_around(&fit.beta, &fit.cov, m1, args.seed)?;
            return evaluate(args, &spec, &headers, [&x, &y, &wt, &alpha, &mu, &p], &grid);
        }
    }
    let path = args.grid.as_deref().ok_or_else(|| {
        invalid(
            "grid",
            "none".to_string(),
            "give --grid FILE or --grid-size M".to_string(),
        )
    })?;
    let grid = grid_from_file(path, &names)?;
    evaluate(args, &spec, &headers, [&x, &y, &wt, &alpha, &mu, &p], &grid)
}

/// Evaluates the grid in chunks (for the progress bar) and writes the CSV
/// under `headers` ([`output_headers`]).
fn evaluate(
    args: &GlmArgs,
    spec: &GlmSpec,
    headers: &[String],
    [x, y, wt, alpha, mu, p]: [&Array; 6],
    grid: &Array,
) -> Result<()> {
    let (l2, m1) = (grid.dims()[0], grid.dims()[1]);
    let points = grid.to_vec::<f64>()?;
    let bar = ProgressBar::new(m1 as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} grid points {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let model = GlmModel::new(x, y, wt, alpha, mu, p, spec)?;
    let strategy = match args.strategy.as_deref() {
        Some("gemm") => Some(Strategy::Gemm),
        Some(_) => Some(Strategy::PerPoint),
        None => None,
    };
    let chunk = m1.div_ceil(100).max(1);
    if args.verbose {
        // The choice for the chunks the progress bar takes.
        note(model.choose(chunk as u64, strategy)?);
    }
    let mut qf = Vec::with_capacity(m1);
    let mut gradient = Vec::with_capacity(l2 * m1);
    for start in (0..m1).step_by(chunk) {
        let end = (start + chunk).min(m1);
        let b = Array::from_vec([l2, end - start], points[start * l2..end * l2].to_vec())?;
        let out = model.grid_with(&b, strategy)?;
        qf.extend(out.qf.to_vec::<f64>()?);
        gradient.extend(out.gradient.to_vec::<f64>()?);
        bar.set_position(end as u64);
    }
    bar.finish_and_clear();

    let mut columns: Vec<Vec<f64>> = (0..l2)
        .map(|k| (0..m1).map(|j| points[j * l2 + k]).collect())
        .collect();
    columns.push(qf);
    columns.extend((0..l2).map(|k| (0..m1).map(|j| gradient[j * l2 + k]).collect()));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let column_refs: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
    write_csv(&args.out, &header_refs, &column_refs)?;
    note(format_args!("wrote {m1} grid points to {}", args.out));
    Ok(())
}
