//! The OpenCL device: the ICD loader found at run time, every platform's
//! devices ranked and one chosen ([`gearbox_core::runtime::choice`]), the
//! context and in-order queue opened on it, buffers moved to and from the
//! host, and OpenCL's error codes turned into Gearbox errors.

use std::sync::Arc;

use gearbox_core::runtime::backend::DeviceInfo;
use gearbox_core::runtime::choice::{self, Candidate, ChoiceNames};
use gearbox_core::runtime::pool::{size_class, BlockPool, MemoryStats};
use gearbox_core::{DType, DeviceErrorKind, Error, HostBuffer, Result};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device as ClDevice, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU};
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_device_id, CL_BLOCKING};

use gearbox_core::runtime::backend::DeviceBuffer;

use crate::buffer::{host_bytes_mut, host_for, to_storage, ClBuf};

/// An error of the OpenCL backend in step `op`.
pub(crate) fn fault(op: &str, reason: impl std::fmt::Display) -> Error {
    Error::Device {
        backend: "opencl".into(),
        op: op.into(),
        reason: reason.to_string(),
        kind: DeviceErrorKind::Fault,
    }
}

/// An OpenCL error code of step `op` as a Gearbox error (its name, e.g.
/// `CL_OUT_OF_RESOURCES`); allocation failures are out-of-memory errors,
/// which the pool answers by emptying its cache and trying again.
pub(crate) fn cl_error(op: &str) -> impl Fn(opencl3::error_codes::ClError) -> Error + '_ {
    move |e| {
        let kind = match e.0 {
            opencl3::error_codes::CL_MEM_OBJECT_ALLOCATION_FAILURE
            | opencl3::error_codes::CL_OUT_OF_RESOURCES
            | opencl3::error_codes::CL_OUT_OF_HOST_MEMORY => DeviceErrorKind::OutOfMemory,
            _ => DeviceErrorKind::Fault,
        };
        Error::Device {
            backend: "opencl".into(),
            op: op.into(),
            reason: format!("{e} ({})", e.0),
            kind,
        }
    }
}

/// The environment variables of the device choice.
const CHOICE: ChoiceNames = ChoiceNames {
    pick: "GEARBOX_OPENCL_DEVICE",
    allow_cpu: "GEARBOX_OPENCL_ALLOW_CPU",
    noun: "device",
};

/// Whether the ICD loader could be loaded (`libOpenCL.so.1`, or the paths
/// in `OPENCL_DYLIB_PATH`, `;`-separated), or why not.
pub fn loader() -> std::result::Result<(), String> {
    match cl3::load_library() {
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "no OpenCL ICD loader (libOpenCL.so.1: {e}); install ocl-icd-libopencl1 and a driver"
        )),
    }
}

/// One device an OpenCL platform offers, as enumeration sees it.
#[derive(Debug, Clone)]
pub struct Found {
    /// The device handle.
    pub id: cl_device_id,
    /// The device's name.
    pub name: String,
    /// The platform's name (`NVIDIA CUDA`, `Portable Computing Language`).
    pub platform: String,
    /// The device's OpenCL version string.
    pub version: String,
    /// The driver's version string.
    pub driver: String,
    /// Whether it is a CPU device.
    pub cpu: bool,
    /// Its place in the preference order of device types: GPUs first,
    /// then accelerators, other devices, CPUs last.
    pub rank: u8,
    /// Whether it has `cl_khr_fp64`.
    pub fp64: bool,
    /// Global memory in bytes.
    pub memory: u64,
    /// Compute units.
    pub compute_units: u32,
    /// Whether it stores numbers little-endian (Gearbox's buffers are).
    pub little_endian: bool,
}

impl Found {
    /// Its row name in the status table.
    pub fn describe(&self) -> String {
        format!(
            "{} ({}, {}{})",
            self.name,
            self.platform,
            self.version.trim(),
            if self.fp64 { ", cl_khr_fp64" } else { "" }
        )
    }
}

