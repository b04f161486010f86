//! Device buffers of the wgpu backend and their storage layout: f32, f64
//! and i64 as they are in host memory, bool as one `u32` (0 or 1) per
//! element (WGSL has no bytes).
//! Buffers come from the shared caching pool
//! ([`gearbox_core::runtime::pool`]) in size classes of at least 256 bytes,
//! so none is empty (bindings cannot be) and a loop of equal sizes stops
//! asking the driver for memory.

use gearbox_core::runtime::pool::Pooled;
use gearbox_core::{DType, HostBuffer, Result};

use crate::device::fault;

/// A buffer on the wgpu device: a block of the pool's ([`Pooled::block`] is
/// the wgpu buffer, at least the elements' size); dropping it returns the
/// block to the pool.
pub type WgpuBuf = Pooled<wgpu::Buffer>;

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
