//! Running the pending graph: plan it into regions, place each region with
//! the dispatcher, run it there, and keep each result where it was computed.
//!
//! A region that fails on a device is rerun on the CPU: the failure goes into
//! the fallback log, and the backend is marked unhealthy only for a device
//! fault (not for out of memory, a kernel that would not compile, or an error
//! about the data such as a singular matrix, which the CPU then reports
//! itself). The user always gets the CPU's result or the CPU's error.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use crate::buffer::HostBuffer;
use crate::error::{DeviceErrorKind, Error, Result};
use crate::fusion::plan::{plan, Region};
use crate::graph::{Array, Operand, Spec};
use crate::runtime::backend::{Backend, DeviceArc, LibraryCall};
use crate::runtime::config::options;
use crate::runtime::dispatch::route;
use crate::runtime::residency::Resident;
use crate::runtime::{claims, fallback, metrics, registry};

/// Evaluates the pending graph behind `roots`.
///
/// Safe to call from several threads on a shared graph: the pending nodes
/// are claimed first ([`claims`]), so each is computed once, by one thread,
/// and the others wait for it.
pub fn evaluate(roots: &[&Array]) -> Result<()> {
    let (pending, _claim) = claims::claim_pending(|| pending_behind(roots))?;
    if pending.is_empty() {
        return Ok(());
    }
    let start = Instant::now();
    let p = plan(&pending, roots, options().fusion)?;
    metrics::trace("host", "plan", 0, start, start.elapsed(), || {
        format!("{} nodes into {} regions", pending.len(), p.regions.len())
    });
    for region in &p.regions {
        run_region(region)?;
    }
    Ok(())
}

/// The pending nodes behind `roots`, each once, inputs before users.
fn pending_behind(roots: &[&Array]) -> Vec<Array> {
    let mut seen = HashSet::new();
    let mut pending = Vec::new();
    for r in roots {
        for a in r.pending_in_order() {
            if seen.insert(a.node_id()) {
                pending.push(a);
            }
        }
    }
    pending
}

/// Runs one region where the dispatcher places it, falling back to the CPU.
fn run_region(region: &Region) -> Result<()> {
    if share_resident_view(region) {
        return Ok(());
    }
    if let Some(b) = route(region) {
        match run_on_device(region, &b) {
            Ok(()) => return Ok(()),
            Err(e) => {
                // Only a device fault says the backend is broken. An error
                // about the data (singular, not positive definite) or a
                // missing capability reruns on the CPU reference, which gives
                // the authoritative answer, and leaves the backend healthy.
                let kind = match &e {
                    Error::Device { kind, .. } => *kind,
                    _ => DeviceErrorKind::Compile,
                };
                if kind == DeviceErrorKind::OutOfMemory {
                    if run_in_pieces(region, &b)? {
                        return Ok(());
                    }
                    host_can_hold(region, b.name(), &e)?;
                }
                fallback::record(&region.describe(), b.name(), "cpu", &e.to_string());
                if kind == DeviceErrorKind::Fault {
                    registry::mark_unhealthy(b.name(), &e.to_string());
                }
            }
        }
    }
    run_on_cpu(region)
}

/// A view op (reshape, identity) of a device-resident array shares the
/// device buffer instead of visiting the host. Returns whether it did.
fn share_resident_view(region: &Region) -> bool {
    let Region::Single(a) = region else {
        return false;
    };
    if !a.op().is_some_and(|o| o.is_view()) {
        return false;
    }
    let inputs = a.inputs();
    let Some(r) = inputs.first().and_then(|i| i.resident()) else {
        return false;
    };
    if inputs[0].host_value().is_some() {
        return false; // the host copy is free to share too: take the CPU path
    }
    a.set_resident(Some(r));
    a.detach_inputs();
    true
}

