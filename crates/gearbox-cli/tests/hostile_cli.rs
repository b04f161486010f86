//! The hostile-input table of the `gearbox` command: bad flags and values,
//! missing, empty, ragged, non-numeric and binary files, NaN, infinities and
//! huge numbers in tables, duplicate and missing columns, wrong shapes,
//! unknown names, and outputs that cannot be written. Each case runs the
//! binary and checks its exit status (2 for a usage error, 1 for a refused
//! input, 0 where the input is fine), that nothing panicked, and that
//! standard error names the problem (the words listed).
//!
//! [`cases`] must all pass. [`pending_fixes`] holds the cases of issue 10's
//! items fixed on other branches (closed or full standard output, messages
//! that blame the wrong thing, a quadratic CSV header, duplicate formula
//! columns, sizes that overflow or exceed memory); an ignored test runs them
//! until those branches are merged.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where standard output goes.
#[derive(Clone, Copy, PartialEq)]
enum Out {
    /// A file, read back as the run's stdout.
    Captured,
    /// A pipe whose reading end is already closed (`gearbox ... | true`).
    ClosedPipe,
    /// `/dev/full`: every write fails with "no space left".
    DevFull,
}

/// What a run did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// The files the cases read, in one scratch directory.
struct Fx {
    dir: PathBuf,
}

impl Fx {
    /// The path of scratch file `name`, as an argument.
    fn f(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// The longest a run may take (debug build, a loaded machine).
const TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `gearbox args` with `env` set and standard output sent to `out`.
fn gearbox(fx: &Fx, args: &[String], out: Out, env: &[(&str, &str)]) -> Result<Run, String> {
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
            let (reader, writer) = std::io::pipe().map_err(|e| e.to_string())?;
            drop(reader);
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
fn sane(r: &Run) -> Result<(), String> {
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
fn expect(r: &Run, code: i32, text: &str, words: &[&str]) -> Result<(), String> {
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

type Check = Box<dyn Fn(&Fx) -> Result<(), String> + Send + Sync>;
type Case = (&'static str, Check);

fn args(fx: &Fx, a: &[&str]) -> Vec<String> {
    a.iter()
        .map(|s| match s.strip_prefix('@') {
            Some(file) => fx.f(file),
            None => s.to_string(),
        })
        .collect()
}

/// A usage error (status 2, from the argument parser) naming `words`.
/// Arguments starting with `@` are scratch files.
fn usage(a: &'static [&'static str], words: &'static [&'static str]) -> Check {
    Box::new(move |fx| {
        let r = gearbox(fx, &args(fx, a), Out::Captured, &[])?;
        expect(&r, 2, &r.stderr, words)
    })
}

/// A refused input (status 1) whose message names `words`.
fn fails(a: &'static [&'static str], words: &'static [&'static str]) -> Check {
    Box::new(move |fx| {
        let r = gearbox(fx, &args(fx, a), Out::Captured, &[])?;
        expect(&r, 1, &r.stderr, &[&["gearbox: "], words].concat())
    })
}

/// A run that succeeds, its output (stdout and stderr) holding `words`.
fn succeeds(a: &'static [&'static str], words: &'static [&'static str]) -> Check {
    Box::new(move |fx| {
        let r = gearbox(fx, &args(fx, a), Out::Captured, &[])?;
        expect(&r, 0, &(r.stdout.clone() + &r.stderr), words)
    })
}