/// Every device of every platform, GPUs first, then accelerators, then
/// CPUs; enumerated anew on every call (the runtime probes in a forked
/// child, where handles made before the fork may not be valid).
pub fn all_devices() -> Result<Vec<Found>> {
    loader().map_err(|why| fault("find device", why))?;
    let platforms = opencl3::platform::get_platforms().map_err(|e| {
        fault(
            "find device",
            format!("the ICD loader lists no platform ({e}): no OpenCL driver is registered (OCL_ICD_VENDORS, /etc/OpenCL/vendors)"),
        )
    })?;
    let mut found = Vec::new();
    for p in platforms {
        let pname = p.name().unwrap_or_default();
        let Ok(ids) = p.get_devices(CL_DEVICE_TYPE_ALL) else {
            continue;
        };
        for id in ids {
            let d = ClDevice::new(id);
            let extensions = d.extensions().unwrap_or_default();
            let kind = d.dev_type().unwrap_or(0);
            found.push(Found {
                id,
                name: d.name().unwrap_or_else(|_| "unnamed device".into()),
                platform: pname.clone(),
                version: d.version().unwrap_or_default(),
                driver: d.driver_version().unwrap_or_default(),
                cpu: kind & CL_DEVICE_TYPE_CPU != 0,
                rank: rank(kind),
                fp64: extensions.split_whitespace().any(|e| e == "cl_khr_fp64"),
                memory: d.global_mem_size().unwrap_or(0),
                compute_units: d.max_compute_units().unwrap_or(1),
                little_endian: d.endian_little().unwrap_or(true),
            });
        }
    }
    found.sort_by_key(|f| f.rank);
    Ok(found)
}

/// The preference of a device type (`CL_DEVICE_TYPE_*` bits): GPUs
/// first, CPUs last.
fn rank(kind: opencl3::device::cl_device_type) -> u8 {
    use opencl3::device::{CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_GPU};
    if kind & CL_DEVICE_TYPE_GPU != 0 {
        0
    } else if kind & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        1
    } else if kind & CL_DEVICE_TYPE_CPU != 0 {
        3
    } else {
        2
    }
}

fn candidates(all: &[Found]) -> Vec<Candidate> {
    all.iter()
        .map(|f| Candidate {
            name: f.describe(),
            cpu: f.cpu,
        })
        .collect()
}

fn cpu_allowed() -> bool {
    crate::params::params().allow_cpu || ALLOW_CPU.load(std::sync::atomic::Ordering::Relaxed)
}

static ALLOW_CPU: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets the backend drive a CPU device (pocl): off by default, as it only
/// competes with the CPU backend for the same cores; tests turn it on to
/// check the backend where no GPU is. `GEARBOX_OPENCL_ALLOW_CPU=1` does the
/// same.
pub fn allow_cpu_devices(allow: bool) {
    ALLOW_CPU.store(allow, std::sync::atomic::Ordering::Relaxed);
}

/// The device the backend drives, or why there is none.
pub fn best_device() -> Result<Found> {
    let all = all_devices()?;
    let wanted = crate::params::params().device.clone();
    match choice::choose(CHOICE, &candidates(&all), wanted.as_deref(), cpu_allowed()) {
        Ok(i) => Ok(all[i].clone()),
        Err(why) if why.is_empty() => Err(fault(
            "find device",
            "no device: the OpenCL platforms list none",
        )),
        Err(why) => Err(fault("find device", why)),
    }
}

/// The devices the backend sees and does not drive, each with why and how
/// to pick it (empty when it drives none).
pub fn other_devices() -> Vec<(DeviceInfo, String)> {
    let Ok(all) = all_devices() else {
        return Vec::new();
    };
    let ranked = candidates(&all);
    let wanted = crate::params::params().device.clone();
    let Ok(driven) = choice::choose(CHOICE, &ranked, wanted.as_deref(), cpu_allowed()) else {
        return Vec::new();
    };
    choice::others(CHOICE, &ranked, driven, cpu_allowed())
        .into_iter()
        .map(|(i, why)| (device_info(&all[i]), why))
        .collect()
}

