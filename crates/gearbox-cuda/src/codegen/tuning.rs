//! Code-shape knobs of the generated kernels that change speed, never
//! results' correctness: how many 16-byte packs each thread loads before it
//! uses any (memory-level parallelism), and whether full-size buffers are
//! read and written with streaming (evict-first) cache hints.
//!
//! The defaults come from sweeps on an H100 and an H200 (docs/perf/cuda.md);
//! `GEARBOX_CUDA_REDUCE_PACKS`, `GEARBOX_CUDA_ELEMENTWISE_PACKS`,
//! `GEARBOX_CUDA_AXIS_GROUP` (1 to 8) and `GEARBOX_CUDA_STREAMING` (0 or 1)
//! override them for such sweeps.

use std::sync::OnceLock;

/// The code-shape knobs of one rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Packs in flight per thread in the loops of reductions (full and
    /// along contiguous lanes).
    pub reduce_packs: usize,
    /// Packs in flight per thread in elementwise kernels.
    pub elementwise_packs: usize,
    /// Streaming cache hints on the full-size packs.
    pub streaming: bool,
    /// Adjacent lanes one warp reduces together when a contiguous-lane
    /// reduction has inputs that follow the lanes (the `lanes` module):
    /// those are read once for the group. Two by default: many_lm's
    /// residual pass took 1.24 / 0.95 / 1.59 / 1.57 ms with groups of 1 /
    /// 2 / 4 / 8 on an H100 (larger groups hold more lane constants in
    /// registers).
    pub axis_group: usize,
}

impl Default for Tuning {
    /// The measured defaults: one pack at a time everywhere, default
    /// caching. On an H100 (session 3 sweep, docs/perf/cuda.md) 2, 4 or 8
    /// packs in flight and streaming hints left `sum`, column means and the
    /// chain within run-to-run noise, and 4 packs slowed the heavy fused
    /// GLM kernel (3.1 -> 4.7 ms: the body is unrolled once per pack).
    fn default() -> Self {
        Tuning {
            reduce_packs: 1,
            elementwise_packs: 1,
            streaming: false,
            axis_group: 2,
        }
    }
}

/// The most packs a thread may hold in flight.
pub const MAX_PACKS: usize = 8;

fn packs_from(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|v| (1..=MAX_PACKS).contains(v))
        .unwrap_or(default)
}

impl Tuning {
    /// The defaults with the `GEARBOX_CUDA_*` overrides of this process
    /// (read once).
    pub fn from_env() -> Tuning {
        static TUNING: OnceLock<Tuning> = OnceLock::new();
        *TUNING.get_or_init(|| {
            let d = Tuning::default();
            Tuning {
                reduce_packs: packs_from("GEARBOX_CUDA_REDUCE_PACKS", d.reduce_packs),
                elementwise_packs: packs_from(
                    "GEARBOX_CUDA_ELEMENTWISE_PACKS",
                    d.elementwise_packs,
                ),
                streaming: std::env::var("GEARBOX_CUDA_STREAMING")
                    .map(|v| v.trim() == "1")
                    .unwrap_or(d.streaming),
                axis_group: packs_from("GEARBOX_CUDA_AXIS_GROUP", d.axis_group),
            }
        })
    }
}
