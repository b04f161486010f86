//! A caching device-memory pool: freed blocks are kept by size class and
//! handed out again, so a loop that allocates and frees the same sizes stops
//! calling `cuMemAlloc` after its first iteration and memory stays flat.
//!
//! Size classes: powers of two up to 1 MiB, then multiples of 2 MiB. When the
//! device runs out of memory, the pool frees every cached block and tries
//! once more before reporting out-of-memory. Cached memory is capped; blocks
//! returned beyond the cap are freed at once.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream};
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::{DType, DeviceErrorKind, Error, Result};

/// Bytes a request of `bytes` is rounded up to.
pub fn size_class(bytes: usize) -> usize {
    const MIB: usize = 1 << 20;
    if bytes <= MIB {
        bytes.max(256).next_power_of_two()
    } else {
        bytes.div_ceil(2 * MIB) * 2 * MIB
    }
}

/// The pool of one device.
#[derive(Debug)]
pub struct Pool {
    stream: Arc<CudaStream>,
    free: Mutex<HashMap<usize, Vec<CudaSlice<u8>>>>,
    in_use: AtomicU64,
    cached: AtomicU64,
    cap: u64,
    /// Allocations served from the cache.
    pub reused: AtomicU64,
    /// Allocations that went to the driver.
    pub fresh: AtomicU64,
}

impl Pool {
    /// A pool that caches up to `cap` bytes of freed blocks.
    pub fn new(stream: Arc<CudaStream>, cap: u64) -> Arc<Pool> {
        Arc::new(Pool {
            stream,
            free: Mutex::new(HashMap::new()),
            in_use: AtomicU64::new(0),
            cached: AtomicU64::new(0),
            cap,
            reused: AtomicU64::new(0),
            fresh: AtomicU64::new(0),
        })
    }

    /// (bytes in use, bytes cached).
    pub fn stats(&self) -> (u64, u64) {
        (
            self.in_use.load(Ordering::Relaxed),
            self.cached.load(Ordering::Relaxed),
        )
    }

    /// Frees every cached block.
    pub fn empty_cache(&self) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.clear();
        self.cached.store(0, Ordering::Relaxed);
    }

    /// A buffer of `len` elements of `dtype` (uninitialized).
    pub fn alloc(self: &Arc<Self>, len: usize, dtype: DType) -> Result<CudaBuf> {
        let class = size_class(len * dtype.size_bytes());
        let cached = self
            .free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(&class)
            .and_then(Vec::pop);
        let slab = match cached {
            Some(s) => {
                self.cached.fetch_sub(class as u64, Ordering::Relaxed);
                self.reused.fetch_add(1, Ordering::Relaxed);
                s
            }
            None => {
                // SAFETY: the block is written by a copy or a kernel before any read.
                let first = unsafe { self.stream.alloc::<u8>(class) };
                let slab = match first {
                    Ok(s) => s,
                    Err(_) => {
                        self.empty_cache();
                        // SAFETY: as above.
                        unsafe { self.stream.alloc::<u8>(class) }.map_err(|e| Error::Device {
                            backend: "cuda".into(),
                            op: "allocate".into(),
                            reason: format!("out of memory allocating {class} bytes: {e}"),
                            kind: DeviceErrorKind::OutOfMemory,
                        })?
                    }
                };
                self.fresh.fetch_add(1, Ordering::Relaxed);
                slab
            }
        };
        self.in_use.fetch_add(class as u64, Ordering::Relaxed);
        Ok(CudaBuf {
            slab: Some(slab),
            class,
            len,
            dtype,
            pool: Arc::clone(self),
        })
    }

    fn give_back(&self, slab: CudaSlice<u8>, class: usize) {
        self.in_use.fetch_sub(class as u64, Ordering::Relaxed);
        if self.cached.load(Ordering::Relaxed) + class as u64 > self.cap {
            return; // dropping the slab frees it
        }
        self.cached.fetch_add(class as u64, Ordering::Relaxed);
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(class)
            .or_default()
            .push(slab);
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
            self.pool.give_back(s, self.class);
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

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn size_classes_round_up() {
        assert_eq!(size_class(0), 256);
        assert_eq!(size_class(257), 512);
        assert_eq!(size_class(1 << 20), 1 << 20);
        assert_eq!(size_class((1 << 20) + 1), 2 << 20);
        assert_eq!(size_class(5 << 20), 6 << 20);
    }
}
