//! The device's own clock on compute passes, where the adapter has
//! TIMESTAMP_QUERY and `GEARBOX_WGPU_TIMESTAMPS=1` asks for it: each
//! dispatch's pass writes a timestamp when it begins and ends, and every
//! submission resolves and reads them back, adding the passes' durations
//! to a total ([`gearbox_core::runtime::metrics()`]'s
//! `device_compute_seconds`). Reading back waits for the submission, so
//! this is a profiling mode: it measures the device and slows the host.

use std::sync::Mutex;

use gearbox_core::Result;

use crate::device::fault;

/// Timestamp queries for up to `passes` passes of one submission.
pub struct PassTimer {
    set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    readback: wgpu::Buffer,
    passes: u32,
    nanoseconds_per_tick: f64,
    total_ns: Mutex<f64>,
}

impl PassTimer {
    /// A timer for `passes` passes per submission on `device`, or `None`
    /// where it was opened without TIMESTAMP_QUERY.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, passes: u32) -> Option<PassTimer> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let count = 2 * passes;
        let bytes = u64::from(count) * 8;
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("gearbox timestamps"),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(PassTimer {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("gearbox timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count,
            }),
            resolved: buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC),
            readback: buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST),
            passes,
            nanoseconds_per_tick: f64::from(queue.get_timestamp_period()),
            total_ns: Mutex::new(0.0),
        })
    }

    /// The timestamp writes of pass `index` of a submission (`None` past
    /// the timer's capacity: that pass goes untimed).
    pub fn writes(&self, index: u32) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        (index < self.passes).then(|| wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(2 * index),
            end_of_pass_write_index: Some(2 * index + 1),
        })
    }

    /// Records the copy-out of the first `passes` passes' timestamps.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder, passes: u32) {
        let count = 2 * passes.min(self.passes);
        encoder.resolve_query_set(&self.set, 0..count, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.readback, 0, u64::from(count) * 8);
    }

    /// After the submission holding [`PassTimer::resolve`]: waits for it
    /// on `device` and adds its passes' durations to the total.
    pub fn collect(&self, device: &wgpu::Device, passes: u32) -> Result<()> {
        let count = 2 * passes.min(self.passes) as usize;
        let (tx, rx) = std::sync::mpsc::channel();
        self.readback.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| fault("timestamps", e))?;
        rx.recv()
            .map_err(|_| fault("timestamps", "the mapping never completed"))?
            .map_err(|e| fault("timestamps", e))?;
        let ticks: Vec<u64> = {
            let view = self
                .readback
                .get_mapped_range(..)
                .map_err(|e| fault("timestamps", e))?;
            bytemuck::pod_collect_to_vec(&view[..count * 8])
        };
        self.readback.unmap();
        let ns: f64 = ticks
            .chunks_exact(2)
            .map(|p| p[1].saturating_sub(p[0]) as f64 * self.nanoseconds_per_tick)
            .sum();
        *self.total_ns.lock().unwrap_or_else(|e| e.into_inner()) += ns;
        Ok(())
    }

    /// Seconds measured so far.
    pub fn seconds(&self) -> f64 {
        *self.total_ns.lock().unwrap_or_else(|e| e.into_inner()) * 1e-9
    }
}