/// A run whose standard output goes to `out`, ending with `code` and
/// standard error holding `words`.
fn with_output(
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

const LM: [&str; 5] = ["lm", "--x", "@x.csv", "--y", "@y.csv"];

fn general() -> Vec<Case> {
    vec![
        ("no arguments", usage(&[], &["Usage"])),
        (
            "an unknown subcommand",
            usage(&["frobnicate"], &["frobnicate"]),
        ),
        ("an unknown flag", usage(&["status", "--frob"], &["--frob"])),
        ("--version", succeeds(&["--version"], &["gearbox"])),
        ("help", succeeds(&["help"], &["Usage", "explain"])),
        (
            "help of a subcommand",
            succeeds(&["help", "glm"], &["--family"]),
        ),
        ("status with no GPU to use", succeeds(&["status"], &["cpu"])),
        (
            "calibrate with the GPU turned off",
            Box::new(|fx| {
                let r = gearbox(
                    fx,
                    &args(fx, &["calibrate", "--plot", "@never.svg"]),
                    Out::Captured,
                    &[("GEARBOX_DISABLE_CUDA", "1")],
                )?;
                expect(&r, 1, &r.stderr, &["CUDA"])
            }),
        ),
    ]
}

fn explain() -> Vec<Case> {
    vec![
        (
            "explain without --op",
            usage(&["explain", "--shape", "4x4"], &["--op"]),
        ),
        (
            "explain without --shape",
            usage(&["explain", "--op", "add"], &["--shape"]),
        ),
        (
            "an op that does not exist",
            fails(
                &["explain", "--op", "frobnicate", "--shape", "4x4"],
                &["op", "frobnicate"],
            ),
        ),
        (
            "a shape that is not sizes",
            fails(
                &["explain", "--op", "add", "--shape", "abc"],
                &["shape", "abc"],
            ),
        ),
        (
            "an empty shape",
            fails(&["explain", "--op", "add", "--shape", ""], &["shape"]),
        ),
        (
            "a negative size",
            fails(
                &["explain", "--op", "add", "--shape", "3x-1"],
                &["shape", "3x-1"],
            ),
        ),
        (
            "a size past usize",
            fails(
                &[
                    "explain",
                    "--op",
                    "add",
                    "--shape",
                    "99999999999999999999999",
                ],
                &["shape", "99999999999999999999999"],
            ),
        ),
        (
            "a shape with a trailing x",
            fails(
                &["explain", "--op", "add", "--shape", "4x"],
                &["shape", "4x"],
            ),
        ),
        (
            "a precision that does not exist",
            fails(
                &[
                    "explain",
                    "--op",
                    "add",
                    "--shape",
                    "4",
                    "--precision",
                    "turbo",
                ],
                &["precision", "turbo"],
            ),
        ),
        (
            "an integer dtype",
            fails(
                &["explain", "--op", "add", "--shape", "4", "--dtype", "i64"],
                &["dtype", "i64"],
            ),
        ),
        (
            "matmul of 3 x 4 by 3 x 4",
            fails(
                &["explain", "--op", "matmul", "--shape", "3x4"],
                &["matmul", "[3 x 4]"],
            ),
        ),
        (
            "solve with a 2 x 3 matrix",
            fails(
                &["explain", "--op", "solve", "--shape", "2x3"],
                &["solve", "[2 x 3]"],
            ),
        ),
        (
            "inv of a vector",
            fails(&["explain", "--op", "inv", "--shape", "5"], &["inv", "[5]"]),
        ),
        (
            "cholesky of a 3-d array",
            fails(
                &["explain", "--op", "cholesky", "--shape", "2x2x2"],
                &["cholesky", "[2 x 2 x 2]"],
            ),
        ),
        (
            "the sum of an empty matrix is a plan",
            succeeds(&["explain", "--op", "sum", "--shape", "0x0"], &["cpu"]),
        ),
        (
            "a 4-d chain is a plan",
            succeeds(
                &["explain", "--op", "chain", "--shape", "2x1x3x1"],
                &["cpu"],
            ),
        ),
        (
            "sizes with spaces and commas",
            succeeds(&["explain", "--op", "add", "--shape", " 4 , 4 "], &["cpu"]),
        ),
        (
            "a large plan computes nothing",
            succeeds(
                &[
                    "explain",
                    "--op",
                    "exp",
                    "--shape",
                    "65536x65536",
                    "--dtype",
                    "f32",
                    "--precision",
                    "fast",
                ],
                &["cpu"],
            ),
        ),
    ]
}

fn demo() -> Vec<Case> {
    vec![
        (
            "demo with a size that is not a number",
            usage(&["demo", "--size", "abc"], &["--size"]),
        ),
        (
            "demo with a negative size",
            usage(&["demo", "--size", "-3"], &["--size"]),
        ),
        (
            "demo with a negative seed",
            usage(&["demo", "--seed", "-1"], &["--seed"]),
        ),
        (
            "demo of 0 x 0 matrices",
            succeeds(&["demo", "--size", "0"], &["mean(C) = NaN"]),
        ),
        (
            "demo of 2 x 2 matrices",
            succeeds(&["demo", "--size", "2", "--seed", "7"], &["col_means"]),
        ),
    ]
}

fn lm() -> Vec<Case> {
    vec![
        ("lm without --y", usage(&["lm", "--x", "@x.csv"], &["--y"])),
        (
            "lm with a missing file",
            fails(
                &["lm", "--x", "@nope.csv", "--y", "@y.csv"],
                &["nope.csv", "cannot open"],
            ),
        ),
        (
            "lm with a directory for a file",
            fails(&["lm", "--x", "@", "--y", "@y.csv"], &["directory"]),
        ),
        (
            "lm with an empty file",
            fails(
                &["lm", "--x", "@empty.csv", "--y", "@y.csv"],
                &["empty.csv", "empty"],
            ),
        ),
        (
            "lm with /dev/null for a table",
            fails(
                &["lm", "--x", "/dev/null", "--y", "@y.csv"],
                &["/dev/null", "empty"],
            ),
        ),
        (
            "lm with a header and no rows",
            fails(
                &["lm", "--x", "@header_only.csv", "--y", "@header_only.csv"],
                &["many_lm", "rows"],
            ),
        ),
        (
            "lm with a ragged row",
            fails(
                &["lm", "--x", "@ragged.csv", "--y", "@y.csv"],
                &["ragged.csv", "line 4", "3 field(s)", "2 column(s)"],
            ),
        ),
        (
            "lm with a word in a number column",
            fails(
                &["lm", "--x", "@x.csv", "--y", "@nonnum.csv"],
                &["nonnum.csv", "line 3", "column 2", "\"n/a\""],
            ),
        ),
        (
            "lm with an empty cell",
            fails(
                &["lm", "--x", "@emptycell.csv", "--y", "@y.csv"],
                &["emptycell.csv", "line 5"],
            ),
        ),
        (
            "lm with NaN in the design",
            fails(
                &["lm", "--x", "@nan_x.csv", "--y", "@y.csv"],
                &["NaN", "row 3", "column"],
            ),
        ),
        (
            "lm with NA in a response",
            fails(&["lm", "--x", "@x.csv", "--y", "@na_y.csv"], &["NaN"]),
        ),
        (
            "lm with Inf in a response",
            fails(&["lm", "--x", "@x.csv", "--y", "@inf_y.csv"], &["inf"]),
        ),
        (
            "lm with 1e400 (read as Inf) in the design",
            fails(&["lm", "--x", "@big_x.csv", "--y", "@y.csv"], &["inf"]),
        ),
        (
            "lm with responses near 1e308 whose squares overflow",
            fails(
                &["lm", "--x", "@x.csv", "--y", "@huge_y.csv"],
                &["overflow"],
            ),
        ),
        (
            "lm with a column name used twice",
            fails(
                &["lm", "--x", "@dup.csv", "--y", "@y.csv"],
                &["dup.csv", "\"u\"", "used twice"],
            ),
        ),
        (
            "lm with R's row-name column",
            fails(
                &["lm", "--x", "@rownames.csv", "--y", "@y.csv"],
                &["empty column name", "row.names"],
            ),
        ),
        (
            "lm with tables of other row counts",
            fails(
                &["lm", "--x", "@x.csv", "--y", "@short_y.csv"],
                &["12 rows", "3"],
            ),
        ),
        (
            "lm with a covariate that doubles another",
            fails(
                &["lm", "--x", "@dep_x.csv", "--y", "@y.csv", "--intercept"],
                &["rank deficient", "v"],
            ),
        ),
        (
            "lm with a binary file",
            fails(
                &["lm", "--x", "@garbage.bin", "--y", "@y.csv"],
                &["garbage.bin"],
            ),
        ),
        (
            "lm writing into a missing directory",
            fails(
                &[
                    LM[0],
                    LM[1],
                    LM[2],
                    LM[3],
                    LM[4],
                    "--out",
                    "@no/such/dir/out.csv",
                ],
                &["cannot create"],
            ),
        ),
        (
            "lm writing to /dev/full",
            fails(
                &[LM[0], LM[1], LM[2], LM[3], LM[4], "--out", "/dev/full"],
                &["/dev/full", "cannot write"],
            ),
        ),
        (
            "lm reads CRLF line ends and quoted numbers",
            succeeds(
                &["lm", "--x", "@crlf_x.csv", "--y", "@crlf_y.csv"],
                &["estimate", "\"heart, left\",dose"],
            ),
        ),
        (
            "lm of the good tables",
            succeeds(
                &["lm", "--x", "@x.csv", "--y", "@y.csv", "--intercept"],
                &["r_squared"],
            ),
        ),
    ]
}

const GLM: [&str; 14] = [
    "glm",
    "--data",
    "@esoph.csv",
    "--formula-columns",
    "age,alcohol",
    "--intercept",
    "--response",
    "y",
    "--weights",
    "trials",
    "--family",
    "binomial",
    "--out",
    "@glm_out.csv",
];

/// `gearbox glm` on esoph with the model's flags in `swap` given other
/// values and `extra` arguments after them, ending with `code` and standard
/// error holding `words`.
fn glm_run(
    swap: &'static [(&'static str, &'static str)],
    extra: &'static [&'static str],
    code: i32,
    words: &'static [&'static str],
) -> Check {
    Box::new(move |fx| {
        let mut a: Vec<&str> = GLM.to_vec();
        for (flag, value) in swap {
            let at = a.iter().position(|x| x == flag).expect("a flag of GLM");
            a[at + 1] = value;
        }
        a.extend(extra);
        let r = gearbox(fx, &args(fx, &a), Out::Captured, &[])?;
        expect(&r, code, &r.stderr, words)
    })
}

