//! C-style GPU source for a fused [`KernelIr`], in any language that has a
//! [`Dialect`].
//!
//! [`render_tuned`] writes one translation unit whose kernels reproduce the
//! CPU semantics of `gearbox-core` exactly where IEEE allows:
//! `sign(0) = 0`, `sign(NaN) = NaN`, `round` half to even (`rint`), stable
//! `sigmoid` and `softplus`, NaN-propagating `minimum`/`maximum` (never
//! `fmin`/`fmax`), comparisons false on NaN except `ne`, wrapping integer
//! `neg abs add sub mul`, float-to-integer casts truncating, saturating and
//! NaN to 0, `x != 0` for casts to bool, NaN tests on bits (safe under fast
//! math). The structure (loops, wide loads, reductions, lane grouping) is
//! written once here; the spellings and the constructs a language writes
//! its own way come from its [`Dialect`] (gearbox-cuda's `CUDA` is one).
//!
//! Two CPU rules the kernels do not reproduce, so the runtime never sends
//! them such work (a backend's capabilities decline it): an i64 result that
//! overflows, and a float
//! converted to i64 that i64 cannot hold, are errors on the CPU (here they
//! wrap or saturate); and the CPU's `prod` never overflows on the way (here
//! a plain double product can give `Inf · 0 = NaN`).
//!
//! # Launch ABI
//!
//! **Storage types**: each dtype's dialect storage type (f32, f64, i64, and
//! bool as one byte holding 0 or 1). Buffers must be 16-byte aligned: the
//! vectorized loops load and store 16 bytes at a time.
//!
//! **`gb_main` parameters**, in order:
//! 1. a read-only buffer `in{k}` for each IR input, in IR input order
//!    (every input is passed, even one the kernel does not read);
//! 2. a buffer `out{k}` for each IR output, in `outputs` order, each with
//!    as many elements as the iteration shape;
//! 3. reductions only: `red` (see below);
//! 4. the i64 `n`, the number of elements of the iteration shape.
//!
//! **Input addressing**: an input with `n` elements is read at element `i`;
//! a one-element input at element 0, loaded once per thread; any other input
//! is a broadcast (MATLAB rules: a dimension of 1 is repeated, missing
//! trailing dimensions are 1) whose offsets are computed from `i` with the
//! shapes baked into the source as constants. Kernels whose inputs are all
//! full-size or one-element do not depend on the iteration shape: the same
//! source (and [`RenderedKernel::source_hash`]) serves every `n`, so one
//! compiled module can be cached by hash and reused across sizes. Kernels
//! with a broadcast input, and axis reductions, are specific to their shape.
//!
//! **Launch configuration**: 1-D grid and blocks. Blocks of [`BLOCK_SIZE`]
//! (256) threads; any multiple of 32 up to 1024 is correct. No dynamic
//! shared memory (reductions use 32 static shared slots). The grid may have
//! any size of at least 1: every loop is grid-stride, so the grid only
//! affects speed; [`Mapping::suggested_grid`] gives a good one.
//!
//! **Grid sizes**: any `gridDim.x >= 1` is correct. For full reductions,
//! cap the grid at a few waves (say 4 × SMs × 2048 / blockDim): the
//! partials buffer needs `gridDim.x` entries and `gb_finish` reads them all.
//! Launch both kernels even when `n == 0` (grid 1) to get 0, 1 or NaN.
//!
//! **[`KernelKind::Elementwise`]**: each thread handles
//! [`RenderedKernel::vector_width`] (`V`) consecutive elements per step,
//! with 16-byte loads and stores of the full-size buffers; `V` is 16 over the
//! largest element among the full-size buffers (4 for f32 only, 2 with any
//! f64 or i64, 16 for bool only). The last `n % V` elements are done by the
//! first `n % V` threads of the grid.
//!
//! **[`KernelKind::FullReduce`]** (a reduction over all elements, or along an
//! axis whose result has one element): `red` is a partials buffer of
//! `gridDim.x` accumulators, f64 or, when the result is i64 (sums,
//! minima and maxima of i64 or bool), i64 (see
//! [`RenderedKernel::partial_dtype`]). `gb_main` also writes the full-size
//! outputs, if any. Then launch `gb_finish` as ONE block of
//! [`FINISH_BLOCK_SIZE`] threads:
//! `gb_finish(partials, result, num_partials, n)` (the two counts i64)
//! with `num_partials = gridDim.x` of `gb_main`; it combines the partials in
//! a fixed order, divides a mean by `n` (NaN when `n == 0`) and writes
//! `result[0]` in the reduction's dtype. The result is deterministic for a
//! given grid and block size. Sums and means accumulate in f64 (also for
//! f32 data), products in f64, integer sums wrap in i64, integer minima and
//! maxima are exact in i64. With `n == 0` the result is 0 (sum), 1 (prod)
//! or NaN (mean); min/max of nothing is refused before codegen.
//!
//! **Accumulators of several values** (`var`, `sd`: count, mean and sum
//! of squared deviations; `argmin`, `argmax`: value and position; `prod`:
//! mantissa and exponent) are a struct `gb_acc` of float fields: partials
//! buffers then hold structs, sized in opaque 8-byte words
//! ([`RenderedKernel::partial_words`] per partial, of
//! [`RenderedKernel::partial_dtype`]).
//!
//! **A companion result** (an IR reduction with
//! [`IrReduce::companion`](gearbox_core::fusion::ir::IrReduce::companion):
//! the mean beside `var` or `sd`): every parameter that receives a result
//! (`result` of `gb_finish`, `red` of an axis reduction written directly)
//! is followed by one more of the same type and length, `result_companion`
//! or `red_companion`, receiving the companion's result at the same index.
//!
//! **Split lanes**: strided lanes that need at most 32 chunks to fill a
//! device are split within blocks (the chunks of a few adjacent work items
//! share a block, which combines them through block-shared memory; blocks
//! of at most [`BLOCK_SIZE`] threads): one kernel, `chunks` stays 1. Otherwise an axis reduction whose lanes are
//! too few to fill a device ([`RenderedKernel::chunks`] > 1: strided lanes
//! with fewer than 4096 work items, or fewer than 1024 long contiguous
//! lanes) writes
//! `chunks * lanes` partials into `red` (chunk `c` of lane `l` at
//! `c * lanes + l`); then launch `gb_finish(partials, result, chunks,
//! lanes)` in blocks of [`FINISH_BLOCK_SIZE`] on any grid: it walks the
//! lanes a block each, or a thread each when there are at least 1024
//! lanes of at most 16 chunks (a grid of `lanes / FINISH_BLOCK_SIZE`
//! blocks then covers them), or 32 adjacent lanes a block when there are
//! at least 2048 lanes of more chunks (a grid of `lanes / 32` blocks).
//!
//! **[`KernelKind::AxisReduce`]**: with `(inner, len, outer)` the split of
//! the iteration shape around the axis (baked in as constants), `red` has
//! the reduction's dtype and `inner * outer` elements (column-major, the
//! axis dropped), written directly; there is no second kernel. The mapping
//! of threads to lanes is in [`RenderedKernel::mapping`]: with `inner == 1`
//! (contiguous lanes, e.g. column sums) a block, a warp or a thread per lane
//! by lane length; with `inner > 1` (strided lanes, e.g. row sums) one thread
//! per `V` adjacent lanes, consecutive threads on consecutive lanes. The
//! `n` parameter is present but unused. Full-size outputs of the same
//! pass are stored as their elements are computed.
//!
//! **Epilogues** (outputs reading their lane's reduced results,
//! [`Expr::Reduced`](gearbox_core::fusion::ir::Expr::Reduced)): where
//! [`fuses_epilogue`] holds, one [`KernelKind::AxisReduce`] kernel with the
//! parameters above (inputs, outputs, `red`, `n`) reduces each lane and
//! then writes the lane's outputs; elsewhere [`render_tuned`] returns an
//! error and [`run_fused_into`] runs the two kernels of
//! [`KernelIr::split_epilogue`](gearbox_core::fusion::ir::KernelIr::split_epilogue).
//!
//! Lane mappings by shape (`V` as above, over the full-size inputs):
//! - `inner == 1`, `len < 64`: a thread per lane
//!   ([`Mapping::ThreadPerLane`]); `64 <= len < 4096`: a warp per lane
//!   ([`Mapping::WarpPerLane`]); `len >= 4096`: a block per lane
//!   ([`Mapping::BlockPerLane`]); lanes grid-stride by thread, warp or block.
//!   Loads are `V` wide when `len % V == 0` (lane starts are then aligned).
//! - `inner > 1`: a thread per `V` adjacent lanes when `inner % V == 0`,
//!   else per lane ([`Mapping::ThreadPerLane`]); it walks `k` reading
//!   `V`-wide packs, neighbouring threads reading neighbouring packs.
//!
//! Few long lanes (a tall matrix with a few columns, or a few long rows)
//! split into chunks (see split lanes above).

