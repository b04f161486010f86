//! The six gates one GPU candidate passes or fails for one region, in
//! order: registered, available, healthy, supports the work, precision
//! allows it, calibration window (or, for data movement, where its inputs
//! live). Checking stops at the first failure.
//!
//! Routing only needs the verdict; `explain` also wants each gate's detail
//! and a suggestion for a rejected candidate. Details and suggestions are
//! therefore written only when asked for ([`Gates::explain`]): formatting
//! them for every region made small work measurably slower on the routed
//! path than on a fixed one.

use crate::dtype::DType;
use crate::precision::Precision;
use crate::runtime::backend::{Backend, WorkClass};
use crate::runtime::calibration::threshold;
use crate::runtime::config::options;
use crate::runtime::dispatch::{fmt_count, size_unit, DataPath, Gate, GateResult, Work};
use crate::runtime::movement::{place, Placement};
use crate::runtime::registry::{BackendStatus, Candidate, Health};

/// The gates checked so far, and whether their details are wanted.
pub(crate) struct Gates {
    /// The gates checked, in order.
    pub results: Vec<GateResult>,
    /// Whether details and suggestions are written.
    pub explain: bool,
}

/// A rejection's suggestion (`None` when there is none, or when not
/// explaining).
type Rejected = Option<String>;

impl Gates {
    fn check(&mut self, gate: Gate, passed: bool, detail: impl FnOnce() -> String) -> bool {
        self.results.push(GateResult {
            gate,
            passed,
            detail: if self.explain {
                detail()
            } else {
                String::new()
            },
        });
        passed
    }

    fn reject(&mut self, gate: Gate, detail: impl FnOnce() -> String) -> Rejected {
        self.check(gate, false, detail);
        None
    }

    /// `suggestion()` when explaining.
    fn suggest(&self, suggestion: impl FnOnce() -> String) -> Rejected {
        self.explain.then(suggestion)
    }
}

/// How one candidate fared.
pub(crate) struct Verdict {
    /// The gates checked, in order, up to the first that failed.
    pub gates: Vec<GateResult>,
    /// The data path the candidate would take.
    pub path: DataPath,
    /// Whether it passed every gate.
    pub accepted: bool,
    /// What to do about a rejection (only when explaining).
    pub suggestion: Option<String>,
}

/// The gates of candidate `c` for work `w`.
pub(crate) fn gpu_gates(c: &Candidate, w: &Work<'_>, probing: bool, explain: bool) -> Verdict {
    let name = c.status.backend.as_str();
    // Data movement follows its inputs; other work is priced by thresholds.
    let movement = w
        .call
        .filter(|c| c.is_data_movement())
        .map(|c| place(&w.inputs[..c.placed_by(w.inputs.len())], name));
    let path = match &movement {
        Some(m) => m.path,
        None if crate::runtime::dispatch::all_resident(&w.inputs, name) => DataPath::Resident,
        None => DataPath::Cold,
    };
    let mut g = Gates {
        results: Vec::with_capacity(6),
        explain,
    };
    let verdict = all_gates(&mut g, c, w, probing, movement, path);
    Verdict {
        gates: g.results,
        path,
        accepted: verdict.is_ok(),
        suggestion: verdict.err().flatten(),
    }
}

/// Every gate in order, up to the first that fails: `Ok` exactly when all
/// six passed.
fn all_gates(
    g: &mut Gates,
    c: &Candidate,
    w: &Work<'_>,
    probing: bool,
    movement: Option<Placement>,
    path: DataPath,
) -> Result<(), Rejected> {
    presence(g, &c.status, probing)?;
    let Some(backend) = c.backend.as_deref() else {
        return Err(g.reject(Gate::Supports, || "backend could not be built".into()));
    };
    let name = c.status.backend.as_str();
    support(g, backend, w, name)?;
    precision(g, &c.status, w, movement.is_some(), name)?;
    calibration(g, backend, &c.status, w, movement, path)
}

