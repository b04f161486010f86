//! Large transfers through page-locked staging. An upload copies the host
//! values (on all cores) into one of two pinned buffers while the copy out
//! of the other one to the device is in flight; a download copies out of
//! one pinned buffer while the device fills the other. From pageable
//! memory the driver stages on its own at a fraction of the link's speed
//! (H200: 8 MB of `take` positions uploaded in 0.9-1.1 ms, about 8 GB/s;
//! through this staging 0.22-0.33 ms). Uploads write their buffers
//! write-combined (fast for the host to write, slow to read); downloads
//! have buffers of their own, cached, that the host reads.

use std::sync::{Arc, Mutex};

use cudarc::driver::{result, CudaContext, CudaEvent, CudaStream, DriverError, PinnedHostSlice};
use rayon::prelude::*;

/// Uploads of at least this many bytes are staged; smaller ones go
/// straight from pageable memory (a copy into a pinned buffer first would
/// cost more than it saves).
pub const STAGED_MIN_BYTES: usize = 1 << 20;
/// Bytes of each of the two staging buffers.
pub const STAGE_BYTES: usize = 8 << 20;
/// Bytes one thread copies into a staging buffer.
const COPY_PIECE: usize = 1 << 20;

/// One pinned buffer and the event recorded after the last copy into or
/// out of it.
struct Stage {
    host: PinnedHostSlice<u8>,
    copied: CudaEvent,
}

/// Two staging buffers of one direction, made on the first large transfer
/// that way with `flags`; `Some(None)` after pinned memory could not be
/// had (transfers that way then stay pageable).
struct Pair {
    flags: u32,
    stages: Mutex<Option<Option<[Stage; 2]>>>,
}

impl Pair {
    fn new(flags: u32) -> Pair {
        Pair {
            flags,
            stages: Mutex::new(None),
        }
    }

    /// Runs `f` on the two buffers, made if needed, holding them for the
    /// whole transfer (transfers from several threads take turns: the link
    /// is shared); `Ok(false)` without pinned memory.
    fn with(
        &self,
        ctx: &Arc<CudaContext>,
        f: impl FnOnce(&mut [Stage; 2]) -> Result<(), DriverError>,
    ) -> Result<bool, DriverError> {
        let mut guard = self.stages.lock().unwrap_or_else(|e| e.into_inner());
        let made = guard.get_or_insert_with(|| pinned_pair(ctx, self.flags).ok());
        let Some(stages) = made.as_mut() else {
            return Ok(false);
        };
        f(stages)?;
        Ok(true)
    }
}

/// The staging buffers of a device: a write-combined pair for uploads and
/// a cached pair for downloads.
pub struct Staging {
    up: Pair,
    down: Pair,
}

impl Default for Staging {
    fn default() -> Self {
        Staging {
            up: Pair::new(cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED),
            down: Pair::new(0),
        }
    }
}

impl Staging {
    /// Copies `src` to device address `dst` in `stream`'s order through
    /// the staging buffers; `Ok(false)` (nothing copied) when `src` is
    /// small or pinned memory is not available. Returns once `src` has
    /// been read: the caller may free it; the device copy completes in
    /// stream order.
    pub fn upload(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
        src: &[u8],
        dst: u64,
    ) -> Result<bool, DriverError> {
        if src.len() < STAGED_MIN_BYTES {
            return Ok(false);
        }
        self.up.with(ctx, |stages| {
            for (k, chunk) in src.chunks(STAGE_BYTES).enumerate() {
                let stage = &mut stages[k % 2];
                // The copy out of this buffer two chunks ago is done before
                // it is written again.
                stage.copied.synchronize()?;
                let host = &mut stage.host.as_mut_slice()?[..chunk.len()];
                copy_on_all_cores(host, chunk);
                // SAFETY: `dst + k * STAGE_BYTES` and the chunk's length lie
                // inside the destination the caller gave; the pinned buffer
                // is not written again before `copied` (recorded next)
                // completes.
                unsafe {
                    result::memcpy_htod_async(
                        dst + (k * STAGE_BYTES) as u64,
                        &*host,
                        stream.cu_stream(),
                    )?;
                }
                stage.copied.record(stream)?;
            }
            Ok(())
        })
    }

    /// Copies device address `src` into `dst` through the staging
    /// buffers, in `stream`'s order (after the work queued before it);
    /// `Ok(false)` (nothing copied) when `dst` is small or pinned memory
    /// is not available. Returns with `dst` filled.
    pub fn download(
        &self,
        ctx: &Arc<CudaContext>,
        stream: &CudaStream,
        src: u64,
        dst: &mut [u8],
    ) -> Result<bool, DriverError> {
        if dst.len() < STAGED_MIN_BYTES {
            return Ok(false);
        }
        let total = dst.len();
        let chunks = total.div_ceil(STAGE_BYTES);
        self.down.with(ctx, |stages| {
            // Chunk k into stage k % 2: the device fills one stage while
            // the host copies the other out.
            let fill = |stage: &mut Stage, k: usize| -> Result<(), DriverError> {
                let len = STAGE_BYTES.min(total - k * STAGE_BYTES);
                let host = &mut stage.host.as_mut_slice()?[..len];
                // SAFETY: `src + k * STAGE_BYTES` and the chunk's length lie
                // inside the source the caller gave; the stage is read only
                // after `copied` (recorded next) completes.
                unsafe {
                    result::memcpy_dtoh_async(
                        host,
                        src + (k * STAGE_BYTES) as u64,
                        stream.cu_stream(),
                    )?;
                }
                stage.copied.record(stream)
            };
            for (k, stage) in stages.iter_mut().enumerate().take(chunks) {
                fill(stage, k)?;
            }
            for (k, to) in dst.chunks_mut(STAGE_BYTES).enumerate() {
                let stage = &mut stages[k % 2];
                stage.copied.synchronize()?;
                copy_on_all_cores(to, &stage.host.as_mut_slice()?[..to.len()]);
                if k + 2 < chunks {
                    fill(stage, k + 2)?;
                }
            }
            Ok(())
        })
    }
}

/// `to = from` (equal lengths), in pieces of [`COPY_PIECE`] on rayon's
/// threads.
fn copy_on_all_cores(to: &mut [u8], from: &[u8]) {
    to.par_chunks_mut(COPY_PIECE)
        .zip(from.par_chunks(COPY_PIECE))
        .for_each(|(to, from)| to.copy_from_slice(from));
}

/// Two pinned staging buffers of [`STAGE_BYTES`], allocated with `flags`.
fn pinned_pair(ctx: &Arc<CudaContext>, flags: u32) -> Result<[Stage; 2], DriverError> {
    let stage = || -> Result<Stage, DriverError> {
        Ok(Stage {
            // SAFETY: the buffer is written and read only through
            // `as_mut_slice` and by the copies `Staging` orders around it
            // with its `copied` event.
            host: unsafe { ctx.alloc_pinned_with_flags::<u8>(STAGE_BYTES, flags)? },
            copied: ctx.new_event(None)?,
        })
    };
    Ok([stage()?, stage()?])
}
