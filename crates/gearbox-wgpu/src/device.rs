//! The wgpu device: which adapter is used and why, the device and queue
//! opened on it with the adapter's own limits, buffers moved to and from
//! the host, and wgpu's errors turned into Gearbox errors (wgpu reports
//! validation errors through error scopes, and panics on errors nobody
//! captures: the device logs those instead).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use gearbox_core::runtime::backend::{DeviceBuffer, DeviceInfo};
use gearbox_core::runtime::pool::{size_class, BlockPool};
use gearbox_core::{DType, DeviceErrorKind, Error, HostBuffer, Result};
use wgpu::util::DeviceExt;

use crate::buffer::WgpuBuf;

/// An error of the wgpu backend in step `op`.
pub(crate) fn fault(op: &str, reason: impl std::fmt::Display) -> Error {
    Error::Device {
        backend: "wgpu".into(),
        op: op.into(),
        reason: reason.to_string(),
        kind: DeviceErrorKind::Fault,
    }
}

/// The backends wgpu may use: Vulkan, Metal, DX12 (no GL: it has no
/// compute shaders of the kind the kernels need).
fn backends() -> wgpu::Backends {
    wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12
}

/// Why no adapter was found, in words that name what is missing.
fn no_adapter_reason() -> String {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: loading the Vulkan loader runs no code of ours; the
        // library is dropped at once.
        if unsafe { libloading::Library::new("libvulkan.so.1") }.is_err() {
            return "no Vulkan loader (libvulkan.so.1)".into();
        }
        "no adapter: the Vulkan loader found no driver (install one, e.g. Mesa's \
         lavapipe or the GPU vendor's, or point VK_DRIVER_FILES at its ICD file)"
            .into()
    }
    #[cfg(not(target_os = "linux"))]
    {
        "no adapter (no Vulkan, Metal or DX12 device)".into()
    }
}

/// The preference of an adapter kind: discrete GPUs first, CPUs last.
fn rank(kind: wgpu::DeviceType) -> u8 {
    match kind {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

static ALLOW_CPU: AtomicBool = AtomicBool::new(false);

/// Lets the backend use an adapter that runs on the CPU (Mesa's lavapipe,
/// WARP): off by default, as it only competes with the CPU backend for
/// the same cores; tests turn it on to check the backend where no GPU is.
/// `GEARBOX_WGPU_ALLOW_CPU=1` does the same.
pub fn allow_cpu_adapters(allow: bool) {
    ALLOW_CPU.store(allow, Ordering::Relaxed);
}

fn cpu_adapters_allowed() -> bool {
    ALLOW_CPU.load(Ordering::Relaxed) || crate::params::params().allow_cpu
}

/// Gives libwayland a runtime directory when the environment has none.
///
/// Enumerating Mesa's lavapipe loads its Wayland support, and libwayland
/// prints "error: XDG_RUNTIME_DIR is invalid or not set in the
/// environment." twice to standard error when the variable is unset (any
/// headless server or container): noise in every command that lists the
/// backends, though nothing is wrong. An empty private directory silences
/// it (libwayland then finds no display, quietly): one per user, mode
/// 0700, under the temporary directory. Set once, before the
/// first Vulkan instance, and only where unset.
fn quiet_wayland() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
                use std::os::unix::fs::DirBuilderExt;
                // SAFETY: getuid has no preconditions and cannot fail.
                let uid = unsafe { libc::getuid() };
                let dir = std::env::temp_dir().join(format!("gearbox-runtime-{uid}"));
                let made = std::fs::DirBuilder::new().mode(0o700).create(&dir);
                if made.is_ok() || dir.is_dir() {
                    std::env::set_var("XDG_RUNTIME_DIR", &dir);
                }
            }
        });
    }
}

