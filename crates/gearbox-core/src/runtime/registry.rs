//! The registry of backends: which are known, compiled in, registered,
//! available and healthy, in preferred order, with the reason for the first
//! gate each one fails. `gpu_status()` reads it; `use_gpu()` walks it.
//!
//! Crates that provide a backend (or the facade, for the ones compiled in)
//! call [`declare_backend`] for every backend they know of and
//! [`register_backend`] with a factory for the ones compiled in. The CPU
//! reference backend is always present and is not listed among GPU backends.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde::Serialize;

use crate::error::Result;
use crate::runtime::backend::{Backend, DeviceInfo, ProbeReport};
use crate::runtime::config::options;
use crate::runtime::probe::{run_isolated, ProbeOutcome};

/// Builds a backend. Called once, on first need.
pub type BackendFactory = Arc<dyn Fn() -> Result<Arc<dyn Backend>> + Send + Sync>;

/// Health of a backend, as its probe found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// Not probed yet.
    Unprobed,
    /// The probe passed and no run-time failure has happened since.
    Healthy,
    /// The probe failed, or the backend failed at run time.
    Unhealthy,
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Health::Unprobed => "unprobed",
            Health::Healthy => "healthy",
            Health::Unhealthy => "unhealthy",
        })
    }
}

/// One row of the status table.
#[derive(Debug, Clone, Serialize)]
pub struct BackendStatus {
    /// Backend name.
    pub backend: String,
    /// The crate feature that compiles it in.
    pub feature: String,
    /// Compiled into this build.
    pub installed: bool,
    /// Its factory is registered with the runtime (and it is not turned off).
    pub registered: bool,
    /// A device was found.
    pub available: bool,
    /// What the probe found.
    pub health: Health,
    /// Why the first failing gate failed, and the fix; empty when all pass.
    pub reason: String,
    /// The device, once known.
    pub device: Option<DeviceInfo>,
    /// Whether the float64 probe checks passed (needed for `Strict`).
    pub f64_conformant: bool,
}

/// The `gpu_status()` table: one row per known GPU backend, in preferred
/// order, each followed by a row per other device it sees and does not
/// drive (not available, with why and how to pick it).
#[derive(Debug, Clone, Serialize)]
pub struct StatusTable {
    /// The rows.
    pub rows: Vec<BackendStatus>,
}

impl fmt::Display for StatusTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<8} {:<9} {:<10} {:<9} {:<9} reason",
            "backend", "installed", "registered", "available", "health"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:<8} {:<9} {:<10} {:<9} {:<9} {}",
                r.backend, r.installed, r.registered, r.available, r.health, r.reason
            )?;
            if let Some(d) = &r.device {
                let gib = d.memory_bytes as f64 / (1u64 << 30) as f64;
                let cc = d
                    .compute_capability
                    .as_deref()
                    .map(|c| format!(", compute {c}"))
                    .unwrap_or_default();
                let f64s = if d.full_rate_f64 {
                    "full-rate float64"
                } else {
                    "reduced-rate float64"
                };
                writeln!(f, "         device: {} ({gib:.1} GiB{cc}, {f64s})", d.name)?;
            }
        }
        Ok(())
    }
}

struct Entry {
    name: &'static str,
    feature: &'static str,
    installed: bool,
    factory: Option<BackendFactory>,
    backend: Option<Arc<dyn Backend>>,
    available: Option<std::result::Result<DeviceInfo, String>>,
    health: Health,
    unhealthy_reason: String,
    report: Option<ProbeReport>,
}

static ENTRIES: OnceLock<Mutex<Vec<Entry>>> = OnceLock::new();

fn entries() -> MutexGuard<'static, Vec<Entry>> {
    ENTRIES
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Declares a known backend (compiled in or not), in preferred order.
/// Declaring twice keeps the first position.
pub fn declare_backend(name: &'static str, feature: &'static str, installed: bool) {
    let mut es = entries();
    if !es.iter().any(|e| e.name == name) {
        es.push(Entry {
            name,
            feature,
            installed,
            factory: None,
            backend: None,
            available: None,
            health: Health::Unprobed,
            unhealthy_reason: String::new(),
            report: None,
        });
    }
}

/// Registers the factory of a compiled-in backend (declaring it if needed).
pub fn register_backend(name: &'static str, feature: &'static str, factory: BackendFactory) {
    declare_backend(name, feature, true);
    let mut es = entries();
    if let Some(e) = es.iter_mut().find(|e| e.name == name) {
        e.installed = true;
        e.factory = Some(factory);
        e.backend = None;
        e.available = None;
        e.health = Health::Unprobed;
        e.report = None;
    }
}

