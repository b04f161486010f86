//! The wgpu backend's knobs, read once per process from the environment.
//!
//! | variable | what | default |
//! |---|---|---|
//! | `GEARBOX_WGPU_ALLOW_CPU` | `1`: use an adapter that runs on the CPU | off |
//! | `GEARBOX_WGPU_CHECKED` | `1`: keep naga's bounds checks and loop bounding | off |
//! | `GEARBOX_WGPU_REDUCE_GROUPS` | workgroups of a full reduction's first pass | 1024 |
//! | `GEARBOX_WGPU_POOL_BYTES` | freed device memory the pool keeps for reuse | 8 GiB |

use std::sync::OnceLock;

/// The knobs.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// Whether kernels keep naga's run-time checks.
    pub runtime_checks: bool,
    /// Most workgroups of a full reduction's first pass (each leaves a
    /// partial for the second pass).
    pub reduce_groups: u32,
    /// Freed device memory the pool keeps for reuse, in bytes.
    pub pool_bytes: u64,
}

/// The knobs of this process.
pub fn params() -> Params {
    static PARAMS: OnceLock<Params> = OnceLock::new();
    *PARAMS.get_or_init(|| Params {
        runtime_checks: std::env::var("GEARBOX_WGPU_CHECKED").is_ok_and(|v| v == "1"),
        reduce_groups: std::env::var("GEARBOX_WGPU_REDUCE_GROUPS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|v| *v > 0)
            .unwrap_or(1024),
        pool_bytes: std::env::var("GEARBOX_WGPU_POOL_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(8 << 30),
    })
}
