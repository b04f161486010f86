//! [`OpenClBackend`]: the runtime's view of an OpenCL device. Before the
//! runtime's isolated probe has passed, the backend only loads the ICD
//! loader: listing platforms starts the vendors' drivers (NVIDIA's starts
//! CUDA, which a forked probe child of this process could then no longer
//! use), so device details come from the probe and the device opens on
//! first real use.

use std::sync::{Arc, OnceLock};

use gearbox_codegen::{run_fused, run_fused_into, GridLimits, RenderedKernel, Toolchain, Tuning};
use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::runtime::backend::{
    own_buffer, own_operands, own_targets, Backend, Capabilities, DeviceArc, DeviceBuffer,
    DeviceInfo, DeviceOutputs, LazyDevice, LibraryCall, ProbeReport, Threshold,
};
use gearbox_core::runtime::calibration::builtin_kernel_thresholds;
use gearbox_core::runtime::pool::MemoryStats;
use gearbox_core::runtime::probe_checks::kernel_checks;
use gearbox_core::runtime::programs::ProgramCache;
use gearbox_core::{DType, HostBuffer, Result, Shape};

use crate::buffer::ClBuf;
use crate::device::{fault, Device};
use crate::program::{Built, ClCompiler, Program};

/// The OpenCL backend. Cheap to create; the device opens on first use.
#[derive(Default)]
pub struct OpenClBackend {
    device: LazyDevice<Device>,
    programs: ProgramCache<Program, RenderedKernel>,
    built: Built,
    library: crate::library::Library,
}

impl OpenClBackend {
    /// A backend for the best device (nothing is touched until it is used).
    pub fn new() -> Self {
        Self::default()
    }

    /// The open device, opening it on first call (and then asking for
    /// its queue to be finished when the process exits).
    pub fn device(&self) -> Result<&Arc<Device>> {
        let dev = self.device.get_or_open("opencl", Device::open)?;
        static AT_EXIT: std::sync::Once = std::sync::Once::new();
        // SAFETY: atexit(3) takes a function of no arguments that does not
        // return into Rust state being torn down: `finish_at_exit` only
        // reads a static that is never dropped.
        AT_EXIT.call_once(|| unsafe {
            libc::atexit(finish_at_exit);
        });
        Ok(dev)
    }

    /// The compiler of OpenCL C on `dev`, sharing this backend's stash of
    /// programs built from source.
    pub fn compiler<'a>(&'a self, dev: &'a Device) -> ClCompiler<'a> {
        ClCompiler {
            dev,
            built: &self.built,
        }
    }

    /// Runs `f` with the toolchain of fused kernels on the open device
    /// (dialect, compiler, program cache), the device and its grid limits.
    fn with_fused<R>(
        &self,
        f: impl FnOnce(&Toolchain<'_, ClCompiler<'_>>, &Device, GridLimits) -> Result<R>,
    ) -> Result<R> {
        let dev = self.device()?;
        let compiler = self.compiler(dev);
        let tools = Toolchain {
            dialect: crate::opencl_c::dialect(dev.fp64),
            tuning: Tuning::default(),
            compiler: &compiler,
            cache: &self.programs,
        };
        f(&tools, dev, crate::launch::grid_limits(dev))
    }

    /// Programs this backend has built from source (fused kernels and
    /// library programs); the others came from memory or the disk cache.
    pub fn programs_built(&self) -> u64 {
        self.built
            .from_source
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn buf<'a>(&self, b: &'a dyn DeviceBuffer) -> Result<&'a ClBuf> {
        own_buffer(b, "opencl")
    }
}

