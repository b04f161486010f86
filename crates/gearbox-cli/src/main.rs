//! The `gearbox` command: a guided demo and (as the runtime grows) status,
//! explain, calibrate and bench.

mod demo;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Demo(args) => demo::run(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gearbox: {e}");
            ExitCode::FAILURE
        }
    }
}
