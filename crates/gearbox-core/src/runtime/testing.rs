//! A simulated device for tests: it lives in host memory but has its own
//! buffer type, declared device facts and thresholds, counts what it is asked
//! to do, and fails on command. It exercises registration, probing,
//! dispatch, residency, fallback and metrics without a GPU. It is a test
//! fixture: nothing registers it by default. [`gpu`] holds what the GPU
//! backends' device tests share, [`reductions`] their reduction check,
//! [`permutes`] their permute checks, [`scans`] their cumulative-product
//! checks, [`host_trips`] their check that no op leaves the device unless
//! the backend declines it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{DeviceErrorKind, Error, Result};
use crate::fusion::ir::{probe_kernel, KernelIr};
use crate::runtime::backend::{
    Backend, Capabilities, DeviceArc, DeviceBuffer, DeviceInfo, DeviceOutputs, LibraryCall,
    ProbeCheck, ProbeReport, Threshold, WorkClass,
};
use crate::runtime::cpu::{host_data, host_kernel, host_library_call, HostResident};
use crate::runtime::registry::register_backend;
use crate::shape::Shape;

pub mod gpu;
pub mod host_trips;
pub mod permutes;
pub mod reductions;
pub mod scans;

/// Where the simulated device can be told to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailPoint {
    /// Host-to-device copies.
    Upload,
    /// Device-to-host copies.
    Download,
    /// Fused kernel launches.
    Kernel,
    /// Library calls.
    Library,
}

#[derive(Debug, Default)]
struct Faults {
    /// (where, how many more times, kind)
    armed: Vec<(FailPoint, u32, DeviceErrorKind)>,
}

/// Counts of what the simulated device was asked to do.
#[derive(Debug, Default)]
pub struct SimCounters {
    /// Uploads.
    pub uploads: AtomicU64,
    /// Downloads.
    pub downloads: AtomicU64,
    /// Kernels run.
    pub kernels: AtomicU64,
    /// Library calls run (each member of a batch counts).
    pub library_calls: AtomicU64,
    /// Batched library calls run (a batch counts once).
    pub batched_calls: AtomicU64,
}

/// The simulated device. Configure it, then [`SimulatedBackend::register`] it.
pub struct SimulatedBackend {
    name: &'static str,
    info: DeviceInfo,
    caps: Capabilities,
    thresholds: Vec<Threshold>,
    faults: Mutex<Faults>,
    wrong_f64: bool,
    unavailable: Option<String>,
    others: Vec<(DeviceInfo, String)>,
    /// What it has been asked to do.
    pub counters: SimCounters,
}

impl SimulatedBackend {
    /// A healthy device called `name` with full-rate float64, every capability
    /// and no thresholds.
    pub fn new(name: &'static str) -> Self {
        SimulatedBackend {
            name,
            info: DeviceInfo {
                name: format!("simulated device '{name}'"),
                memory_bytes: 16 << 30,
                full_rate_f64: true,
                compute_capability: Some("sim".into()),
                driver: Some("sim 1.0".into()),
            },
            caps: Capabilities::everything(),
            thresholds: Vec::new(),
            faults: Mutex::new(Faults::default()),
            wrong_f64: false,
            unavailable: None,
            others: Vec::new(),
            counters: SimCounters::default(),
        }
    }

    /// Declares whether float64 runs at full rate.
    pub fn with_full_rate_f64(mut self, yes: bool) -> Self {
        self.info.full_rate_f64 = yes;
        self
    }

    /// Declares thresholds ([`uniform_thresholds`] gives one pair for all).
    pub fn with_thresholds(mut self, t: Vec<Threshold>) -> Self {
        self.thresholds = t;
        self
    }

    /// Declares capabilities.
    pub fn with_capabilities(mut self, caps: Capabilities) -> Self {
        self.caps = caps;
        self
    }

    /// Declares other devices it sees and does not drive, each with why.
    pub fn with_other_devices(mut self, others: Vec<(DeviceInfo, String)>) -> Self {
        self.others = others;
        self
    }

    /// Makes the device missing: `info()` fails with `why`.
    pub fn unavailable(mut self, why: &str) -> Self {
        self.unavailable = Some(why.to_string());
        self
    }

    /// Makes the probe's float64 check come out wrong.
    pub fn with_wrong_f64(mut self) -> Self {
        self.wrong_f64 = true;
        self
    }

    /// Makes the next `times` operations at `point` fail with `kind`.
    pub fn fail(&self, point: FailPoint, times: u32, kind: DeviceErrorKind) {
        self.faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .armed
            .push((point, times, kind));
    }

    /// Registers this device with the runtime under its name; returns the shared handle.
    pub fn register(self) -> Arc<SimulatedBackend> {
        let me = Arc::new(self);
        let handle = Arc::clone(&me);
        register_backend(
            me.name,
            "sim",
            Arc::new(move || Ok(Arc::clone(&handle) as Arc<dyn Backend>)),
        );
        me
    }

    fn check_fault(&self, point: FailPoint, what: &str) -> Result<()> {
        let mut f = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = f.armed.iter_mut().find(|(p, n, _)| *p == point && *n > 0) {
            slot.1 -= 1;
            let kind = slot.2;
            let reason = match kind {
                DeviceErrorKind::OutOfMemory => "out of memory (injected)",
                DeviceErrorKind::Compile => "kernel compilation failed (injected)",
                DeviceErrorKind::Fault => "kernel launch failed (injected)",
            };
            return Err(Error::Device {
                backend: self.name.into(),
                op: what.into(),
                reason: reason.into(),
                kind,
            });
        }
        Ok(())
    }

