//! Every knob of the CUDA backend, read from the environment once per
//! process into [`CudaParams`] ([`params`]). Each has a measured default
//! (docs/perf/cuda.md, docs/perf/stats.md); the variables exist for sweeps
//! on other devices and for tests that force one path. A value that does
//! not parse, or is out of range, leaves the default.
//!
//! | variable | what | default |
//! | --- | --- | --- |
//! | `GEARBOX_CUDA_BLOCKS_PER_SM` | grid of elementwise kernels, blocks per SM | 1024 |
//! | `GEARBOX_CUDA_REDUCE_BLOCKS_PER_SM` | grid of full reductions' first pass | 4 |
//! | `GEARBOX_CUDA_AXIS_BLOCKS_PER_SM` | grid of axis reductions, most blocks per SM | 64 |
//! | `GEARBOX_CUDA_REDUCE_PACKS`, `_ELEMENTWISE_PACKS`, `_AXIS_GROUP` | code shape ([`Tuning`]), 1 to 8 | 1, 1, 2 |
//! | `GEARBOX_CUDA_STREAMING` | streaming cache hints, 0 or 1 | 0 |
//! | `GEARBOX_CUDA_LANE_THREADS` | threads a strided-lane reduction aims for ([`Tuning::lane_threads`]) | 131072 |
//! | `GEARBOX_CUDA_FOLD_MOMENTS` | `var`/`sd` fold packs first ([`Tuning::fold_moments`]), 0 or 1 | 1 |
//! | `GEARBOX_CUDA_TF32` | TF32 tensor-core math in float32 GEMMs, 0 or 1 | 0 |
//! | `GEARBOX_CUDA_GRID_MMA` | GLM grid kernel: 0 CUDA cores, 1 tensor cores | by width |
//! | `GEARBOX_CUDA_GRID_MIN_BLOCKS` | GLM grid kernel's blocks a SM, 0 to 4 | by kernel and width |
//! | `GEARBOX_CUDA_GRID_MMA_GROUPS` | tensor-core grid kernel: 8-point groups a warp, 1 or 2 | 1 |
//! | `GEARBOX_CUDA_GRID_MMA_BLOCK` | tensor-core grid kernel: threads a block | 256 |
//! | `GEARBOX_CUDA_GRID_REPORT` | print each grid launch's registers and occupancy | off |

use gearbox_core::runtime::config::{env_switch, env_value};
use std::sync::OnceLock;

use gearbox_codegen::{env_packs, Tuning};

/// The CUDA backend's knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaParams {
    /// Code shape of the fused kernels.
    pub tuning: Tuning,
    /// Most blocks per SM of an elementwise kernel's grid (grid-stride
    /// loops make any value correct). Elementwise passes want a full grid
    /// on an H100 (4 per SM left 5-10% of the bandwidth unused).
    pub blocks_per_sm: u32,
    /// Most blocks per SM of an elementwise kernel with a heavy body
    /// (`gearbox_codegen::RenderedKernel::heavy`), whose threads loop over
    /// the tuning's `heavy_packs` at a time: 16 on an H200 (f64
    /// transcendental functions 0.76-0.87x the time of a full grid).
    pub heavy_blocks_per_sm: u32,
    /// Blocks per SM of a full reduction's first pass: few long-running
    /// blocks with several accumulators each.
    pub reduce_blocks_per_sm: u32,
    /// Most blocks per SM of an axis reduction: a block for each of many
    /// lanes.
    pub axis_blocks_per_sm: u32,
    /// TF32 tensor-core math for float32 GEMMs (off: full float32).
    pub tf32: bool,
    /// The GLM grid kernel's knobs.
    pub grid: GridParams,
}

/// Whether a kernel choice is left to the backend or forced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The backend's measured choice.
    Auto,
    /// Forced off.
    Off,
    /// Forced on (where possible).
    On,
}

/// Knobs of the GLM per-point grid kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridParams {
    /// The tensor-core kernel: by width (`Auto`), never, or wherever it fits.
    pub mma: Choice,
    /// Blocks a SM asked of `__launch_bounds__` (`None`: by kernel and width).
    pub min_blocks: Option<usize>,
    /// 8-point groups a warp of the tensor-core kernel.
    pub mma_groups: usize,
    /// Threads a block of the tensor-core kernel.
    pub mma_block: usize,
    /// Print each launch's kernel, registers, spills and occupancy.
    pub report: bool,
}