/// Registered, available and healthy.
fn presence(g: &mut Gates, s: &BackendStatus, probing: bool) -> Result<(), Rejected> {
    let name = s.backend.as_str();
    for (gate, passed, what) in [
        (Gate::Registered, s.registered, "not registered"),
        (Gate::Available, s.available, "not available"),
    ] {
        // A passed gate shows no detail, a failed one the status's reason.
        let detail = || {
            if passed {
                String::new()
            } else {
                s.reason.clone()
            }
        };
        if !g.check(gate, passed, detail) {
            return Err(g.suggest(|| format!("'{name}' {what}: {}", s.reason)));
        }
    }
    let (healthy, detail) = match s.health {
        Health::Healthy => (true, String::new()),
        Health::Unprobed if options().auto_probe && !probing => {
            (true, "unprobed; probes on first use".to_string())
        }
        Health::Unprobed | Health::Unhealthy => (false, s.reason.clone()),
    };
    if !g.check(Gate::Healthy, healthy, || detail.clone()) {
        return Err(g.suggest(|| {
            let here = crate::runtime::config::surface();
            format!(
                "'{name}' unhealthy: {detail}\n  → {} shows why; once the cause is fixed, {} probes it again",
                here.status_call(),
                here.use_gpu_call()
            )
        }));
    }
    Ok(())
}

/// Whether the backend runs this kind of work, in these dtypes and ops.
fn support(g: &mut Gates, backend: &dyn Backend, w: &Work<'_>, name: &str) -> Result<(), Rejected> {
    let caps = backend.capabilities();
    let why: Option<Box<dyn Fn() -> String + '_>> = match (w.class, w.call) {
        (None, _) => Some(Box::new(|| format!("{} is a host-only operation", w.op()))),
        (Some(_), Some(call)) if !caps.offers(call) => Some(Box::new(move || {
            format!("{} offers no {}", name, call.name())
        })),
        (Some(WorkClass::Reduction), None) if !caps.fused_reductions => {
            Some(Box::new(|| format!("{name} runs no fused reductions")))
        }
        (Some(_), None) if !caps.fused_kernels => {
            Some(Box::new(|| format!("{name} runs no fused kernels")))
        }
        _ => match (
            w.dtypes.iter().find(|d| !caps.dtypes.contains(d)).copied(),
            w.op_names.iter().find_map(|o| {
                caps.unsupported_ops
                    .iter()
                    .find_map(|u| match u.split_once(':') {
                        None => (u == o).then(|| o.to_string()),
                        Some((op, d)) => (op == *o && w.dtypes.iter().any(|t| t.name() == d))
                            .then(|| format!("{o} of {d}")),
                    })
            }),
        ) {
            (Some(d), _) => Some(Box::new(move || format!("{name} does not compute {d}"))),
            (_, Some(o)) => Some(Box::new(move || {
                format!("{o} is on {name}'s unsupported list (routed to the CPU)")
            })),
            _ => match (&w.overflow_risk, w.scalar_fn) {
                (Some(risk), _) if !caps.integer_overflow_checks => Some(Box::new(move || {
                    format!("{risk}; {name} neither detects i64 overflow nor totals i64 exactly (routed to the CPU)")
                })),
                (_, Some(f)) if !caps.scalar_fns => Some(Box::new(move || {
                    format!("{name}'s kernels have no device source of {f} (routed to the CPU)")
                })),
                _ => None,
            },
        },
    };
    match why {
        Some(why) => {
            g.check(Gate::Supports, false, &why);
            Err(g.suggest(|| format!("'{name}' skipped: {}", why())))
        }
        None => {
            g.check(Gate::Supports, true, String::new);
            Ok(())
        }
    }
}

