//! [`WgpuBackend`]: the runtime's view of a wgpu adapter (Vulkan, Metal or
//! DX12). Finding the adapter only asks wgpu which adapters there are; the
//! device opens on first real use, after the runtime's isolated probe.

use std::sync::{Arc, OnceLock};

use gearbox_codegen::{run_fused, RenderedKernel, Toolchain};
use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::runtime::backend::{
    own_buffer, Backend, Capabilities, DeviceArc, DeviceBuffer, DeviceInfo, DeviceOutputs,
    LazyDevice, LibraryCall, ProbeReport, Threshold, WorkClass,
};
use gearbox_core::runtime::programs::ProgramCache;
use gearbox_core::{DType, HostBuffer, Result, Shape};

use crate::buffer::WgpuBuf;
use crate::device::{fault, Device};
use crate::program::{Program, WgslCompiler};

/// The wgpu backend. Cheap to create; the device opens on first use.
#[derive(Default)]
pub struct WgpuBackend {
    device: LazyDevice<Device>,
    programs: ProgramCache<Program, RenderedKernel>,
    modules: crate::library::Modules,
}

impl WgpuBackend {
    /// A backend for the best adapter (nothing is touched until it is used).
    pub fn new() -> Self {
        Self::default()
    }

    /// The open device, opening it on first call.
    pub fn device(&self) -> Result<&Arc<Device>> {
        self.device.get_or_open("wgpu", Device::open)
    }

    fn buf<'a>(&self, b: &'a dyn DeviceBuffer) -> Result<&'a WgpuBuf> {
        own_buffer(b, "wgpu")
    }
}

/// Built-in thresholds until `gearbox calibrate` measures the device: the
/// CUDA backend's (elementwise 4,096 elements resident, 4e6 cold;
/// reductions 16,384 resident). wgpu launches cost more host time than
/// CUDA's, so these are a lower bound for where it pays.
fn builtin_thresholds() -> Vec<Threshold> {
    vec![
        Threshold::from(WorkClass::Elementwise, DType::F32, 4.0e6, 4096.0),
        Threshold::from(WorkClass::Reduction, DType::F32, 4.0e6, 16384.0),
    ]
}

impl Backend for WgpuBackend {
    fn name(&self) -> &'static str {
        "wgpu"
    }

    fn info(&self) -> Result<DeviceInfo> {
        if let Some(d) = self.device.get() {
            return Ok(d.info.clone());
        }
        crate::device::adapter_info()
    }

    /// Fused kernels and reductions in f32 and bool (WGSL has no f64 or i64
    /// here yet), no library calls; `prod` and `cumprod` stay on the CPU,
    /// whose accumulator never overflows on the way.
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            dtypes: vec![DType::Bool, DType::F32],
            fused_kernels: true,
            fused_reductions: true,
            library: crate::library::offered(crate::device::adapter_features()),
            unsupported_ops: vec!["prod".into(), "cumprod".into()],
            integer_overflow_checks: false,
        }
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
        let dev = self.device()?;
        let n = kernel.shape().numel();
        if i32::try_from(n).is_err() {
            return Err(fault(
                "kernel launch",
                format!("{n} elements exceed the 32-bit indices of WGSL kernels"),
            ));
        }
        let bufs: Vec<&WgpuBuf> = inputs.iter().map(|b| self.buf(*b)).collect::<Result<_>>()?;
        let tools = Toolchain {
            dialect: &crate::wgsl::WGSL,
            tuning: crate::params::tuning(),
            compiler: &WgslCompiler(dev),
            cache: &self.programs,
        };
        let out = run_fused(
            &tools,
            dev.as_ref(),
            crate::launch::grid_limits(dev),
            kernel,
            &bufs,
        )?;
        let wrap = |b: WgpuBuf| -> DeviceArc { Arc::new(b) };
        Ok(DeviceOutputs {
            outputs: out.outputs.into_iter().map(wrap).collect(),
            reduced: out.reduced.map(wrap),
        })
    }

    fn library_call(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        out: (&Shape, DType),
    ) -> Result<DeviceArc> {
        let dev = self.device()?;
        let bufs: Vec<(&WgpuBuf, &Shape)> = inputs
            .iter()
            .map(|(b, s)| self.buf(*b).map(|w| (w, *s)))
            .collect::<Result<_>>()?;
        Ok(Arc::new(crate::library::call(
            dev,
            &self.modules,
            call,
            &bufs,
            out,
        )?))
    }

    fn is_initialized(&self) -> bool {
        self.device.get().is_some()
    }

    fn kernel_cache_stats(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (
            self.programs.hits.load(Relaxed),
            self.programs.misses.load(Relaxed),
        )
    }

    fn memory_stats(&self) -> (u64, u64) {
        match self.device.get() {
            Some(d) => d.memory(),
            _ => (0, 0),
        }
    }

    fn pool_counters(&self) -> (u64, u64) {
        match self.device.get() {
            Some(d) => d.pool.counters(),
            _ => (0, 0),
        }
    }

    fn default_thresholds(&self) -> Vec<Threshold> {
        builtin_thresholds()
    }

    fn calibrate(&self) -> Result<Vec<Threshold>> {
        gearbox_core::runtime::sweep::measure(self)
    }

    fn probe(&self) -> Result<ProbeReport> {
        let info = self.device()?.info.clone();
        let checks = vec![gearbox_core::runtime::probe_checks::kernel_check(
            self,
            "WGSL",
            DType::F32,
        )?];
        Ok(ProbeReport { info, checks })
    }
}

static SHARED: OnceLock<Arc<WgpuBackend>> = OnceLock::new();

/// Registers the wgpu backend with the runtime. Idempotent.
pub fn register() {
    gearbox_core::runtime::registry::register_shared("wgpu", "wgpu", &SHARED, WgpuBackend::new);
}

/// The registered wgpu backend, for tools that need its own counters.
pub fn shared() -> Option<Arc<WgpuBackend>> {
    SHARED.get().cloned()
}