/// A refused `gearbox glm` (status 1).
fn glm_fails(
    swap: &'static [(&'static str, &'static str)],
    extra: &'static [&'static str],
    words: &'static [&'static str],
) -> Check {
    glm_run(swap, extra, 1, words)
}

fn glm() -> Vec<Case> {
    const GRID: [&str; 2] = ["--grid", "@grid.csv"];
    const RANDOM: [&str; 2] = ["--grid-size", "3"];
    vec![
        (
            "glm without --formula-columns",
            usage(
                &[
                    "glm",
                    "--data",
                    "@esoph.csv",
                    "--response",
                    "y",
                    "--family",
                    "binomial",
                    "--out",
                    "@o.csv",
                    "--grid-size",
                    "2",
                ],
                &["--formula-columns"],
            ),
        ),
        (
            "glm with neither --grid nor --grid-size",
            glm_run(&[], &[], 2, &["--grid"]),
        ),
        (
            "glm with both --grid and --grid-size",
            glm_run(
                &[],
                &["--grid", "@grid.csv", "--grid-size", "3"],
                2,
                &["--grid-size"],
            ),
        ),
        (
            "glm with a negative grid size",
            glm_run(&[], &["--grid-size", "-1"], 2, &["--grid-size"]),
        ),
        (
            "glm with a grid size past u64",
            glm_run(
                &[],
                &["--grid-size", "99999999999999999999999"],
                2,
                &["--grid-size"],
            ),
        ),
        (
            "glm with a seed that is a word",
            glm_run(&[], &["--grid-size", "2", "--seed", "x"], 2, &["--seed"]),
        ),
        (
            "glm with a dispersion that is a word",
            glm_run(
                &[],
                &["--grid-size", "2", "--dispersion", "one"],
                2,
                &["--dispersion"],
            ),
        ),
        (
            "glm with a prior mean that is a word",
            glm_run(
                &[],
                &["--grid-size", "2", "--prior-mean", "zero"],
                2,
                &["--prior-mean"],
            ),
        ),
        (
            "glm with the family given twice",
            glm_run(
                &[],
                &["--grid-size", "2", "--family", "poisson"],
                2,
                &["--family"],
            ),
        ),
        (
            "glm with a family typo",
            glm_fails(
                &[("--family", "binomail")],
                &RANDOM,
                &["family", "binomail"],
            ),
        ),
        (
            "glm with an unknown link",
            glm_fails(
                &[],
                &["--grid-size", "2", "--link", "logistic"],
                &["link", "logistic"],
            ),
        ),
        (
            "glm poisson with the logit link",
            glm_fails(
                &[("--family", "poisson"), ("--response", "ncases")],
                &["--grid-size", "2", "--link", "logit"],
                &["poisson", "log"],
            ),
        ),
        (
            "glm binomial with dispersion 2",
            glm_fails(
                &[],
                &["--grid-size", "2", "--dispersion", "2"],
                &["dispersion", "quasibinomial"],
            ),
        ),
        (
            "glm gaussian with a negative dispersion",
            glm_fails(
                &[("--family", "gaussian")],
                &["--grid-size", "2", "--dispersion", "-1"],
                &["dispersion", "-1"],
            ),
        ),
        (
            "glm with a NaN dispersion",
            glm_fails(
                &[("--family", "quasibinomial")],
                &["--grid-size", "2", "--dispersion", "NaN"],
                &["dispersion", "NaN"],
            ),
        ),
        (
            "glm with a missing predictor",
            glm_fails(
                &[("--formula-columns", "age,nosuch")],
                &RANDOM,
                &["\"nosuch\"", "no such column"],
            ),
        ),
        (
            "glm with an empty predictor name",
            glm_fails(&[("--formula-columns", "")], &RANDOM, &["no such column"]),
        ),
        (
            "glm with a missing response",
            glm_fails(
                &[("--response", "z")],
                &RANDOM,
                &["\"z\"", "no such column"],
            ),
        ),
        (
            "glm with missing weights",
            glm_fails(&[("--weights", "w")], &RANDOM, &["\"w\"", "no such column"]),
        ),
        (
            "glm binomial with proportions above 1",
            glm_fails(&[("--response", "ncontrols")], &RANDOM, &["y", "[0, 1]"]),
        ),
        (
            "glm with a NaN predictor value",
            glm_fails(&[("--data", "@esoph_nan.csv")], &RANDOM, &["x", "NaN"]),
        ),
        (
            "glm with an infinite offset",
            glm_fails(
                &[("--data", "@esoph_inf.csv")],
                &["--grid-size", "2", "--offset", "off"],
                &["alpha", "inf"],
            ),
        ),
        (
            "glm with two prior precisions for three coefficients",
            glm_fails(
                &[],
                &["--grid-size", "2", "--prior-precision", "1,2"],
                &["prior-precision", "2 values", "3"],
            ),
        ),
        (
            "glm with a zero prior precision",
            glm_fails(
                &[],
                &["--grid", "@grid.csv", "--prior-precision", "0"],
                &["positive definite"],
            ),
        ),
        (
            "glm with a negative prior precision",
            glm_fails(
                &[],
                &["--grid", "@grid.csv", "--prior-precision", "-1"],
                &["positive definite"],
            ),
        ),
        (
            "glm with a NaN prior mean",
            glm_fails(
                &[],
                &["--grid", "@grid.csv", "--prior-mean", "NaN"],
                &["mu", "NaN"],
            ),
        ),
        (
            "glm with a grid of the wrong columns",
            glm_fails(
                &[],
                &["--grid", "@grid_bad.csv"],
                &["grid", "intercept, age, alcohol"],
            ),
        ),
        (
            "glm with a NaN grid point",
            glm_fails(&[], &["--grid", "@grid_nan.csv"], &["B", "NaN"]),
        ),
        (
            "glm with a missing grid file",
            glm_fails(&[], &["--grid", "@nope.csv"], &["nope.csv", "cannot open"]),
        ),
        (
            "glm with an empty grid file",
            glm_fails(&[], &["--grid", "@empty.csv"], &["empty.csv", "empty"]),
        ),
        (
            "glm with a missing data file",
            glm_fails(
                &[("--data", "@nope.csv")],
                &RANDOM,
                &["nope.csv", "cannot open"],
            ),
        ),
        (
            "glm writing into a missing directory",
            glm_fails(
                &[("--out", "@no/such/dir/o.csv")],
                &GRID,
                &["cannot create"],
            ),
        ),
        (
            "glm with a given grid",
            glm_run(&[], &GRID, 0, &["wrote 2 grid points"]),
        ),
        (
            "glm with negative prior means",
            glm_run(
                &[],
                &["--grid", "@grid.csv", "--prior-mean", "-1,-0.5,2"],
                0,
                &["wrote 2"],
            ),
        ),
        (
            "glm with a negative seed",
            glm_run(
                &[],
                &["--grid-size", "2", "--seed", "-4"],
                2,
                &["--seed", "-4"],
            ),
        ),
        (
            "glm with a random grid",
            glm_run(
                &[],
                &["--grid-size", "5"],
                0,
                &["maximum likelihood", "wrote 5"],
            ),
        ),
    ]
}

