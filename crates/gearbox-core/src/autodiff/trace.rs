//! The traces in progress on this thread, and the rule that a traced
//! function keeps its computation in the graph: evaluating an array that
//! depends on a traced argument (`eval`, `to_vec`, `item`, printing)
//! would detach it from its inputs, so no gradient could flow through it.
//! Such an evaluation is an error while the trace runs.

use std::cell::RefCell;
use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::graph::Array;

thread_local! {
    /// Node ids of the traced arguments of each trace in progress.
    static TRACES: RefCell<Vec<HashSet<usize>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with `args` traced on this thread (nested traces stack).
pub fn run<T>(args: &[Array], f: impl FnOnce() -> Result<T>) -> Result<T> {
    TRACES.with(|t| {
        t.borrow_mut()
            .push(args.iter().map(Array::node_id).collect())
    });
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            TRACES.with(|t| {
                t.borrow_mut().pop();
            });
        }
    }
    let _pop = Pop;
    f()
}

/// Whether a trace is in progress on this thread.
pub fn active() -> bool {
    TRACES.with(|t| !t.borrow().is_empty())
}

/// The error for evaluating any of `arrays` while a trace runs, when one
/// of them depends on a traced argument.
pub fn check_eval(arrays: &[&Array]) -> Result<()> {
    if !active() {
        return Ok(());
    }
    let traced: HashSet<usize> = TRACES.with(|t| t.borrow().iter().flatten().copied().collect());
    let mut seen = HashSet::new();
    let mut stack: Vec<Array> = arrays.iter().map(|a| (*a).clone()).collect();
    while let Some(a) = stack.pop() {
        if traced.contains(&a.node_id()) {
            return Err(Error::Autodiff {
                op: "grad",
                why: "the traced function read the values of an array that depends on its \
                      arguments (eval, to_vec, item, printing): that leaves the graph and no \
                      gradient can flow through it; keep the computation in array operations"
                    .into(),
            });
        }
        if a.is_evaluated() || !seen.insert(a.node_id()) {
            continue;
        }
        stack.extend(a.inputs());
    }
    Ok(())
}