/// Every adapter wgpu sees, best first. Enumerated anew on every call, not
/// kept: the runtime probes in a forked child, and Vulkan objects made
/// before a `fork` are not valid in the child (NVIDIA's driver then loses
/// the device it opens: "Parent device is lost").
fn all_adapters() -> Vec<wgpu::Adapter> {
    quiet_wayland();
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: backends(),
        // Buffer creation fails (out of memory) past 90% of the memory
        // budget the driver reports, rather than the driver placing the
        // buffer in host memory: the pool then empties its cache and
        // tries again.
        memory_budget_thresholds: wgpu::MemoryBudgetThresholds {
            for_resource_creation: Some(90),
            for_device_loss: None,
        },
        ..wgpu::InstanceDescriptor::new_without_display_handle_from_env()
    });
    let mut found = pollster::block_on(instance.enumerate_adapters(backends()));
    found.sort_by_key(|a| rank(a.get_info().device_type));
    found
}

/// The knobs of the adapter choice.
const CHOICE: gearbox_core::runtime::choice::ChoiceNames =
    gearbox_core::runtime::choice::ChoiceNames {
        pick: "GEARBOX_WGPU_ADAPTER",
        allow_cpu: "GEARBOX_WGPU_ALLOW_CPU",
        noun: "adapter",
    };

/// The adapters as the choice sees them ([`gearbox_core::runtime::choice`]).
fn candidates(all: &[wgpu::Adapter]) -> Vec<gearbox_core::runtime::choice::Candidate> {
    all.iter()
        .map(|a| {
            let info = a.get_info();
            gearbox_core::runtime::choice::Candidate {
                name: describe(&info),
                cpu: info.device_type == wgpu::DeviceType::Cpu,
            }
        })
        .collect()
}

/// The adapter the backend drives ([`crate::choice::choose`]), or why
/// there is none.
fn best_adapter() -> Result<wgpu::Adapter> {
    let all = all_adapters();
    let wanted = crate::params::params().adapter.clone();
    match gearbox_core::runtime::choice::choose(
        CHOICE,
        &candidates(&all),
        wanted.as_deref(),
        cpu_adapters_allowed(),
    ) {
        Ok(i) => Ok(all[i].clone()),
        Err(why) if why.is_empty() => Err(fault("find adapter", no_adapter_reason())),
        Err(why) => Err(fault("find adapter", why)),
    }
}

/// The adapters the backend sees and does not drive, each with why and how
/// to pick it (empty when it drives none).
pub fn other_adapters() -> Vec<(DeviceInfo, String)> {
    let all = all_adapters();
    let ranked = candidates(&all);
    let cpu_ok = cpu_adapters_allowed();
    let wanted = crate::params::params().adapter.clone();
    let Ok(driven) =
        gearbox_core::runtime::choice::choose(CHOICE, &ranked, wanted.as_deref(), cpu_ok)
    else {
        return Vec::new();
    };
    gearbox_core::runtime::choice::others(CHOICE, &ranked, driven, cpu_ok)
        .into_iter()
        .map(|(i, why)| (device_info(&all[i]), why))
        .collect()
}

/// Describes `info` for the status table.
fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

/// What the device is, from its adapter, before opening it.
pub fn adapter_info() -> Result<DeviceInfo> {
    Ok(device_info(&best_adapter()?))
}

/// The optional features the backend uses where the adapter has them:
/// f64 and i64 in shaders (the f64 and i64 dtypes need both, as the f64
/// kernels test and move bits as i64), pipeline caches kept on disk, and
/// timestamp queries when profiling ([`crate::timing`]).
pub fn wanted_features() -> wgpu::Features {
    let wanted = wgpu::Features::SHADER_F64
        | wgpu::Features::SHADER_INT64
        | wgpu::Features::PIPELINE_CACHE
        | wgpu::Features::SUBGROUP;
    if crate::params::params().timestamps {
        wanted | wgpu::Features::TIMESTAMP_QUERY
    } else {
        wanted
    }
}

/// The wanted features of the best adapter, before opening it (enumerated
/// once per process).
pub fn adapter_features() -> wgpu::Features {
    static FEATURES: std::sync::OnceLock<wgpu::Features> = std::sync::OnceLock::new();
    *FEATURES.get_or_init(|| {
        best_adapter()
            .map(|a| a.features() & wanted_features())
            .unwrap_or(wgpu::Features::empty())
    })
}

