//! Running a fused kernel, written once for every backend: a backend
//! supplies an allocator and a launcher ([`KernelRuntime`]) and a compiler
//! ([`Compiler`]); [`run_fused`] renders (or finds) the program, allocates
//! the outputs and scratch, sizes the grids and launches the entry points in
//! the order and with the arguments of the launch ABI (crate docs).

use std::sync::Arc;

use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::runtime::programs::{Compiler, ProgramCache};
use gearbox_core::{DType, Error, Result};

use crate::{prepare, Dialect, KernelKind, RenderedKernel, Tuning, BLOCK_SIZE, FINISH_BLOCK_SIZE};

/// One argument of a kernel launch, in the order of the kernel's
/// parameters.
#[derive(Debug)]
pub enum KernelArg<'a, B> {
    /// A device buffer.
    Buffer(&'a B),
    /// A 64-bit signed count (`n`, a number of partials).
    Count(i64),
}

/// The arguments of `gb_main`: the inputs, the outputs, then `tail`.
fn main_args<'a, B>(
    inputs: &[&'a B],
    outputs: &[&'a B],
    tail: &[KernelArg<'a, B>],
) -> Vec<KernelArg<'a, B>> {
    inputs
        .iter()
        .chain(outputs)
        .map(|b| KernelArg::Buffer(*b))
        .chain(tail.iter().map(KernelArg::copy))
        .collect()
}

impl<'a, B> KernelArg<'a, B> {
    /// The same argument (a buffer reference or a count is `Copy` whatever
    /// `B` is).
    fn copy(&self) -> Self {
        match *self {
            KernelArg::Buffer(b) => KernelArg::Buffer(b),
            KernelArg::Count(n) => KernelArg::Count(n),
        }
    }
}

/// What a backend does for [`run_fused`]: allocate device buffers and
/// launch an entry point of a loaded program on a 1-D grid.
pub trait KernelRuntime {
    /// A device buffer.
    type Buffer;
    /// A loaded program (the [`Compiler::Program`] of the backend).
    type Program;

    /// A new buffer of `len` elements of `dtype` (contents undefined).
    fn alloc(&self, len: usize, dtype: DType) -> Result<Self::Buffer>;

    /// Queues `entry` of `program` on `grid` blocks of `block` threads.
    fn launch(
        &self,
        program: &Self::Program,
        entry: &str,
        grid: u32,
        block: u32,
        args: &[KernelArg<'_, Self::Buffer>],
    ) -> Result<()>;
}

/// The most blocks a launch of each kind may have (the device's compute
/// units times blocks per unit, per kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridLimits {
    /// Elementwise kernels.
    pub elementwise: u32,
    /// Elementwise kernels with a heavy body (`RenderedKernel::heavy`),
    /// whose threads loop over several packs each.
    pub heavy_elementwise: u32,
    /// The first pass of a full reduction (its partials buffer has one
    /// entry per block).
    pub full_reduce: u32,
    /// Axis reductions.
    pub axis_reduce: u32,
}

/// How a backend renders, compiles and caches fused kernels: the pieces
/// [`run_fused`] drives besides the runtime.
pub struct Toolchain<'a, C: Compiler> {
    /// The language the kernels are written in.
    pub dialect: &'a dyn Dialect,
    /// Code-shape knobs.
    pub tuning: Tuning,
    /// The compiler of rendered sources.
    pub compiler: &'a C,
    /// Programs by IR, source and on disk.
    pub cache: &'a ProgramCache<C::Program, RenderedKernel>,
}

/// The full-size outputs of a fused kernel, in IR output order, and its
/// reduced results.
#[derive(Debug)]
pub struct FusedOutputs<B> {
    /// One buffer per IR output, with as many elements as the iteration
    /// shape.
    pub outputs: Vec<B>,
    /// One buffer per reduced result ([`KernelIr::reduced_results`]: the
    /// reduction's, then its companion's).
    pub reduced: Vec<B>,
}

impl<B: gearbox_core::runtime::backend::DeviceBuffer + 'static> FusedOutputs<B> {
    /// The outputs as the runtime's shared device buffers.
    pub fn into_device_outputs(self) -> gearbox_core::runtime::backend::DeviceOutputs {
        let wrap = |b: B| -> gearbox_core::runtime::backend::DeviceArc { Arc::new(b) };
        gearbox_core::runtime::backend::DeviceOutputs {
            outputs: self.outputs.into_iter().map(wrap).collect(),
            reduced: self.reduced.into_iter().map(wrap).collect(),
        }
    }
}

