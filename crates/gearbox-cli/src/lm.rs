//! `gearbox lm`: one linear regression per column of a response table on a
//! shared design table (`gearbox_stats::lm::many_lm`), written as one long
//! CSV table with a row per response and term.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use gearbox::Error;
use gearbox_stats::io::{format_f64, read_csv};
use gearbox_stats::lm::{many_lm, LmOptions, ManyLm, INTERCEPT_NAME};
use indicatif::{ProgressBar, ProgressStyle};

use crate::output::{csv_io_error, CliResult, Failure, Out};

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
pub fn run(args: &LmArgs, out: &mut Out) -> CliResult {
    let spinner = ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(120));
    spinner.set_message(format!("reading {}", args.x.display()));
    let x = read_csv(&args.x)?;
    check_intercept_name(&x.names, args)?;
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
    let table = LongTable::new(&y.names, &fit)?;

    let bar = ProgressBar::new(y.names.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("writing {bar:40} {pos}/{len} responses")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let written = match &args.out {
        Some(path) => {
            let shown = path.display().to_string();
            let cannot = |what: &str, e: std::io::Error| Error::Io {
                path: shown.clone(),
                line: None,
                column: None,
                why: format!("cannot {what}: {e}"),
            };
            let file = File::create(path).map_err(|e| cannot("create the file", e))?;
            table
                .write(BufWriter::new(file), &bar)
                .map_err(|e| cannot("write", e).into())
        }
        None => table.write(&mut *out, &bar).map_err(Failure::Stdout),
    };
    bar.finish_and_clear();
    written
}

/// With `--intercept`, a column of `--x` named as the intercept term is an
/// error naming it, before any work: the output table would hold two terms
/// of that name. (`read_csv` already rejects two columns of one name.)
fn check_intercept_name(names: &[String], args: &LmArgs) -> gearbox::Result<()> {
    let Some(j) = names.iter().position(|n| n == INTERCEPT_NAME) else {
        return Ok(());
    };
    if !args.intercept {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        op: "gearbox lm",
        name: "x",
        value: format!(
            "{}, column {} ({INTERCEPT_NAME:?})",
            args.x.display(),
            j + 1
        ),
        why: format!(
            "--intercept adds a term named {INTERCEPT_NAME:?} too, and the output table \
             would have two terms of that name; rename the column or leave out --intercept"
        ),
    })
}

/// The fitted values behind the long table, on the host.
struct LongTable<'a> {
    responses: &'a [String],
    terms: &'a [String],
    /// Estimate, standard error, t value and p-value, each `p x k`.
    per_term: [Vec<f64>; 4],
    sigma: Vec<f64>,
    r_squared: Vec<f64>,
    df: String,
}

impl<'a> LongTable<'a> {
    /// Downloads the results of `fit`, whose responses are named `responses`.
    fn new(responses: &'a [String], fit: &'a ManyLm) -> gearbox::Result<LongTable<'a>> {
        let [estimate, std_error, t_value, p_value] = [
            &fit.coefficients,
            &fit.std_errors,
            &fit.t_values,
            &fit.p_values,
        ]
        .map(|a| a.to_vec::<f64>());
        Ok(LongTable {
            responses,
            terms: &fit.term_names,
            per_term: [estimate?, std_error?, t_value?, p_value?],
            sigma: fit.sigma.to_vec::<f64>()?,
            r_squared: fit.r_squared.to_vec::<f64>()?,
            df: fit.df_residual.to_string(),
        })
    }

    /// Writes the table: for each response, one row per term.
    fn write(&self, writer: impl Write, bar: &ProgressBar) -> std::io::Result<()> {
        let p = self.terms.len();
        let mut csv = csv::Writer::from_writer(writer);
        csv.write_record(COLUMNS).map_err(csv_io_error)?;
        for (j, response) in self.responses.iter().enumerate() {
            for (i, term) in self.terms.iter().enumerate() {
                let at = i + j * p;
                let [estimate, std_error, t_value, p_value] =
                    self.per_term.each_ref().map(|v| format_f64(v[at]));
                csv.write_record([
                    response.as_str(),
                    term.as_str(),
                    &estimate,
                    &std_error,
                    &t_value,
                    &p_value,
                    &format_f64(self.sigma[j]),
                    &format_f64(self.r_squared[j]),
                    &self.df,
                ])
                .map_err(csv_io_error)?;
            }
            bar.inc(1);
        }
        csv.flush()
    }
}
