//! The dispatch decision for one region: every registered GPU backend is a
//! candidate that passes or fails gates in order (registered, available,
//! healthy, supports the work, precision allows it, calibration threshold for
//! the cold or resident path); the first candidate that passes them all runs
//! the region, else the CPU reference does. Data movement (slice, concat)
//! skips the precision rule and thresholds and follows its inputs instead
//! ([`crate::runtime::movement`]). The decision is data
//! ([`BackendPlan`]) that `explain` prints and tests inspect.

use std::sync::Arc;

use serde::Serialize;

use crate::dtype::DType;
use crate::fusion::plan::Region;
use crate::precision::Precision;
use crate::runtime::backend::{Backend, LibraryCall, WorkClass};
use crate::runtime::gates::gpu_gates;
use crate::runtime::registry::candidates;
use crate::shape::Shape;

/// The gates, in the order they are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    /// Compiled in and registered with the runtime, not turned off.
    Registered,
    /// A device was found.
    Available,
    /// The probe passed (or will run on first use) and no failure since.
    Healthy,
    /// The backend runs this kind of work in these dtypes.
    Supports,
    /// The precision contract allows it.
    Precision,
    /// The work is at least the calibrated threshold.
    Calibration,
}

impl Gate {
    /// Short label used in the report.
    pub fn label(self) -> &'static str {
        match self {
            Gate::Registered => "reg",
            Gate::Available => "avail",
            Gate::Healthy => "health",
            Gate::Supports => "ops",
            Gate::Precision => "prec",
            Gate::Calibration => "calib",
        }
    }
}

/// How a candidate fared at one gate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateResult {
    /// The gate.
    pub gate: Gate,
    /// Whether it passed.
    pub passed: bool,
    /// Why, with numbers where there are any.
    pub detail: String,
}

/// Where a region's data comes from on the chosen backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DataPath {
    /// Inputs are uploaded first.
    Cold,
    /// Inputs are already on the device.
    Resident,
    /// The CPU works on host memory.
    Host,
}

/// One candidate backend and its gates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidatePlan {
    /// Backend name.
    pub backend: String,
    /// The gates checked, in order, up to and including the first that failed.
    pub gates: Vec<GateResult>,
    /// Whether it passed every gate.
    pub accepted: bool,
    /// Whether it was chosen.
    pub chosen: bool,
    /// The data path it would take.
    pub path: DataPath,
}

/// The dispatch decision for the work behind one array.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackendPlan {
    /// The work: fused op names joined by `+`, or the op's name.
    pub op: String,
    /// Shape of the array asked about.
    pub shape: Shape,
    /// Its dtype.
    pub dtype: DType,
    /// The precision the work runs under.
    pub precision: Precision,
    /// The class of work (`None` for host-only operations).
    pub work: Option<WorkClass>,
    /// Size compared with thresholds (elements, or flops for library calls).
    pub size: f64,
    /// Unit of `size`.
    pub size_unit: &'static str,
    /// The first GPU backend that is registered, in preferred order, else "cpu".
    pub preferred: String,
    /// Where the inputs are now.
    pub residency: String,
    /// Whether the array was already computed (then nothing is dispatched).
    pub evaluated: bool,
    /// The candidates, GPU backends in preferred order, then the CPU.
    pub candidates: Vec<CandidatePlan>,
    /// The backend chosen.
    pub chosen: String,
    /// The path the chosen backend takes.
    pub path: DataPath,
    /// What to do about rejected candidates.
    pub suggestions: Vec<String>,
}

/// What the dispatcher needs to know about a region.
pub(crate) struct Work<'a> {
    region: &'a Region,
    pub head_shape: Shape,
    pub head_dtype: DType,
    pub precision: Precision,
    pub class: Option<WorkClass>,
    pub call: Option<LibraryCall>,
    pub size: f64,
    pub dtypes: Vec<DType>,
    pub op_names: Vec<&'static str>,
    /// What in the work needs the CPU's integer semantics, if anything: a
    /// clause naming it and why ([`crate::ops::integer::overflow_risk`]).
    pub overflow_risk: Option<String>,
    /// A scalar function of a device library the fused kernel calls (the
    /// first), if any.
    pub scalar_fn: Option<&'static str>,
    pub inputs: Vec<crate::graph::Array>,
}

impl Work<'_> {
    /// The work's name: fused op names joined by `+`, or the op's name.
    pub fn op(&self) -> String {
        self.region.describe()
    }
}

