//! Where a handle's values live and how new values get into them: one
//! fused kernel writing the handle's own buffer when the new value is an
//! elementwise expression (or a reduction) that fuses, else the value
//! computed the usual way and copied in.

use std::sync::{Arc, RwLock};
use std::time::Instant;

use crate::buffer::HostBuffer;
use crate::error::{DeviceErrorKind, Error, Result};
use crate::fusion::plan::{plan, FusedRegion, Region};
use crate::graph::{begin_device_write, Array, DeviceCopy, Spec, ViewTest};
use crate::runtime::backend::{Backend, DeviceBuffer, LibraryCall};
use crate::runtime::execute::{healthy_backend, host_of, on_device};
use crate::runtime::residency::Resident;
use crate::runtime::{fallback, metrics};

use super::{same_allocation, ResidentHandle};

/// A handle's buffer: host memory (the CPU backend) or a device buffer
/// (a clone shares it).
#[derive(Clone)]
pub(super) enum Storage {
    /// Values in host memory, behind a lock (the CPU backend).
    Host(Arc<HostCell>),
    /// A buffer on a backend's device.
    Device(Resident),
}

/// Host values a CPU handle changes in place; the graph sees them as a
/// copy held by "cpu" (reading one takes a host copy of the values now).
#[derive(Debug)]
pub(super) struct HostCell(RwLock<HostBuffer>);

impl HostCell {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HostBuffer> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    fn replace(&self, values: HostBuffer) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = values;
    }
}

/// [`HostCell`] as the graph's device copy.
#[derive(Debug, Clone)]
struct HostView(Arc<HostCell>);

impl DeviceCopy for HostView {
    fn holder(&self) -> &'static str {
        "cpu"
    }
    fn size_bytes(&self) -> usize {
        self.0.read().size_bytes()
    }
    fn to_host(&self, _spec: &Spec) -> Result<HostBuffer> {
        self.0.read().try_clone("resident handle view")
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Storage {
    /// The storage of a handle on `backend` for the evaluated `array`, and
    /// whether it shares the array's buffer.
    pub(super) fn for_array(array: &Array, backend: &str) -> Result<(Storage, bool)> {
        if backend == "cpu" {
            let values = host_of(array)?.try_clone("resident_handle")?;
            return Ok((Storage::host(values), false));
        }
        let b = writing_backend(backend)?;
        if let Some(r) = array.resident() {
            if r.backend.name() == b.name() && b.owns_alone(r.buffer.as_ref()) {
                return Ok((Storage::Device(r), true));
            }
        }
        let host = host_of(array)?;
        let start = Instant::now();
        let buffer = b.upload_owned(&host)?;
        metrics::record_upload(b.name(), host.size_bytes(), start);
        Ok((Storage::Device(Resident { backend: b, buffer }), false))
    }

    /// New storage of `n` elements of `dtype` on `backend`, contents
    /// undefined (the caller fills it): host memory for "cpu", else a
    /// buffer from the device's pool, with nothing sent from the host.
    pub(super) fn new_buffer(backend: &str, n: usize, dtype: crate::DType) -> Result<Storage> {
        if backend == "cpu" {
            return Ok(Storage::host(HostBuffer::filled(
                "resident handle",
                dtype,
                n,
                0.0,
            )?));
        }
        let b = writing_backend(backend)?;
        let buffer = b.allocate(n, dtype)?;
        Ok(Storage::Device(Resident { backend: b, buffer }))
    }

    /// Host storage holding `values`.
    fn host(values: HostBuffer) -> Storage {
        Storage::Host(Arc::new(HostCell(RwLock::new(values))))
    }

    pub(super) fn backend_name(&self) -> &'static str {
        match self {
            Storage::Host(_) => "cpu",
            Storage::Device(r) => r.backend.name(),
        }
    }

    /// The storage as the graph's device copy (for views).
    pub(super) fn as_copy(&self) -> Arc<dyn DeviceCopy> {
        match self {
            Storage::Host(cell) => Arc::new(HostView(Arc::clone(cell))),
            Storage::Device(r) => Arc::new(r.clone()),
        }
    }

    /// Whether `copy` is a view of this storage.
    fn is_viewed_by(&self, copy: &dyn DeviceCopy) -> bool {
        let any = copy.as_any();
        match self {
            Storage::Host(cell) => any
                .downcast_ref::<HostView>()
                .is_some_and(|v| Arc::ptr_eq(&v.0, cell)),
            Storage::Device(r) => any
                .downcast_ref::<Resident>()
                .is_some_and(|o| same_allocation(&o.buffer, &r.buffer)),
        }
    }

    /// [`Storage::is_viewed_by`] as a test that owns the storage it
    /// compares with (writes under way are registered with it).
    fn view_test(&self) -> ViewTest {
        let storage = self.clone();
        Arc::new(move |c: &dyn DeviceCopy| storage.is_viewed_by(c))
    }

    /// Whether a kernel reading `a` on the device would read this buffer
    /// (a view of the handle, or the source array it shares). Host
    /// storage is never read in place: the CPU computes into new memory.
    fn aliases(&self, a: &Array) -> bool {
        matches!(self, Storage::Device(_))
            && a.device_copy()
                .is_some_and(|c| self.is_viewed_by(c.as_ref()))
    }
}