    fn wrap(&self, data: Arc<HostBuffer>) -> DeviceArc {
        Arc::new(HostResident {
            backend: self.name,
            data,
        })
    }
}

impl Backend for SimulatedBackend {
    fn name(&self) -> &'static str {
        self.name
    }
    fn info(&self) -> Result<DeviceInfo> {
        match &self.unavailable {
            Some(why) => Err(Error::Device {
                backend: self.name.into(),
                op: "device query".into(),
                reason: why.clone(),
                kind: DeviceErrorKind::Fault,
            }),
            None => Ok(self.info.clone()),
        }
    }
    fn capabilities(&self) -> Capabilities {
        self.caps.clone()
    }
    fn upload(&self, buf: &HostBuffer) -> Result<DeviceArc> {
        self.check_fault(FailPoint::Upload, "upload")?;
        self.counters.uploads.fetch_add(1, Ordering::Relaxed);
        Ok(self.wrap(Arc::new(buf.try_clone("upload")?)))
    }
    fn download(&self, buf: &dyn DeviceBuffer) -> Result<HostBuffer> {
        self.check_fault(FailPoint::Download, "download")?;
        self.counters.downloads.fetch_add(1, Ordering::Relaxed);
        host_data(self.name, buf)?.try_clone("download")
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn run_kernel(&self, kernel: &KernelIr, inputs: &[&dyn DeviceBuffer]) -> Result<DeviceOutputs> {
        self.check_fault(FailPoint::Kernel, "kernel")?;
        self.counters.kernels.fetch_add(1, Ordering::Relaxed);
        host_kernel(self.name, kernel, inputs)
    }
    fn library_call(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        out: (&Shape, DType),
    ) -> Result<DeviceArc> {
        self.check_fault(FailPoint::Library, call.name())?;
        self.counters.library_calls.fetch_add(1, Ordering::Relaxed);
        let data: Vec<(&Arc<HostBuffer>, &Shape)> = inputs
            .iter()
            .map(|(b, s)| host_data(self.name, *b).map(|d| (d, *s)))
            .collect::<Result<_>>()?;
        Ok(self.wrap(host_library_call(call, &data, out.0)?))
    }
    fn library_call_batched(
        &self,
        call: LibraryCall,
        batch: &[Vec<(&dyn DeviceBuffer, &Shape)>],
        out: (&Shape, DType),
    ) -> Result<Vec<DeviceArc>> {
        self.counters.batched_calls.fetch_add(1, Ordering::Relaxed);
        batch
            .iter()
            .map(|inputs| self.library_call(call, inputs, out))
            .collect()
    }
    fn default_thresholds(&self) -> Vec<Threshold> {
        self.thresholds.clone()
    }
    fn other_devices(&self) -> Vec<(DeviceInfo, String)> {
        self.others.clone()
    }
    fn probe(&self) -> Result<ProbeReport> {
        // A small fused kernel, x * x + 1 in f32 and f64, checked exactly.
        let mut checks = Vec::new();
        for dtype in [DType::F32, DType::F64] {
            let n = 64;
            let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 3.0).collect();
            let x = HostBuffer::F64(xs.clone()).cast(dtype)?;
            let kernel = probe_kernel(n, dtype)?;
            let one = self.wrap(Arc::new(HostBuffer::F64(vec![1.0]).cast(dtype)?));
            let xb = self.wrap(Arc::new(x));
            let out = self.run_kernel(&kernel, &[xb.as_ref(), one.as_ref()])?;
            let got = self.download(out.outputs[0].as_ref())?.to_f64_vec()?;
            let mut err = xs
                .iter()
                .zip(&got)
                .map(|(x, g)| ((x * x + 1.0) - g).abs())
                .fold(0.0, f64::max);
            if dtype == DType::F64 && self.wrong_f64 {
                err = 0.5;
            }
            let name = if dtype == DType::F64 {
                "float64 kernel x*x+1"
            } else {
                "float32 kernel x*x+1"
            };
            checks.push(ProbeCheck {
                name: name.into(),
                passed: err == 0.0,
                detail: format!("max abs error {err:.1e}"),
            });
        }
        Ok(ProbeReport {
            info: self.info.clone(),
            checks,
        })
    }
}

/// Prints the case about to run when `GEARBOX_TRACE_CASES` is set, so that
/// a run a driver crashes names the case it crashed in (the reduction check
/// and the conformance suite).
pub(crate) fn trace(what: &str) {
    if std::env::var_os("GEARBOX_TRACE_CASES").is_some() {
        eprintln!("case: {what}");
    }
}

/// The same cold and resident thresholds for every class of compute work
/// (elementwise, reductions, GEMM, factorizations) in float32 and float64:
/// a simulated device's usual declaration (`f64::INFINITY` for never, `0`
/// for always).
pub fn uniform_thresholds(cold: f64, resident: f64) -> Vec<Threshold> {
    [
        WorkClass::Elementwise,
        WorkClass::Reduction,
        WorkClass::Gemm,
        WorkClass::Factorization,
    ]
    .into_iter()
    .flat_map(|class| {
        [DType::F32, DType::F64].map(|dtype| Threshold::from(class, dtype, cold, resident))
    })
    .collect()
}
