//! The `gearbox` command: a guided demo, the backend status table, dispatch
//! plans for hypothetical work, calibration of the GPU crossover,
//! per-column linear regressions on CSV tables (`lm`), and GLM
//! log-posterior grids (`glm`).

mod calibrate;
mod demo;
mod explain;
mod glm;
mod lm;
mod output;
mod status;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use output::{exit_code, Out};

/// Array and matrix computing on the CPU, moving work to a GPU where that pays off.
#[derive(Debug, Parser)]
#[command(name = "gearbox", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// From nothing to a first matrix product: build, multiply, reduce, and
    /// say which backend ran and why.
    Demo(demo::DemoArgs),
    /// Print the backend status table (installed, registered, available,
    /// health, reason) and device information, after probing every
    /// available backend (in a child process, as first use would).
    Status(status::StatusArgs),
    /// Print where an operation on arrays of a given shape would run, and why.
    Explain(explain::ExplainArgs),
    /// Measure CPU against GPU over a size sweep, store the crossover
    /// thresholds, plot the curves and check the router.
    Calibrate(calibrate::CalibrateArgs),
    /// Fit one linear regression per response column on a shared design
    /// (CSV files with header rows) and write the coefficient table as CSV.
    Lm(lm::LmArgs),
    /// The negative log-posterior of a GLM with a normal prior, and its
    /// gradient, over a grid of coefficient vectors (glmbayes's f2/f3).
    Glm(Box<glm::GlmArgs>),
}

fn main() -> ExitCode {
    gearbox::init();
    gearbox::runtime::config::set_surface(gearbox::runtime::config::Surface::Cli);
    let mut out = Out::new();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e, &mut out),
    };
    let outcome = match cli.command {
        Command::Demo(args) => demo::run(&args, &mut out),
        Command::Status(args) => status::run(&args, &mut out),
        Command::Explain(args) => explain::run(&args, &mut out),
        Command::Calibrate(args) => calibrate::run(&args, &mut out),
        Command::Lm(args) => lm::run(&args, &mut out),
        Command::Glm(args) => glm::run(&args).map_err(Into::into),
    };
    exit_code(outcome.and_then(|()| out.finish()))
}

/// Help, the version, or a usage error from the command line. Usage errors
/// go to standard error, and help to a terminal, as clap prints them (in
/// colour); help to a pipe or file goes through [`Out`], so that a closed
/// pipe or a full disk is handled as for any other output.
fn clap_exit(e: &clap::Error, out: &mut Out) -> ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    if e.use_stderr() || std::io::stdout().is_terminal() {
        // clap ignores a failed write itself (nothing left to report it on).
        let _ = e.print();
        return ExitCode::from(code);
    }
    match out.text(e.render()).and_then(|()| out.finish()) {
        Ok(()) => ExitCode::from(code),
        failed => exit_code(failed),
    }
}
