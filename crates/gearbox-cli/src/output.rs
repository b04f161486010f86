//! Standard output and standard error for every subcommand, and the exit
//! status they lead to.
//!
//! Rules (never a panic: `println!` and `eprintln!` panic when a write fails):
//! - a reader that goes away (a closed pipe: `gearbox status | head -1`)
//!   ends the command quietly with status 0, as Unix filters end;
//! - any other failure to write standard output (a full disk, `/dev/full`)
//!   is reported on standard error, status 1;
//! - a message on standard error never fails the command: when standard
//!   error cannot be written there is nowhere left to say so.

use std::fmt;
use std::io::{self, StdoutLock, Write};
use std::process::ExitCode;

/// Why a subcommand stopped.
#[derive(Debug)]
pub enum Failure {
    /// A Gearbox error: bad input, a failed computation, a file that could
    /// not be read or written.
    Gearbox(gearbox::Error),
    /// Standard output could not be written.
    Stdout(io::Error),
}

impl From<gearbox::Error> for Failure {
    fn from(e: gearbox::Error) -> Failure {
        Failure::Gearbox(e)
    }
}

/// What a subcommand returns.
pub type CliResult<T = ()> = Result<T, Failure>;

/// Standard output, locked for the whole command. Its methods return
/// [`Failure::Stdout`] when a write fails; as a [`Write`] (for writers such
/// as `csv::Writer`) it returns the `io::Error`, for the caller to wrap.
pub struct Out {
    lock: StdoutLock<'static>,
}

impl Out {
    /// Locks standard output.
    pub fn new() -> Out {
        Out {
            lock: io::stdout().lock(),
        }
    }

    /// Writes `text` as it is.
    pub fn text(&mut self, text: impl fmt::Display) -> CliResult {
        write!(self.lock, "{text}").map_err(Failure::Stdout)
    }

    /// Writes `text` and a newline.
    pub fn line(&mut self, text: impl fmt::Display) -> CliResult {
        writeln!(self.lock, "{text}").map_err(Failure::Stdout)
    }

    /// Sends everything written so far on its way (standard output keeps a
    /// line buffer): the last chance for a failed write to show.
    pub fn finish(&mut self) -> CliResult {
        self.lock.flush().map_err(Failure::Stdout)
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.lock.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.lock.flush()
    }
}

/// Writes `text` and a newline to standard error; a failure is ignored
/// (see the module's rules).
pub fn note(text: impl fmt::Display) {
    let _ = writeln!(io::stderr().lock(), "{text}");
}

/// The exit status of a finished command, after reporting its failure on
/// standard error: 0 for success and for a reader that went away, 1 else.
pub fn exit_code(outcome: CliResult) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Stdout(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Stdout(e)) => {
            note(format_args!(
                "gearbox: cannot write to standard output: {e}"
            ));
            ExitCode::FAILURE
        }
        Err(Failure::Gearbox(e)) => {
            note(format_args!("gearbox: {e}"));
            ExitCode::FAILURE
        }
    }
}

/// An `io::Error` out of a `csv::Error`, keeping its kind (a broken pipe
/// stays a broken pipe; `csv`'s own conversion makes every error `Other`).
pub fn csv_io_error(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}