mod axis;
pub mod catalog;
mod compound;
mod dialect;
mod epilogue;
mod expr;
mod heavy;
mod held;
mod kernels;
mod lanes;
mod launch;
mod layout;
mod pack_folds;
mod packs;
mod reduce;
mod split;
mod tuning;
mod writer;

use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::{DType, Error};

pub use dialect::{Dialect, KernelParam, Spellings};
pub use epilogue::{fuses_epilogue, MAX_LANE as EPILOGUE_MAX_LANE};
pub use expr::{scalar_fns_source, NO_FMA_MARKER};
pub use gearbox_core::runtime::programs::fnv1a64;
pub use launch::{
    run_fused, run_fused_into, FusedOutputs, GridLimits, KernelArg, KernelRuntime, Toolchain,
};
pub use tuning::{env_packs, Tuning, MAX_PACKS};

/// Threads per block that the kernels are written for.
pub const BLOCK_SIZE: u32 = 256;

/// Threads of the single block that runs `gb_finish`.
pub const FINISH_BLOCK_SIZE: u32 = 256;

/// Which kind of kernel a source holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// Full-size outputs only: `gb_main`.
    Elementwise,
    /// A reduction to one value: `gb_main` writes per-block partials,
    /// `gb_finish` combines them.
    FullReduce,
    /// A reduction along one axis: `gb_main` writes all results.
    AxisReduce,
}

