//! `explain` and `backend_plan`: the dispatch decision for the work behind an
//! array, without running it. `backend_plan` returns it as data (serde
//! serializable); `explain` also prints it.

use std::fmt;

use crate::error::{Error, Result};
use crate::fusion::plan::{plan, Region};
use crate::graph::Array;
use crate::runtime::claims;
use crate::runtime::config::options;
use crate::runtime::dispatch::{decide, route_with, BackendPlan, DataPath};

/// The dispatch decision for the work that produces `array`, computed without
/// evaluating anything or touching a device.
///
/// ```
/// use gearbox_core::{Array, runtime::backend_plan};
/// let x = Array::randn([64, 64], 1)?;
/// let plan = backend_plan(&x.exp()?.sum()?)?;
/// assert_eq!(plan.chosen, "cpu");
/// assert_eq!(plan.op, "exp+sum");
/// # Ok::<(), gearbox_core::Error>(())
/// ```
pub fn backend_plan(array: &Array) -> Result<BackendPlan> {
    Ok(with_region(array, |region| decide(region, false).0)?
        .unwrap_or_else(|| computed_plan(array)))
}

/// [`backend_plan`] after probing every backend the plan could choose
/// that has not been probed yet (in a child process, as first use would,
/// where auto-probe is on): the plan then says where evaluation will run,
/// not where it would if the probes pass. Nothing is evaluated.
pub fn backend_plan_probed(array: &Array) -> Result<BackendPlan> {
    Ok(
        with_region(array, |region| decide(region, true).0)?
            .unwrap_or_else(|| computed_plan(array)),
    )
}

/// Where the work that produces `array` would run (a backend's name, or
/// `"cpu"`): [`backend_plan`]'s `chosen` without the plan's details, for
/// code that chooses between formulations by where they would run.
pub fn planned_backend(array: &Array) -> Result<String> {
    let chosen = with_region(array, |region| {
        route_with(region, false).map_or("cpu".to_string(), |b| b.name().to_string())
    })?;
    Ok(chosen.unwrap_or_else(|| array.device()))
}

/// `f` of the region that would produce `array`, planned without
/// evaluating anything; `None` when `array` is already computed.
fn with_region<T>(array: &Array, f: impl FnOnce(&Region) -> T) -> Result<Option<T>> {
    // The pending nodes are held while they are planned, so that an
    // evaluation in another thread cannot finish one under the plan (it
    // waits, as this waits for one already under way).
    let (pending, _claim) = claims::claim_pending(|| array.pending_in_order())?;
    if pending.is_empty() {
        return Ok(None);
    }
    let p = plan(&pending, &[array], options().fusion)?;
    let region = p
        .regions
        .iter()
        .find(|r| r.produces().iter().any(|a| a.same_node(array)))
        .ok_or_else(|| Error::InvalidArgument {
            op: "backend_plan",
            name: "array",
            value: format!("{} {} array", array.shape(), array.dtype()),
            why: "the plan of its pending graph does not produce it".into(),
        })?;
    Ok(Some(f(region)))
}

/// The plan of an array that is already computed: where its values live.
fn computed_plan(array: &Array) -> BackendPlan {
    let on = array
        .resident()
        .map_or("cpu".to_string(), |r| r.backend.name().to_string());
    BackendPlan {
        op: "(already computed)".into(),
        shape: array.shape().clone(),
        dtype: array.dtype(),
        precision: array.precision(),
        work: None,
        size: array.numel() as f64,
        size_unit: "elements",
        preferred: on.clone(),
        residency: if on == "cpu" {
            "host".into()
        } else {
            format!("resident on {on}")
        },
        evaluated: true,
        candidates: Vec::new(),
        chosen: on.clone(),
        path: if on == "cpu" {
            DataPath::Host
        } else {
            DataPath::Resident
        },
        suggestions: Vec::new(),
    }
}

/// Prints the dispatch decision for `array` (see [`backend_plan`]) and returns it.
///
/// The printout is best effort: a closed or full standard output loses it
/// but never fails the call or panics (the plan is returned either way).
pub fn explain(array: &Array) -> Result<BackendPlan> {
    use std::io::Write;
    let p = backend_plan(array)?;
    let _ = write!(std::io::stdout().lock(), "{p}");
    Ok(p)
}

fn rule(f: &mut fmt::Formatter<'_>, title: &str) -> fmt::Result {
    let title = if title.is_empty() {
        String::new()
    } else {
        format!("── {title} ")
    };
    writeln!(
        f,
        "{title}{}",
        "─".repeat(68usize.saturating_sub(title.chars().count()))
    )
}

impl fmt::Display for BackendPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        rule(f, &format!("gearbox dispatch: {}", self.op))?;
        writeln!(
            f,
            "object: array {} {} precision={} preferred={}",
            self.shape, self.dtype, self.precision, self.preferred
        )?;
        writeln!(f, "residency: {}", self.residency)?;
        if self.evaluated {
            writeln!(f, "already computed; nothing to dispatch")?;
            return rule(f, "");
        }
        match self.work {
            Some(w) => writeln!(
                f,
                "work: {}, {} {}",
                w.name(),
                super::dispatch::fmt_count(self.size),
                self.size_unit
            )?,
            None => writeln!(f, "work: host-only operation")?,
        }
        writeln!(f)?;
        rule(f, "candidates")?;
        for c in &self.candidates {
            let mark = if c.chosen { "► CHOSEN" } else { "  ......" };
            let gates: Vec<String> = c
                .gates
                .iter()
                .map(|g| {
                    if g.passed {
                        g.gate.label().to_string()
                    } else {
                        format!("✗{}", g.gate.label())
                    }
                })
                .collect();
            let path = match (c.chosen || c.accepted, c.path) {
                (true, DataPath::Cold) => " [cold]",
                (true, DataPath::Resident) => " [resident]",
                _ => "",
            };
            writeln!(f, "{mark} {:<8} {}{path}", c.backend, gates.join(" "))?;
            for g in c.gates.iter().filter(|g| !g.passed) {
                writeln!(f, "           {}: {}", g.gate.label(), g.detail)?;
            }
        }
        writeln!(f)?;
        rule(f, "result")?;
        let how = match self.path {
            DataPath::Cold => "cold path (upload + compute)",
            DataPath::Resident => "resident path (inputs already on the device)",
            DataPath::Host => "host memory",
        };
        writeln!(f, "chosen: {} via {how}", self.chosen)?;
        if !self.suggestions.is_empty() {
            writeln!(f)?;
            rule(f, "suggestions")?;
            for s in &self.suggestions {
                writeln!(f, "* {s}")?;
            }
        }
        rule(f, "")
    }
}
