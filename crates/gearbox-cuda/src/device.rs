//! One CUDA device in use: context, stream, memory pool, cuBLAS and cuSOLVER
//! handles, and host transfers. Created on first real use (after the probe
//! passed), never while only checking whether CUDA is present.

use std::sync::{Arc, Mutex};

use cudarc::cublas::CudaBlas;
use cudarc::cusolver::DnHandle;
use cudarc::driver::{sys, CudaContext, CudaStream, DevicePtr};
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::DeviceInfo;
use gearbox_core::{DeviceErrorKind, Error, HostBuffer, Result};

use crate::pool::{CudaBuf, Pool};

/// An error of the CUDA backend, with the step it happened in.
pub fn fault(op: &str, e: impl std::fmt::Display) -> Error {
    let reason = e.to_string();
    let kind = if reason.contains("OUT_OF_MEMORY") || reason.contains("out of memory") {
        DeviceErrorKind::OutOfMemory
    } else {
        DeviceErrorKind::Fault
    };
    Error::Device {
        backend: "cuda".into(),
        op: op.into(),
        reason,
        kind,
    }
}

/// The device and everything bound to it.
pub struct Device {
    /// The context.
    pub ctx: Arc<CudaContext>,
    /// The one stream all work goes to, in order.
    pub stream: Arc<CudaStream>,
    /// Device memory.
    pub pool: Arc<Pool>,
    /// cuBLAS, bound to `stream`.
    pub blas: Mutex<CudaBlas>,
    /// cuSOLVER dense, bound to `stream`.
    pub solver: Mutex<DnHandle>,
    /// What the device is.
    pub info: DeviceInfo,
    /// Compute capability (major, minor).
    pub cc: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Driver version as the driver reports it (e.g. 13000).
    pub driver_version: i32,
    /// Pinned buffers that large uploads and downloads go through.
    staging: crate::staging::Staging,
}

/// Whether float64 runs at full rate (at least half the float32 rate): the
/// data-centre parts (compute capability x.0 from 6.0 on).
pub fn full_rate_f64(cc: (i32, i32)) -> bool {
    cc.0 >= 6 && cc.1 == 0
}