/// After `backend` ran out of memory for `region`: runs a fused region in
/// pieces that fit what the device has left ([`chunks`]); whether it did.
/// A failure on the way is left to the CPU fallback, which reports its own.
fn run_in_pieces(region: &Region, backend: &Arc<dyn Backend>) -> Result<bool> {
    let Region::Fused(f) = region else {
        return Ok(false);
    };
    let m = backend.memory_stats();
    let room = m
        .limit
        .map(|l| l.saturating_sub(m.in_use))
        .or(m.device_free);
    let Some(budget) = room else {
        return Ok(false);
    };
    let done = crate::runtime::chunks::run_in_chunks(f, backend, budget).unwrap_or(false);
    if done {
        for a in region.produces() {
            a.detach_inputs();
        }
    }
    Ok(done)
}

/// After a device ran out of memory: checks that the host can hold the
/// region's results before rerunning it there, so that work too big for both
/// is a clear error instead of an allocation failure (which aborts).
fn host_can_hold(region: &Region, device: &str, cause: &Error) -> Result<()> {
    let bytes: usize = region
        .produces()
        .iter()
        .map(|a| a.numel().saturating_mul(a.dtype().size_bytes()))
        .fold(0, usize::saturating_add);
    crate::memory::ensure_available(&region.describe(), bytes).map_err(|host| Error::Device {
        backend: device.to_string(),
        op: region.describe(),
        reason: format!("{cause}; and on the host: {host}"),
        kind: DeviceErrorKind::OutOfMemory,
    })
}

/// The host values of an evaluated array (downloading them if needed).
pub(crate) fn host_of(a: &Array) -> Result<Arc<HostBuffer>> {
    a.buffer()
}

fn run_on_cpu(region: &Region) -> Result<()> {
    let start = Instant::now();
    match region {
        Region::Fused(f) => {
            let inputs: Vec<Arc<HostBuffer>> =
                f.inputs.iter().map(host_of).collect::<Result<_>>()?;
            let refs: Vec<&HostBuffer> = inputs.iter().map(|b| b.as_ref()).collect();
            let out = crate::fusion::cpu::run(&f.kernel, &refs)?;
            for (a, buf) in f.outputs.iter().zip(out.outputs) {
                a.set_host(Arc::new(buf));
            }
            for (a, buf) in f.reduced.iter().zip(out.reduced) {
                a.set_host(Arc::new(buf));
            }
            metrics::record_compute("cpu", f.kernel.bytes_moved(), start, || region.describe());
        }
        Region::Single(a) => run_node_on_cpu(a)?,
        Region::Batched(members) => {
            for a in members {
                run_node_on_cpu(a)?;
            }
        }
    }
    for a in region.produces() {
        a.detach_inputs();
    }
    Ok(())
}

/// Evaluates one node with its primitive's CPU code.
fn run_node_on_cpu(a: &Array) -> Result<()> {
    let start = Instant::now();
    let op = a.op().cloned().expect("a pending node has an op");
    let inputs = a.inputs();
    let bufs: Vec<Arc<HostBuffer>> = inputs.iter().map(host_of).collect::<Result<_>>()?;
    let operands: Vec<Operand<'_>> = inputs
        .iter()
        .zip(&bufs)
        .map(|(x, buf)| Operand {
            spec: x.spec(),
            buf,
        })
        .collect();
    let out = op.eval_cpu(&operands, a.spec())?;
    let bytes = out.size_bytes() + bufs.iter().map(|b| b.size_bytes()).sum::<usize>();
    a.set_host(out);
    metrics::record_compute("cpu", bytes, start, || op.name().to_string());
    Ok(())
}

/// The values of `a` on `backend`, uploading (and remembering the upload) if needed.
pub(crate) fn on_device(a: &Array, backend: &Arc<dyn Backend>) -> Result<DeviceArc> {
    if let Some(r) = a.resident() {
        if r.backend.name() == backend.name() {
            return Ok(r.buffer);
        }
    }
    let host = host_of(a)?;
    let start = Instant::now();
    let buf = backend.upload(&host)?;
    metrics::record_upload(backend.name(), host.size_bytes(), start);
    // The upload is remembered unless the values already live elsewhere:
    // a node holds one device copy, and replacing it would move a value
    // off the device it was computed on (or cut a resident handle's view
    // off the buffer it aliases).
    if a.device_copy().is_none() {
        a.set_resident(Some(Resident {
            backend: Arc::clone(backend),
            buffer: Arc::clone(&buf),
        }));
    }
    Ok(buf)
}

