//! The wgpu backend's knobs, read once per process from the environment.
//!
//! | variable | what | default |
//! |---|---|---|
//! | `GEARBOX_WGPU_ALLOW_CPU` | `1`: use an adapter that runs on the CPU | off |
//! | `GEARBOX_WGPU_ADAPTER` | the adapter to drive: its position in the status table's order or part of its name | the best |
//! | `GEARBOX_WGPU_CHECKED` | naga's run-time checks the kernels keep: `1` bounds checks and loop bounding, `bounds` or `loops` only those, `0` none | `loops` |
//! | `GEARBOX_WGPU_REDUCE_GROUPS` | workgroups of a full reduction's first pass | 1024 (64 on a CPU adapter) |
//! | `GEARBOX_WGPU_REDUCE_UNROLL` | copies of a full reduction's loop, each with its own loads in flight (1 to 8) | 4 |
//! | `GEARBOX_WGPU_ELEMENTWISE_PACKS` | packs each invocation of an elementwise kernel loads before it uses any (1 to 8) | 1 |
//! | `GEARBOX_WGPU_MEMORY_BLOCKS` | device memory blocks wgpu sub-allocates buffers from, in MiB (`MIN-MAX`, 4 to 256; larger buffers get memory of their own), or wgpu's `performance` (128-256) or `usage` (8-64) | `performance` |
//! | `GEARBOX_WGPU_RAW_MEMORY` | buffers on Vulkan memory the backend allocates itself, with the properties listed ([`crate::raw_memory`]) | off (wgpu's allocator) |
//! | `GEARBOX_WGPU_POOL_BYTES` | freed device memory the pool keeps for reuse | 8 GiB |
//! | `GEARBOX_WGPU_SPIN_US` | microseconds a wait polls the fence before it blocks | 1000 on a GPU, 0 on a CPU adapter |
//! | `GEARBOX_WGPU_SHARED_PASS` | `0`: each dispatch in a compute pass of its own | on: a batch's dispatches share one pass |
//! | `GEARBOX_WGPU_SHUFFLES` | `0`: block reductions through workgroup memory only, never subgroup shuffles | on (adapters with subgroups of 32) |
//! | `GEARBOX_WGPU_TIMESTAMPS` | `1`: time every pass on the device's clock (profiling: each submission waits) | off |
//! | `GEARBOX_WGPU_PACKED` | `0`: f32 and bool kernels move one element per access, not four | on |
//! | `GEARBOX_WGPU_FULL_RATE_F64` | `1` or `0`: whether the adapter's f64 is full rate (strict work needs it) | by name |

use std::sync::OnceLock;

use gearbox_codegen::{env_packs, Tuning};
use gearbox_core::runtime::config::{env_switch, env_value};

/// The knobs.
#[derive(Debug, Clone)]
pub struct Params {
    /// Whether an adapter that runs on the CPU may be used.
    pub allow_cpu: bool,
    /// The adapter to drive, by position or part of its name
    /// ([`gearbox_core::runtime::choice`]).
    pub adapter: Option<String>,
    /// naga's run-time checks the kernels keep.
    pub runtime_checks: wgpu::ShaderRuntimeChecks,
    /// Most workgroups of a full reduction's first pass (each leaves a
    /// partial for the second pass), when set (else by adapter,
    /// [`crate::launch::grid_limits`]).
    pub reduce_groups: Option<u32>,
    /// Freed device memory the pool keeps for reuse, in bytes.
    pub pool_bytes: u64,
    /// How wgpu sizes the device memory blocks it sub-allocates from.
    pub memory_hints: wgpu::MemoryHints,
    /// Buffers on Vulkan memory the backend allocates itself, when set.
    pub raw_memory: Option<crate::raw_memory::RawMemory>,
    /// Copies of a full reduction's loop (independent loads in flight).
    pub reduce_unroll: usize,
    /// Packs in flight per invocation of an elementwise kernel.
    pub elementwise_packs: usize,
    /// Microseconds a wait polls the fence before it blocks, when set
    /// (else by adapter, [`crate::device::Device::wait`]).
    pub spin_us: Option<u64>,
    /// Whether a batch's dispatches share one compute pass.
    pub shared_pass: bool,
    /// Whether passes are timed on the device's clock ([`crate::timing`]).
    pub timestamps: bool,
    /// Whether block reductions may use subgroup shuffles.
    pub shuffles: bool,
    /// Whether f32 and bool kernels access 16 bytes at a time.
    pub packed: bool,
    /// Whether the adapter's f64 is full rate, when set (else judged by
    /// the adapter's name).
    pub full_rate_f64: Option<bool>,
}

