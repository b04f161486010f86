//! The hostile-input table of the `gearbox` command: bad flags and values,
//! missing, empty, ragged, non-numeric and binary files, NaN, infinities and
//! huge numbers in tables, duplicate and missing columns, wrong shapes,
//! unknown names, and outputs that cannot be written. Each case runs the
//! binary and checks its exit status (2 for a usage error, 1 for a refused
//! input, 0 where the input is fine), that nothing panicked, and that
//! standard error names the problem (the words listed).
//!
//! [`cases`] holds the general table; [`reliability_cases`] the cases of
//! issue 10's reliability items (closed or full standard output, messages
//! that blame the wrong thing, a quadratic CSV header, duplicate formula
//! columns, sizes that overflow or exceed memory). Both must pass.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where standard output goes.
#[derive(Clone, Copy, PartialEq)]
pub enum Out {
    /// A file, read back as the run's stdout.
    Captured,
    /// A pipe whose reading end is already closed (`gearbox ... | true`).
    ClosedPipe,
    /// `/dev/full`: every write fails with "no space left".
    DevFull,
}

/// What a run did.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// The files the cases read, in one scratch directory.
pub struct Fx {
    pub dir: PathBuf,
}

impl Fx {
    /// The path of scratch file `name`, as an argument.
    pub fn f(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// The longest a run may take (debug build, a loaded machine).
const TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `gearbox args` with `env` set and standard output sent to `out`.
pub fn gearbox(fx: &Fx, args: &[String], out: Out, env: &[(&str, &str)]) -> Result<Run, String> {
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (out_path, err_path) = (
        fx.dir.join(format!("run{n}.out")),
        fx.dir.join(format!("run{n}.err")),
    );
    let stdout = match out {
        Out::Captured => Stdio::from(File::create(&out_path).map_err(|e| e.to_string())?),
        Out::DevFull => Stdio::from(File::create("/dev/full").map_err(|e| e.to_string())?),
        Out::ClosedPipe => {
            // The writing end of a pipe whose reader (`true`) has exited.
            let mut reader = Command::new("true")
                .stdin(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot run true: {e}"))?;
            let writer = reader.stdin.take().ok_or("no pipe to true")?;
            reader.wait().map_err(|e| e.to_string())?;
            Stdio::from(writer)
        }
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gearbox"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(File::create(&err_path).map_err(|e| e.to_string())?);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run gearbox: {e}"))?;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            return Err(format!("still running after {TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).to_string();
    Ok(Run {
        code: status.code(),
        stdout: read(&out_path),
        stderr: read(&err_path),
        elapsed: start.elapsed(),
    })
}

/// Checks that nothing panicked or died of a signal.
pub fn sane(r: &Run) -> Result<(), String> {
    if r.stderr.contains("panicked") {
        return Err(format!("panicked: {}", first_lines(&r.stderr)));
    }
    match r.code {
        None => Err(format!(
            "killed by a signal; stderr: {}",
            first_lines(&r.stderr)
        )),
        Some(101) => Err(format!(
            "exit status 101 (a panic): {}",
            first_lines(&r.stderr)
        )),
        Some(_) => Ok(()),
    }
}

fn first_lines(s: &str) -> String {
    s.lines().take(4).collect::<Vec<_>>().join(" | ")
}

/// Checks the exit status and that `text` holds every word.
pub fn expect(r: &Run, code: i32, text: &str, words: &[&str]) -> Result<(), String> {
    sane(r)?;
    if r.code != Some(code) {
        return Err(format!(
            "exit status {:?}, expected {code}; stderr: {}",
            r.code,
            first_lines(&r.stderr)
        ));
    }
    let missing: Vec<&&str> = words.iter().filter(|w| !text.contains(*w)).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("output lacks {missing:?}: {}", first_lines(text)))
    }
}

pub type Check = Box<dyn Fn(&Fx) -> Result<(), String> + Send + Sync>;
pub type Case = (&'static str, Check);

pub fn args(fx: &Fx, a: &[&str]) -> Vec<String> {
    a.iter()
        .map(|s| match s.strip_prefix('@') {
            Some(file) => fx.f(file),
            None => s.to_string(),
        })
        .collect()
}

/// A usage error (status 2, from the argument parser) naming `words`.
/// Arguments starting with `@` are scratch files.
pub fn usage(a: &'static [&'static str], words: &'static [&'static str]) -> Check {
    Box::new(move |fx| {
        let r = gearbox(fx, &args(fx, a), Out::Captured, &[])?;
        expect(&r, 2, &r.stderr, words)
    })
}

/// A refused input (status 1) whose message names `words`.
pub fn fails(a: &'static [&'static str], words: &'static [&'static str]) -> Check {
    Box::new(move |fx| {
        let r = gearbox(fx, &args(fx, a), Out::Captured, &[])?;
        expect(&r, 1, &r.stderr, &[&["gearbox: "], words].concat())
    })
}