/// Whether the precision contract lets the work run there.
fn precision(
    g: &mut Gates,
    s: &BackendStatus,
    w: &Work<'_>,
    movement: bool,
    name: &str,
) -> Result<(), Rejected> {
    let uses_f64 = w.dtypes.contains(&DType::F64);
    let full_rate = s.device.as_ref().is_some_and(|d| d.full_rate_f64);
    let verdict: Result<&str, Box<dyn Fn() -> String + '_>> = match w.precision {
        _ if movement => Ok("data movement copies values exactly"),
        Precision::Fast => Ok("fast: float32 accuracy accepted"),
        Precision::Strict if !uses_f64 => Ok("strict: the work is float32 data"),
        Precision::Strict if !full_rate => {
            Err(Box::new(move || {
                format!("strict float64 needs full-rate float64; {name}'s device runs it at reduced rate")
            }))
        }
        Precision::Strict if s.health == Health::Healthy && !s.f64_conformant => {
            Err(Box::new(move || {
                format!(
                    "strict float64 needs the float64 probe checks, which did not pass on {name}"
                )
            }))
        }
        Precision::Strict => Ok("strict: full-rate float64 device"),
        Precision::Exact => Err(Box::new(|| {
            "exact precision always runs on the CPU reference".to_string()
        })),
    };
    match verdict {
        Ok(detail) => {
            g.check(Gate::Precision, true, || detail.to_string());
            Ok(())
        }
        Err(why) => {
            g.check(Gate::Precision, false, &why);
            Err(g.suggest(|| {
                format!(
                    "'{name}' skipped by precision: {}\n  → use precision fast if ~1e-4 relative error is acceptable",
                    why()
                )
            }))
        }
    }
}

/// The calibration window for the work's size on its data path, or for
/// data movement, whether it follows its inputs there.
fn calibration(
    g: &mut Gates,
    backend: &dyn Backend,
    s: &BackendStatus,
    w: &Work<'_>,
    movement: Option<Placement>,
    path: DataPath,
) -> Result<(), Rejected> {
    let name = s.backend.as_str();
    let forced = options().force_backend.as_deref() == Some(name);
    let skipped = || format!("threshold skipped: GEARBOX_FORCE_BACKEND={name}");
    if let Some(m) = movement {
        let follows = forced || m.follows;
        if forced {
            g.check(Gate::Calibration, true, skipped);
        } else {
            g.check(Gate::Calibration, m.follows, || m.detail);
        }
        // Data movement that does not follow its inputs here has no
        // suggestion: it runs where they live.
        return if follows { Ok(()) } else { Err(None) };
    }
    let class = w.class.expect("supported work has a class");
    let dtype = w.dtypes.iter().copied().max().unwrap_or(w.head_dtype);
    let unit = size_unit(w.call);
    if forced {
        g.check(Gate::Calibration, true, skipped);
        return Ok(());
    }
    if crate::runtime::dispatch::held_by_device(&w.inputs, name) {
        g.check(Gate::Calibration, true, || {
            format!("the inputs live on {name} alone: any other backend would download them first")
        });
        return Ok(());
    }
    let device = s.device.as_ref().map_or("", |d| d.name.as_str());
    let Some((t, source)) = threshold(backend, device, class, dtype) else {
        g.check(Gate::Calibration, true, || "no threshold declared".into());
        return Ok(());
    };
    let resident = path == DataPath::Resident;
    let (limit, upper) = t.window(resident);
    let which = if resident { "resident" } else { "cold" };
    let size = w.size;
    if size < limit {
        g.check(Gate::Calibration, false, || {
            format!(
                "{} {unit} < {source} threshold {} ({which})",
                fmt_count(size),
                fmt_count(limit)
            )
        });
        return Err(g.suggest(|| format!(
            "'{name}' skipped by calibration: {} {unit} < threshold {}.\n  → Use a larger matrix, or re-run calibrate() if the threshold seems wrong for your hardware.",
            fmt_count(size),
            fmt_count(limit)
        )));
    }
    if size >= upper {
        g.check(Gate::Calibration, false, || {
            format!(
                "{} {unit} >= {source} upper bound {} ({which})",
                fmt_count(size),
                fmt_count(upper)
            )
        });
        return Err(g.suggest(|| format!(
            "'{name}' skipped by calibration: {} {unit} >= upper bound {}: the CPU measured faster at this size ({which} path).\n  → Keep the data on the device (the resident path has its own window), or re-run calibrate().",
            fmt_count(size),
            fmt_count(upper)
        )));
    }
    g.check(Gate::Calibration, true, || {
        let bound = if upper.is_finite() {
            format!(", below {}", fmt_count(upper))
        } else {
            String::new()
        };
        format!(
            "{} {unit} >= {source} threshold {}{bound} ({which})",
            fmt_count(size),
            fmt_count(limit)
        )
    });
    Ok(())
}
