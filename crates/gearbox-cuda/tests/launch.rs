//! The shared launch driver (`gearbox_codegen::run_fused`) on a recording
//! runtime: the buffers it allocates, the entry points it launches, their
//! grids and their arguments follow the launch ABI, and a kernel seen
//! before is not compiled again. No GPU needed.

mod common;

use std::cell::{Cell, RefCell};

use common::*;
use gearbox_codegen::{run_fused, GridLimits, KernelArg, KernelRuntime, Toolchain, Tuning};
use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::runtime::programs::{Compiler, ProgramCache};
use gearbox_core::{DType, ReduceOp, Result};
use gearbox_cuda::codegen::{RenderedKernel, BLOCK_SIZE, CUDA, FINISH_BLOCK_SIZE};

/// A "compiler" whose program is the source text.
struct Echo;

impl Compiler for Echo {
    type Program = String;
    fn target(&self) -> String {
        "echo".into()
    }
    fn extension(&self) -> &'static str {
        "txt"
    }
    fn compile(&self, source: &str) -> Result<Vec<u8>> {
        Ok(source.as_bytes().to_vec())
    }
    fn load(&self, binary: &[u8], _entries: &[&str]) -> Result<String> {
        Ok(String::from_utf8(binary.to_vec()).expect("text"))
    }
}

/// A buffer of the recording runtime.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Buf {
    id: usize,
    len: usize,
    dtype: DType,
}

/// One argument as the runtime saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Seen {
    Buf(Buf),
    Count(i64),
}

#[derive(Debug)]
struct Launch {
    entry: String,
    grid: u32,
    block: u32,
    args: Vec<Seen>,
}

#[derive(Default)]
struct Recorder {
    next_id: Cell<usize>,
    launches: RefCell<Vec<Launch>>,
}

impl KernelRuntime for Recorder {
    type Buffer = Buf;
    type Program = String;

    fn alloc(&self, len: usize, dtype: DType) -> Result<Buf> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        Ok(Buf { id, len, dtype })
    }

    fn launch(
        &self,
        program: &String,
        entry: &str,
        grid: u32,
        block: u32,
        args: &[KernelArg<'_, Buf>],
    ) -> Result<()> {
        assert!(
            program.contains(&format!("void {entry}(")),
            "{entry} is not in the program"
        );
        let args = args
            .iter()
            .map(|a| match a {
                KernelArg::Buffer(b) => Seen::Buf(**b),
                KernelArg::Count(n) => Seen::Count(*n),
            })
            .collect();
        self.launches.borrow_mut().push(Launch {
            entry: entry.into(),
            grid,
            block,
            args,
        });
        Ok(())
    }
}

const LIMITS: GridLimits = GridLimits {
    elementwise: 64,
    heavy_elementwise: 6,
    full_reduce: 8,
    axis_reduce: 16,
};

/// Runs `ir` on fresh input buffers; returns the inputs, the outputs, the
/// reduced buffers and the launches.
#[allow(clippy::type_complexity)]
fn run(
    cache: &ProgramCache<String, RenderedKernel>,
    ir: &KernelIr,
) -> (Vec<Buf>, Vec<Buf>, Vec<Buf>, Vec<Launch>) {
    let rt = Recorder::default();
    rt.next_id.set(1000);
    let inputs: Vec<Buf> = ir
        .inputs()
        .iter()
        .map(|(s, d)| rt.alloc(s.numel(), *d).unwrap())
        .collect();
    rt.next_id.set(0);
    let refs: Vec<&Buf> = inputs.iter().collect();
    let tools = Toolchain {
        dialect: &CUDA,
        tuning: Tuning::default(),
        compiler: &Echo,
        cache,
    };
    let out = run_fused(&tools, &rt, LIMITS, ir, &refs).expect("run");
    (inputs, out.outputs, out.reduced, rt.launches.into_inner())
}

fn bufs(b: &[Buf]) -> Vec<Seen> {
    b.iter().copied().map(Seen::Buf).collect()
}