/// A run that succeeds, its output (stdout and stderr) holding `words`.
pub fn succeeds(a: &'static [&'static str], words: &'static [&'static str]) -> Check {
    Box::new(move |fx| {
        let r = gearbox(fx, &args(fx, a), Out::Captured, &[])?;
        expect(&r, 0, &(r.stdout.clone() + &r.stderr), words)
    })
}

/// A run whose standard output goes to `out`, ending with `code` and
/// standard error holding `words`.
pub fn with_output(
    a: &'static [&'static str],
    out: Out,
    code: i32,
    words: &'static [&'static str],
) -> Check {
    Box::new(move |fx| {
        let r = gearbox(fx, &args(fx, a), out, &[])?;
        expect(&r, code, &r.stderr, words)
    })
}

#[path = "hostile/cli_commands.rs"]
mod commands;
#[path = "hostile/cli_fixture.rs"]
mod fixture;
#[path = "hostile/cli_glm.rs"]
mod glm;
#[path = "hostile/cli_reliability.rs"]
mod reliability;
#[path = "hostile/cli_threads_caches.rs"]
mod threads_caches;

use commands::{demo, explain, general, lm};
use fixture::fixture;
use glm::glm;
use reliability::reliability_cases;
use threads_caches::threads_and_caches;

#[test]
fn issue_31_command_lines_get_a_clear_answer() {
    let fx = fixture("issue31");
    assert_none_failed(failures(&fx, threads_and_caches()));
    let _ = std::fs::remove_dir_all(&fx.dir);
}

/// Every case that must pass on this branch.
fn cases() -> Vec<Case> {
    [general(), explain(), demo(), lm(), glm()]
        .into_iter()
        .flatten()
        .collect()
}

/// Runs the cases on four threads, collecting every failure.
fn failures(fx: &Fx, table: Vec<Case>) -> Vec<String> {
    let bad = std::sync::Mutex::new(vec![]);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, check)) = table.get(i) else {
                    break;
                };
                if let Err(e) = check(fx) {
                    bad.lock().unwrap().push(format!("{name}: {e}"));
                }
            });
        }
    });
    let mut bad = bad.into_inner().unwrap();
    bad.sort();
    bad
}

/// Fails the test with every failing case listed, if any.
fn assert_none_failed(bad: Vec<String>) {
    assert!(
        bad.is_empty(),
        "{} case(s) failed:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_hostile_command_line_gets_a_clear_answer() {
    let fx = fixture("main");
    let table = cases();
    assert!(table.len() >= 80, "the table keeps at least 80 cases");
    assert_none_failed(failures(&fx, table));
    let _ = std::fs::remove_dir_all(&fx.dir);
}

/// Issue 10's reliability items; lists every case that fails.
#[test]
fn reliability_cases_get_a_clear_answer() {
    let fx = fixture("reliability");
    assert_none_failed(failures(&fx, reliability_cases()));
    let _ = std::fs::remove_dir_all(&fx.dir);
}
