//! The `gearbox` command: a guided demo, the backend status table, dispatch
//! plans for hypothetical work, calibration of the GPU crossover,
//! per-column linear regressions on CSV tables (`lm`), and GLM
//! log-posterior grids (`glm`).

mod calibrate;
mod demo;
mod explain;
mod glm;
mod lm;
mod status;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// health, reason) and device information.
    Status,
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
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Demo(args) => demo::run(&args),
        Command::Status => status::run(),
        Command::Explain(args) => explain::run(&args),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::Lm(args) => lm::run(&args),
        Command::Glm(args) => glm::run(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gearbox: {e}");
            ExitCode::FAILURE
        }
    }
}
