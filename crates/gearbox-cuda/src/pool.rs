//! CUDA device memory from the shared caching pool
//! ([`gearbox_core::runtime::pool`]): blocks are `cuMemAlloc`ed byte slabs
//! of a size class, kept when freed and handed out again.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};
use gearbox_core::runtime::pool::{size_class, BlockPool, Pooled};
use gearbox_core::{DType, DeviceErrorKind, Error, Result};

/// The pool of one device.
#[derive(Debug)]
pub struct Pool {
    stream: Arc<CudaStream>,
    /// The cached blocks and the counters.
    pub blocks: Arc<BlockPool<CudaSlice<u8>>>,
}

impl Pool {
    /// A pool that caches up to `cap` bytes of freed blocks.
    pub fn new(stream: Arc<CudaStream>, cap: u64) -> Arc<Pool> {
        Arc::new(Pool {
            stream,
            blocks: Arc::new(BlockPool::new(cap)),
        })
    }

    /// A buffer of `len` elements of `dtype` (uninitialized).
    pub fn alloc(&self, len: usize, dtype: DType) -> Result<CudaBuf> {
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
        Ok(CudaBuf::new(
            slab,
            class,
            (len, dtype),
            "cuda",
            &self.blocks,
        ))
    }
}

/// A device buffer from the pool: a block of it ([`Pooled::block`] is the
/// device memory, at least `len * dtype.size_bytes()` bytes); dropping it
/// returns the block to the pool.
pub type CudaBuf = Pooled<CudaSlice<u8>>;
