//! Per-backend counters: uploads, downloads and compute (count, bytes,
//! seconds), fallbacks, and the backend's own kernel-cache and memory-pool
//! figures. `metrics()` returns a snapshot; `metrics_reset()` zeroes it.
//!
//! With `GEARBOX_TRACE=1` every recorded event (and each evaluation's
//! planning) is also written to standard error as one line: microseconds
//! since the first traced event, the event's host duration, backend, kind,
//! bytes and what ran. The gaps between lines are host time spent outside
//! the runtime (building graphs, checks); a device synchronization shows as
//! a long download or library call.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

/// Count, bytes and time of one kind of event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Counter {
    /// Number of events.
    pub count: u64,
    /// Bytes moved or touched.
    pub bytes: u64,
    /// Seconds spent.
    pub seconds: f64,
}

impl Counter {
    fn add(&mut self, bytes: usize, time: Duration) {
        self.count += 1;
        self.bytes += bytes as u64;
        self.seconds += time.as_secs_f64();
    }
}

/// The counters of one backend.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BackendMetrics {
    /// Host-to-device copies.
    pub uploads: Counter,
    /// Device-to-host copies.
    pub downloads: Counter,
    /// Kernels and library calls run (bytes: data touched).
    pub compute: Counter,
    /// Regions that failed here and reran on the CPU.
    pub fallbacks: u64,
    /// Compiled kernels found in the cache.
    pub kernel_cache_hits: u64,
    /// Kernels that had to be compiled.
    pub kernel_cache_misses: u64,
    /// Device memory in use by live buffers, in bytes.
    pub pool_bytes_in_use: u64,
    /// Device memory cached by the pool for reuse, in bytes.
    pub pool_bytes_cached: u64,
    /// Allocations served from freed blocks.
    pub pool_reused: u64,
    /// Allocations that went to the driver.
    pub pool_fresh: u64,
    /// Seconds the device spent computing, by its own timers, where the
    /// backend measures them (wgpu with `GEARBOX_WGPU_TIMESTAMPS=1`).
    pub device_compute_seconds: Option<f64>,
}

/// A snapshot of every backend's counters, by backend name.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Metrics {
    /// Counters by backend name ("cpu" included).
    pub backends: BTreeMap<String, BackendMetrics>,
}

impl Metrics {
    /// The counters of `backend` (zero when it has done nothing).
    pub fn of(&self, backend: &str) -> BackendMetrics {
        self.backends.get(backend).cloned().unwrap_or_default()
    }
}

static METRICS: Mutex<BTreeMap<String, BackendMetrics>> = Mutex::new(BTreeMap::new());

fn with<R>(backend: &str, f: impl FnOnce(&mut BackendMetrics) -> R) -> R {
    let mut m = METRICS.lock().unwrap_or_else(|e| e.into_inner());
    f(m.entry(backend.to_string()).or_default())
}

/// Whether events are traced to standard error (`GEARBOX_TRACE` set to
/// anything but empty or `0`), and the time the trace counts from.
fn trace_epoch() -> Option<Instant> {
    static EPOCH: OnceLock<Option<Instant>> = OnceLock::new();
    *EPOCH.get_or_init(|| {
        std::env::var("GEARBOX_TRACE")
            .ok()
            .filter(|v| !v.is_empty() && v != "0")
            .map(|_| Instant::now())
    })
}

/// Writes one trace line for an event that began at `start` and took
/// `time`, when tracing is on; `what` is only called then.
pub(crate) fn trace(
    backend: &str,
    kind: &str,
    bytes: usize,
    start: Instant,
    time: Duration,
    what: impl FnOnce() -> String,
) {
    let Some(epoch) = trace_epoch() else {
        return;
    };
    let at = start.saturating_duration_since(epoch).as_secs_f64() * 1e6;
    eprintln!(
        "gearbox-trace {at:>12.1}us {:>10.1}us {backend:>6} {kind:<8} {bytes:>11}B {}",
        time.as_secs_f64() * 1e6,
        what()
    );
}

/// Records an upload that began at `start`.
pub(crate) fn record_upload(backend: &str, bytes: usize, start: Instant) {
    let time = start.elapsed();
    with(backend, |m| m.uploads.add(bytes, time));
    trace(backend, "upload", bytes, start, time, String::new);
}

/// Records a download that began at `start`.
pub(crate) fn record_download(backend: &str, bytes: usize, start: Instant) {
    let time = start.elapsed();
    with(backend, |m| m.downloads.add(bytes, time));
    trace(backend, "download", bytes, start, time, String::new);
}

/// Records a kernel or library call that began at `start`; `what` names it
/// in the trace.
pub(crate) fn record_compute(
    backend: &str,
    bytes: usize,
    start: Instant,
    what: impl FnOnce() -> String,
) {
    let time = start.elapsed();
    with(backend, |m| m.compute.add(bytes, time));
    trace(backend, "compute", bytes, start, time, what);
}

/// Records a fallback away from `backend`.
pub(crate) fn record_fallback(backend: &str) {
    with(backend, |m| m.fallbacks += 1);
}

/// A snapshot of the counters, with each registered backend's cache and pool figures.
pub fn metrics() -> Metrics {
    let mut backends = METRICS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for c in crate::runtime::registry::candidates(false) {
        if let Some(b) = c.backend {
            let m = backends.entry(b.name().to_string()).or_default();
            (m.kernel_cache_hits, m.kernel_cache_misses) = b.kernel_cache_stats();
            let mem = b.memory_stats();
            (m.pool_bytes_in_use, m.pool_bytes_cached) = (mem.in_use, mem.cached);
            (m.pool_reused, m.pool_fresh) = b.pool_counters();
            m.device_compute_seconds = b.device_compute_seconds();
        }
    }
    Metrics { backends }
}

/// Zeroes the counters (the backends' own cache and pool figures are live values).
pub fn metrics_reset() {
    METRICS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}
