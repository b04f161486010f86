//! Every subcommand with a closed or full standard output or a full
//! standard error: a reader that went away (`gearbox status | head -1`) ends
//! the command quietly with status 0; a full device (`/dev/full`) is a
//! message naming standard output and status 1; never a panic (status 101).
#![cfg(target_os = "linux")]

use std::fs::OpenOptions;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("gearbox-output-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The write end of a pipe whose read end is already closed: every write
/// to it fails with a broken pipe, however early the child writes.
fn pipe_without_reader() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds`; close-on-exec
    // keeps them out of children that other tests spawn meanwhile.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just made and nothing else owns them.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    Stdio::from(write)
}

/// `/dev/full`, where every write fails with "no space left on device".
fn full() -> Option<Stdio> {
    match OpenOptions::new().write(true).open("/dev/full") {
        Ok(f) => Some(Stdio::from(f)),
        Err(e) => {
            println!("SKIP: /dev/full cannot be opened here: {e}");
            None
        }
    }
}

fn run(args: &[String], stdout: Stdio, stderr: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gearbox"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .output()
        .expect("the gearbox binary runs")
}

/// Small inputs for `gearbox lm`: 30 observations, two covariates, 200
/// responses (more output than a pipe holds).
fn lm_args() -> Vec<String> {
    let dir = scratch("lm");
    let mut x = String::from("a,b\n");
    let mut y: String = (0..200).map(|j| format!("y{j},")).collect();
    y.pop();
    y.push('\n');
    for i in 0..30 {
        let (a, b) = (i as f64 * 0.37, ((i * 7) % 11) as f64);
        x.push_str(&format!("{a},{b}\n"));
        let row: Vec<String> = (0..200)
            .map(|j| format!("{}", a * j as f64 - b + ((i * j) % 5) as f64))
            .collect();
        y.push_str(&row.join(","));
        y.push('\n');
    }
    std::fs::write(dir.join("x.csv"), x).unwrap();
    std::fs::write(dir.join("y.csv"), y).unwrap();
    let path = |f: &str| dir.join(f).display().to_string();
    vec![
        "lm".into(),
        "--x".into(),
        path("x.csv"),
        "--y".into(),
        path("y.csv"),
    ]
}

/// Every command line that writes to standard output.
fn commands() -> Vec<Vec<String>> {
    let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    vec![
        words("status"),
        words("explain --op matmul --shape 64x64"),
        words("explain --op solve --shape 8x8 --precision fast --dtype f32"),
        words("explain --op glm_grid --shape 30x2x100"),
        words("demo --size 8"),
        lm_args(),
        words("--help"),
        words("lm --help"),
        words("--version"),
    ]
}

fn assert_no_panic(args: &[String], out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_ne!(
        out.status.code(),
        Some(101),
        "gearbox {args:?} panicked: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "gearbox {args:?}: {stderr}");
    stderr
}

#[test]
fn a_reader_that_goes_away_ends_every_command_quietly() {
    for args in commands() {
        let out = run(&args, pipe_without_reader(), Stdio::piped());
        let stderr = assert_no_panic(&args, &out);
        assert!(
            out.status.success(),
            "gearbox {args:?}: {:?} {stderr}",
            out.status
        );
        assert!(stderr.is_empty(), "gearbox {args:?} said: {stderr}");
    }
}

#[test]
fn a_full_standard_output_is_an_error_naming_it() {
    for args in commands() {
        let Some(stdout) = full() else { return };
        let out = run(&args, stdout, Stdio::piped());
        let stderr = assert_no_panic(&args, &out);
        assert_eq!(out.status.code(), Some(1), "gearbox {args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to standard output")
                && stderr.contains("No space left on device"),
            "gearbox {args:?}: {stderr}"
        );
    }
}

#[test]
fn a_full_standard_error_changes_nothing_but_the_messages() {
    // An error whose message cannot be written still exits with 1.
    let Some(stderr) = full() else { return };
    let missing = [
        "lm",
        "--x",
        "/nonexistent/x.csv",
        "--y",
        "/nonexistent/y.csv",
    ];
    let args: Vec<String> = missing.iter().map(|s| s.to_string()).collect();
    let out = run(&args, Stdio::null(), stderr);
    assert_eq!(out.status.code(), Some(1), "gearbox {args:?}");
    // `glm` reports its fit on standard error and writes its table to a file.
    let dir = scratch("glm");
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../gearbox-stats/data/esoph.csv");
    let table = dir.join("grid.csv");
    let args: Vec<String> = [
        "glm",
        "--data",
        &data.display().to_string(),
        "--formula-columns",
        "age,alcohol",
        "--intercept",
        "--response",
        "y",
        "--weights",
        "trials",
        "--family",
        "binomial",
        "--grid-size",
        "5",
        "--out",
        &table.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let Some(stderr) = full() else { return };
    let out = run(&args, Stdio::null(), stderr);
    assert!(out.status.success(), "gearbox {args:?}: {:?}", out.status);
    let written = gearbox_stats::io::read_csv(&table).unwrap();
    assert_eq!(written.nrows(), 5);
}