impl Backend for OpenClBackend {
    fn name(&self) -> &'static str {
        "opencl"
    }

    /// The open device's details; before that, only whether the ICD loader
    /// is there (listing platforms would start the drivers).
    fn info(&self) -> Result<DeviceInfo> {
        if let Some(d) = self.device.get() {
            return Ok(d.info.clone());
        }
        crate::device::loader().map_err(|why| fault("load library", why))?;
        Ok(DeviceInfo {
            name: "OpenCL device (ICD loader found; device details after the probe)".into(),
            memory_bytes: 0,
            full_rate_f64: false,
            compute_capability: None,
            driver: None,
        })
    }

    /// Fused kernels and reductions (f32 and bool; f64 and i64 on devices
    /// with `cl_khr_fp64`, assumed until the device is open), the device
    /// library's scalar functions (R's nmath, compiled from the same source
    /// as CUDA's), the library calls of [`crate::library`] (`cumsum` and
    /// `cumprod` among them); i64 work that can overflow stays on the CPU
    /// (the kernels wrap).
    fn capabilities(&self) -> Capabilities {
        let fp64 = self.device.get().is_none_or(|d| d.fp64);
        Capabilities::fused_gpu(fp64, crate::library::offered(fp64), fp64)
    }

    fn upload(&self, buf: &HostBuffer) -> Result<DeviceArc> {
        Ok(Arc::new(self.device()?.upload(buf)?))
    }

    fn download(&self, buf: &dyn DeviceBuffer) -> Result<HostBuffer> {
        self.device()?.download(self.buf(buf)?)
    }

    fn synchronize(&self) -> Result<()> {
        self.device()?.wait()
    }

    fn run_kernel(&self, kernel: &KernelIr, inputs: &[&dyn DeviceBuffer]) -> Result<DeviceOutputs> {
        let bufs: Vec<&ClBuf> = inputs.iter().map(|b| self.buf(*b)).collect::<Result<_>>()?;
        self.with_fused(|tools, dev, limits| {
            Ok(run_fused(tools, dev, limits, kernel, &bufs)?.into_device_outputs())
        })
    }

    fn run_kernel_into(
        &self,
        kernel: &KernelIr,
        inputs: &[&dyn DeviceBuffer],
        outputs: &[&dyn DeviceBuffer],
        reduced: &[&dyn DeviceBuffer],
    ) -> Result<()> {
        let t = own_targets::<ClBuf>(kernel, inputs, outputs, reduced, "opencl")?;
        self.with_fused(|tools, dev, limits| {
            run_fused_into(
                tools, dev, limits, kernel, &t.inputs, &t.outputs, &t.reduced,
            )
        })
    }

    fn write_into(&self, buf: &dyn DeviceBuffer, values: &HostBuffer) -> Result<()> {
        self.device()?.write_into(self.buf(buf)?, values)
    }

    fn writes_in_place(&self) -> bool {
        true
    }

    fn allocate(&self, len: usize, dtype: DType) -> Result<DeviceArc> {
        Ok(Arc::new(self.device()?.alloc(len, dtype)?))
    }

    fn library_call(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        out: (&Shape, DType),
    ) -> Result<DeviceArc> {
        let dev = self.device()?;
        let bufs = own_operands::<ClBuf>(inputs, "opencl")?;
        let compiler = self.compiler(dev);
        Ok(Arc::new(
            self.library.call(dev, &compiler, call, &bufs, out)?,
        ))
    }

    fn is_initialized(&self) -> bool {
        self.device.get().is_some()
    }

    /// Fused kernels and library programs together.
    fn kernel_cache_stats(&self) -> (u64, u64) {
        let ((h, m), (lh, lm)) = (self.programs.counts(), self.library.counts());
        (h + lh, m + lm)
    }

    fn memory_stats(&self) -> MemoryStats {
        self.device
            .get()
            .map_or_else(MemoryStats::default, |d| d.memory())
    }

    fn trim_pool(&self) -> u64 {
        self.device.get().map_or(0, |d| d.pool.empty_cache())
    }

    fn reset_peak(&self) {
        if let Some(d) = self.device.get() {
            d.pool.reset_peak();
        }
    }

    fn pool_counters(&self) -> (u64, u64) {
        self.device.get().map_or((0, 0), |d| d.pool.counters())
    }

    /// The CUDA backend's for fused work ([`builtin_kernel_thresholds`]),
    /// f32 only, until `gearbox calibrate` measures the device.
    fn default_thresholds(&self) -> Vec<Threshold> {
        builtin_kernel_thresholds(DType::F32).to_vec()
    }

    fn calibrate(&self) -> Result<Vec<Threshold>> {
        gearbox_core::runtime::sweep::measure(self)
    }

    /// The other devices, once this process drives one (listing them
    /// earlier would start the drivers before the probe).
    fn other_devices(&self) -> Vec<(DeviceInfo, String)> {
        if self.device.get().is_none() {
            return Vec::new();
        }
        crate::device::other_devices()
    }

    /// float64 where the device lacks it.
    fn limitations(&self) -> String {
        match self.device.get() {
            Some(d) if !d.fp64 => {
                "device lacks cl_khr_fp64: f64, i64 and the nmath functions run on the CPU".into()
            }
            _ => String::new(),
        }
    }

    fn probe(&self) -> Result<ProbeReport> {
        let dev = self.device()?;
        let info = dev.info.clone();
        let checks = kernel_checks(self, "OpenCL C", dev.fp64)?;
        Ok(ProbeReport { info, checks })
    }
}

static SHARED: OnceLock<Arc<OpenClBackend>> = OnceLock::new();

/// Waits for the registered backend's queue as the process exits.
/// NVIDIA's OpenCL driver aborts the process ("pure virtual method
/// called") when its static destructors run while commands are still in
/// flight, as they are after work whose result was never read (seen on
/// an H200: 64 threads making handles, then returning). Registered with
/// atexit after the driver's own destructors, so it runs before them.
extern "C" fn finish_at_exit() {
    if let Some(dev) = SHARED.get().and_then(|b| b.device.get()) {
        let _ = dev.queue.finish();
    }
}

/// Registers the OpenCL backend with the runtime. Idempotent.
pub fn register() {
    gearbox_core::runtime::registry::register_shared(
        "opencl",
        "opencl",
        &SHARED,
        OpenClBackend::new,
    );
}

/// The registered OpenCL backend, for tools that need its own counters.
pub fn shared() -> Option<Arc<OpenClBackend>> {
    SHARED.get().cloned()
}