impl ResidentHandle {
    /// Writes `value` (the handle's count and dtype; shape checked by the
    /// caller) into the buffer: by one fused kernel into the buffer when
    /// `value` is pending work that fuses, else computed and copied in.
    pub(super) fn write(&self, op: &'static str, value: &Array) -> Result<()> {
        if value.numel() != self.numel() || value.dtype() != self.dtype() {
            return Err(Error::InvalidArgument {
                op,
                name: "value",
                value: format!("a {} {} array", value.shape(), value.dtype()),
                why: format!("the handle holds {} {}", self.shape(), self.dtype()),
            });
        }
        self.rewriting(|| {
            if !self.write_fused(value)? {
                self.write_computed(value)?;
            }
            Ok(())
        })
    }

    /// Runs `write`, which changes the buffer, as a device write
    /// ([`begin_device_write`]): views' host copies are dropped as it
    /// begins and ends, and reads during it keep none.
    pub(super) fn rewriting<T>(&self, write: impl FnOnce() -> Result<T>) -> Result<T> {
        let _write = begin_device_write(self.storage.view_test());
        write()
    }

    /// Runs the last region of `value`'s plan into the buffer when that
    /// region is a fused kernel producing exactly `value`; returns whether
    /// it did (earlier regions are evaluated first).
    fn write_fused(&self, value: &Array) -> Result<bool> {
        let pending = value.pending_in_order();
        if pending.is_empty() {
            return Ok(false);
        }
        let mut p = plan(&pending, &[value], crate::runtime::options().fusion)?;
        let Some(Region::Fused(last)) = p.regions.pop() else {
            return Ok(false);
        };
        let produces_value = match (&last.outputs[..], &last.reduced[..]) {
            ([out], []) | ([], [out]) => out.same_node(value),
            _ => false,
        };
        if !produces_value {
            return Ok(false);
        }
        let reads: Vec<&Array> = last.inputs.iter().collect();
        Array::eval_all(&reads)?;
        // An input that is the buffer itself is safe only where the kernel
        // reads it at the element it writes: the full shape, elementwise.
        let aliased_elsewhere = last.inputs.iter().any(|a| {
            self.storage.aliases(a)
                && (!last.reduced.is_empty() || a.shape() != last.kernel.shape())
        });
        if aliased_elsewhere {
            return Ok(false);
        }
        let start = Instant::now();
        let done = match &self.storage {
            Storage::Host(cell) => {
                let inputs: Vec<Arc<HostBuffer>> =
                    last.inputs.iter().map(host_of).collect::<Result<_>>()?;
                let refs: Vec<&HostBuffer> = inputs.iter().map(|b| b.as_ref()).collect();
                let out = crate::fusion::cpu::run(&last.kernel, &refs)?;
                let values = out.reduced.into_iter().chain(out.outputs).next();
                let Some(values) = values else {
                    return Ok(false);
                };
                cell.replace(values);
                true
            }
            Storage::Device(r) => self.run_on_device(&last, r)?,
        };
        if done {
            metrics::record_compute(self.backend(), last.kernel.bytes_moved(), start, || {
                format!("in place: {}", last.ops.join(", "))
            });
        }
        Ok(done)
    }

