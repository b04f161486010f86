//! [`CudaBackend`]: the runtime's view of an NVIDIA GPU.
//!
//! Checking whether CUDA is present only loads the libraries ([`crate::loader`]);
//! the device itself is opened on first real use, after the runtime's
//! isolated probe passed, so a crashing driver never takes the user's
//! process down during discovery.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::runtime::backend::{
    own_buffer, own_operands, own_targets, Backend, Capabilities, DeviceArc, DeviceBuffer,
    DeviceInfo, DeviceOutputs, LazyDevice, LibraryCall, ProbeReport, Threshold, WorkClass,
};
use gearbox_core::runtime::calibration::builtin_kernel_thresholds;
use gearbox_core::runtime::pool::MemoryStats;
use gearbox_core::{DType, HostBuffer, Result, Shape};

use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// The CUDA backend. Cheap to create; the device opens on first use.
#[derive(Default)]
pub struct CudaBackend {
    device: LazyDevice<Device>,
    kernels: KernelCache,
    fail_next_launch: std::sync::atomic::AtomicBool,
}

impl CudaBackend {
    /// A backend for device 0 (nothing is touched until it is used).
    pub fn new() -> Self {
        Self::default()
    }

    /// The open device, opening it on first call.
    pub fn device(&self) -> Result<&Arc<Device>> {
        self.device.get_or_open("cuda", Device::open)
    }

    fn buf<'a>(&self, b: &'a dyn DeviceBuffer) -> Result<&'a CudaBuf> {
        own_buffer(b, "cuda")
    }

    /// Makes the next fused-kernel launch fail, as a driver fault would (for
    /// testing fallback on a real device).
    pub fn inject_launch_failure(&self) {
        self.fail_next_launch.store(true, Ordering::SeqCst);
    }
}