fn check_result(backend: &dyn Backend, what: &str, buf: &DeviceArc, spec: &Spec) -> Result<()> {
    if buf.len() == spec.shape.numel() && buf.dtype() == spec.dtype {
        return Ok(());
    }
    Err(Error::Device {
        backend: backend.name().into(),
        op: what.into(),
        reason: format!(
            "returned {} {} values where {} {} were expected",
            buf.len(),
            buf.dtype(),
            spec.shape.numel(),
            spec.dtype
        ),
        kind: DeviceErrorKind::Fault,
    })
}

fn run_on_device(region: &Region, backend: &Arc<dyn Backend>) -> Result<()> {
    let reads = region.reads();
    let bufs: Vec<DeviceArc> = reads
        .iter()
        .map(|a| on_device(a, backend))
        .collect::<Result<_>>()?;
    let refs: Vec<&dyn crate::runtime::backend::DeviceBuffer> =
        bufs.iter().map(|b| b.as_ref()).collect();
    let start = Instant::now();
    let resident = |buffer: DeviceArc| {
        Some(Resident {
            backend: Arc::clone(backend),
            buffer,
        })
    };
    match region {
        Region::Fused(f) => {
            let out = backend.run_kernel(&f.kernel, &refs)?;
            if out.outputs.len() != f.outputs.len() || out.reduced.len() != f.reduced.len() {
                return Err(Error::Device {
                    backend: backend.name().into(),
                    op: region.describe(),
                    reason: "returned the wrong number of outputs".into(),
                    kind: DeviceErrorKind::Fault,
                });
            }
            let produced = f.outputs.iter().chain(&f.reduced);
            let bufs: Vec<DeviceArc> = out.outputs.into_iter().chain(out.reduced).collect();
            for (a, buf) in produced.clone().zip(&bufs) {
                check_result(backend.as_ref(), &region.describe(), buf, a.spec())?;
            }
            for (a, buf) in produced.zip(bufs) {
                a.set_resident(resident(buf));
            }
            metrics::record_compute(backend.name(), f.kernel.bytes_moved(), start, || {
                region.describe()
            });
        }
        Region::Single(_) | Region::Batched(_) => {
            let members = region.produces();
            let call = a_call(backend.as_ref(), region, &members[0])?;
            // Each member's operands, in the order `reads()` listed them.
            let mut next = refs.iter().zip(&reads);
            let batch: Vec<
                Vec<(
                    &dyn crate::runtime::backend::DeviceBuffer,
                    &crate::shape::Shape,
                )>,
            > = members
                .iter()
                .map(|m| {
                    next.by_ref()
                        .take(m.inputs().len())
                        .map(|(b, x)| (*b, x.shape()))
                        .collect()
                })
                .collect();
            let head = &members[0];
            let outs = if let Region::Single(_) = region {
                vec![backend.library_call(call, &batch[0], (head.shape(), head.dtype()))?]
            } else {
                backend.library_call_batched(call, &batch, (head.shape(), head.dtype()))?
            };
            if outs.len() != members.len() {
                return Err(Error::Device {
                    backend: backend.name().into(),
                    op: region.describe(),
                    reason: format!(
                        "returned {} results for {} calls",
                        outs.len(),
                        members.len()
                    ),
                    kind: DeviceErrorKind::Fault,
                });
            }
            for (m, out) in members.iter().zip(&outs) {
                check_result(backend.as_ref(), call.name(), out, m.spec())?;
            }
            let bytes = outs.iter().map(|o| o.size_bytes()).sum::<usize>()
                + bufs.iter().map(|b| b.size_bytes()).sum::<usize>();
            for (m, out) in members.iter().zip(outs) {
                m.set_resident(resident(out));
            }
            metrics::record_compute(backend.name(), bytes, start, || region.describe());
        }
    }
    for a in region.produces() {
        a.detach_inputs();
    }
    Ok(())
}

