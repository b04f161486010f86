//! Device buffers of the OpenCL backend and their storage layout: every
//! dtype as it is in host memory (bool as one byte, 0 or 1). Buffers come
//! from the shared caching pool ([`gearbox_core::runtime::pool`]) in size
//! classes of at least 256 bytes, so none is empty (OpenCL has no empty
//! buffers) and a loop of equal sizes stops asking the driver for memory.

use std::sync::Arc;

use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::pool::BlockPool;
use gearbox_core::{DType, HostBuffer};
use opencl3::memory::{Buffer, ClMem};
use opencl3::types::cl_mem;

/// A buffer on the OpenCL device; dropping it returns its block to the pool.
pub struct ClBuf {
    block: Option<Buffer<u8>>,
    class: usize,
    len: usize,
    dtype: DType,
    pool: Arc<BlockPool<Buffer<u8>>>,
}

impl ClBuf {
    /// `len` elements of `dtype` in `block`, a block of `class` bytes taken
    /// from `pool`.
    pub fn new(
        block: Buffer<u8>,
        class: usize,
        len: usize,
        dtype: DType,
        pool: &Arc<BlockPool<Buffer<u8>>>,
    ) -> Self {
        ClBuf {
            block: Some(block),
            class,
            len,
            dtype,
            pool: Arc::clone(pool),
        }
    }

    /// The OpenCL buffer (its size is the block's: at least the elements').
    pub fn buffer(&self) -> &Buffer<u8> {
        self.block.as_ref().expect("a live buffer has its block")
    }

    /// The OpenCL buffer, for writes into it.
    pub fn block_mut(&mut self) -> &mut Buffer<u8> {
        self.block.as_mut().expect("a live buffer has its block")
    }

    /// The `cl_mem` handle, as kernel arguments take it.
    pub fn mem(&self) -> cl_mem {
        self.buffer().get()
    }

    /// Bytes its elements take.
    pub fn bytes(&self) -> usize {
        self.len * self.dtype.size_bytes()
    }
}

impl Drop for ClBuf {
    fn drop(&mut self) {
        if let Some(b) = self.block.take() {
            self.pool.give_back(b, self.class);
        }
    }
}

impl std::fmt::Debug for ClBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ClBuf({} x {}, {} bytes)",
            self.len, self.dtype, self.class
        )
    }
}

impl DeviceBuffer for ClBuf {
    fn backend(&self) -> &'static str {
        "opencl"
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