fn work_of(region: &Region) -> Work<'_> {
    let produced = region.produces();
    let head = produced
        .last()
        .expect("a region produces something")
        .clone();
    let precision = produced
        .iter()
        .map(|a| a.precision())
        .max()
        .unwrap_or(Precision::Strict);
    match region {
        Region::Fused(f) => {
            // The reduction's result too: an argmin's i64 needs 64-bit values.
            let mut dtypes: Vec<DType> = f.kernel.nodes().iter().map(|n| n.dtype).collect();
            dtypes.extend(f.kernel.reduce().map(|r| r.dtype));
            dtypes.sort();
            dtypes.dedup();
            let class = if f.kernel.reduce().is_some() {
                WorkClass::Reduction
            } else {
                WorkClass::Elementwise
            };
            Work {
                region,
                head_shape: head.shape().clone(),
                head_dtype: head.dtype(),
                precision,
                class: Some(class),
                call: None,
                size: f.kernel.shape().numel() as f64,
                dtypes,
                op_names: f.ops.clone(),
                overflow_risk: crate::ops::integer::overflow_risk(&f.kernel),
                scalar_fn: f.kernel.nodes().iter().find_map(|n| match n.expr {
                    crate::fusion::ir::Expr::Call(f, _, _) => Some(f.get().name),
                    _ => None,
                }),
                inputs: f.inputs.clone(),
            }
        }
        Region::Single(a) => single_work(region, a, precision, 1),
        Region::Batched(members) => {
            let mut w = single_work(region, &members[0], precision, members.len());
            w.inputs = region.reads();
            w
        }
    }
}

/// The work of one node's primitive, `copies` times over (a batch).
fn single_work<'a>(
    region: &'a Region,
    a: &crate::graph::Array,
    precision: Precision,
    copies: usize,
) -> Work<'a> {
    let call = a.op().and_then(|o| o.library_call());
    let inputs = a.inputs();
    let shapes: Vec<&Shape> = inputs.iter().map(|i| i.shape()).collect();
    let size = match call {
        Some(c) if !c.sized_in_elements() => c.flops(&shapes),
        _ => a.numel() as f64,
    };
    Work {
        region,
        head_shape: a.shape().clone(),
        head_dtype: a.dtype(),
        precision,
        class: call.map(WorkClass::of_call),
        call,
        size: size * copies as f64,
        dtypes: vec![a.dtype()],
        op_names: a.op().map(|o| vec![o.name()]).unwrap_or_default(),
        // An i64 cumulative sum is the one library call with i64 results.
        overflow_risk: (matches!(call, Some(LibraryCall::Scan { product: false, .. }))
            && a.dtype() == DType::I64)
            .then(|| "i64 cumsum can overflow, which is an error".to_string()),
        scalar_fn: None,
        inputs,
    }
}

/// What a region's size counts: flops for dense algebra, else elements.
pub(crate) fn size_unit(call: Option<LibraryCall>) -> &'static str {
    match call {
        Some(c) if !c.sized_in_elements() => "flops",
        _ => "elements",
    }
}