/// Built-in thresholds, replaced by `gearbox calibrate`: the smallest work
/// worth a trip to the GPU, cold (inputs uploaded) and resident. The
/// resident ones are what calibration measured on an H100 and an H200
/// (docs/perf/calibrate-*.txt): elementwise 4,096 elements, reductions
/// 16,384 ([`builtin_kernel_thresholds`]), GEMM 2 x 64^3 flops. Higher ones would send small work on
/// resident data to the CPU, which downloads it and stalls the device
/// (a GLM grid's prior terms, once per chunk).
pub(crate) fn builtin_thresholds() -> Vec<Threshold> {
    let mut t = Vec::new();
    for dtype in [DType::F32, DType::F64] {
        t.extend(builtin_kernel_thresholds(dtype));
        t.push(Threshold::from(
            WorkClass::Gemm,
            dtype,
            2.0 * 512f64.powi(3),
            2.0 * 64f64.powi(3),
        ));
        t.push(Threshold::from(
            WorkClass::Factorization,
            dtype,
            1024f64.powi(3),
            256f64.powi(3),
        ));
    }
    t
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn info(&self) -> Result<DeviceInfo> {
        if let Some(d) = self.device.get() {
            return Ok(d.info.clone());
        }
        let dir = crate::loader::load().map_err(|e| fault("load libraries", e))?;
        let where_ = dir
            .paths
            .get(1)
            .and_then(|p| p.parent())
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        Ok(DeviceInfo {
            name: format!(
                "NVIDIA GPU (CUDA libraries in {where_}; device details after the probe)"
            ),
            memory_bytes: 0,
            full_rate_f64: false,
            compute_capability: None,
            driver: None,
        })
    }

    /// Everything but one thing the kernels do not reproduce, which the
    /// runtime therefore runs on the CPU: integer overflow (an error on the
    /// CPU; the kernels would wrap or saturate, so i64 work that can overflow
    /// is declined). `prod` and `cumprod` keep their running products with
    /// an exponent aside, so they never overflow on the way:
    /// `prod([1e300, 1e300, 0])` is 0, as in R.
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            unsupported_ops: Vec::new(),
            integer_overflow_checks: false,
            ..Capabilities::everything()
        }
    }

    fn upload(&self, buf: &HostBuffer) -> Result<DeviceArc> {
        Ok(Arc::new(self.device()?.upload(buf)?))
    }

    fn download(&self, buf: &dyn DeviceBuffer) -> Result<HostBuffer> {
        self.device()?.download(self.buf(buf)?)
    }

    fn synchronize(&self) -> Result<()> {
        self.device()?.synchronize()
    }

    fn run_kernel(&self, kernel: &KernelIr, inputs: &[&dyn DeviceBuffer]) -> Result<DeviceOutputs> {
        let dev = self.device()?;
        if self.fail_next_launch.swap(false, Ordering::SeqCst) {
            return Err(fault(
                "kernel launch",
                "CUDA_ERROR_LAUNCH_FAILED (injected)",
            ));
        }
        let bufs: Vec<&CudaBuf> = inputs.iter().map(|b| self.buf(*b)).collect::<Result<_>>()?;
        Ok(self.kernels.run(dev, kernel, &bufs)?.into_device_outputs())
    }

    fn run_kernel_into(
        &self,
        kernel: &KernelIr,
        inputs: &[&dyn DeviceBuffer],
        outputs: &[&dyn DeviceBuffer],
        reduced: &[&dyn DeviceBuffer],
    ) -> Result<()> {
        let t = own_targets::<CudaBuf>(kernel, inputs, outputs, reduced, "cuda")?;
        self.kernels
            .run_into(self.device()?, kernel, &t.inputs, &t.outputs, &t.reduced)
    }

    fn write_into(&self, buf: &dyn DeviceBuffer, values: &HostBuffer) -> Result<()> {
        self.device()?.write_into(self.buf(buf)?, values)
    }

    fn writes_in_place(&self) -> bool {
        true
    }

    fn allocate(&self, len: usize, dtype: DType) -> Result<DeviceArc> {
        Ok(Arc::new(self.device()?.pool.alloc(len, dtype)?))
    }

    fn gemm_into(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        c: &dyn DeviceBuffer,
        alpha: f64,
        beta: f64,
    ) -> Result<()> {
        let dev = self.device()?;
        let bufs = own_operands::<CudaBuf>(inputs, "cuda")?;
        crate::blas::gemm_into(dev, call, &bufs, self.buf(c)?, alpha, beta)
    }

    fn library_call(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        out: (&Shape, DType),
    ) -> Result<DeviceArc> {
        let dev = self.device()?;
        let bufs = own_operands::<CudaBuf>(inputs, "cuda")?;
        Ok(Arc::new(crate::blas::library_call(
            dev,
            &self.kernels,
            call,
            &bufs,
            out,
        )?))
    }

    fn library_call_batched(
        &self,
        call: LibraryCall,
        batch: &[Vec<(&dyn DeviceBuffer, &Shape)>],
        out: (&Shape, DType),
    ) -> Result<Vec<DeviceArc>> {
        let dev = self.device()?;
        let bufs: Vec<Vec<(&CudaBuf, &Shape)>> = batch
            .iter()
            .map(|ops| own_operands(ops, "cuda"))
            .collect::<Result<_>>()?;
        let outs = crate::blas::gemm_batched(dev, call, &bufs, out)?;
        Ok(outs.into_iter().map(|c| Arc::new(c) as DeviceArc).collect())
    }

    fn is_initialized(&self) -> bool {
        self.device.get().is_some()
    }

    fn kernel_cache_stats(&self) -> (u64, u64) {
        self.kernels.counts()
    }

    /// The pool's figures and the device's total and free memory
    /// (`cuMemGetInfo`).
    fn memory_stats(&self) -> MemoryStats {
        self.device.get().map_or_else(MemoryStats::default, |d| {
            let info = d.ctx.mem_get_info().ok();
            MemoryStats {
                device_total: info.map(|(_, total)| total as u64),
                device_free: info.map(|(free, _)| free as u64),
                ..d.pool.blocks.memory_stats()
            }
        })
    }

    fn trim_pool(&self) -> u64 {
        self.device.get().map_or(0, |d| d.pool.blocks.empty_cache())
    }

    fn reset_peak(&self) {
        if let Some(d) = self.device.get() {
            d.pool.blocks.reset_peak();
        }
    }

    fn pool_counters(&self) -> (u64, u64) {
        self.device
            .get()
            .map_or((0, 0), |d| d.pool.blocks.counters())
    }

    fn default_thresholds(&self) -> Vec<Threshold> {
        builtin_thresholds()
    }

    fn calibrate(&self) -> Result<Vec<Threshold>> {
        gearbox_core::runtime::sweep::measure(self)
    }

    fn probe(&self) -> Result<ProbeReport> {
        // The device opens here; the standard checks then exercise NVRTC
        // and cuBLAS through the backend.
        let info = self.device()?.info.clone();
        let checks = gearbox_core::runtime::probe_checks::standard_checks(self, "NVRTC", "cuBLAS")?;
        Ok(ProbeReport { info, checks })
    }
}

static SHARED: OnceLock<Arc<CudaBackend>> = OnceLock::new();

/// Registers the CUDA backend with the runtime. Idempotent: a second call
/// keeps the registration (and the health) of the first.
pub fn register() {
    gearbox_core::runtime::registry::register_shared("cuda", "cuda", &SHARED, CudaBackend::new);
}

/// The registered CUDA backend, for tools that need its own counters.
pub fn shared() -> Option<Arc<CudaBackend>> {
    SHARED.get().cloned()
}
