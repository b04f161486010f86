//! The driver's compiled pipelines kept between processes, where the
//! adapter has PIPELINE_CACHE (Vulkan): one wgpu [`wgpu::PipelineCache`]
//! per device, read at open from `<cache dir>/wgpu/<adapter key>.bin`
//! (the key names the vendor and device; the entry's header, checked by
//! [`gearbox_core::runtime::cache_file`], names the driver too, and a
//! damaged or foreign entry is deleted before the driver sees it) and
//! written back, through a temporary file and a rename, after programs
//! are compiled: at once after the first, then at most once a second
//! (the data holds every pipeline, so writing it after each of a burst
//! of compiles would cost the square of the burst). With it, a second process finds the driver's machine
//! code of the kernels the first compiled; the WGSL itself is kept by the
//! shared program cache.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use gearbox_core::runtime::cache_file::{read_entry, write_entry, Entry};

/// The least time between two writes of the cache.
const SAVE_INTERVAL: Duration = Duration::from_secs(1);

/// A device's pipeline cache and the file it lives in.
pub struct DiskPipelines {
    cache: wgpu::PipelineCache,
    file: PathBuf,
    /// The adapter and driver the data is valid for (the entry's producer).
    producer: String,
    last_save: Mutex<Option<Instant>>,
}

impl DiskPipelines {
    /// The pipeline cache of `device` on `adapter`, filled from disk when
    /// an earlier process left one; `None` where the device was opened
    /// without PIPELINE_CACHE, the adapter has no cache key or there is no
    /// cache directory.
    pub fn open(adapter: &wgpu::AdapterInfo, device: &wgpu::Device) -> Option<DiskPipelines> {
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            return None;
        }
        let key = wgpu::util::pipeline_cache_key(adapter)?;
        let file = gearbox_core::runtime::config::cache_dir()?
            .join("wgpu")
            .join(format!("{key}.bin"));
        let producer = format!(
            "{key} {} {} {}",
            adapter.name, adapter.driver, adapter.driver_info
        );
        let data = match read_entry(&file, &producer) {
            Entry::Valid(data) => Some(data),
            Entry::Missing | Entry::Discarded => None,
        };
        // SAFETY: the data was written by `save` from `get_data` of a cache
        // of this adapter and driver, and is whole (the entry's checksum);
        // wgpu checks its header too, and with `fallback` an unusable one
        // gives an empty cache rather than an error.
        let cache = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("gearbox"),
                data: data.as_deref(),
                fallback: true,
            })
        };
        Some(DiskPipelines {
            cache,
            file,
            producer,
            last_save: Mutex::new(None),
        })
    }

    /// The cache, for pipeline descriptors.
    pub fn cache(&self) -> &wgpu::PipelineCache {
        &self.cache
    }

    /// Writes the cache's data to its file after a compile, unless it was
    /// written less than a second ago (a failure is logged: the
    /// cache only saves time).
    pub fn save(&self) {
        {
            let mut last = self.last_save.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|t| t.elapsed() < SAVE_INTERVAL) {
                return;
            }
            *last = Some(Instant::now());
        }
        let Some(data) = self.cache.get_data() else {
            return;
        };
        let written = write_entry(&self.file, &self.producer, &data);
        if let Err(e) = written {
            tracing::warn!("pipeline cache {} not written: {e}", self.file.display());
        }
    }
}
