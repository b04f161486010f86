//! Large uploads through page-locked staging: the host values are copied
//! (on all cores) into one of two pinned buffers while the copy out of the
//! other one to the device is in flight. From pageable memory the driver
//! stages on its own at a fraction of the link's speed (H200: 8 MB of
//! `take` positions in 0.9-1.1 ms, about 8 GB/s).

use std::sync::{Arc, Mutex};

use cudarc::driver::{result, CudaContext, CudaEvent, CudaStream, PinnedHostSlice};
use rayon::prelude::*;

/// Uploads of at least this many bytes are staged; smaller ones go
/// straight from pageable memory (a copy into a pinned buffer first would
/// cost more than it saves).
pub const STAGED_MIN_BYTES: usize = 1 << 20;
/// Bytes of each of the two staging buffers.
pub const STAGE_BYTES: usize = 8 << 20;
/// Bytes one thread copies into a staging buffer.
const COPY_PIECE: usize = 1 << 20;

/// One pinned buffer and the event recorded after the last copy out of it.
struct Stage {
    host: PinnedHostSlice<u8>,
    copied: CudaEvent,
}

/// The two staging buffers of a device, made on the first large upload
/// (`None` inside after pinned memory could not be had: uploads then stay
/// pageable).
#[derive(Default)]
pub struct Staging {
    stages: Mutex<Option<Option<[Stage; 2]>>>,
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
    ) -> Result<bool, cudarc::driver::DriverError> {
        if src.len() < STAGED_MIN_BYTES {
            return Ok(false);
        }
        // Uploads from several threads take turns: the link is shared.
        let mut guard = self.stages.lock().unwrap_or_else(|e| e.into_inner());
        let stages = guard.get_or_insert_with(|| pinned_pair(ctx).ok());
        let Some(stages) = stages.as_mut() else {
            return Ok(false);
        };
        for (k, chunk) in src.chunks(STAGE_BYTES).enumerate() {
            let stage = &mut stages[k % 2];
            // The copy out of this buffer two chunks ago is done before it
            // is written again.
            stage.copied.synchronize()?;
            let host = &mut stage.host.as_mut_slice()?[..chunk.len()];
            host.par_chunks_mut(COPY_PIECE)
                .zip(chunk.par_chunks(COPY_PIECE))
                .for_each(|(to, from)| to.copy_from_slice(from));
            // SAFETY: `dst + k * STAGE_BYTES` and the chunk's length lie
            // inside the destination the caller gave; the pinned buffer is
            // not written again before `copied` (recorded next) completes.
            unsafe {
                result::memcpy_htod_async(
                    dst + (k * STAGE_BYTES) as u64,
                    &*host,
                    stream.cu_stream(),
                )?;
            }
            stage.copied.record(stream)?;
        }
        Ok(true)
    }
}

/// Two pinned staging buffers of [`STAGE_BYTES`].
fn pinned_pair(ctx: &Arc<CudaContext>) -> Result<[Stage; 2], cudarc::driver::DriverError> {
    let stage = || -> Result<Stage, cudarc::driver::DriverError> {
        Ok(Stage {
            // SAFETY: the buffer is only written through `as_mut_slice`
            // and read by the copies `Staging::upload` orders after it.
            host: unsafe { ctx.alloc_pinned::<u8>(STAGE_BYTES)? },
            copied: ctx.new_event(None)?,
        })
    };
    Ok([stage()?, stage()?])
}
