//! Code-shape knobs of the generated kernels that change speed, never
//! results' correctness: how many 16-byte packs each thread loads before it
//! uses any (memory-level parallelism), and whether full-size buffers are
//! read and written with streaming (evict-first) cache hints.
//!
//! The defaults come from sweeps on an H100 and an H200 (docs/perf/cuda.md);
//! a backend may read overrides for such sweeps (gearbox-cuda's `params`).

/// The code-shape knobs of one rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Packs in flight per thread in the loops of reductions (full and
    /// along contiguous lanes).
    pub reduce_packs: usize,
    /// Packs in flight per thread of a reduction whose accumulator holds
    /// several values and folds them by arithmetic (`prod`, `var`, `sd`,
    /// `logsumexp`), where one thread walks a long stretch alone: full
    /// reductions, and contiguous lanes a thread or a block each (at least
    /// [`Tuning::reduce_packs`]). Their combinations branch, which keeps
    /// the next pack's load behind them. 4 on an H200 (every shape of
    /// `reduce.` in the op suite, alternated in one call): `prod`, `var`
    /// and `sd` over everything 1.15-1.28x faster than 1 pack, log-sum-exp
    /// along 64-value f32 lanes 1.36x, `var` along 10^6-value lanes 1.27x;
    /// warp-per-lane lanes (6000 of 6000) stay at one (0.92-1.14x), and
    /// sums, extremes and the arg reductions lose 1-5% with more.
    pub compound_packs: usize,
    /// Packs each thread holds of a log-sum-exp lane with an epilogue
    /// (softmax, log-softmax) that a group or a warp reduces (the `held`
    /// module; at most `held::MAX_HELD_PACKS`): 4 on an H200, so that a
    /// thread's own exps, tree and log weigh on four packs (softmax along
    /// the 64-value f64 lanes of a 64 x 10^6 matrix: 0.374 ms with 4,
    /// 0.525, 0.399 and 0.513 with 1, 2 and 8; other shapes hold no lanes).
    pub held_packs: usize,
    /// Packs in flight per thread in elementwise kernels.
    pub elementwise_packs: usize,
    /// Packs in flight per thread in elementwise kernels whose body is
    /// heavy (`RenderedKernel::heavy`): 2 on an H200, with 16 blocks per
    /// multiprocessor (f64 transcendental functions and f32 `pow` of 36e6
    /// values 0.76-0.87x the time of one pack on a full grid; 4 packs
    /// 1.0-1.2x).
    pub heavy_packs: usize,
    /// Streaming cache hints on the full-size packs.
    pub streaming: bool,
    /// Adjacent lanes one warp reduces together when a contiguous-lane
    /// reduction has inputs that follow the lanes (the `lanes` module):
    /// those are read once for the group. Two by default, the fastest of
    /// 1, 2, 4 and 8 for many_lm's residual pass on an H100 (larger groups
    /// hold more lane constants in registers; docs/perf/cuda.md).
    pub axis_group: usize,
    /// Contiguous lanes of an accumulator of several values (`var`,
    /// `argmax`, `logsumexp`, ...) shorter than this get one thread each,
    /// not a warp: their tree combinations cost more than a sum's. 256 on
    /// an H200 (lanes of 64: 3-5x faster in f32 than a warp each, 1.0-1.9x
    /// in f64; lanes of 256 split evenly, so they stay with a warp).
    pub compound_thread_len: usize,
    /// Contiguous lanes of an accumulator of several values at least this
    /// long get a block each (shorter: a warp) when there are enough of
    /// them to fill a device (sums switch at 4096). 65536 on an H200: 6000
    /// lanes of 6000 a warp each ran `var` 1.2x, `argmin` 1.15x and a
    /// softmax 1.05x faster than a block each (16384 in between).
    pub compound_block_len: usize,
    /// Steps along the lane each thread of a strided-lane reduction (row
    /// sums of a column-major matrix) loads before it uses any: its packs
    /// of adjacent lanes at steps `k .. k + strided_packs`. 2 on an H200:
    /// over sum, max, prod, var, argmin, argmax, any and all along rows,
    /// 0.86-0.97x the time of 1 at every shape (4: 0.82-1.01x).
    pub strided_packs: usize,
    /// Whether the moments of `var` and `sd` fold each pack among its own
    /// values (count, mean, squared deviations) before it meets the
    /// accumulator, a Chan merge (one division) per pack, not per value;
    /// full reductions then keep one accumulator per thread, as the arg
    /// reductions always do. On by default: on an H200, f32 `var` over
    /// 2^26 values 0.133 -> 0.110 ms, along 64-value lanes of f64 0.349
    /// -> 0.242 (warps walking lanes longer than
    /// `axis::FOLD_WARP_MAX_LEN` never fold: slower there).
    pub fold_moments: bool,
    /// Threads a strided-lane reduction (row sums of a column-major
    /// matrix) aims to keep busy: fewer work items than this split their
    /// lanes into chunks reduced by separate threads. 2^17 (a large GPU
    /// holds about 2^18 threads; 2^17 covers its memory latency).
    pub lane_threads: usize,
}

impl Default for Tuning {
    /// The measured defaults: one pack at a time everywhere, default
    /// caching. On an H100 (docs/perf/cuda.md) more packs in flight and
    /// streaming hints left `sum`, column means and the chain within
    /// run-to-run noise, and 4 packs slowed heavy fused bodies, which are
    /// unrolled once per pack.
    fn default() -> Self {
        Tuning {
            reduce_packs: 1,
            compound_packs: 4,
            held_packs: 4,
            elementwise_packs: 1,
            heavy_packs: 2,
            streaming: false,
            axis_group: 2,
            compound_thread_len: 256,
            compound_block_len: 65536,
            strided_packs: 2,
            fold_moments: true,
            lane_threads: 1 << 17,
        }
    }
}

/// The most packs a thread may hold in flight.
pub const MAX_PACKS: usize = 8;

/// A packs-in-flight knob read from environment variable `var`: 1 to
/// [`MAX_PACKS`], else `default`.
pub fn env_packs(var: &str, default: usize) -> usize {
    gearbox_core::runtime::config::env_value(var, |v: &usize| (1..=MAX_PACKS).contains(v))
        .unwrap_or(default)
}