/// What `f` is, for the runtime: its name with platform and version,
/// global memory, whether f64 is full rate (`GEARBOX_OPENCL_FULL_RATE_F64`
/// overrides the judgement by name), the driver.
pub fn device_info(f: &Found) -> DeviceInfo {
    let full_rate = f.fp64
        && crate::params::params()
            .full_rate_f64
            .unwrap_or_else(|| choice::full_rate_f64_by_name(&f.name, f.cpu));
    DeviceInfo {
        name: f.describe(),
        memory_bytes: f.memory,
        full_rate_f64: full_rate,
        compute_capability: None,
        driver: Some(f.driver.clone()),
    }
}

/// The open device: context, in-order queue and buffer pool.
pub struct Device {
    /// What the runtime is told about it.
    pub info: DeviceInfo,
    /// Whether it has float64 (`cl_khr_fp64`).
    pub fp64: bool,
    /// Whether it is a CPU device.
    pub cpu: bool,
    /// Compute units.
    pub compute_units: u32,
    /// The largest single buffer, in bytes.
    pub max_alloc: u64,
    /// The options every program is built with (OpenCL C 1.2, and
    /// correctly rounded f32 division and square root where offered).
    pub build_options: String,
    /// The device.
    pub cl: ClDevice,
    /// The context holding the buffers and programs.
    pub context: Context,
    /// The in-order queue every command goes through.
    pub queue: CommandQueue,
    /// Freed blocks kept for reuse.
    pub pool: Arc<BlockPool<Buffer<u8>>>,
}

/// Build options: OpenCL C 1.2, and correctly rounded f32 division and
/// square root where the device offers them (the default allows 2.5 and 3
/// ulps; the CPU reference and CUDA round correctly).
fn build_options(dev: &ClDevice) -> String {
    let mut o = String::from("-cl-std=CL1.2");
    let single = dev.single_fp_config().unwrap_or(0);
    if single & opencl3::device::CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0 {
        o.push_str(" -cl-fp32-correctly-rounded-divide-sqrt");
    }
    o
}