impl Default for CudaParams {
    fn default() -> Self {
        CudaParams {
            tuning: Tuning::default(),
            blocks_per_sm: 1024,
            heavy_blocks_per_sm: 16,
            reduce_blocks_per_sm: 4,
            axis_blocks_per_sm: 64,
            tf32: false,
            grid: GridParams {
                mma: Choice::Auto,
                min_blocks: None,
                mma_groups: 1,
                mma_block: 256,
                report: false,
            },
        }
    }
}

impl CudaParams {
    /// The defaults with this process's environment applied.
    pub fn from_env() -> CudaParams {
        let d = CudaParams::default();
        CudaParams {
            tuning: Tuning {
                reduce_packs: env_packs("GEARBOX_CUDA_REDUCE_PACKS", d.tuning.reduce_packs),
                compound_packs: env_packs("GEARBOX_CUDA_COMPOUND_PACKS", d.tuning.compound_packs),
                held_packs: env_packs("GEARBOX_CUDA_HELD_PACKS", d.tuning.held_packs),
                elementwise_packs: env_packs(
                    "GEARBOX_CUDA_ELEMENTWISE_PACKS",
                    d.tuning.elementwise_packs,
                ),
                heavy_packs: env_packs("GEARBOX_CUDA_HEAVY_PACKS", d.tuning.heavy_packs),
                streaming: env_switch("GEARBOX_CUDA_STREAMING").unwrap_or(d.tuning.streaming),
                axis_group: env_packs("GEARBOX_CUDA_AXIS_GROUP", d.tuning.axis_group),
                strided_packs: env_packs("GEARBOX_CUDA_STRIDED_PACKS", d.tuning.strided_packs),
                fold_moments: env_switch("GEARBOX_CUDA_FOLD_MOMENTS")
                    .unwrap_or(d.tuning.fold_moments),
                lane_threads: env_value("GEARBOX_CUDA_LANE_THREADS", |v: &usize| {
                    (1..=1 << 24).contains(v)
                })
                .unwrap_or(d.tuning.lane_threads),
                compound_block_len: env_value("GEARBOX_CUDA_COMPOUND_BLOCK_LEN", |v: &usize| {
                    (64..=1 << 24).contains(v)
                })
                .unwrap_or(d.tuning.compound_block_len),
                compound_thread_len: env_value("GEARBOX_CUDA_COMPOUND_THREAD_LEN", |v: &usize| {
                    (1..=1 << 20).contains(v)
                })
                .unwrap_or(d.tuning.compound_thread_len),
            },
            blocks_per_sm: env_value("GEARBOX_CUDA_BLOCKS_PER_SM", |v: &u32| *v > 0)
                .unwrap_or(d.blocks_per_sm),
            heavy_blocks_per_sm: env_value("GEARBOX_CUDA_HEAVY_BLOCKS_PER_SM", |v: &u32| *v > 0)
                .unwrap_or(d.heavy_blocks_per_sm),
            reduce_blocks_per_sm: env_value("GEARBOX_CUDA_REDUCE_BLOCKS_PER_SM", |v: &u32| *v > 0)
                .unwrap_or(d.reduce_blocks_per_sm),
            axis_blocks_per_sm: env_value("GEARBOX_CUDA_AXIS_BLOCKS_PER_SM", |v: &u32| *v > 0)
                .unwrap_or(d.axis_blocks_per_sm),
            tf32: env_switch("GEARBOX_CUDA_TF32").unwrap_or(d.tf32),
            grid: GridParams {
                mma: match env_switch("GEARBOX_CUDA_GRID_MMA") {
                    Some(true) => Choice::On,
                    Some(false) => Choice::Off,
                    None => Choice::Auto,
                },
                min_blocks: env_value("GEARBOX_CUDA_GRID_MIN_BLOCKS", |v: &usize| *v <= 4),
                mma_groups: env_value("GEARBOX_CUDA_GRID_MMA_GROUPS", |v: &usize| {
                    [1, 2].contains(v)
                })
                .unwrap_or(d.grid.mma_groups),
                mma_block: env_value("GEARBOX_CUDA_GRID_MMA_BLOCK", |v: &usize| {
                    [64, 128, 256, 512].contains(v)
                })
                .unwrap_or(d.grid.mma_block),
                report: std::env::var_os("GEARBOX_CUDA_GRID_REPORT").is_some(),
            },
        }
    }
}

/// This process's knobs (read once).
pub fn params() -> &'static CudaParams {
    static PARAMS: OnceLock<CudaParams> = OnceLock::new();
    PARAMS.get_or_init(CudaParams::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untouched_environment_gives_the_measured_defaults() {
        if std::env::vars().any(|(k, _)| k.starts_with("GEARBOX_CUDA_")) {
            return;
        }
        assert_eq!(CudaParams::from_env(), CudaParams::default());
        assert_eq!(*params(), CudaParams::default());
    }
}