impl Device {
    /// Opens device 0.
    pub fn open() -> Result<Device> {
        crate::loader::load().map_err(|e| fault("load libraries", e))?;
        let ctx = CudaContext::new(0).map_err(|e| fault("create context", e))?;
        // One stream, used in order: cudarc's cross-stream event tracking is not needed.
        // SAFETY: no other stream touches these buffers.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let name = ctx.name().map_err(|e| fault("device name", e))?;
        let cc = ctx
            .compute_capability()
            .map_err(|e| fault("compute capability", e))?;
        let memory = ctx.total_mem().map_err(|e| fault("device memory", e))? as u64;
        let sm_count = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| fault("SM count", e))? as u32;
        let mut driver_version = 0i32;
        // SAFETY: a valid out-pointer; the driver is loaded.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) };
        let blas = CudaBlas::new(stream.clone()).map_err(|e| fault("create cuBLAS handle", e))?;
        if crate::params::params().tf32 {
            // SAFETY: a live handle; TF32 is opted into explicitly.
            unsafe {
                cudarc::cublas::sys::cublasSetMathMode(
                    *blas.handle(),
                    cudarc::cublas::sys::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH,
                )
            };
        }
        let solver =
            DnHandle::new(stream.clone()).map_err(|e| fault("create cuSOLVER handle", e))?;
        // Cache up to a quarter of device memory in freed blocks.
        let pool = Pool::new(stream.clone(), memory / 4);
        pool.blocks.limit_from_env("cuda", Some(memory))?;
        let info = DeviceInfo {
            name,
            memory_bytes: memory,
            full_rate_f64: full_rate_f64(cc),
            compute_capability: Some(format!("{}.{}", cc.0, cc.1)),
            driver: Some(format!(
                "{}.{}",
                driver_version / 1000,
                (driver_version % 1000) / 10
            )),
        };
        Ok(Device {
            ctx,
            stream,
            pool,
            blas: Mutex::new(blas),
            solver: Mutex::new(solver),
            info,
            cc,
            sm_count,
            driver_version,
            staging: Default::default(),
        })
    }

    /// The raw device address of a buffer.
    pub fn ptr(&self, b: &CudaBuf) -> u64 {
        b.block().device_ptr(&self.stream).0
    }

    /// Copies host values to a new device buffer.
    pub fn upload(&self, host: &HostBuffer) -> Result<CudaBuf> {
        let mut buf = self.pool.alloc(host.len(), host.dtype())?;
        let bytes = host_bytes(host);
        let staged = self
            .staging
            .upload(&self.ctx, &self.stream, bytes, self.ptr(&buf))
            .map_err(|e| fault("upload", e))?;
        if !staged && !bytes.is_empty() {
            let mut view = buf.block_mut().slice_mut(0..bytes.len());
            self.stream
                .memcpy_htod(bytes, &mut view)
                .map_err(|e| fault("upload", e))?;
        }
        Ok(buf)
    }

    /// Copies host values into an existing buffer of at least their size,
    /// in order with the work queued before it (a resident handle's
    /// update).
    pub fn write_into(&self, buf: &CudaBuf, host: &HostBuffer) -> Result<()> {
        let bytes = host_bytes(host);
        if bytes.is_empty() {
            return Ok(());
        }
        let (dst, _sync) = buf.block().device_ptr(&self.stream);
        // SAFETY: `dst` points at a live block of at least `bytes.len()`
        // bytes (its size class holds the buffer's elements, checked by
        // the caller against `host`); a copy from pageable memory returns
        // once `bytes` has been staged, so the slice may go after it.
        unsafe { cudarc::driver::result::memcpy_htod_async(dst, bytes, self.stream.cu_stream()) }
            .map_err(|e| fault("upload", e))
    }

    /// Copies a device buffer to the host (waits for queued work). Host
    /// memory is reserved first: a result larger than the host can hold is
    /// [`gearbox_core::Error::OutOfMemory`], not an abort.
    pub fn download(&self, buf: &CudaBuf) -> Result<HostBuffer> {
        let n = buf.len();
        let mut host = HostBuffer::filled("cuda download", buf.dtype(), n, 0.0)?;
        let bytes = host_bytes_mut(&mut host);
        let src = self.ptr(buf);
        let staged = self
            .staging
            .download(&self.ctx, &self.stream, src, bytes)
            .map_err(|e| fault("download", e))?;
        if !staged && !bytes.is_empty() {
            let view = buf.block().slice(0..bytes.len());
            self.stream
                .memcpy_dtoh(&view, bytes)
                .map_err(|e| fault("download", e))?;
        }
        self.stream
            .synchronize()
            .map_err(|e| fault("download", e))?;
        Ok(host)
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| fault("synchronize", e))
    }
}

/// The bytes of a host buffer (bool is one byte holding 0 or 1, as on the device).
pub fn host_bytes(h: &HostBuffer) -> &[u8] {
    fn bytes<T>(v: &[T]) -> &[u8] {
        // SAFETY: plain-old-data element types; the length covers exactly the slice.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
    }
    match h {
        HostBuffer::Bool(v) => bytes(v),
        HostBuffer::I64(v) => bytes(v),
        HostBuffer::F32(v) => bytes(v),
        HostBuffer::F64(v) => bytes(v),
    }
}

/// The bytes of a host buffer, writable. Device kernels write bool as 0 or 1,
/// which are the only byte values a Rust `bool` may hold.
fn host_bytes_mut(h: &mut HostBuffer) -> &mut [u8] {
    fn bytes<T>(v: &mut [T]) -> &mut [u8] {
        // SAFETY: as in `host_bytes`; every byte pattern written is valid for
        // f32, f64 and i64, and bool receives 0 or 1 from the device.
        unsafe {
            std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v))
        }
    }
    match h {
        HostBuffer::Bool(v) => bytes(v),
        HostBuffer::I64(v) => bytes(v),
        HostBuffer::F32(v) => bytes(v),
        HostBuffer::F64(v) => bytes(v),
    }
}