/// Formats a count with thousands separators: 4194304 -> "4,194,304".
pub fn fmt_count(x: f64) -> String {
    if !x.is_finite() || x >= 1e15 {
        return format!("{x:.3e}");
    }
    let digits = format!("{:.0}", x.round());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Whether the work's data is essentially on `backend` already: what would
/// still have to be uploaded is at most 1/64 of its input elements (a
/// response column beside a resident `l1 x m1` matrix, a scalar). The cold
/// thresholds price in uploading everything, so small uploads next to
/// resident data take the resident path.
pub(crate) fn all_resident(inputs: &[crate::graph::Array], backend: &str) -> bool {
    // Saturating: pending inputs too large to exist together must not wrap.
    let total = inputs
        .iter()
        .map(|a| a.numel())
        .fold(0, usize::saturating_add);
    let to_upload = inputs
        .iter()
        .filter(|a| a.resident().is_none_or(|r| r.backend.name() != backend))
        .map(|a| a.numel())
        .fold(0, usize::saturating_add);
    to_upload <= 1 || to_upload.saturating_mul(64) <= total
}

/// Whether the CPU would have to download the work's data: inputs that
/// live on `backend` only (no host copy) outweigh, 64 to 1, those the
/// device would have to upload (single host values aside: they travel as
/// kernel arguments). A download synchronizes the device and costs more
/// than any small kernel, so a threshold that prices only the work would
/// send small work on device data to the CPU at a loss.
pub(crate) fn held_by_device(inputs: &[crate::graph::Array], backend: &str) -> bool {
    let (mut device_only, mut to_upload) = (0usize, 0usize);
    for a in inputs {
        let here = a.resident().is_some_and(|r| r.backend.name() == backend);
        match (here, a.host_value().is_some()) {
            (true, false) => device_only = device_only.saturating_add(a.numel()),
            (false, _) if a.numel() > 1 => to_upload = to_upload.saturating_add(a.numel()),
            _ => {}
        }
    }
    device_only > 0 && to_upload.saturating_mul(64) <= device_only
}

/// Where `region` runs: the first GPU candidate that passes every gate, else
/// the CPU (`None`). The same decision as [`decide`], without the plan's
/// details: what routing every region pays for.
pub fn route(region: &Region) -> Option<Arc<dyn Backend>> {
    route_with(region, true)
}

/// [`route`]; with `probing` false nothing touches a device (unprobed
/// backends count as healthy where they would be probed on first use).
pub fn route_with(region: &Region, probing: bool) -> Option<Arc<dyn Backend>> {
    let w = work_of(region);
    candidates(probing).into_iter().find_map(|c| {
        let accepted = gpu_gates(&c, &w, probing, false).accepted;
        accepted.then_some(c.backend).flatten()
    })
}

/// Decides where `region` runs, with every gate's detail (what `explain`
/// shows). With `probing`, unprobed backends are probed now (when
/// auto-probe is on); without it nothing touches a device.
pub fn decide(region: &Region, probing: bool) -> (BackendPlan, Option<Arc<dyn Backend>>) {
    let w = work_of(region);
    let cands = candidates(probing);
    let mut plans = Vec::new();
    let mut suggestions = Vec::new();
    let mut chosen: Option<(Arc<dyn Backend>, DataPath)> = None;
    for c in &cands {
        let v = gpu_gates(c, &w, probing, true);
        let is_chosen = v.accepted && chosen.is_none();
        if is_chosen {
            chosen = c.backend.clone().map(|b| (b, v.path));
            if c.status.health == crate::runtime::registry::Health::Unprobed {
                suggestions.push(format!(
                    "'{}' has not been probed: evaluation probes it first, and if the probe \
                     fails this work runs on the CPU instead ({} says which)",
                    c.status.backend,
                    crate::runtime::config::surface().probed_plan_call()
                ));
            }
        }
        suggestions.extend(v.suggestion);
        plans.push(CandidatePlan {
            backend: c.status.backend.clone(),
            gates: v.gates,
            accepted: v.accepted,
            chosen: is_chosen,
            path: v.path,
        });
    }
    let on_device = w
        .inputs
        .iter()
        .filter_map(|a| a.resident())
        .map(|r| r.backend.name())
        .next();
    let cpu_gates = [
        Gate::Registered,
        Gate::Available,
        Gate::Healthy,
        Gate::Supports,
        Gate::Precision,
        Gate::Calibration,
    ]
    .into_iter()
    .map(|gate| GateResult {
        gate,
        passed: true,
        detail: String::new(),
    })
    .collect();
    plans.push(CandidatePlan {
        backend: "cpu".into(),
        gates: cpu_gates,
        accepted: true,
        chosen: chosen.is_none(),
        path: DataPath::Host,
    });
    let preferred = cands
        .iter()
        .find(|c| c.status.registered)
        .map_or("cpu".to_string(), |c| c.status.backend.clone());
    let plan = BackendPlan {
        op: w.op(),
        shape: w.head_shape.clone(),
        dtype: w.head_dtype,
        precision: w.precision,
        work: w.class,
        size: w.size,
        size_unit: size_unit(w.call),
        preferred,
        residency: match on_device {
            Some(b) => format!("inputs resident on {b}"),
            None => "host (not device-resident)".into(),
        },
        evaluated: false,
        candidates: plans,
        chosen: chosen
            .as_ref()
            .map_or("cpu".into(), |(b, _)| b.name().to_string()),
        path: chosen.as_ref().map_or(DataPath::Host, |(_, p)| *p),
        suggestions,
    };
    (plan, chosen.map(|(b, _)| b))
}
