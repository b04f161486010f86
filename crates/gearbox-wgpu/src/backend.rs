//! [`WgpuBackend`]: the runtime's view of a wgpu adapter (Vulkan, Metal or
//! DX12). Finding the adapter only asks wgpu which adapters there are; the
//! device opens on first real use, after the runtime's isolated probe.

use std::sync::{Arc, OnceLock};

use gearbox_codegen::{run_fused, run_fused_into, GridLimits, RenderedKernel, Toolchain};
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

use crate::buffer::WgpuBuf;
use crate::device::{fault, Device};
use crate::kept::Kept;
use crate::program::{Program, WgslCompiler};

/// The wgpu backend. Cheap to create; the device opens on first use.
#[derive(Default)]
pub struct WgpuBackend {
    device: LazyDevice<Device>,
    programs: ProgramCache<Program, RenderedKernel>,
    modules: crate::library::Modules,
    small_uploads: SmallUploads,
}

/// Uploads of at most [`SMALL_UPLOAD_BYTES`] kept by contents: the scalars
/// of an expression (`x * 1.5`) are uploaded at every evaluation, and an
/// upload costs a submission of the pending work (tens of microseconds)
/// where the kernel that reads it may cost less. Device buffers are never
/// written after they are made, so equal contents can share one.
struct SmallUploads(Kept<UploadKey, Arc<WgpuBuf>>);

impl Default for SmallUploads {
    fn default() -> Self {
        SmallUploads(Kept::new(SMALL_UPLOADS_KEPT))
    }
}

/// A small upload's dtype and device bytes.
type UploadKey = (DType, Vec<u8>);

/// The largest upload [`SmallUploads`] keeps.
const SMALL_UPLOAD_BYTES: usize = 64;

/// Distinct small uploads kept before the map starts over.
const SMALL_UPLOADS_KEPT: usize = 256;

impl SmallUploads {
    /// The buffer holding `host`, uploaded to `dev` on first sight; `None`
    /// when `host` is too large to keep.
    fn get(&self, dev: &Device, host: &HostBuffer) -> Result<Option<Arc<WgpuBuf>>> {
        let bytes = crate::buffer::to_storage(host)?;
        if bytes.len() > SMALL_UPLOAD_BYTES {
            return Ok(None);
        }
        let key = (host.dtype(), bytes.into_owned());
        self.0
            .get_or_make(key, || dev.upload(host).map(Arc::new))
            .map(Some)
    }
}