/// Every case that must pass on this branch.
fn cases() -> Vec<Case> {
    [general(), explain(), demo(), lm(), glm()]
        .into_iter()
        .flatten()
        .collect()
}

/// Cases of issue 10's items fixed on other branches: the behaviour the
/// issue asks for.
fn pending_fixes() -> Vec<Case> {
    vec![
        // Item 7: closed or full standard output.
        (
            "status to a closed pipe",
            with_output(&["status"], Out::ClosedPipe, 0, &[]),
        ),
        (
            "explain to a closed pipe",
            with_output(
                &["explain", "--op", "add", "--shape", "4"],
                Out::ClosedPipe,
                0,
                &[],
            ),
        ),
        (
            "demo to a closed pipe",
            with_output(&["demo", "--size", "2"], Out::ClosedPipe, 0, &[]),
        ),
        (
            "help to a closed pipe",
            with_output(&["help"], Out::ClosedPipe, 0, &[]),
        ),
        (
            "lm to a closed pipe",
            with_output(&LM, Out::ClosedPipe, 0, &[]),
        ),
        (
            "status to /dev/full",
            with_output(&["status"], Out::DevFull, 1, &["cannot write"]),
        ),
        (
            "explain to /dev/full",
            with_output(
                &["explain", "--op", "add", "--shape", "4"],
                Out::DevFull,
                1,
                &["cannot write"],
            ),
        ),
        // Item 8: messages that blamed the wrong thing.
        (
            "glm with a predictor of 1e308 names the overflow",
            glm_fails(
                &[("--data", "@esoph_1e308.csv")],
                &["--grid-size", "3"],
                &["overflow"],
            ),
        ),
        (
            "lm fits a design scaled by 1e300",
            succeeds(
                &["lm", "--x", "@x_1e300.csv", "--y", "@y.csv"],
                &["estimate"],
            ),
        ),
        (
            "lm fits a design scaled by 1e-300",
            succeeds(
                &["lm", "--x", "@x_1e-300.csv", "--y", "@y.csv"],
                &["estimate"],
            ),
        ),
        // Item 9: a header of 100,000 names is read in linear time.
        (
            "lm with a 100,000-column header answers in seconds",
            Box::new(|fx| {
                let r = gearbox(
                    fx,
                    &args(fx, &["lm", "--x", "@wide.csv", "--y", "@one_y.csv"]),
                    Out::Captured,
                    &[],
                )?;
                expect(&r, 1, &r.stderr, &["rows"])?;
                if r.elapsed > Duration::from_secs(10) {
                    return Err(format!("took {:?}", r.elapsed));
                }
                Ok(())
            }),
        ),
        // Item 10: a header the reader rejects.
        (
            "glm with a predictor named twice",
            Box::new(|fx| {
                let mut a: Vec<&str> = GLM.to_vec();
                a[4] = "age,age";
                a.retain(|x| *x != "--intercept");
                a.extend(["--grid", "@grid2.csv"]);
                let r = gearbox(fx, &args(fx, &a), Out::Captured, &[])?;
                sane(&r)?;
                match r.code {
                    Some(0) => gearbox_stats::io::read_csv(fx.f("glm_out.csv"))
                        .map(|_| ())
                        .map_err(|e| format!("wrote a table it cannot read: {e}")),
                    _ => expect(&r, 1, &r.stderr, &["age"]),
                }
            }),
        ),
        // Items 2 and 3: sizes that overflow, results larger than memory.
        (
            "explain of a 2^32 x 2^32 x 2^32 shape",
            fails(
                &[
                    "explain",
                    "--op",
                    "add",
                    "--shape",
                    "4294967296x4294967296x4294967296",
                ],
                &["overflow"],
            ),
        ),
        (
            "demo of 2^28 x 2^28 matrices (2^59 bytes each)",
            fails(&["demo", "--size", "268435456"], &["memory", "bytes"]),
        ),
    ]
}