/// Whether the best adapter runs on the CPU (lavapipe, WARP), before
/// opening it (asked once per process).
pub fn adapter_is_cpu() -> bool {
    static CPU: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CPU.get_or_init(|| {
        best_adapter().is_ok_and(|a| a.get_info().device_type == wgpu::DeviceType::Cpu)
    })
}

/// Whether `features` let kernels use f64 and i64.
pub fn has_64_bit(features: wgpu::Features) -> bool {
    features.contains(wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_INT64)
}

/// Whether the adapter runs f64 at full rate, which `strict` work needs:
/// [`gearbox_core::runtime::choice::full_rate_f64_by_name`], as the
/// graphics APIs do not report the rate. `GEARBOX_WGPU_FULL_RATE_F64=1` or
/// `0` overrides it.
fn full_rate_f64(adapter: &wgpu::Adapter) -> bool {
    if !adapter.features().contains(wgpu::Features::SHADER_F64) {
        return false;
    }
    if let Some(forced) = crate::params::params().full_rate_f64 {
        return forced;
    }
    let info = adapter.get_info();
    gearbox_core::runtime::choice::full_rate_f64_by_name(
        &info.name,
        info.device_type == wgpu::DeviceType::Cpu,
    )
}

fn device_info(adapter: &wgpu::Adapter) -> DeviceInfo {
    let info = adapter.get_info();
    DeviceInfo {
        name: describe(&info),
        memory_bytes: adapter.limits().max_buffer_size,
        full_rate_f64: full_rate_f64(adapter),
        compute_capability: None,
        driver: Some(
            format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
        ),
    }
}

/// An open wgpu device and its queue.
pub struct Device {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue: all work goes there, in order.
    pub queue: wgpu::Queue,
    /// What it is.
    pub info: DeviceInfo,
    /// Its limits (the adapter's).
    pub limits: wgpu::Limits,
    /// The optional features it was opened with ([`wanted_features`] the
    /// adapter has).
    pub features: wgpu::Features,
    /// Whether the adapter runs on the CPU (lavapipe, WARP).
    pub cpu_adapter: bool,
    /// Whether kernels may use subgroup shuffles in warps of 32: the
    /// device has SUBGROUP and its subgroups are always 32 invocations
    /// (`GEARBOX_WGPU_SHUFFLES=0` turns them off).
    pub subgroups_of_32: bool,
    /// Device memory: cached blocks and counters.
    pub pool: Arc<BlockPool<wgpu::Buffer>>,
    /// Mappable buffers downloads go through, by size class.
    staging: BlockPool<wgpu::Buffer>,
    /// The driver's compiled pipelines, kept on disk where the adapter can.
    pub pipelines: Option<crate::pipeline_cache::DiskPipelines>,
    /// Uniform buffers by contents ([`Device::uniform`]).
    uniforms: Mutex<std::collections::HashMap<Vec<u8>, wgpu::Buffer>>,
    /// Kernel launches recorded and not yet submitted, and how many.
    pending: Mutex<Option<Pending>>,
    /// The passes' own clock, when profiling ([`crate::timing`]).
    pub timer: Option<crate::timing::PassTimer>,
}

/// Work recorded and not yet submitted.
struct Pending {
    encoder: wgpu::CommandEncoder,
    /// The compute pass the batch's dispatches share, open until another
    /// command is recorded (wgpu puts the barriers dispatches need between
    /// them): a pass per dispatch costs microseconds of host time each.
    pass: Option<wgpu::ComputePass<'static>>,
    /// Commands recorded (dispatches and copies).
    count: usize,
    /// Passes given timestamp writes.
    timed: u32,
}

/// Distinct uniform buffers kept before the map starts over.
const UNIFORMS_KEPT: usize = 1024;

/// Mappable (host) memory kept for downloads.
const STAGING_CACHE_BYTES: u64 = 1 << 30;

/// Launches recorded into one command buffer before it is submitted (a
/// submission costs tens of microseconds of host time; fewer keep the
/// device waiting).
const LAUNCHES_PER_SUBMIT: usize = 16;

