//! CUDA device memory from the shared caching pool
//! ([`gearbox_core::runtime::pool`]): blocks are `cuMemAlloc`ed byte slabs
//! of a size class, kept when freed and handed out again.

use std::any::Any;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::runtime::pool::{size_class, BlockPool};
use gearbox_core::{DType, DeviceErrorKind, Error, Result};

/// The pool of one device.
#[derive(Debug)]
pub struct Pool {
    stream: Arc<CudaStream>,
    /// The cached blocks and the counters.
    pub blocks: BlockPool<CudaSlice<u8>>,
}

impl Pool {
    /// A pool that caches up to `cap` bytes of freed blocks.
    pub fn new(stream: Arc<CudaStream>, cap: u64) -> Arc<Pool> {
        Arc::new(Pool {
            stream,
            blocks: BlockPool::new(cap),
        })
    }

    /// (bytes in use, bytes cached).
    pub fn stats(&self) -> (u64, u64) {
        self.blocks.stats()
    }

    /// A buffer of `len` elements of `dtype` (uninitialized).
    pub fn alloc(self: &Arc<Self>, len: usize, dtype: DType) -> Result<CudaBuf> {
        let class = size_class(len * dtype.size_bytes());
        let slab = self.blocks.take(class, |bytes| {
            // SAFETY: the block is written by a copy or a kernel before any read.
            unsafe { self.stream.alloc::<u8>(bytes) }.map_err(|e| Error::Device {
                backend: "cuda".into(),
                op: "allocate".into(),
                reason: format!("out of memory allocating {bytes} bytes: {e}"),
                kind: DeviceErrorKind::OutOfMemory,
            })
        })?;
        Ok(CudaBuf {
            slab: Some(slab),
            class,
            len,
            dtype,
            pool: Arc::clone(self),
        })
    }
}

/// A device buffer from the pool; dropping it returns the block to the pool.
pub struct CudaBuf {
    slab: Option<CudaSlice<u8>>,
    class: usize,
    len: usize,
    dtype: DType,
    pool: Arc<Pool>,
}

impl std::fmt::Debug for CudaBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CudaBuf({} x {}, {} bytes)",
            self.len, self.dtype, self.class
        )
    }
}

impl CudaBuf {
    /// The device memory (at least `len * dtype.size_bytes()` bytes).
    pub fn slab(&self) -> &CudaSlice<u8> {
        self.slab.as_ref().expect("a live buffer has its block")
    }

    /// The device memory, writable.
    pub fn slab_mut(&mut self) -> &mut CudaSlice<u8> {
        self.slab.as_mut().expect("a live buffer has its block")
    }
}

impl Drop for CudaBuf {
    fn drop(&mut self) {
        if let Some(s) = self.slab.take() {
            self.pool.blocks.give_back(s, self.class);
        }
    }
}

impl DeviceBuffer for CudaBuf {
    fn backend(&self) -> &'static str {
        "cuda"
    }
    fn len(&self) -> usize {
        self.len
    }
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