/// Runs the fused kernel of `ir` on `inputs` (one buffer per IR input, in
/// order): the program comes from `tools` (rendered and compiled on first
/// use), the buffers and launches from `rt`.
pub fn run_fused<C, R>(
    tools: &Toolchain<'_, C>,
    rt: &R,
    limits: GridLimits,
    ir: &KernelIr,
    inputs: &[&R::Buffer],
) -> Result<FusedOutputs<R::Buffer>>
where
    C: Compiler,
    R: KernelRuntime<Program = C::Program>,
{
    let n = ir.shape().numel();
    let outputs: Vec<R::Buffer> = ir
        .outputs()
        .iter()
        .map(|&o| rt.alloc(n, ir.nodes()[o].dtype))
        .collect::<Result<_>>()?;
    let lanes = ir.reduced_shape().map_or(1, |s| s.numel());
    let reduced: Vec<R::Buffer> = ir
        .reduce()
        .map(|r| (0..ir.reduced_results()).map(|_| rt.alloc(lanes, r.dtype)))
        .into_iter()
        .flatten()
        .collect::<Result<_>>()?;
    let targets: Vec<&R::Buffer> = outputs.iter().collect();
    let reduced_targets: Vec<&R::Buffer> = reduced.iter().collect();
    run_fused_into(tools, rt, limits, ir, inputs, &targets, &reduced_targets)?;
    Ok(FusedOutputs { outputs, reduced })
}

/// [`run_fused`] writing into existing buffers: `outputs` (one per IR
/// output, as many elements as the iteration shape) and `reduced` (one
/// per reduced result, [`KernelIr::reduced_results`]). An output may also be one of the inputs when the IR reads that input
/// only at the element it writes (same shape, no broadcast): every
/// element is read before the same thread writes it, which is how
/// resident handles update their buffers in place. Lengths and dtypes are
/// the caller's to check (the runtime's buffers know them; `B` need not).
pub fn run_fused_into<C, R>(
    tools: &Toolchain<'_, C>,
    rt: &R,
    limits: GridLimits,
    ir: &KernelIr,
    inputs: &[&R::Buffer],
    outputs: &[&R::Buffer],
    reduced: &[&R::Buffer],
) -> Result<()>
where
    C: Compiler,
    R: KernelRuntime<Program = C::Program>,
{
    if outputs.len() != ir.outputs().len() || reduced.len() != ir.reduced_results() {
        return Err(Error::InvalidArgument {
            op: "run_fused_into",
            name: "outputs",
            value: format!(
                "{} outputs and {} reduced results",
                outputs.len(),
                reduced.len()
            ),
            why: format!(
                "the kernel writes {} outputs and {} reduced results",
                ir.outputs().len(),
                ir.reduced_results()
            ),
        });
    }
    // A kernel with an epilogue is in the cache only if it ran as one
    // kernel before: the check whether it can is made once.
    let prepared = match tools.cache.prepared(ir) {
        Some(p) => p,
        None if ir.has_epilogue() && !crate::fuses_epilogue(tools.dialect, ir, tools.tuning) => {
            return run_split_epilogue(tools, rt, limits, ir, inputs, outputs, reduced);
        }
        None => prepare(tools.cache, tools.compiler, tools.dialect, tools.tuning, ir)?,
    };
    let k = &prepared.launch;
    let program = &*prepared.program;
    let n = ir.shape().numel();
    let grid = |max: u32| k.mapping.suggested_grid(n, k.vector_width, BLOCK_SIZE, max);
    let count = n as i64;
    match (k.kind, reduced.first()) {
        (KernelKind::Elementwise, _) => {
            if n > 0 {
                let args = main_args(inputs, outputs, &[KernelArg::Count(count)]);
                rt.launch(
                    program,
                    k.entry,
                    grid(if k.heavy {
                        limits.heavy_elementwise
                    } else {
                        limits.elementwise
                    }),
                    BLOCK_SIZE,
                    &args,
                )?;
            }
        }
        (KernelKind::FullReduce, Some(_)) => {
            let blocks = grid(limits.full_reduce);
            let passes = TwoPasses {
                partials: blocks as usize,
                main_grid: blocks,
                results: reduced,
                num_partials: blocks as i64,
                n: count,
                finish_grid: 1,
            };
            passes.launch(rt, program, k, inputs, outputs, count)?;
        }
        (KernelKind::AxisReduce, Some(_)) if k.chunks > 1 => {
            let lanes = ir.reduced_shape().map_or(1, |s| s.numel());
            let passes = TwoPasses {
                partials: lanes * k.chunks,
                main_grid: grid(limits.axis_reduce),
                results: reduced,
                num_partials: k.chunks as i64,
                n: lanes as i64,
                finish_grid: crate::split::finish_blocks(lanes, k.chunks)
                    .clamp(1, limits.axis_reduce.max(1) as usize)
                    as u32,
            };
            passes.launch(rt, program, k, inputs, outputs, count)?;
        }
        (KernelKind::AxisReduce, Some(_)) => {
            let lanes = ir.reduced_shape().map_or(1, |s| s.numel());
            if lanes > 0 {
                let tail: Vec<KernelArg<'_, R::Buffer>> = reduced
                    .iter()
                    .map(|b| KernelArg::Buffer(*b))
                    .chain([KernelArg::Count(count)])
                    .collect();
                let args = main_args(inputs, outputs, &tail);
                rt.launch(
                    program,
                    k.entry,
                    grid(limits.axis_reduce),
                    BLOCK_SIZE,
                    &args,
                )?;
            }
        }
        (kind, None) => {
            return Err(Error::InvalidArgument {
                op: "run_fused",
                name: "ir",
                value: format!("a {kind:?} kernel"),
                why: "a reduction kernel needs an IR with a reduction".into(),
            })
        }
    }
    Ok(())
}