/// Microseconds a wait on a GPU adapter polls the fence before it blocks
/// (`GEARBOX_WGPU_SPIN_US` overrides): long enough to cover the work a
/// synchronizing caller usually waits for, short enough that a long wait
/// costs the host little (measured in docs/perf/wgpu.md).
const DEFAULT_SPIN_US: u64 = 1000;

impl Device {
    /// Opens the best adapter with its own limits.
    pub fn open() -> Result<Device> {
        let adapter = best_adapter()?;
        let limits = adapter.limits();
        let features = adapter.features() & wanted_features();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("gearbox"),
            required_features: features,
            required_limits: limits.clone(),
            memory_hints: crate::params::params().memory_hints.clone(),
            ..Default::default()
        }))
        .map_err(|e| fault("open device", e))?;
        device.on_uncaptured_error(Arc::new(|e| {
            tracing::warn!("wgpu error outside an error scope: {e}");
        }));
        let pipelines = crate::pipeline_cache::DiskPipelines::open(&adapter.get_info(), &device);
        let timer = crate::params::params()
            .timestamps
            .then(|| crate::timing::PassTimer::new(&device, &queue, LAUNCHES_PER_SUBMIT as u32))
            .flatten();
        let pool = Arc::new(BlockPool::new(crate::params::params().pool_bytes));
        // wgpu reports no device memory: a limit is given in bytes.
        pool.limit_from_env("wgpu", None)?;
        Ok(Device {
            pipelines,
            device,
            queue,
            info: device_info(&adapter),
            // wgpu does not report the device's memory: the cache has a fixed
            // cap (crate::params), and the memory budget threshold above
            // makes creation fail, not spill, when the device fills.
            pool,
            limits,
            features,
            cpu_adapter: adapter.get_info().device_type == wgpu::DeviceType::Cpu,
            subgroups_of_32: features.contains(wgpu::Features::SUBGROUP)
                && adapter.get_info().subgroup_min_size == 32
                && adapter.get_info().subgroup_max_size == 32
                && crate::params::params().shuffles,
            staging: BlockPool::new(STAGING_CACHE_BYTES),
            uniforms: Mutex::default(),
            pending: Mutex::new(None),
            timer,
        })
    }

    /// Runs `f` inside validation and out-of-memory error scopes: a
    /// validation error of anything `f` asks of wgpu becomes an error of
    /// step `op` (of `kind`), running out of memory an out-of-memory error.
    pub fn checked<T>(&self, op: &str, kind: DeviceErrorKind, f: impl FnOnce() -> T) -> Result<T> {
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = f();
        let invalid = pollster::block_on(validation.pop());
        let out_of_memory = pollster::block_on(memory.pop());
        let error = |reason: String, kind| Error::Device {
            backend: "wgpu".into(),
            op: op.into(),
            reason,
            kind,
        };
        match (out_of_memory, invalid) {
            (Some(e), _) => Err(error(e.to_string(), DeviceErrorKind::OutOfMemory)),
            (None, Some(e)) => Err(error(e.to_string(), kind)),
            (None, None) => Ok(value),
        }
    }

    /// A new buffer of `len` elements of `dtype` (contents undefined).
    pub fn alloc(&self, len: usize, dtype: DType) -> Result<WgpuBuf> {
        let class = size_class(crate::buffer::storage_bytes(len, dtype)? as usize);
        let most = self.limits.max_storage_buffer_binding_size;
        if class as u64 > most {
            return Err(Error::Device {
                backend: "wgpu".into(),
                op: "allocate".into(),
                reason: format!(
                    "{class} bytes exceed the adapter's largest storage binding ({most} bytes)"
                ),
                kind: DeviceErrorKind::OutOfMemory,
            });
        }
        let block = self.pool.take(class, |bytes| {
            if let Some(how) = (crate::params::params().raw_memory.as_ref())
                .filter(|how| bytes as u64 >= how.min_bytes.max(1))
            {
                if let Some(buffer) =
                    crate::raw_memory::create_buffer(&self.device, bytes as u64, how)?
                {
                    if how.clear {
                        // Submitted now: an upload into the buffer goes
                        // with the next submission, after this one.
                        let mut encoder = self.device.create_command_encoder(&Default::default());
                        encoder.clear_buffer(&buffer, 0, None);
                        self.queue.submit([encoder.finish()]);
                    }
                    return Ok(buffer);
                }
            }
            self.checked("allocate", DeviceErrorKind::OutOfMemory, || {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: bytes as u64,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_SRC
                        | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
        })?;
        Ok(WgpuBuf::new(block, class, (len, dtype), "wgpu", &self.pool))
    }

    /// Records commands with `record` into the pending command buffer,
    /// submitting it once it holds 16.
    pub fn record(&self, record: impl FnOnce(&mut wgpu::CommandEncoder)) -> Result<()> {
        self.with_pending(|p| {
            p.pass = None;
            record(&mut p.encoder);
        })
    }

    /// Records one dispatch (or other compute work) by `fill`: into the
    /// batch's open compute pass (wgpu places the barriers between its
    /// dispatches), or into a pass of its own when profiling (each pass is
    /// timed) or with `GEARBOX_WGPU_SHARED_PASS=0`.
    pub fn compute_pass(&self, fill: impl FnOnce(&mut wgpu::ComputePass<'_>)) -> Result<()> {
        let shared = self.timer.is_none() && crate::params::params().shared_pass;
        self.with_pending(|p| {
            if shared {
                let pass = p.pass.get_or_insert_with(|| {
                    p.encoder
                        .begin_compute_pass(&wgpu::ComputePassDescriptor::default())
                        .forget_lifetime()
                });
                fill(pass);
                return;
            }
            p.pass = None;
            let timestamp_writes = self.timer.as_ref().and_then(|t| {
                let writes = t.writes(p.timed);
                p.timed += u32::from(writes.is_some());
                writes
            });
            let mut pass = p.encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes,
            });
            fill(&mut pass);
        })
    }

    /// Runs `record` on the pending work (started if there is none), then
    /// submits it once it holds [`LAUNCHES_PER_SUBMIT`] commands.
    fn with_pending(&self, record: impl FnOnce(&mut Pending)) -> Result<()> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let p = pending.get_or_insert_with(|| Pending {
            encoder: self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor::default()),
            pass: None,
            count: 0,
            timed: 0,
        });
        record(p);
        p.count += 1;
        if p.count >= LAUNCHES_PER_SUBMIT {
            self.submit_pending(&mut pending)?;
        }
        Ok(())
    }

    /// Submits the recorded launches. Every transfer flushes first: a
    /// buffer write lands at the next submission, before its command
    /// buffers, so a pool block freed by a recorded launch and reused for
    /// an upload must not be written before that launch ran. When
    /// profiling, the batch's timestamps are read back (waiting for it).
    pub fn flush(&self) -> Result<()> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        self.submit_pending(&mut pending)
    }

    /// Submits `pending`'s work, if any. The caller holds the pending lock
    /// through the submission: a buffer write queued by another thread in
    /// between would land before this work and overwrite a block it still
    /// reads.
    fn submit_pending(&self, pending: &mut Option<Pending>) -> Result<()> {
        let Some(mut p) = pending.take() else {
            return Ok(());
        };
        p.pass = None;
        let timer = self.timer.as_ref().filter(|_| p.timed > 0);
        if let Some(t) = timer {
            t.resolve(&mut p.encoder, p.timed);
        }
        self.checked("kernel launch", DeviceErrorKind::Fault, || {
            self.queue.submit([p.encoder.finish()]);
        })?;
        match timer {
            Some(t) => t.collect(&self.device, p.timed),
            None => Ok(()),
        }
    }

    /// Runs `write`, which queues buffer writes, after submitting the
    /// launches recorded so far and before any recorded later. The pending
    /// lock is held from that submission until `write` returns: otherwise
    /// another thread could record a launch that reads a block, free the
    /// block, and have a write (which lands ahead of that launch's
    /// submission) overwrite it: threads saw each other's values.
    fn ordered<T>(&self, write: impl FnOnce() -> Result<T>) -> Result<T> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        self.submit_pending(&mut pending)?;
        write()
    }

    /// Queues `bytes` into the start of `buf` (inside [`Device::ordered`]).
    fn queue_write(&self, buf: &WgpuBuf, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.queue.write_buffer(buf.block(), 0, bytes);
        }
    }

    /// Seconds the device spent in passes, when profiling.
    pub fn compute_seconds(&self) -> Option<f64> {
        self.timer.as_ref().map(|t| t.seconds())
    }

    /// Copies host values to a new device buffer.
    pub fn upload(&self, host: &HostBuffer) -> Result<WgpuBuf> {
        let bytes = crate::buffer::to_storage(host)?;
        self.ordered(|| {
            let buf = self.alloc(host.len(), host.dtype())?;
            self.queue_write(&buf, &bytes);
            Ok(buf)
        })
    }

    /// Copies host values into an existing buffer of at least their size,
    /// after the launches recorded before it (a resident handle's update).
    pub fn write_into(&self, buf: &WgpuBuf, host: &HostBuffer) -> Result<()> {
        let bytes = crate::buffer::to_storage(host)?;
        self.ordered(|| {
            self.queue_write(buf, &bytes);
            Ok(())
        })
    }

    /// A uniform buffer holding `values`: made once per distinct contents
    /// and kept (a buffer's creation costs a driver allocation; the counts
    /// of a loop's launches repeat). Uniform buffers are never written after
    /// creation, so one may serve launches still in flight.
    pub fn uniform(&self, values: &[u8]) -> wgpu::Buffer {
        let mut kept = self.uniforms.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = kept.get(values) {
            return b.clone();
        }
        if kept.len() >= UNIFORMS_KEPT {
            kept.clear();
        }
        let buffer = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: values,
                usage: wgpu::BufferUsages::UNIFORM,
            });
        kept.insert(values.to_vec(), buffer.clone());
        buffer
    }

    /// Copies a device buffer back to the host (waits for the queue).
    pub fn download(&self, buf: &WgpuBuf) -> Result<HostBuffer> {
        self.flush()?;
        let size = crate::buffer::storage_bytes(buf.len(), buf.dtype())?.max(4);
        // Mappable buffers are host memory the driver zeroes on creation:
        // kept by size class and reused, as device blocks are.
        let class = size_class(size as usize);
        let staging = self.staging.take(class, |bytes| {
            self.checked("download", DeviceErrorKind::OutOfMemory, || {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: bytes as u64,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
        })?;
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_buffer_to_buffer(buf.block(), 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        let mapped = self.wait().and_then(|()| {
            rx.recv()
                .map_err(|_| fault("download", "the mapping never completed"))?
                .map_err(|e| fault("download", e))
        });
        let host = mapped.and_then(|()| {
            let host = staging
                .get_mapped_range(..)
                .map_err(|e| fault("download", e))
                .and_then(|view| crate::buffer::from_storage(&view, buf.len(), buf.dtype()));
            staging.unmap();
            host
        });
        self.staging.give_back(staging, class);
        host
    }

    /// Waits until the queue's work is done: polls the fence (yielding
    /// between polls) for up to `GEARBOX_WGPU_SPIN_US` (1 ms on a GPU),
    /// then blocks until the driver signals it. A blocking wait wakes tens
    /// of microseconds after the work ends, which short work pays in full
    /// (CUDA's default synchronization spins likewise). A CPU adapter
    /// never spins: its work runs on the cores a spinning thread would
    /// take.
    pub fn wait(&self) -> Result<()> {
        self.flush()?;
        let start = std::time::Instant::now();
        let spin_us = crate::params::params()
            .spin_us
            .unwrap_or(if self.cpu_adapter { 0 } else { DEFAULT_SPIN_US });
        let spin = std::time::Duration::from_micros(spin_us);
        while start.elapsed() < spin {
            let status = self
                .device
                .poll(wgpu::PollType::Poll)
                .map_err(|e| fault("synchronize", e))?;
            if status.is_queue_empty() {
                return Ok(());
            }
            std::thread::yield_now();
        }
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| fault("synchronize", e))
    }
}