/// The data files the cases read.
fn fixture() -> Fx {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let w = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    let table = |names: &str, rows: &dyn Fn(usize) -> String, n: usize| {
        let mut t = format!("{names}\n");
        for i in 0..n {
            t.push_str(&rows(i));
            t.push('\n');
        }
        t
    };
    let dose = |i: usize| i as f64 * 0.5;
    let age = |i: usize| 30.0 + ((i * 7) % 11) as f64;
    let x_row = |scale: f64| move |i: usize| format!("{:e},{:e}", dose(i) * scale, age(i) * scale);
    let y_row = |i: usize| {
        let wobble = ((i * 5) % 7) as f64 * 0.1 - 0.3;
        format!(
            "{},{}",
            1.0 + 2.0 * dose(i) + wobble,
            0.3 * age(i) - dose(i)
        )
    };
    w("x.csv", &table("dose,age", &x_row(1.0), 12));
    w("x_1e300.csv", &table("dose,age", &x_row(1e300), 12));
    w("x_1e-300.csv", &table("dose,age", &x_row(1e-300), 12));
    w("y.csv", &table("liver,heart", &y_row, 12));
    w("empty.csv", "");
    w("header_only.csv", "a,b\n");
    w("ragged.csv", "a,b\n1,2\n3,4\n5,6,7\n");
    w("nonnum.csv", "liver,heart\n1,2\n3,n/a\n");
    w("emptycell.csv", "a,b\n1,2\n3,4\n5,6\n7,\n");
    let edited = |row: usize, text: &str| {
        let t = table("dose,age", &x_row(1.0), 12);
        let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
        lines[row + 1] = text.to_string();
        lines.join("\n") + "\n"
    };
    w("nan_x.csv", &edited(3, "NaN,31"));
    w("big_x.csv", &edited(5, "1e400,31"));
    let y_edited = |row: usize, text: &str| {
        let t = table("liver,heart", &y_row, 12);
        let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
        lines[row + 1] = text.to_string();
        lines.join("\n") + "\n"
    };
    w("na_y.csv", &y_edited(2, "NA,1"));
    w("inf_y.csv", &y_edited(7, "1,-Inf"));
    w(
        "huge_y.csv",
        &table(
            "a",
            &|i| format!("{:e}", 1e308 * (1.0 - 0.1 * (i % 3) as f64)),
            12,
        ),
    );
    w("dup.csv", &table("u,u", &|i| format!("{i},{}", i * i), 12));
    w(
        "rownames.csv",
        &table("\"\",dose", &|i| format!("\"{i}\",{i}"), 12),
    );
    w("short_y.csv", "a\n1\n2\n3\n");
    w(
        "dep_x.csv",
        &table("u,v", &|i| format!("{},{}", i * i, 2 * i * i), 12),
    );
    std::fs::write(
        dir.join("garbage.bin"),
        [0xff, 0xfe, 0x00, 0x81, b'\n', 0xc3, 0x28, b',', 0x00],
    )
    .unwrap();
    w(
        "crlf_x.csv",
        &table("\"dose\",age", &x_row(1.0), 12).replace('\n', "\r\n"),
    );
    w(
        "crlf_y.csv",
        &table(
            "liver,\"heart, left\"",
            &|i| format!("\"{}\",{}", dose(i) + 1.0, age(i) * 0.5 - dose(i)),
            12,
        )
        .replace('\n', "\r\n"),
    );
    // 100,000 distinct names and one row.
    let names: Vec<String> = (0..100_000).map(|j| format!("c{j}")).collect();
    w(
        "wide.csv",
        &format!("{}\n{}\n", names.join(","), vec!["1"; 100_000].join(",")),
    );
    w("one_y.csv", "y\n1\n");
    // GLM data: the esoph table, and copies with a NaN, an infinite offset
    // and a predictor of 1e308.
    let esoph = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../gearbox-stats/data/esoph.csv"),
    )
    .unwrap();
    w("esoph.csv", &esoph);
    let rows: Vec<&str> = esoph.lines().collect();
    let with_first = |first: &str| {
        let mut r: Vec<String> = rows.iter().map(|s| s.to_string()).collect();
        r[1] = first.to_string() + &r[1][r[1].find(',').unwrap()..];
        r.join("\n") + "\n"
    };
    w("esoph_nan.csv", &with_first("NaN"));
    w("esoph_1e308.csv", &with_first("1e308"));
    let with_offset: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| match i {
            0 => format!("{r},off"),
            5 => format!("{r},Inf"),
            _ => format!("{r},0"),
        })
        .collect();
    w("esoph_inf.csv", &(with_offset.join("\n") + "\n"));
    w(
        "grid.csv",
        "intercept,age,alcohol\n-3,0.2,0.5\n-2.5,0.1,0.4\n",
    );
    w("grid2.csv", "a,b\n0.2,0.5\n0.1,0.4\n");
    w("grid_bad.csv", "p,q\n1,2\n");
    w("grid_nan.csv", "intercept,age,alcohol\n-3,NaN,0.5\n");
    Fx { dir }
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

#[test]
fn every_hostile_command_line_gets_a_clear_answer() {
    let fx = fixture();
    let table = cases();
    assert!(table.len() >= 80, "the table keeps at least 80 cases");
    let bad = failures(&fx, table);
    assert!(
        bad.is_empty(),
        "{} case(s) failed:\n{}",
        bad.len(),
        bad.join("\n")
    );
    let _ = std::fs::remove_dir_all(&fx.dir);
}

/// Run after merging the branches of issue 10 (`cargo test --test
/// hostile_cli -- --ignored`); lists every case that still fails.
#[test]
#[ignore = "pending issue 10 items 2, 3, 7, 8, 9, 10 (other branches); run with --ignored after merging"]
fn pending_fixes_get_a_clear_answer() {
    let fx = fixture();
    let bad = failures(&fx, pending_fixes());
    assert!(
        bad.is_empty(),
        "{} case(s) failed:\n{}",
        bad.len(),
        bad.join("\n")
    );
    let _ = std::fs::remove_dir_all(&fx.dir);
}