#[test]
fn an_elementwise_kernel_is_one_launch_with_inputs_outputs_and_n() {
    let cache = ProgramCache::with_disk(None);
    for n in [1usize, 1000, 5_000_000] {
        let ir = f32_chain(n);
        let (inputs, outputs, reduced, launches) = run(&cache, &ir);
        assert!(reduced.is_empty());
        assert_eq!(outputs.len(), 1);
        assert_eq!((outputs[0].len, outputs[0].dtype), (n, DType::F32));
        assert_eq!(launches.len(), 1);
        let l = &launches[0];
        assert_eq!((l.entry.as_str(), l.block), ("gb_main", BLOCK_SIZE));
        // Four f32 per thread-step, 256 threads a block, at most 64 blocks.
        let want_grid = n.div_ceil(4).div_ceil(256).clamp(1, 64) as u32;
        assert_eq!(l.grid, want_grid, "n = {n}");
        let mut want = bufs(&inputs);
        want.extend(bufs(&outputs));
        want.push(Seen::Count(n as i64));
        assert_eq!(l.args, want);
    }
}

#[test]
fn a_heavy_elementwise_kernel_takes_the_heavy_grid_limit() {
    use gearbox_core::fusion::ir::{Expr, IrNode};
    use gearbox_core::{Shape, UnaryOp};
    let cache = ProgramCache::with_disk(None);
    let n = 5_000_000;
    let s = Shape::new(vec![n]);
    let node = |expr| IrNode {
        expr,
        dtype: DType::F64,
    };
    let ir = KernelIr::new(
        s.clone(),
        vec![(s, DType::F64)],
        vec![node(Expr::Load(0)), node(Expr::Unary(UnaryOp::Exp, 0))],
        vec![1],
        None,
    )
    .unwrap();
    let (_, _, _, launches) = run(&cache, &ir);
    assert_eq!(launches.len(), 1);
    assert_eq!(launches[0].grid, LIMITS.heavy_elementwise);
    // The f32 chain (exp and sin) is light: a full grid.
    let (_, _, _, launches) = run(&cache, &f32_chain(n));
    assert_eq!(launches[0].grid, LIMITS.elementwise);
}

#[test]
fn a_full_reduction_launches_main_then_finish_over_its_partials() {
    let cache = ProgramCache::with_disk(None);
    for (n, blocks) in [(1000usize, 1u32), (10_000_000, 8)] {
        let ir = f32_full_sum(n);
        let (inputs, outputs, reduced, launches) = run(&cache, &ir);
        assert!(outputs.is_empty());
        let [result] = reduced[..] else {
            panic!("one result: {reduced:?}")
        };
        assert_eq!((result.len, result.dtype), (1, DType::F32));
        assert_eq!(launches.len(), 2, "{launches:?}");
        let (main, finish) = (&launches[0], &launches[1]);
        assert_eq!((main.entry.as_str(), main.grid), ("gb_main", blocks));
        let Seen::Buf(partials) = main.args[1] else {
            panic!("no partials buffer: {:?}", main.args)
        };
        assert_eq!(
            (partials.len, partials.dtype),
            (blocks as usize, DType::F64)
        );
        let mut want = bufs(&inputs);
        want.extend([Seen::Buf(partials), Seen::Count(n as i64)]);
        assert_eq!(main.args, want);
        assert_eq!(
            (finish.entry.as_str(), finish.grid, finish.block),
            ("gb_finish", 1, FINISH_BLOCK_SIZE)
        );
        assert_eq!(
            finish.args,
            [
                Seen::Buf(partials),
                Seen::Buf(result),
                Seen::Count(blocks as i64),
                Seen::Count(n as i64)
            ]
        );
    }
}

#[test]
fn an_integer_sum_keeps_its_partials_in_i64() {
    let cache = ProgramCache::with_disk(None);
    let ir = reduce_ir(ReduceOp::Sum, DType::I64, &shape(&[5000]), None).unwrap();
    let (_, _, reduced, launches) = run(&cache, &ir);
    assert_eq!(reduced[0].dtype, DType::I64);
    let Seen::Buf(partials) = launches[0].args[1] else {
        panic!("no partials buffer")
    };
    assert_eq!(partials.dtype, DType::I64);
}