/// A kernel with an epilogue that does not run in one kernel here, as its
/// two passes ([`KernelIr::split_epilogue`]): the reduction into
/// `reduced`, then the outputs reading it.
fn run_split_epilogue<C, R>(
    tools: &Toolchain<'_, C>,
    rt: &R,
    limits: GridLimits,
    ir: &KernelIr,
    inputs: &[&R::Buffer],
    outputs: &[&R::Buffer],
    reduced: &[&R::Buffer],
) -> Result<()>
where
    C: Compiler,
    R: KernelRuntime<Program = C::Program>,
{
    let (pre, epi) = ir.split_epilogue().ok_or_else(|| Error::InvalidArgument {
        op: "run_fused",
        name: "ir",
        value: "a kernel with an epilogue".into(),
        why: "its epilogue cannot be split from its reduction".into(),
    })?;
    run_fused_into(tools, rt, limits, &pre, inputs, &[], reduced)?;
    let mut all: Vec<&R::Buffer> = inputs.to_vec();
    all.extend(reduced);
    run_fused_into(tools, rt, limits, &epi, &all, outputs, &[])
}

/// A kernel that leaves `partials` accumulators for `gb_finish` (a full
/// reduction, a split axis reduction): `gb_main` on `main_grid` blocks,
/// then `gb_finish(partials, results.., num_partials, n)` on
/// `finish_grid`.
struct TwoPasses<'a, B> {
    partials: usize,
    main_grid: u32,
    results: &'a [&'a B],
    num_partials: i64,
    n: i64,
    finish_grid: u32,
}

impl<B> TwoPasses<'_, B> {
    /// Allocates the partials and launches both passes.
    fn launch<R: KernelRuntime<Buffer = B> + ?Sized>(
        &self,
        rt: &R,
        program: &R::Program,
        k: &RenderedKernel,
        inputs: &[&B],
        outputs: &[&B],
        count: i64,
    ) -> Result<()> {
        let words = self.partials * k.partial_words;
        let partials = rt.alloc(words, k.partial_dtype.unwrap_or(DType::F64))?;
        let args = main_args(
            inputs,
            outputs,
            &[KernelArg::Buffer(&partials), KernelArg::Count(count)],
        );
        rt.launch(program, k.entry, self.main_grid, BLOCK_SIZE, &args)?;
        let finish: Vec<KernelArg<'_, B>> = std::iter::once(KernelArg::Buffer(&partials))
            .chain(self.results.iter().map(|b| KernelArg::Buffer(*b)))
            .chain([
                KernelArg::Count(self.num_partials),
                KernelArg::Count(self.n),
            ])
            .collect();
        let entry = k.finish_entry.unwrap_or("gb_finish");
        rt.launch(program, entry, self.finish_grid, FINISH_BLOCK_SIZE, &finish)
    }
}
