//! Device buffers of the OpenCL backend and their storage layout: every
//! dtype as it is in host memory (bool as one byte, 0 or 1). Buffers come
//! from the shared caching pool ([`gearbox_core::runtime::pool`]) in size
//! classes of at least 256 bytes, so none is empty (OpenCL has no empty
//! buffers) and a loop of equal sizes stops asking the driver for memory.

use gearbox_core::runtime::pool::Pooled;
use gearbox_core::{DType, HostBuffer};
use opencl3::memory::{Buffer, ClMem};
use opencl3::types::cl_mem;

/// A buffer on the OpenCL device: a block of the pool's
/// ([`Pooled::block`] is the OpenCL buffer, at least the elements' size);
/// dropping it returns the block to the pool.
pub type ClBuf = Pooled<Buffer<u8>>;

/// The `cl_mem` handle of `buf`, as kernel arguments take it.
pub fn mem(buf: &ClBuf) -> cl_mem {
    buf.block().get()
}

/// The device bytes of `host` (OpenCL devices Gearbox drives are
/// little-endian, as the device check makes sure): numbers as they are in
/// memory, bools as bytes 0 or 1.
pub fn to_storage(host: &HostBuffer) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    match host {
        HostBuffer::F32(v) => Cow::Borrowed(bytemuck::cast_slice(v)),
        HostBuffer::F64(v) => Cow::Borrowed(bytemuck::cast_slice(v)),
        HostBuffer::I64(v) => Cow::Borrowed(bytemuck::cast_slice(v)),
        HostBuffer::Bool(v) => Cow::Owned(v.iter().map(|&b| u8::from(b)).collect()),
    }
}

/// A host buffer of `len` elements of `dtype` and its bytes, for a read
/// from the device to fill in place.
pub fn host_for(len: usize, dtype: DType) -> HostBuffer {
    match dtype {
        DType::F32 => HostBuffer::F32(vec![0.0; len]),
        DType::F64 => HostBuffer::F64(vec![0.0; len]),
        DType::I64 => HostBuffer::I64(vec![0; len]),
        DType::Bool => HostBuffer::Bool(vec![false; len]),
    }
}

/// The bytes of a numeric host buffer, to be filled from the device; `None`
/// for bools (whose bytes Rust requires to be 0 or 1, so they are read
/// through a byte buffer and checked).
pub fn host_bytes_mut(host: &mut HostBuffer) -> Option<&mut [u8]> {
    match host {
        HostBuffer::F32(v) => Some(bytemuck::cast_slice_mut(v)),
        HostBuffer::F64(v) => Some(bytemuck::cast_slice_mut(v)),
        HostBuffer::I64(v) => Some(bytemuck::cast_slice_mut(v)),
        HostBuffer::Bool(_) => None,
    }
}