    /// The fused region on the handle's device, into its buffer; false
    /// when the device declines or fails the kernel.
    fn run_on_device(&self, region: &FusedRegion, r: &Resident) -> Result<bool> {
        let bufs: Vec<_> = region
            .inputs
            .iter()
            .map(|a| on_device(a, &r.backend))
            .collect::<Result<_>>()?;
        let refs: Vec<&dyn DeviceBuffer> = bufs.iter().map(|b| b.as_ref()).collect();
        let target: &dyn DeviceBuffer = r.buffer.as_ref();
        let run = if region.reduced.is_empty() {
            r.backend
                .run_kernel_into(&region.kernel, &refs, &[target], &[])
        } else {
            r.backend
                .run_kernel_into(&region.kernel, &refs, &[], &[target])
        };
        match run {
            Ok(()) => Ok(true),
            Err(e) => {
                let what = format!("in place: {}", region.ops.join(", "));
                log_unless_declined(&e, &what, r.backend.name());
                Ok(false)
            }
        }
    }

    /// `h <- alpha * product + beta * h` by the backend's GEMM writing the
    /// buffer, where it offers that; returns whether it did.
    pub(super) fn gemm_direct(
        &self,
        call: Option<LibraryCall>,
        a: &Array,
        b: &Array,
        alpha: f64,
        beta: f64,
    ) -> Result<bool> {
        let (Storage::Device(r), Some(call)) = (&self.storage, call) else {
            return Ok(false);
        };
        Array::eval_all(&[a, b])?;
        // An operand that is the buffer itself would be read while written.
        if self.storage.aliases(a) || self.storage.aliases(b) {
            return Ok(false);
        }
        let (ba, bb) = (on_device(a, &r.backend)?, on_device(b, &r.backend)?);
        let operands = [(ba.as_ref(), a.shape()), (bb.as_ref(), b.shape())];
        let start = Instant::now();
        let done = self.rewriting(|| {
            Ok(r.backend
                .gemm_into(call, &operands, r.buffer.as_ref(), alpha, beta))
        })?;
        match done {
            Ok(()) => {
                let bytes = ba.size_bytes() + bb.size_bytes() + r.buffer.size_bytes();
                metrics::record_compute(r.backend.name(), bytes, start, || {
                    format!("in place: {}", call.name())
                });
                Ok(true)
            }
            Err(e) => {
                log_unless_declined(&e, call.name(), r.backend.name());
                Ok(false)
            }
        }
    }

    /// Computes `value` the usual way and copies it into the buffer.
    fn write_computed(&self, value: &Array) -> Result<()> {
        value.eval()?;
        match &self.storage {
            Storage::Host(cell) => cell.replace(host_of(value)?.try_clone("resident handle")?),
            Storage::Device(r) => {
                let same_device = value
                    .resident()
                    .is_some_and(|v| v.backend.name() == r.backend.name());
                if self.storage.aliases(value) {
                    return Ok(()); // the buffer's own values
                }
                if same_device {
                    // A device-side copy: a fused kernel `value * 1` into the buffer.
                    if self.write_fused(&value.mul_scalar(1.0)?)? {
                        return Ok(());
                    }
                }
                let host = host_of(value)?;
                let start = Instant::now();
                write_host(r.backend.as_ref(), r.buffer.as_ref(), &host)?;
                metrics::record_upload(r.backend.name(), host.size_bytes(), start);
            }
        }
        Ok(())
    }
}

/// The registered, healthy backend `name`, if it can write into buffers
/// (resident handles need that).
fn writing_backend(name: &str) -> Result<Arc<dyn Backend>> {
    let b = healthy_backend("resident_handle", name)?;
    if !b.writes_in_place() {
        return Err(b.no_in_place("resident_handle"));
    }
    Ok(b)
}

/// After `backend` could not do `what` in place: a decline (compile kind:
/// it cannot write a buffer it also reads, lacks the hook or the op) is
/// silent, since the work is then made the usual way and copied in; a
/// device failure goes into the fallback log, as every fallback does.
fn log_unless_declined(e: &Error, what: &str, backend: &str) {
    if !matches!(
        e,
        Error::Device {
            kind: DeviceErrorKind::Compile,
            ..
        }
    ) {
        fallback::record(what, backend, "cpu", &e.to_string());
    }
}

/// Host values into a device buffer of the same count and dtype.
fn write_host(backend: &dyn Backend, buf: &dyn DeviceBuffer, host: &HostBuffer) -> Result<()> {
    if buf.len() != host.len() || buf.dtype() != host.dtype() {
        return Err(Error::InvalidArgument {
            op: "write_into",
            name: "values",
            value: format!("{} {} values", host.len(), host.dtype()),
            why: format!("the buffer holds {} {}", buf.len(), buf.dtype()),
        });
    }
    backend.write_into(buf, host)
}
