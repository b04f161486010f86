//! Device buffers of the wgpu backend and their storage layout: f32 as
//! is, bool as one `u32` (0 or 1) per element (WGSL has no bytes);
//! buffers hold at least one element, as bindings cannot be empty.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::{DType, HostBuffer, Result};

use crate::device::fault;

/// A buffer on the wgpu device.
pub struct WgpuBuf {
    /// The wgpu buffer (at least one element long).
    pub buffer: wgpu::Buffer,
    len: usize,
    dtype: DType,
    counter: Arc<AtomicU64>,
}

impl WgpuBuf {
    /// Wraps `buffer`, holding `len` elements of `dtype`, counted in
    /// `counter` while it lives.
    pub fn new(buffer: wgpu::Buffer, len: usize, dtype: DType, counter: &Arc<AtomicU64>) -> Self {
        counter.fetch_add(buffer.size(), Ordering::Relaxed);
        WgpuBuf {
            buffer,
            len,
            dtype,
            counter: Arc::clone(counter),
        }
    }
}

impl Drop for WgpuBuf {
    fn drop(&mut self) {
        self.counter
            .fetch_sub(self.buffer.size(), Ordering::Relaxed);
    }
}

impl std::fmt::Debug for WgpuBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WgpuBuf({} x {})", self.len, self.dtype)
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

/// Bytes a buffer of `len` elements of `dtype` takes on the device.
pub fn storage_bytes(len: usize, dtype: DType) -> Result<u64> {
    let element = match dtype {
        DType::F32 | DType::Bool => 4u64,
        other => {
            return Err(fault(
                "allocate",
                format!("{other} buffers are not supported by the wgpu backend"),
            ))
        }
    };
    Ok(element * len.max(1) as u64)
}

/// The device bytes of `host`.
pub fn to_storage(host: &HostBuffer) -> Result<Vec<u8>> {
    match host {
        HostBuffer::F32(v) => Ok(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        HostBuffer::Bool(v) => Ok(v.iter().flat_map(|&b| (b as u32).to_le_bytes()).collect()),
        other => Err(fault(
            "upload",
            format!(
                "{} buffers are not supported by the wgpu backend",
                other.dtype()
            ),
        )),
    }
}

/// `len` elements of `dtype` from device bytes.
pub fn from_storage(bytes: &[u8], len: usize, dtype: DType) -> Result<HostBuffer> {
    let words = bytes.chunks_exact(4).take(len);
    match dtype {
        DType::F32 => Ok(HostBuffer::F32(
            words
                .map(|w| f32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect(),
        )),
        DType::Bool => Ok(HostBuffer::Bool(
            words
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) != 0)
                .collect(),
        )),
        other => Err(fault(
            "download",
            format!("{other} buffers are not supported by the wgpu backend"),
        )),
    }
}