impl Device {
    /// Opens the best device ([`best_device`]).
    pub fn open() -> Result<Device> {
        let f = best_device()?;
        if !f.little_endian {
            return Err(fault(
                "open device",
                format!(
                    "{} is big-endian; Gearbox's buffers are little-endian",
                    f.name
                ),
            ));
        }
        let dev = ClDevice::new(f.id);
        let context = Context::from_device(&dev).map_err(cl_error("create context"))?;
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, 0).map_err(cl_error("create queue"))?;
        let pool = Arc::new(BlockPool::new(crate::params::params().pool_bytes));
        pool.limit_from_env("opencl", Some(f.memory).filter(|&m| m > 0))?;
        Ok(Device {
            info: device_info(&f),
            fp64: f.fp64,
            cpu: f.cpu,
            compute_units: f.compute_units,
            max_alloc: dev.max_mem_alloc_size().unwrap_or(u64::MAX),
            build_options: build_options(&dev),
            cl: dev,
            context,
            queue,
            pool,
        })
    }

    /// A buffer of `len` elements of `dtype` (contents undefined).
    pub fn alloc(&self, len: usize, dtype: DType) -> Result<ClBuf> {
        let bytes = len
            .checked_mul(dtype.size_bytes())
            .ok_or_else(|| fault("alloc", format!("{len} elements of {dtype} overflow")))?;
        let class = size_class(bytes);
        if class as u64 > self.max_alloc {
            return Err(Error::Device {
                backend: "opencl".into(),
                op: "alloc".into(),
                reason: format!(
                    "{bytes} bytes exceed the device's largest buffer ({} bytes)",
                    self.max_alloc
                ),
                kind: DeviceErrorKind::OutOfMemory,
            });
        }
        let block = self.pool.take(class, |size| {
            // SAFETY: no host pointer is given; the context is valid.
            unsafe {
                Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, size, std::ptr::null_mut())
            }
            .map_err(cl_error("alloc"))
        })?;
        Ok(ClBuf::new(block, class, (len, dtype), "opencl", &self.pool))
    }

    /// Copies `host` to a new device buffer (waits for the copy).
    pub fn upload(&self, host: &HostBuffer) -> Result<ClBuf> {
        let mut buf = self.alloc(host.len(), host.dtype())?;
        let bytes = to_storage(host);
        if !bytes.is_empty() {
            self.write(&mut buf, 0, &bytes)?;
        }
        Ok(buf)
    }

    /// Copies host values into an existing buffer of at least their size,
    /// in order with the work queued before it (a resident handle's
    /// update; waits for the copy).
    pub fn write_into(&self, buf: &ClBuf, host: &HostBuffer) -> Result<()> {
        let bytes = to_storage(host);
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: a blocking write reads `bytes` before returning; the
        // memory object is written through the queue (the shared `&` is
        // the handle, not the memory), and the caller checked that `buf`
        // holds `host`'s elements (its size class is at least that).
        let event = unsafe {
            cl3::command_queue::enqueue_write_buffer(
                self.queue.get(),
                buf.block().get(),
                CL_BLOCKING,
                0,
                bytes.len(),
                bytes.as_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }
        .map_err(|code| cl_error("upload")(opencl3::error_codes::ClError(code)))?;
        drop(opencl3::event::Event::new(event));
        Ok(())
    }

    /// Writes `bytes` into `buf` from byte `offset` on, waiting for the copy.
    pub fn write(&self, buf: &mut ClBuf, offset: usize, bytes: &[u8]) -> Result<()> {
        let block = buf.block_mut();
        // SAFETY: a blocking write reads `bytes` before returning; the
        // buffer holds at least `offset + bytes.len()` bytes (its class).
        unsafe {
            self.queue
                .enqueue_write_buffer(block, CL_BLOCKING, offset, bytes, &[])
                .map_err(cl_error("upload"))?;
        }
        Ok(())
    }

    /// Copies `buf`'s elements to the host, after the work queued before.
    pub fn download(&self, buf: &ClBuf) -> Result<HostBuffer> {
        let mut host = host_for(buf.len(), buf.dtype());
        match host_bytes_mut(&mut host) {
            Some(bytes) => self.read(buf, bytes)?,
            None => {
                let mut bytes = vec![0u8; buf.len()];
                self.read(buf, &mut bytes)?;
                host = HostBuffer::Bool(bytes.iter().map(|&b| b != 0).collect());
            }
        }
        Ok(host)
    }

    /// Fills `bytes` from the start of `buf`, after the work queued before.
    fn read(&self, buf: &ClBuf, bytes: &mut [u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: a blocking read fills `bytes` before returning, after the
        // commands queued before it (the queue is in order); the buffer
        // holds at least `bytes.len()` bytes.
        unsafe {
            self.queue
                .enqueue_read_buffer(buf.block(), CL_BLOCKING, 0, bytes, &[])
                .map_err(cl_error("download"))?;
        }
        Ok(())
    }

    /// The device handle.
    pub fn id(&self) -> cl_device_id {
        self.cl.id()
    }

    /// Waits for every queued command.
    pub fn wait(&self) -> Result<()> {
        self.queue.finish().map_err(cl_error("synchronize"))
    }

    /// The pool's figures and the device's global memory
    /// (`CL_DEVICE_GLOBAL_MEM_SIZE`; OpenCL reports no free memory).
    pub fn memory(&self) -> MemoryStats {
        MemoryStats {
            device_total: Some(self.info.memory_bytes).filter(|&b| b > 0),
            ..self.pool.memory_stats()
        }
    }
}