/// The library call a single or batched region makes.
fn a_call(backend: &dyn Backend, region: &Region, a: &Array) -> Result<LibraryCall> {
    a.op()
        .and_then(|o| o.library_call())
        .ok_or_else(|| Error::Device {
            backend: backend.name().into(),
            op: region.describe(),
            reason: "not a library call".into(),
            kind: DeviceErrorKind::Fault,
        })
}

/// Downloads a device value to the host, recording the transfer.
pub fn download(r: &Resident, spec: &Spec) -> Result<HostBuffer> {
    let start = Instant::now();
    let host = r.backend.download(r.buffer.as_ref())?;
    metrics::record_download(r.backend.name(), host.size_bytes(), start);
    if host.len() != spec.shape.numel() || host.dtype() != spec.dtype {
        return Err(Error::Device {
            backend: r.backend.name().into(),
            op: "download".into(),
            reason: format!(
                "got {} {} values for a {} {} array",
                host.len(),
                host.dtype(),
                spec.shape,
                spec.dtype
            ),
            kind: DeviceErrorKind::Fault,
        });
    }
    Ok(host)
}

impl Array {
    /// Computes this array's values (once; later calls return at once). The
    /// work is planned into regions and each runs where the dispatcher
    /// places it; see [`crate::runtime`].
    pub fn eval(&self) -> Result<()> {
        if self.is_evaluated() {
            return Ok(());
        }
        crate::autodiff::trace::check_eval(&[self])?;
        evaluate(&[self])
    }

    /// Evaluates several arrays, sharing the work they have in common.
    pub fn eval_all(arrays: &[&Array]) -> Result<()> {
        crate::autodiff::trace::check_eval(arrays)?;
        evaluate(arrays)
    }

    /// The evaluated values on the host (evaluating first, and downloading
    /// them when they live on a device; the device copy stays).
    pub fn buffer(&self) -> Result<Arc<HostBuffer>> {
        self.eval()?;
        self.host_values()
    }

    /// Copies the values to backend `name`'s device (evaluating first) and
    /// keeps them there beside any host copy; returns the same array.
    /// Later work on that backend uses them without an upload.
    pub fn to_device(&self, name: &str) -> Result<Array> {
        self.eval()?;
        let backend = healthy_backend("to_device", name)?;
        // An explicit move: a copy on another backend gives way (the host
        // copy is made first, so the values are never lost).
        if self
            .resident()
            .is_some_and(|r| r.backend.name() != backend.name())
        {
            self.buffer()?;
            self.set_resident(None);
        }
        on_device(self, &backend)?;
        Ok(self.clone())
    }

    /// Brings the values to the host and drops the device copy; returns the
    /// same array, now living on the host only.
    pub fn gather(&self) -> Result<Array> {
        self.buffer()?;
        self.set_resident(None);
        Ok(self.clone())
    }

    /// Where the values live: `"cpu"` for the host, else the backend's name
    /// (a value on a device may also have a host copy).
    pub fn device(&self) -> String {
        self.resident()
            .map_or("cpu".into(), |r| r.backend.name().to_string())
    }
}

/// The registered, healthy backend called `name` (probing it on first
/// use), or an error of `op` saying which of the two it is not.
pub(crate) fn healthy_backend(op: &'static str, name: &str) -> Result<Arc<dyn Backend>> {
    let candidate = registry::candidates(true)
        .into_iter()
        .find(|c| c.status.backend == name);
    let Some(backend) = candidate.as_ref().and_then(|c| c.backend.clone()) else {
        return Err(Error::InvalidArgument {
            op,
            name: "backend",
            value: name.into(),
            why: format!(
                "no such backend is registered; see {}",
                crate::runtime::config::surface().status_call()
            ),
        });
    };
    if let Some(c) = candidate.filter(|c| c.status.health != registry::Health::Healthy) {
        return Err(Error::InvalidArgument {
            op,
            name: "backend",
            value: name.into(),
            why: format!("backend is not healthy: {}", c.status.reason),
        });
    }
    Ok(backend)
}
