//! The hostile-input table of the core API: inputs a careless or hostile
//! caller gives (wrong shapes, dtypes, axes, indices and values; NaN,
//! infinities, signed zeros, empty and huge arrays), each with what must
//! happen: an error whose message names the problem (the words listed), or
//! success with the right value. Never a panic.
//!
//! [`cases`] holds the general table; [`reliability_cases`] the cases of
//! issue 10's reliability items (shape counts that overflow, allocations
//! larger than memory, integer overflow, non-finite linear algebra,
//! products whose partial products overflow); `handles` the cases of issue
//! 31's new parts (resident handles, memory-limit values). All must pass.

use gearbox_core::{Array, DType, Error};

/// What a case must do.
pub enum Expect {
    /// Fail with a message holding every one of these words.
    Error(&'static [&'static str]),
    /// Succeed (value checks inside the case return an error when wrong).
    Accept,
}

pub type Case = (&'static str, Box<dyn Fn() -> Result<(), Error>>, Expect);

/// Runs `f` and discards its value, keeping only success or the error.
pub fn run<T>(f: impl Fn() -> Result<T, Error> + 'static) -> Box<dyn Fn() -> Result<(), Error>> {
    Box::new(move || f().map(|_| ()))
}

/// An error unless `got` is `want` (bit for bit; any NaN matches NaN).
pub fn want(what: &'static str, got: f64, want: f64) -> Result<(), Error> {
    if got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            op: what,
            name: "result",
            value: format!("{got:?}"),
            why: format!("expected {want:?}"),
        })
    }
}

/// An error unless every value of `a` is `want`.
pub fn all_are(what: &'static str, a: &Array, w: f64) -> Result<(), Error> {
    for v in a.to_f64_vec()? {
        want(what, v, w)?;
    }
    Ok(())
}

pub fn m(rows: usize, cols: usize) -> Array {
    let v: Vec<f64> = (0..rows * cols)
        .map(|i| (i as f64 * 0.7).sin() + 2.0)
        .collect();
    Array::from_vec([rows, cols], v).unwrap()
}

pub fn v(n: usize) -> Array {
    Array::from_vec([n], (0..n).map(|i| i as f64 - 1.5).collect::<Vec<_>>()).unwrap()
}

pub fn ints(values: &[i64]) -> Array {
    Array::from_vec([values.len()], values.to_vec()).unwrap()
}

pub fn bools(n: usize) -> Array {
    Array::from_vec([n], (0..n).map(|i| i % 3 == 0).collect::<Vec<_>>()).unwrap()
}

pub fn floats(values: &[f64]) -> Array {
    Array::from_vec([values.len()], values.to_vec()).unwrap()
}

pub fn empty(dims: &[usize]) -> Array {
    Array::zeros(dims.to_vec(), DType::F64).unwrap()
}

pub fn matrix(rows: &[&[f64]]) -> Array {
    let rows: Vec<Vec<f64>> = rows.iter().map(|r| r.to_vec()).collect();
    Array::from_rows(&rows).unwrap()
}

use Expect::{Accept, Error as Fails};

#[path = "hostile/api_arrays.rs"]
mod arrays;
#[path = "hostile/api_handles.rs"]
mod handles;
#[path = "hostile/api_reliability.rs"]
mod reliability;
#[path = "hostile/api_structure.rs"]
mod structure;

use arrays::{creation, elementwise, reductions};
use reliability::{allocation_cases, reliability_cases};
use structure::{access, linalg, movement, other};

/// Every case that must pass on this branch.
fn cases() -> Vec<Case> {
    [
        creation(),
        elementwise(),
        reductions(),
        movement(),
        access(),
        linalg(),
        other(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Runs every case, collecting what went wrong instead of stopping at the
/// first.
fn failures(table: Vec<Case>) -> Vec<String> {
    let mut bad = vec![];
    for (name, case, expect) in table {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(case));
        let problem = match (outcome, expect) {
            (Err(_), _) => Some("panicked".to_string()),
            (Ok(Ok(())), Fails(_)) => Some("was accepted, expected an error".to_string()),
            (Ok(Err(e)), Accept) => Some(format!("failed: {e}")),
            (Ok(Ok(())), Accept) => None,
            (Ok(Err(e)), Fails(words)) => {
                let msg = e.to_string();
                let missing: Vec<&&str> = words.iter().filter(|w| !msg.contains(*w)).collect();
                (!missing.is_empty()).then(|| format!("message {msg:?} lacks {missing:?}"))
            }
        };
        if let Some(p) = problem {
            bad.push(format!("{name}: {p}"));
        }
    }
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
fn every_hostile_input_gets_a_clear_answer() {
    let table = cases();
    assert!(table.len() >= 90, "the table keeps at least 90 cases");
    assert_none_failed(failures(table));
}

/// Issue 10's reliability items; lists every case that fails.
#[test]
fn reliability_cases_get_a_clear_answer() {
    assert_none_failed(failures(reliability_cases()));
}

/// Issue 31's new parts: resident handles and memory-limit values.
#[test]
fn handle_and_memory_limit_cases_get_a_clear_answer() {
    let table: Vec<Case> = [handles::handle_cases(), handles::memory_limit_cases()]
        .into_iter()
        .flatten()
        .collect();
    assert!(table.len() >= 75, "the table keeps at least 75 cases");
    assert_none_failed(failures(table));
}

/// The child of [`allocations_larger_than_memory_are_errors`].
#[test]
#[ignore = "run by allocations_larger_than_memory_are_errors in a child process"]
fn allocation_child() {
    if std::env::var_os("GEARBOX_HOSTILE_CHILD").is_none() {
        return;
    }
    assert_none_failed(failures(allocation_cases()));
}

#[test]
fn allocations_larger_than_memory_are_errors() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["allocation_child", "--exact", "--ignored", "--nocapture"])
        .env("GEARBOX_HOSTILE_CHILD", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed ({}):\n{text}",
        out.status
    );
}