/// Registers the process-wide instance of a compiled-in backend, kept in
/// `shared` (made by `make` on first call), under `name` and `feature`.
/// Idempotent: a second call keeps the registration (and the health) of
/// the first. What each backend crate's `register()` does.
pub fn register_shared<B: Backend + 'static>(
    name: &'static str,
    feature: &'static str,
    shared: &'static OnceLock<Arc<B>>,
    make: fn() -> B,
) {
    let mut first = false;
    let backend = Arc::clone(shared.get_or_init(|| {
        first = true;
        Arc::new(make())
    }));
    if first {
        register_backend(
            name,
            feature,
            Arc::new(move || Ok(Arc::clone(&backend) as Arc<dyn Backend>)),
        );
    }
}

/// Removes a backend from the registry (for tests and embedders).
pub fn unregister_backend(name: &str) {
    entries().retain(|e| e.name != name);
}

/// Builds the backend and asks for its device, once.
fn resolve(e: &mut Entry) {
    if e.available.is_some() {
        return;
    }
    let Some(factory) = e.factory.clone() else {
        return;
    };
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| factory()));
    e.available = Some(match built {
        Ok(Ok(b)) => {
            let info = b.info().map_err(|err| err.to_string());
            e.backend = Some(b);
            info
        }
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err("the backend's loader panicked".into()),
    });
}

fn status_of(e: &Entry) -> BackendStatus {
    let opts = options();
    let registered = e.factory.is_some() && !opts.is_disabled(e.name);
    let available = matches!(e.available, Some(Ok(_)));
    let reason = if !e.installed {
        format!(
            "not compiled in; build gearbox with feature \"{}\"",
            e.feature
        )
    } else if opts.is_disabled(e.name) {
        if opts.optional_backends {
            format!(
                "disabled by GEARBOX_DISABLE_{}=1",
                e.name.to_ascii_uppercase()
            )
        } else {
            "optional backends turned off (GEARBOX_OPTIONAL_BACKENDS=0)".into()
        }
    } else if e.factory.is_none() {
        "compiled in but not registered with the runtime".into()
    } else {
        let here = crate::runtime::config::surface();
        match (&e.available, e.health) {
            (None, _) => format!(
                "not checked yet; {} or {} checks it",
                here.use_gpu_call(),
                here.status_call()
            ),
            (Some(Err(why)), _) => format!("no usable device: {why}"),
            (Some(Ok(_)), Health::Unprobed) if !opts.auto_probe => {
                format!(
                    "not probed (GEARBOX_AUTO_PROBE=0); {} probes it",
                    here.use_gpu_call()
                )
            }
            (Some(Ok(_)), Health::Unprobed) => {
                format!(
                    "not probed yet; probes on first use or with {}",
                    here.use_gpu_call()
                )
            }
            (Some(Ok(_)), Health::Unhealthy) => e.unhealthy_reason.clone(),
            (Some(Ok(_)), Health::Healthy) => e
                .backend
                .as_ref()
                .map(|b| b.limitations())
                .unwrap_or_default(),
        }
    };
    BackendStatus {
        backend: e.name.to_string(),
        feature: e.feature.to_string(),
        installed: e.installed,
        registered,
        available,
        health: e.health,
        reason,
        device: e
            .report
            .as_ref()
            .map(|r| r.info.clone())
            .or_else(|| e.available.clone().and_then(|a| a.ok())),
        f64_conformant: e.report.as_ref().is_some_and(|r| r.f64_conformant()),
    }
}

/// The status table of every known GPU backend (checks availability, which
/// loads libraries but does not touch a device; probing happens on use).
pub fn gpu_status() -> StatusTable {
    let mut es = entries();
    let opts = options();
    for e in es.iter_mut().filter(|e| !opts.is_disabled(e.name)) {
        resolve(e);
    }
    StatusTable {
        rows: es.iter().flat_map(rows_of).collect(),
    }
}

/// The status row of `e`, then a row per other device its backend sees.
fn rows_of(e: &Entry) -> Vec<BackendStatus> {
    let main = status_of(e);
    let others = match (&e.backend, main.available) {
        (Some(b), true) => b.other_devices(),
        _ => Vec::new(),
    };
    let mut rows = vec![main];
    for (device, reason) in others {
        rows.push(BackendStatus {
            available: false,
            health: Health::Unprobed,
            reason,
            device: Some(device),
            f64_conformant: false,
            ..rows[0].clone()
        });
    }
    rows
}