#[test]
fn an_axis_reduction_writes_one_result_per_lane_in_one_launch() {
    let cache = ProgramCache::with_disk(None);
    let (rows, cols) = (300usize, 7usize);
    for (axis, lanes) in [(0usize, cols), (1, rows)] {
        let ir = reduce_ir(
            ReduceOp::Mean,
            DType::F64,
            &shape(&[rows, cols]),
            Some(axis),
        )
        .unwrap();
        let (inputs, _, reduced, launches) = run(&cache, &ir);
        let [red] = reduced[..] else {
            panic!("one result: {reduced:?}")
        };
        assert_eq!((red.len, red.dtype), (lanes, DType::F64));
        assert_eq!(launches.len(), 1);
        let l = &launches[0];
        assert!(
            l.grid >= 1 && l.grid <= LIMITS.axis_reduce,
            "grid {}",
            l.grid
        );
        let mut want = bufs(&inputs);
        want.extend([Seen::Buf(red), Seen::Count((rows * cols) as i64)]);
        assert_eq!(l.args, want, "axis {axis}");
    }
}

#[test]
fn empty_work_allocates_its_outputs_and_launches_nothing() {
    let cache = ProgramCache::with_disk(None);
    let (_, outputs, _, launches) = run(&cache, &f32_chain(0));
    assert_eq!(outputs[0].len, 0);
    assert!(launches.is_empty());
    // A sum of nothing still runs both passes: the finish writes the 0.
    let (_, _, reduced, launches) = run(&cache, &f32_full_sum(0));
    assert_eq!(reduced[0].len, 1);
    assert_eq!(launches.len(), 2);
}

#[test]
fn a_kernel_seen_before_is_not_compiled_again() {
    use std::sync::atomic::Ordering::Relaxed;
    let cache = ProgramCache::with_disk(None);
    run(&cache, &f32_chain(1000));
    assert_eq!(cache.misses.load(Relaxed), 1);
    run(&cache, &f32_chain(1000));
    assert_eq!(cache.misses.load(Relaxed), 1);
    // Same source at another size (no broadcast): found by its hash.
    run(&cache, &f32_chain(2000));
    assert_eq!(cache.misses.load(Relaxed), 1);
    assert!(cache.hits.load(Relaxed) >= 1);
}

#[test]
fn a_companion_result_follows_the_result_in_every_launch_that_finishes() {
    let cache = ProgramCache::with_disk(None);
    // A full reduction: the finish pass writes both.
    let n = 10_000_000;
    let (_, _, reduced, launches) = run(
        &cache,
        &moments_with_mean_ir(ReduceOp::Sd, DType::F64, &shape(&[n]), None).unwrap(),
    );
    let [result, companion] = reduced[..] else {
        panic!("two results: {reduced:?}")
    };
    assert_ne!(result.id, companion.id);
    assert_eq!((companion.len, companion.dtype), (1, DType::F64));
    let finish = &launches[1];
    assert_eq!(finish.args[1..3], [Seen::Buf(result), Seen::Buf(companion)]);
    assert_eq!(finish.args.len(), 5);
    // One launch per axis reduction: both after the inputs, then n.
    let (rows, cols) = (300usize, 7usize);
    for (axis, lanes) in [(0usize, cols), (1, rows)] {
        let ir = moments_with_mean_ir(ReduceOp::Var, DType::F64, &shape(&[rows, cols]), Some(axis))
            .unwrap();
        let (inputs, _, reduced, launches) = run(&cache, &ir);
        assert_eq!(reduced.len(), 2);
        assert!(reduced.iter().all(|b| b.len == lanes));
        assert_eq!(launches.len(), 1);
        let mut want = bufs(&inputs);
        want.extend(bufs(&reduced));
        want.push(Seen::Count((rows * cols) as i64));
        assert_eq!(launches[0].args, want, "axis {axis}");
    }
}