/// How `gb_main`'s threads are mapped onto work, to size the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mapping {
    /// Grid-stride over `ceil(n / vector_width)` steps, one per thread.
    Elements,
    /// One thread per work item (a group of `vector_width` lanes).
    ThreadPerLane {
        /// Number of work items.
        items: usize,
    },
    /// One warp per lane.
    WarpPerLane {
        /// Number of lanes.
        lanes: usize,
    },
    /// One block per lane.
    BlockPerLane {
        /// Number of lanes.
        lanes: usize,
    },
}

impl Mapping {
    /// A grid size (blocks) that gives every work item its own thread, warp
    /// or block, clamped to `1..=max_grid`. `n` and `vector_width` are used
    /// by [`Mapping::Elements`] only.
    pub fn suggested_grid(&self, n: usize, vector_width: usize, block: u32, max_grid: u32) -> u32 {
        let block = block.max(1) as usize;
        let blocks = match *self {
            Mapping::Elements => n.div_ceil(vector_width.max(1)).div_ceil(block),
            Mapping::ThreadPerLane { items } => items.div_ceil(block),
            Mapping::WarpPerLane { lanes } => lanes.div_ceil((block / 32).max(1)),
            Mapping::BlockPerLane { lanes } => lanes,
        };
        blocks.clamp(1, max_grid.max(1) as usize) as u32
    }
}

