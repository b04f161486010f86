//! Device buffers of the wgpu backend and their storage layout: f32, f64
//! and i64 as they are in host memory, bool as one `u32` (0 or 1) per
//! element (WGSL has no bytes).
//! Buffers come from the shared caching pool
//! ([`gearbox_core::runtime::pool`]) in size classes of at least 256 bytes,
//! so none is empty (bindings cannot be) and a loop of equal sizes stops
//! asking the driver for memory.

use std::sync::Arc;

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::pool::BlockPool;
use gearbox_core::{DType, HostBuffer, Result};

use crate::device::fault;

/// A buffer on the wgpu device; dropping it returns its block to the pool.
pub struct WgpuBuf {
    block: Option<wgpu::Buffer>,
    class: usize,
    len: usize,
    dtype: DType,
    pool: Arc<BlockPool<wgpu::Buffer>>,
}

impl WgpuBuf {
    /// `len` elements of `dtype` in `block`, a block of `class` bytes taken
    /// from `pool`.
    pub fn new(
        block: wgpu::Buffer,
        class: usize,
        len: usize,
        dtype: DType,
        pool: &Arc<BlockPool<wgpu::Buffer>>,
    ) -> Self {
        WgpuBuf {
            block: Some(block),
            class,
            len,
            dtype,
            pool: Arc::clone(pool),
        }
    }

    /// The wgpu buffer (its size is the block's: at least the elements').
    pub fn buffer(&self) -> &wgpu::Buffer {
        self.block.as_ref().expect("a live buffer has its block")
    }
}

impl Drop for WgpuBuf {
    fn drop(&mut self) {
        if let Some(b) = self.block.take() {
            self.pool.give_back(b, self.class);
        }
    }
}

impl std::fmt::Debug for WgpuBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "WgpuBuf({} x {}, {} bytes)",
            self.len, self.dtype, self.class
        )
    }
}

impl DeviceBuffer for WgpuBuf {
    fn backend(&self) -> &'static str {
        "wgpu"
    }

    fn len(&self) -> usize {
        self.len
    }

    fn dtype(&self) -> DType {
        self.dtype
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Bytes one element of `dtype` takes on the device (bool as `u32`).
pub fn element_bytes(dtype: DType) -> usize {
    match dtype {
        DType::F32 | DType::Bool => 4,
        DType::F64 | DType::I64 => 8,
    }
}

/// Bytes `len` elements of `dtype` take on the device.
pub fn storage_bytes(len: usize, dtype: DType) -> Result<u64> {
    Ok(element_bytes(dtype) as u64 * len as u64)
}

/// The device bytes of `host` (every wgpu target is little-endian):
/// numbers as they are in memory, bools widened to `u32`.
pub fn to_storage(host: &HostBuffer) -> Result<std::borrow::Cow<'_, [u8]>> {
    match host {
        HostBuffer::F32(v) => Ok(std::borrow::Cow::Borrowed(bytemuck::cast_slice(v))),
        HostBuffer::F64(v) => Ok(std::borrow::Cow::Borrowed(bytemuck::cast_slice(v))),
        HostBuffer::I64(v) => Ok(std::borrow::Cow::Borrowed(bytemuck::cast_slice(v))),
        HostBuffer::Bool(v) => {
            let words: Vec<u32> = v.iter().map(|&b| b as u32).collect();
            Ok(std::borrow::Cow::Owned(
                bytemuck::cast_slice(&words).to_vec(),
            ))
        }
    }
}

/// `len` elements of `dtype` from device bytes.
pub fn from_storage(bytes: &[u8], len: usize, dtype: DType) -> Result<HostBuffer> {
    let size = storage_bytes(len, dtype)? as usize;
    let bytes = bytes.get(..size).ok_or_else(|| {
        fault(
            "download",
            format!("{size} bytes expected, {} read", bytes.len()),
        )
    })?;
    match dtype {
        DType::F32 => Ok(HostBuffer::F32(bytemuck::pod_collect_to_vec(bytes))),
        DType::F64 => Ok(HostBuffer::F64(bytemuck::pod_collect_to_vec(bytes))),
        DType::I64 => Ok(HostBuffer::I64(bytemuck::pod_collect_to_vec(bytes))),
        DType::Bool => Ok(HostBuffer::Bool(
            bytemuck::pod_collect_to_vec::<u8, u32>(bytes)
                .into_iter()
                .map(|w| w != 0)
                .collect(),
        )),
    }
}
