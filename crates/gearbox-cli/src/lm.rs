//! `gearbox lm`: one linear regression per column of a response table on a
//! shared design table (`gearbox_stats::lm::many_lm`), written as one long
//! CSV table with a row per response and term.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use gearbox::{Error, Result};
use gearbox_stats::io::{format_f64, read_csv};
use gearbox_stats::lm::{many_lm, LmOptions, ManyLm};
use indicatif::{ProgressBar, ProgressStyle};

/// Options of `gearbox lm`.
#[derive(Debug, Args)]
pub struct LmArgs {
    /// CSV file of the design: a header row naming the covariates, one row
    /// per observation.
    #[arg(long)]
    pub x: PathBuf,
    /// CSV file of the responses: a header row naming them, one row per
    /// observation (the rows of --x); each column is fitted separately.
    #[arg(long)]
    pub y: PathBuf,
    /// Add an intercept term, "(Intercept)", before the covariates.
    #[arg(long)]
    pub intercept: bool,
    /// Where to write the table (CSV); standard output when absent.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// The columns of the output table, in order.
pub const COLUMNS: [&str; 9] = [
    "response",
    "term",
    "estimate",
    "std_error",
    "t_value",
    "p_value",
    "sigma",
    "r_squared",
    "df",
];

/// Reads both tables, fits every response and writes the long table, with a
/// spinner (then a bar while writing) on standard error when it is a terminal.
pub fn run(args: &LmArgs) -> Result<()> {
    let spinner = ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(120));
    spinner.set_message(format!("reading {}", args.x.display()));
    let x = read_csv(&args.x)?;
    spinner.set_message(format!("reading {}", args.y.display()));
    let y = read_csv(&args.y)?;
    spinner.set_message(format!(
        "fitting {} regression(s) on {} term(s), {} observation(s)",
        y.names.len(),
        x.names.len() + args.intercept as usize,
        x.nrows()
    ));
    let opts = LmOptions {
        intercept: args.intercept,
        term_names: Some(x.names.clone()),
    };
    let fit = many_lm(&x.to_matrix()?, &y.to_matrix()?, &opts);
    spinner.finish_and_clear();
    let fit = fit?;

    let bar = ProgressBar::new(y.names.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("writing {bar:40} {pos}/{len} responses")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let written = match &args.out {
        Some(path) => {
            let shown = path.display().to_string();
            let file = File::create(path).map_err(|e| Error::Io {
                path: shown.clone(),
                line: None,
                column: None,
                why: format!("cannot create the file: {e}"),
            })?;
            write_table(BufWriter::new(file), &shown, &y.names, &fit, &bar)
        }
        None => write_table(std::io::stdout().lock(), "<stdout>", &y.names, &fit, &bar),
    };
    bar.finish_and_clear();
    written
}

/// Writes the long table: for each response, one row per term.
fn write_table(
    writer: impl Write,
    destination: &str,
    responses: &[String],
    fit: &ManyLm,
    bar: &ProgressBar,
) -> Result<()> {
    let write_error = |e: csv::Error| Error::Io {
        path: destination.to_string(),
        line: None,
        column: None,
        why: format!("cannot write: {e}"),
    };
    let p = fit.term_names.len();
    let [estimate, std_error, t_value, p_value] = [
        &fit.coefficients,
        &fit.std_errors,
        &fit.t_values,
        &fit.p_values,
    ]
    .map(|a| a.to_vec::<f64>());
    let (estimate, std_error, t_value, p_value) = (estimate?, std_error?, t_value?, p_value?);
    let sigma = fit.sigma.to_vec::<f64>()?;
    let r_squared = fit.r_squared.to_vec::<f64>()?;
    let df = fit.df_residual.to_string();
    let mut csv = csv::Writer::from_writer(writer);
    csv.write_record(COLUMNS).map_err(write_error)?;
    for (j, response) in responses.iter().enumerate() {
        for (i, term) in fit.term_names.iter().enumerate() {
            let at = i + j * p;
            csv.write_record([
                response.as_str(),
                term.as_str(),
                &format_f64(estimate[at]),
                &format_f64(std_error[at]),
                &format_f64(t_value[at]),
                &format_f64(p_value[at]),
                &format_f64(sigma[j]),
                &format_f64(r_squared[j]),
                &df,
            ])
            .map_err(write_error)?;
        }
        bar.inc(1);
    }
    csv.flush().map_err(|e| write_error(e.into()))
}