/// WGSL kernels index with 32-bit integers: a larger iteration space is
/// refused before anything is launched.
fn check_indices(kernel: &KernelIr) -> Result<()> {
    let n = kernel.shape().numel();
    if i32::try_from(n).is_err() {
        return Err(fault(
            "kernel launch",
            format!("{n} elements exceed the 32-bit indices of WGSL kernels"),
        ));
    }
    Ok(())
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

    /// Runs `f` with the toolchain of `kernel` on the open device (its
    /// dialect, the WGSL compiler, the program cache), the device and its
    /// grid limits; a kernel past WGSL's 32-bit indices is refused first.
    fn with_fused<R>(
        &self,
        kernel: &KernelIr,
        f: impl FnOnce(&Toolchain<'_, WgslCompiler<'_>>, &Device, GridLimits) -> Result<R>,
    ) -> Result<R> {
        let dev = self.device()?;
        check_indices(kernel)?;
        let compiler = WgslCompiler(dev);
        let tools = Toolchain {
            dialect: dialect_for(kernel, dev)?,
            tuning: crate::params::tuning(),
            compiler: &compiler,
            cache: &self.programs,
        };
        f(&tools, dev, crate::launch::grid_limits(dev))
    }

    fn buf<'a>(&self, b: &'a dyn DeviceBuffer) -> Result<&'a WgpuBuf> {
        own_buffer(b, "wgpu")
    }
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

    /// Fused kernels and reductions in f32 and bool, and in f64 and i64
    /// where the adapter has SHADER_F64 and SHADER_INT64; the library calls
    /// of [`crate::library`]; no scalar functions of device libraries (their
    /// source is CUDA C). `prod` and `cumprod` run here with the CPU's
    /// guarantee: their running products never overflow on the way.
    fn capabilities(&self) -> Capabilities {
        let features = crate::device::adapter_features();
        let sixty_four = crate::device::has_64_bit(features);
        let mut caps =
            Capabilities::fused_gpu(sixty_four, crate::library::offered(features), false);
        // On the H200's Vulkan driver f32 cumprod gave Inf where the CPU
        // gives NaN (lanes holding Inf and 0), through both f32
        // accumulations (f64 data agree): hardware adapters leave it to
        // the CPU; lavapipe runs it (and the tests check it there).
        // The same driver (580.159.04) crashed (a segmentation fault in
        // the process) running `logsumexp` of bools along the rows of a
        // 200 x 3 matrix, whatever the conversion of the bools.
        if !crate::device::adapter_is_cpu() {
            caps.unsupported_ops.push("cumprod:f32".into());
            caps.unsupported_ops.push("logsumexp:bool".into());
        }
        caps
    }

    /// Uploads of 64 bytes or less are kept by contents and shared.
    fn upload(&self, buf: &HostBuffer) -> Result<DeviceArc> {
        let dev = self.device()?;
        if let Some(kept) = self.small_uploads.get(dev, buf)? {
            return Ok(kept);
        }
        Ok(Arc::new(dev.upload(buf)?))
    }

    fn download(&self, buf: &dyn DeviceBuffer) -> Result<HostBuffer> {
        self.device()?.download(self.buf(buf)?)
    }

    fn synchronize(&self) -> Result<()> {
        self.device()?.wait()
    }

    fn run_kernel(&self, kernel: &KernelIr, inputs: &[&dyn DeviceBuffer]) -> Result<DeviceOutputs> {
        let bufs: Vec<&WgpuBuf> = inputs.iter().map(|b| self.buf(*b)).collect::<Result<_>>()?;
        self.with_fused(kernel, |tools, dev, limits| {
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
        let t = own_targets::<WgpuBuf>(kernel, inputs, outputs, reduced, "wgpu")?;
        // WGSL kernels bind inputs read-only and outputs read-write, and a
        // dispatch may not use one buffer both ways: an output that is
        // also an input is declined (the caller computes into new memory
        // and copies).
        let aliased = t.outputs.iter().chain(t.reduced.iter());
        if aliased
            .into_iter()
            .any(|o| t.inputs.iter().any(|i| std::ptr::eq(*i, *o)))
        {
            return Err(gearbox_core::Error::Device {
                backend: "wgpu".into(),
                op: "kernel into a buffer".into(),
                reason: "an output is also an input, and a WGSL dispatch binds a buffer once"
                    .into(),
                kind: gearbox_core::DeviceErrorKind::Compile,
            });
        }
        self.with_fused(kernel, |tools, dev, limits| {
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

    /// Small uploads are kept by contents and shared between values, so
    /// a buffer of that size may not be a value's own.
    fn owns_alone(&self, buf: &dyn DeviceBuffer) -> bool {
        buf.size_bytes() > SMALL_UPLOAD_BYTES
    }

    fn upload_owned(&self, buf: &HostBuffer) -> Result<DeviceArc> {
        Ok(Arc::new(self.device()?.upload(buf)?))
    }

    fn library_call(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        out: (&Shape, DType),
    ) -> Result<DeviceArc> {
        let dev = self.device()?;
        let bufs = own_operands::<WgpuBuf>(inputs, "wgpu")?;
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

    /// Fused kernels and library modules together.
    fn kernel_cache_stats(&self) -> (u64, u64) {
        let ((h, m), (lh, lm)) = (self.programs.counts(), self.modules.counts());
        (h + lh, m + lm)
    }

    /// The pool's figures; wgpu reports no device memory.
    fn memory_stats(&self) -> MemoryStats {
        self.device
            .get()
            .map_or_else(MemoryStats::default, |d| d.pool.memory_stats())
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

    fn device_compute_seconds(&self) -> Option<f64> {
        self.device.get().and_then(|d| d.compute_seconds())
    }

    /// The CUDA backend's for fused work ([`builtin_kernel_thresholds`]),
    /// f32 only, until `gearbox calibrate` measures the device. wgpu
    /// launches cost more host time than CUDA's, so these are a lower
    /// bound for where it pays.
    fn default_thresholds(&self) -> Vec<Threshold> {
        builtin_kernel_thresholds(DType::F32).to_vec()
    }

    fn calibrate(&self) -> Result<Vec<Threshold>> {
        gearbox_core::runtime::sweep::measure(self)
    }

    fn other_devices(&self) -> Vec<(DeviceInfo, String)> {
        crate::device::other_adapters()
    }

    /// The 64-bit shader features the adapter lacks, if any.
    fn limitations(&self) -> String {
        let features = crate::device::adapter_features();
        let missing: Vec<&str> = [
            (wgpu::Features::SHADER_F64, "SHADER_F64"),
            (wgpu::Features::SHADER_INT64, "SHADER_INT64"),
        ]
        .iter()
        .filter(|(f, _)| !features.contains(*f))
        .map(|(_, name)| *name)
        .collect();
        if missing.is_empty() {
            String::new()
        } else {
            format!(
                "adapter lacks {}: f64 and i64 work runs on the CPU",
                missing.join(" and ")
            )
        }
    }

    fn probe(&self) -> Result<ProbeReport> {
        let info = self.device()?.info.clone();
        let f64 = crate::device::has_64_bit(self.device()?.features);
        let checks = kernel_checks(self, "WGSL", f64)?;
        Ok(ProbeReport { info, checks })
    }
}

/// The dialect `kernel` is written in on `dev`: the wide one when it holds
/// an f64 or i64 value anywhere (the device must have them), else the
/// packed one (16-byte accesses; f32 accumulators, no f64 prelude to
/// compile), or the narrow one where the `vec4` views would pass the
/// adapter's storage bindings per stage (or `GEARBOX_WGPU_PACKED=0`).
fn dialect_for(kernel: &KernelIr, dev: &Device) -> Result<&'static crate::wgsl::Wgsl> {
    let wide = |d: &DType| matches!(d, DType::F64 | DType::I64);
    let needs_64 = kernel.inputs().iter().any(|(_, d)| wide(d))
        || kernel.nodes().iter().any(|n| wide(&n.dtype))
        || kernel.reduce().is_some_and(|r| wide(&r.dtype));
    // Inputs, outputs and two scratch buffers, each also viewed as vec4.
    let buffers = kernel.inputs().len() + kernel.outputs().len() + 2;
    let fits = 2 * buffers as u32 <= dev.limits.max_storage_buffers_per_shader_stage
        && buffers as u32 <= crate::wgsl::MAX_BUFFERS;
    let shuffles = dev.subgroups_of_32;
    match needs_64 {
        false => Ok(crate::wgsl::dialect(
            false,
            fits && crate::params::params().packed,
            shuffles,
        )),
        true if crate::device::has_64_bit(dev.features) => {
            Ok(crate::wgsl::dialect(true, false, shuffles))
        }
        true => Err(fault(
            "kernel launch",
            "f64 and i64 kernels need an adapter with SHADER_F64 and SHADER_INT64",
        )),
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