/// Probes backend `name` in a child process if it is unprobed (or `force`),
/// recording the result. Returns its health.
pub fn probe_backend(name: &str, force: bool) -> Health {
    let backend = {
        let mut es = entries();
        let Some(e) = es.iter_mut().find(|e| e.name == name) else {
            return Health::Unhealthy;
        };
        if options().is_disabled(e.name) {
            return e.health;
        }
        resolve(e);
        if (e.health != Health::Unprobed && !force) || !matches!(e.available, Some(Ok(_))) {
            return e.health;
        }
        match &e.backend {
            Some(b) => Arc::clone(b),
            None => return e.health,
        }
    };
    // Probe without holding the registry lock: it may take seconds.
    let outcome = run_isolated(&backend, options().probe_timeout);
    let mut es = entries();
    let Some(e) = es.iter_mut().find(|e| e.name == name) else {
        return Health::Unhealthy;
    };
    match outcome.verdict() {
        Ok(report) => {
            e.report = Some(report.clone());
            e.health = Health::Healthy;
            e.unhealthy_reason.clear();
        }
        Err(why) => {
            if let ProbeOutcome::Report(r) = &outcome {
                e.report = Some(r.clone());
            }
            tracing::warn!("backend {name} disabled: {why}");
            e.health = Health::Unhealthy;
            e.unhealthy_reason = why;
        }
    }
    e.health
}

/// Marks a backend unhealthy after a run-time failure.
pub fn mark_unhealthy(name: &str, reason: &str) {
    if let Some(e) = entries().iter_mut().find(|e| e.name == name) {
        e.health = Health::Unhealthy;
        e.unhealthy_reason = format!("failed at run time: {reason}");
    }
}

/// A backend ready for dispatch decisions, with its status.
#[derive(Clone)]
pub struct Candidate {
    /// The backend, when it could be built.
    pub backend: Option<Arc<dyn Backend>>,
    /// Its status row.
    pub status: BackendStatus,
}

/// Every declared GPU backend in preferred order (the one
/// `GEARBOX_FORCE_BACKEND` names first, then registration order), probing
/// on the way when auto-probe is on and `probe` is asked for.
pub fn candidates(probe: bool) -> Vec<Candidate> {
    let names: Vec<&'static str> = entries().iter().map(|e| e.name).collect();
    if probe && options().auto_probe {
        for n in &names {
            probe_backend(n, false);
        }
    }
    let mut es = entries();
    let opts = options();
    let mut all: Vec<Candidate> = es
        .iter_mut()
        .map(|e| {
            if !opts.is_disabled(e.name) {
                resolve(e);
            }
            Candidate {
                backend: e.backend.clone(),
                status: status_of(e),
            }
        })
        .collect();
    // A forced backend is tried before the others (which still take work
    // it declines); stable, so the rest keep their order.
    if let Some(forced) = opts.force_backend.as_deref() {
        all.sort_by_key(|c| c.status.backend != forced);
    }
    all
}

/// Options of [`use_gpu`].
#[derive(Debug, Clone, Default)]
pub struct UseGpuOptions {
    /// Only try this backend.
    pub backend: Option<String>,
    /// Do not print the confirmation line (also `GEARBOX_QUIET=1`).
    pub quiet: bool,
}

/// Walks the preferred order, probes the first backend that comes up and
/// prints one confirmation line. Returns the backend's name, or `None` when
/// none could be brought up (`gpu_status()` says why).
pub fn use_gpu(opts: UseGpuOptions) -> Option<String> {
    let names: Vec<&'static str> = entries().iter().map(|e| e.name).collect();
    let quiet = opts.quiet || options().quiet;
    for name in names
        .into_iter()
        .filter(|n| opts.backend.as_deref().is_none_or(|b| b == *n))
    {
        if probe_backend(name, false) == Health::Healthy {
            if !quiet {
                let status = gpu_status();
                let row = status.rows.iter().find(|r| r.backend == name);
                let device = row
                    .and_then(|r| r.device.as_ref())
                    .map_or(String::new(), |d| format!(" on {}", d.name));
                let strict = if row.is_some_and(|r| {
                    r.f64_conformant && r.device.as_ref().is_some_and(|d| d.full_rate_f64)
                }) {
                    "'strict' float64 also runs there"
                } else {
                    "'strict' float64 stays on the CPU"
                };
                say(&format!(
                    "gearbox: GPU enabled - {name} backend{device} (float32 'fast' precision, ~1e-4 vs float64; {strict}). {} for details.",
                    crate::runtime::config::surface().status_call()
                ));
            }
            return Some(name.to_string());
        }
    }
    if !quiet {
        say(&format!(
            "gearbox: no GPU backend could be enabled; {} says why.",
            crate::runtime::config::surface().status_call()
        ));
    }
    None
}

/// Prints `use_gpu`'s confirmation line, best effort: a closed or full
/// standard output loses the line but never panics.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}
