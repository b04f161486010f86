//! Launching fused kernels: render the IR ([`crate::codegen`]), take the
//! module from the kernel cache, allocate outputs from the pool and launch
//! with the codegen's ABI (inputs, outputs, reduction buffer, `n`; device
//! pointers passed as 64-bit values).

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::{DType, Result};

use crate::codegen::{KernelKind, BLOCK_SIZE, FINISH_BLOCK_SIZE};
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::params::params;
use crate::pool::CudaBuf;

/// Launches `f` on `grid` blocks of `block` threads with pointer arguments
/// `ptrs` followed by `n`.
fn launch(
    dev: &Device,
    f: &CudaFunction,
    grid: u32,
    block: u32,
    ptrs: &[u64],
    n: i64,
) -> Result<()> {
    let mut args = dev.stream.launch_builder(f);
    for p in ptrs {
        args.arg(p);
    }
    args.arg(&n);
    let cfg = LaunchConfig {
        grid_dim: (grid.max(1), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the argument list follows the kernel's ABI (codegen module docs):
    // one device pointer per input, output and reduction buffer, then n; every
    // buffer holds at least the elements the kernel touches.
    unsafe { args.launch(cfg) }
        .map(|_| ())
        .map_err(|e| fault("kernel launch", e))
}

/// Runs a fused kernel; returns its full-size outputs and its reduced result.
pub fn run_kernel(
    dev: &Device,
    cache: &KernelCache,
    ir: &KernelIr,
    inputs: &[&CudaBuf],
) -> Result<(Vec<CudaBuf>, Option<CudaBuf>)> {
    let prepared = cache.prepare(dev, ir)?;
    let (k, compiled) = (&prepared.launch, &prepared.program);
    let n = ir.shape().numel();
    let outputs: Vec<CudaBuf> = ir
        .outputs()
        .iter()
        .map(|&o| dev.pool.alloc(n, ir.nodes()[o].dtype))
        .collect::<Result<_>>()?;
    let mut ptrs: Vec<u64> = inputs
        .iter()
        .map(|b| dev.ptr(b))
        .chain(outputs.iter().map(|b| dev.ptr(b)))
        .collect();
    let sms = dev.sm_count.max(1);
    let max_grid = sms.saturating_mul(params().blocks_per_sm);
    let main = compiled.function(k.entry)?;
    let reduced = match (k.kind, ir.reduce()) {
        (KernelKind::Elementwise, _) => {
            if n > 0 {
                let grid = k
                    .mapping
                    .suggested_grid(n, k.vector_width, BLOCK_SIZE, max_grid);
                launch(dev, main, grid, BLOCK_SIZE, &ptrs, n as i64)?;
            }
            None
        }
        (KernelKind::FullReduce, Some(r)) => {
            let reduce_grid = sms.saturating_mul(params().reduce_blocks_per_sm);
            let grid = k
                .mapping
                .suggested_grid(n, k.vector_width, BLOCK_SIZE, reduce_grid);
            let partial_dtype = k.partial_dtype.unwrap_or(DType::F64);
            let partials = dev.pool.alloc(grid as usize, partial_dtype)?;
            let result = dev.pool.alloc(1, r.dtype)?;
            ptrs.push(dev.ptr(&partials));
            launch(dev, main, grid, BLOCK_SIZE, &ptrs, n as i64)?;
            let finish = compiled.function(k.finish_entry.unwrap_or("gb_finish"))?;
            let fin = [dev.ptr(&partials), dev.ptr(&result), grid as u64];
            // gb_finish(partials, result, num_partials, n): the third argument is a count.
            let mut args = dev.stream.launch_builder(finish);
            args.arg(&fin[0]).arg(&fin[1]);
            let (num, total) = (grid as i64, n as i64);
            args.arg(&num).arg(&total);
            let cfg = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (FINISH_BLOCK_SIZE, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: gb_finish's ABI: partials (num entries), result (1 entry), num, n.
            unsafe { args.launch(cfg) }.map_err(|e| fault("kernel launch", e))?;
            drop(partials);
            Some(result)
        }
        (KernelKind::AxisReduce, Some(r)) => {
            let lanes = ir.reduced_shape().map_or(1, |s| s.numel());
            let red = dev.pool.alloc(lanes, r.dtype)?;
            ptrs.push(dev.ptr(&red));
            if lanes > 0 {
                let axis_grid = sms.saturating_mul(params().axis_blocks_per_sm);
                let grid = k
                    .mapping
                    .suggested_grid(n, k.vector_width, BLOCK_SIZE, axis_grid);
                launch(dev, main, grid, BLOCK_SIZE, &ptrs, n as i64)?;
            }
            Some(red)
        }
        (_, None) => {
            return Err(fault(
                "kernel launch",
                "a reduction kernel without a reduction",
            ))
        }
    };
    Ok((outputs, reduced))
}