/// A kernel's source and what is needed to launch it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedKernel {
    /// Which kernel this is.
    pub kind: KernelKind,
    /// The complete translation unit.
    pub source: String,
    /// The main kernel: `"gb_main"`.
    pub entry: &'static str,
    /// The second pass of a [`KernelKind::FullReduce`]: `"gb_finish"`.
    pub finish_entry: Option<&'static str>,
    /// Elements per thread-step in the vectorized main loop (1 if none).
    pub vector_width: usize,
    /// FNV-1a 64 of `source` ([`fnv1a64`]), stable across runs and builds.
    pub source_hash: u64,
    /// How threads map to work in `gb_main`.
    pub mapping: Mapping,
    /// Element type of the partials buffer `red` of a
    /// [`KernelKind::FullReduce`]: [`DType::F64`] (`double`) or
    /// [`DType::I64`] (`long long`); `None` for other kinds.
    pub partial_dtype: Option<DType>,
    /// Elements of [`RenderedKernel::partial_dtype`] per partial: 1, or,
    /// for a reduction whose accumulator holds several values (a struct of
    /// float fields), as many 8-byte words as one struct needs (the buffer
    /// then holds `gridDim.x` structs; `partial_dtype` only sizes it).
    pub partial_words: usize,
    /// Chunks each lane of a [`KernelKind::AxisReduce`] is split into: 1,
    /// or more for strided lanes too few to fill the device, whose
    /// `gb_main` then writes `chunks * lanes` partials (of
    /// [`RenderedKernel::partial_dtype`], chunk `c` of lane `l` at
    /// `c * lanes + l`) into `red` and `gb_finish` combines them.
    pub chunks: usize,
    /// An elementwise kernel with a heavy body (enough arithmetic per
    /// element): rendered with the tuning's `heavy_packs` in flight per
    /// thread and launched on at most [`GridLimits::heavy_elementwise`]
    /// blocks.
    pub heavy: bool,
}

/// Renders `ir` in dialect `d` with the code-shape knobs `tuning` (see the
/// crate docs for the launch ABI).
///
/// Fails for a kernel with an epilogue that [`fuses_epilogue`] refuses.
pub fn render_tuned(
    d: &dyn Dialect,
    ir: &KernelIr,
    tuning: Tuning,
) -> Result<RenderedKernel, Error> {
    let k = kernels::render_kernel(d, ir, tuning)?;
    Ok(RenderedKernel {
        source_hash: fnv1a64(k.source.as_bytes()),
        kind: k.kind,
        source: k.source,
        entry: "gb_main",
        finish_entry: (k.kind == KernelKind::FullReduce || k.chunks > 1).then_some("gb_finish"),
        vector_width: k.vector_width,
        mapping: k.mapping,
        partial_dtype: k.partial_dtype,
        partial_words: k.partial_words,
        chunks: k.chunks,
        heavy: k.heavy,
    })
}

/// The fused kernel for `ir`, ready to launch: found in `cache` by the IR,
/// or rendered in dialect `d` with `tuning`, compiled by `compiler` (which
/// the cache skips when it has the source in memory or on disk) and
/// remembered. The step every backend with generated kernels takes before
/// its launch.
pub fn prepare<C: gearbox_core::runtime::programs::Compiler>(
    cache: &gearbox_core::runtime::programs::ProgramCache<C::Program, RenderedKernel>,
    compiler: &C,
    d: &dyn Dialect,
    tuning: Tuning,
    ir: &KernelIr,
) -> Result<
    std::sync::Arc<gearbox_core::runtime::programs::Prepared<RenderedKernel, C::Program>>,
    Error,
> {
    cache.prepare(compiler, ir, || {
        let kernel = render_tuned(d, ir, tuning)?;
        let mut entries = vec![kernel.entry];
        entries.extend(kernel.finish_entry);
        Ok(gearbox_core::runtime::programs::Rendered {
            source: kernel.source.clone(),
            launch: kernel,
            entries,
        })
    })
}
