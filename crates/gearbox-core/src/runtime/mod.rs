//! The acceleration runtime: which backends exist and are healthy
//! ([`registry`], [`probe`]), where each piece of work runs and why
//! ([`dispatch`], [`explain`](mod@explain)), running it there and falling back to the CPU
//! ([`execute`], [`fallback`]), where data movement runs ([`movement`]),
//! thresholds ([`calibration`], measured by [`sweep`]), counters
//! ([`metrics`](mod@metrics)), compiled programs ([`programs`]), checked
//! cache entries ([`cache_file`]) and options ([`config`]); and what the
//! GPU backends' library calls share: the copies of `slice` and `concat`
//! ([`copies`]), the shapes and checks of
//! products ([`gemm_shapes`]), the layout and checks of scans
//! ([`scan_plan`]) and the rule of their running products
//! ([`scan_product`]), and the caching pool of device memory ([`pool`]).
//!
//! Nothing here names a particular GPU backend: backends implement
//! [`backend::Backend`] and register a factory with [`registry`].

pub mod backend;
pub mod bench;
pub mod cache_file;
pub mod calibration;
pub mod choice;
mod chunks;
pub mod claims;
pub mod config;
pub mod copies;
pub mod cpu;
pub mod dispatch;
pub mod execute;
pub mod explain;
pub mod fallback;
mod gates;
pub mod gemm_shapes;
pub mod metrics;
pub mod movement;
pub mod pool;
pub mod probe;
pub mod probe_checks;
pub mod programs;
pub mod registry;
pub mod residency;
pub mod scan_plan;
pub mod scan_product;
pub mod sweep;
pub mod testing;

pub use backend::{
    Backend, Capabilities, DeviceInfo, LibraryCall, ProbeReport, Threshold, WorkClass,
};
pub use cache_file::{repairs as cache_repairs, CacheRepair};
pub use calibration::calibrate;
pub use config::{options, set_options, RuntimeOptions};
pub use dispatch::{BackendPlan, CandidatePlan, DataPath, Gate, GateResult};
pub use explain::{backend_plan, backend_plan_probed, explain, planned_backend};
pub use fallback::{fallback_log, fallback_log_reset, FallbackEntry};
pub use metrics::{metrics, metrics_reset, Metrics};
pub use pool::{memory_stats, reset_peak, trim_pool, MemoryStats};
pub use registry::{gpu_status, use_gpu, Health, StatusTable, UseGpuOptions};
pub use residency::{residency_table, Resident, ResidentEntry};