/// The knobs of this process.
pub fn params() -> &'static Params {
    static PARAMS: OnceLock<Params> = OnceLock::new();
    PARAMS.get_or_init(|| Params {
        allow_cpu: env_switch("GEARBOX_WGPU_ALLOW_CPU").unwrap_or(false),
        adapter: std::env::var("GEARBOX_WGPU_ADAPTER").ok(),
        runtime_checks: runtime_checks(std::env::var("GEARBOX_WGPU_CHECKED").ok().as_deref()),
        reduce_groups: env_value("GEARBOX_WGPU_REDUCE_GROUPS", |v: &u32| *v > 0),
        memory_hints: std::env::var("GEARBOX_WGPU_MEMORY_BLOCKS")
            .ok()
            .and_then(|v| memory_hints(&v))
            .unwrap_or(wgpu::MemoryHints::Performance),
        raw_memory: std::env::var("GEARBOX_WGPU_RAW_MEMORY")
            .ok()
            .and_then(|v| crate::raw_memory::setting(&v)),
        pool_bytes: env_value("GEARBOX_WGPU_POOL_BYTES", |_: &u64| true).unwrap_or(8 << 30),
        reduce_unroll: env_packs("GEARBOX_WGPU_REDUCE_UNROLL", 4),
        elementwise_packs: env_packs("GEARBOX_WGPU_ELEMENTWISE_PACKS", 1),
        full_rate_f64: env_switch("GEARBOX_WGPU_FULL_RATE_F64"),
        packed: env_switch("GEARBOX_WGPU_PACKED").unwrap_or(true),
        shuffles: env_switch("GEARBOX_WGPU_SHUFFLES").unwrap_or(true),
        timestamps: env_switch("GEARBOX_WGPU_TIMESTAMPS").unwrap_or(false),
        spin_us: env_value("GEARBOX_WGPU_SPIN_US", |_: &u64| true),
        shared_pass: env_switch("GEARBOX_WGPU_SHARED_PASS").unwrap_or(true),
    })
}

/// The run-time checks `GEARBOX_WGPU_CHECKED`'s value names.
///
/// Loop bounding is kept by default: NVIDIA's Vulkan compiler (driver 580,
/// `libnvidia-gpucomp`) dereferences a null pointer compiling kernels after
/// a long sequence of others whose loops it cannot prove finite (the
/// conformance suite crashed the process at its 2104th case, every time,
/// and passes with loop bounding alone); the bound costs a counter per
/// iteration (about 3% over the op suite, within its noise). Bounds checks
/// cost up to 2.6x on scans and reductions and are off: the renderer's
/// indices stay inside their buffers. An unknown value is warned about and
/// keeps the default.
fn runtime_checks(value: Option<&str>) -> wgpu::ShaderRuntimeChecks {
    let (bounds, loops) = match value.map(str::trim) {
        None | Some("loops") => (false, true),
        Some("0") => (false, false),
        Some("1") => (true, true),
        Some("bounds") => (true, false),
        Some(other) => {
            tracing::warn!(
                "ignoring GEARBOX_WGPU_CHECKED={other:?}: expected 0, 1, bounds or loops"
            );
            (false, true)
        }
    };
    wgpu::ShaderRuntimeChecks {
        bounds_checks: bounds,
        force_loop_bounding: loops,
        ..wgpu::ShaderRuntimeChecks::unchecked()
    }
}

/// `GEARBOX_WGPU_MEMORY_BLOCKS`'s value as wgpu's hints (`None`: not one
/// of the forms, so the default stands).
fn memory_hints(value: &str) -> Option<wgpu::MemoryHints> {
    const MIB: u64 = 1 << 20;
    match value.trim() {
        "performance" => Some(wgpu::MemoryHints::Performance),
        "usage" => Some(wgpu::MemoryHints::MemoryUsage),
        range => {
            let (lo, hi) = range.split_once('-')?;
            let (lo, hi) = (
                lo.trim().parse::<u64>().ok()?,
                hi.trim().parse::<u64>().ok()?,
            );
            (lo >= 1 && lo <= hi).then(|| wgpu::MemoryHints::Manual {
                suballocated_device_memory_block_size: lo * MIB..hi * MIB,
            })
        }
    }
}

/// The code shape of this process's WGSL kernels.
pub fn tuning() -> Tuning {
    Tuning {
        reduce_packs: params().reduce_unroll,
        // Unmeasured on wgpu: every reduction as its sums.
        compound_packs: params().reduce_unroll,
        elementwise_packs: params().elementwise_packs,
        // Unmeasured on wgpu: heavy bodies as the others (its grid limit
        // for them is a full grid too, gearbox-wgpu's `launch`).
        heavy_packs: params().elementwise_packs,
        ..Tuning::default()
    }
}

#[cfg(test)]
mod tests {
    use super::runtime_checks;

    #[test]
    fn checked_names_the_checks_kept_and_defaults_to_loop_bounding() {
        let kept = |v| {
            let c = runtime_checks(v);
            (c.bounds_checks, c.force_loop_bounding)
        };
        assert_eq!(kept(None), (false, true));
        assert_eq!(kept(Some("loops")), (false, true));
        assert_eq!(kept(Some("0")), (false, false));
        assert_eq!(kept(Some("1")), (true, true));
        assert_eq!(kept(Some(" bounds ")), (true, false));
        assert_eq!(kept(Some("everything")), (false, true));
    }
}
