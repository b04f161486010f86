//! The per-point grid call ([`gearbox_core::ops::linear_grid`]) on the
//! device: the observations are looped over, staged through shared memory
//! a tile at a time (the design, the offset and the per-observation
//! columns) and read by every point of the block; `eta`, the summed terms
//! and the gradient stay in registers, so nothing of size `observations x
//! points` is ever written. Two kernels: one point per thread on the CUDA
//! cores (`scalar`) and 8-point groups per warp on the float64 tensor
//! cores (`mma`); [`grid_kernel`] picks one by width and device.
//!
//! Long designs with few points are cut into observation slices (a second
//! grid dimension) so the device stays busy: each slice writes partial
//! sums, and a finishing kernel adds the slices in order and the penalty.
//! The source is specific to `l2`, the term functions, the column layout
//! and the point form (all constants, so the coefficient loops unroll),
//! and is cached by source. `GEARBOX_CUDA_GRID_REPORT` prints each
//! launch's kernel, registers, spills and occupancy to stderr.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use gearbox_core::ops::linear_grid::{GridPoints, InputLayout, LinearGridId};
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::{DType, Result, Shape};

use crate::blas::unsupported;
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::params::{params, Choice};
use crate::pool::CudaBuf;

mod mma;
mod scalar;
mod source;

/// Threads per block, both kernels. With 256, `__launch_bounds__` holds a
/// thread to 255 registers and the compiler settles near 128 for the
/// scalar kernel's narrow designs, so enough warps hide the float64
/// latency of the terms. One point per thread there: each point's
/// coefficients and gradient live in registers, so a second point would
/// double them (spilling past l2 = 16) and halve the warps in flight.
const BLOCK: usize = 256;
/// Observations per shared-memory tile of the scalar kernel, at most:
/// fewer for wide designs, so a tile of the design stays within 32 KiB.
const TILE: usize = 32;
/// The widest design the kernels take (the scalar kernel's registers and
/// tile would not fit beyond); wider work is declined and runs on the CPU.
const MAX_L2: usize = 1024;

/// The kernel's shape parameters, baked into the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GridShape {
    l2: usize,
    /// Threads per block of the main kernel.
    block: usize,
    /// Observations per tile.
    tile: usize,
    /// Blocks each SM must be able to hold (`__launch_bounds__`'s second
    /// argument; 0: the compiler's choice).
    min_blocks: usize,
    product: bool,
}

/// Which kernel takes the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridKernel {
    /// One point per thread on the CUDA cores (`scalar`).
    Scalar,
    /// The float64 tensor cores (`mma`), with this many groups of 8
    /// points per warp.
    Mma {
        /// Point groups of 8 per warp.
        groups: usize,
        /// Threads per block.
        block: usize,
    },
}

/// The kernel for `l2` coefficients on a device of compute capability
/// `cc`: the tensor cores for [`MMA_MIN_L2`] to [`MMA_MAX_L2`]
/// coefficients where the device has float64 `mma` (8.0 on), else the
/// CUDA cores.
/// The knob `GEARBOX_CUDA_GRID_MMA` ([`crate::params`]) forces either (the
/// tensor cores only where they can take the width), for measurements and
/// tests.
pub fn grid_kernel(cc: (i32, i32), l2: usize) -> GridKernel {
    let possible = cc.0 >= 8 && l2 <= MMA_MAX_L2;
    let wanted = match params().grid.mma {
        Choice::Off => false,
        Choice::On => true,
        Choice::Auto => l2 >= MMA_MIN_L2,
    };
    if possible && wanted {
        GridKernel::Mma {
            groups: mma::groups(),
            block: mma::block(),
        }
    } else {
        GridKernel::Scalar
    }
}

/// The fewest coefficients for which the tensor-core kernel is chosen: at
/// 8 it ties with the CUDA-core kernel on an H100, at 4 it is 0.8-1x of
/// it, from 14 on 1-2.2x (docs/perf/stats.md).
pub const MMA_MIN_L2: usize = 8;

/// The most coefficients the tensor-core kernel takes.
pub const MMA_MAX_L2: usize = mma::MAX_L2;

/// Blocks of 256 threads each SM must hold (`__launch_bounds__`): three
/// (80 registers a thread) for the CUDA-core kernel's narrow designs and
/// the tensor-core kernel up to 32 coefficients, where the terms' float64
/// latency wants the warps more than the few spilled registers cost; two
/// (128 registers) for the tensor-core kernel up to 64, whose coefficients
/// and gradient sums would spill inside the tile loop at 80; the
/// compiler's choice above, and for wide designs on the CUDA cores, whose
/// coefficients must stay in registers (measured on an H100 at 4, 14, 32
/// and 64 coefficients, docs/perf/stats.md).
/// The knob `GEARBOX_CUDA_GRID_MIN_BLOCKS` overrides it, for measurements.
fn min_blocks(kernel: GridKernel, l2: usize) -> usize {
    params().grid.min_blocks.unwrap_or(match kernel {
        GridKernel::Mma { block: 256, .. } if l2 <= 32 => 3,
        GridKernel::Mma { block: 256, .. } if l2 <= 64 => 2,
        GridKernel::Scalar if l2 < MMA_MIN_L2 => 3,
        _ => 0,
    })
}

/// Prints the main kernel's registers, local memory (spills) and blocks
/// per SM to stderr (`GEARBOX_CUDA_GRID_REPORT`, for tuning).
fn report(f: &cudarc::driver::CudaFunction, kernel: GridKernel, plan: GridShape, slices: usize) {
    eprintln!(
        "grid kernel {kernel:?} l2 {} tile {} slices {slices}: {:?} registers, {:?} local bytes, {:?} blocks of {} per SM",
        plan.l2,
        plan.tile,
        f.num_regs().ok(),
        f.local_size_bytes().ok(),
        f.occupancy_max_active_blocks_per_multiprocessor(plan.block as u32, 0, None)
            .ok(),
        plan.block
    );
}

/// Observation slices for `point_blocks` blocks of points over `l1`
/// observations: enough blocks for about eight per SM, each slice at least
/// four tiles long.
fn slices_for(dev: &Device, point_blocks: usize, l1: usize, tile: usize) -> usize {
    let want = (dev.sm_count as usize * 8).div_ceil(point_blocks.max(1));
    let most = l1.div_ceil(4 * tile).max(1);
    want.clamp(1, most)
}

/// The kernel's shape parameters for `l2` coefficients, and the grid
/// points each block takes.
fn shape_of(kernel: GridKernel, l2: usize, product: bool) -> (GridShape, usize) {
    match kernel {
        GridKernel::Scalar => (
            GridShape {
                l2,
                block: BLOCK,
                tile: (4096 / l2).clamp(1, TILE),
                min_blocks: min_blocks(kernel, l2),
                product,
            },
            scalar::POINTS_PER_BLOCK,
        ),
        GridKernel::Mma { groups, block } => (
            GridShape {
                l2,
                block,
                tile: mma::tile_for(l2),
                min_blocks: min_blocks(kernel, l2),
                product,
            },
            block / 32 * 8 * groups,
        ),
    }
}

/// Runs the grid call: `inputs` as the primitive takes them, result
/// `(1 + l2) x m`.
pub fn linear_grid(
    dev: &Device,
    cache: &KernelCache,
    id: LinearGridId,
    points: GridPoints,
    inputs: &[(&CudaBuf, &Shape)],
    out: &Shape,
) -> Result<CudaBuf> {
    let spec = id.spec()?;
    let layout = InputLayout::of(points);
    if inputs.iter().any(|(b, _)| b.dtype() != DType::F64) {
        return Err(unsupported("the grid kernel takes f64 inputs".into()));
    }
    let x_shape = inputs[0].1;
    let l1 = x_shape.dim(0);
    let l2 = out.dim(0) - 1;
    let m = out.dim(1);
    let result = dev.pool.alloc(out.numel(), DType::F64)?;
    if m == 0 {
        return Ok(result);
    }
    let columns = &inputs[layout.columns..];
    let full: Vec<bool> = columns
        .iter()
        .map(|(_, s)| s.numel() != 1 || l1 == 1)
        .collect();
    if l2 > MAX_L2 {
        return Err(unsupported(format!(
            "the grid kernel takes at most {MAX_L2} coefficients, not {l2}"
        )));
    }
    let product = matches!(points, GridPoints::Product { .. });
    let kernel = grid_kernel(dev.cc, l2);
    let (plan, points_per_block) = shape_of(kernel, l2, product);
    // The source holds the term functions' device library: rendered once
    // per spec, column layout, plan and kernel, then found by those.
    let key = format!("linear_grid/{}/{full:?}/{plan:?}/{kernel:?}", id.0);
    let compiled = cache.keyed(
        dev,
        key,
        &["gb_linear_grid", "gb_linear_grid_finish"],
        || match kernel {
            GridKernel::Scalar => scalar::render(spec, &full, plan),
            GridKernel::Mma { groups, .. } => mma::render(spec, &full, plan, groups),
        },
    )?;
    let (first, counts) = match points {
        GridPoints::Dense => (0u64, dev.ptr(inputs[1].0)),
        GridPoints::Product { first, .. } => (first, dev.ptr(inputs[2].0)),
    };
    let point_blocks = m.div_ceil(points_per_block);
    let slices = slices_for(dev, point_blocks, l1, plan.tile);
    let per_slice = (l1.div_ceil(slices)).div_ceil(plan.tile) * plan.tile;
    let slices = l1.div_ceil(per_slice.max(1)).max(1);
    // Either kernel finishes its points itself when it has the whole
    // design, and leaves partial sums for the finishing kernel otherwise.
    let parts = if slices > 1 {
        Some(dev.pool.alloc(slices * out.numel(), DType::F64)?)
    } else {
        None
    };
    let ptrs: Vec<u64> = inputs.iter().map(|(b, _)| dev.ptr(b)).collect();
    let (px, pb) = (ptrs[0], ptrs[1]);
    let (po, pmu, pp) = (ptrs[layout.offset], ptrs[layout.mu], ptrs[layout.p]);
    let pout = dev.ptr(parts.as_ref().unwrap_or(&result));
    let (l1i, mi, per_slice_i) = (l1 as i64, m as i64, per_slice as i64);
    let f = compiled.function("gb_linear_grid")?;
    if params().grid.report {
        report(f, kernel, plan, slices);
    }
    let mut launch = dev.stream.launch_builder(f);
    launch
        .arg(&px)
        .arg(&pb)
        .arg(&counts)
        .arg(&po)
        .arg(&pmu)
        .arg(&pp);
    for p in &ptrs[layout.columns..] {
        launch.arg(p);
    }
    launch
        .arg(&pout)
        .arg(&l1i)
        .arg(&mi)
        .arg(&first)
        .arg(&per_slice_i);
    let config = LaunchConfig {
        grid_dim: (point_blocks as u32, slices as u32, 1),
        block_dim: (plan.block as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel reads X (l1 x l2), the points, the offset, mu, P
    // and the columns within the sizes the primitive checked, and writes
    // (1 + l2) values per point of `m`, per slice when there are several,
    // into a buffer of that size; the arguments follow `render`'s signature.
    unsafe { launch.launch(config) }.map_err(|e| fault("linear_grid", e))?;
    if let Some(parts) = &parts {
        finish(
            dev,
            &compiled,
            parts,
            &result,
            [pb, counts, pmu, pp],
            m,
            first,
            slices,
        )?;
    }
    Ok(result)
}

/// Launches the finishing kernel: adds the `slices` partial results in
/// order and the penalty, into `result`. `ptrs` are the points, the
/// product grid's counts, `mu` and `P`, as the main kernel took them.
#[allow(clippy::too_many_arguments)]
fn finish(
    dev: &Device,
    compiled: &crate::compile::Compiled,
    parts: &CudaBuf,
    result: &CudaBuf,
    ptrs: [u64; 4],
    m: usize,
    first: u64,
    slices: usize,
) -> Result<()> {
    let [pb, counts, pmu, pp] = ptrs;
    let mi = m as i64;
    let f = compiled.function("gb_linear_grid_finish")?;
    let (pparts, pres, sl) = (dev.ptr(parts), dev.ptr(result), slices as i32);
    let config = LaunchConfig {
        grid_dim: (m.div_ceil(BLOCK).min(1 << 16) as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: reads `slices` partial results of (1 + l2) x m values and
    // writes the (1 + l2) x m result; arguments follow `render`.
    unsafe {
        dev.stream
            .launch_builder(f)
            .arg(&pb)
            .arg(&counts)
            .arg(&pmu)
            .arg(&pp)
            .arg(&pparts)
            .arg(&pres)
            .arg(&mi)
            .arg(&first)
            .arg(&sl)
            .launch(config)
    }
    .map_err(|e| fault("linear_grid", e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gearbox_core::fusion::ir::{DeviceLibrary, FnRef, ScalarFn};
    use gearbox_core::ops::linear_grid::{GridTerm, LinearGridSpec, TermArg};

    fn assemble(names: &[&str]) -> Result<String> {
        Ok(names
            .iter()
            .map(|n| format!("__device__ double {n}(double e, double a, double b, int f) {{ return e * a + b; }}\n"))
            .collect())
    }

    static LIB: DeviceLibrary = DeviceLibrary {
        name: "test",
        assemble,
    };
    static F: ScalarFn = ScalarFn {
        name: "f",
        device_name: "gb_f",
        arity: 3,
        flags: 1,
        eval: |a, _| a[0] * a[1] + a[2],
        library: &LIB,
        partials: None,
    };
    static PAIR: ScalarFn = ScalarFn {
        name: "pair",
        device_name: "gb_pair",
        arity: 6,
        flags: 2,
        ..F
    };

    #[test]
    fn the_source_reads_full_columns_from_the_tile_and_scalars_from_registers() {
        let term = GridTerm::new(
            &F,
            1,
            &[TermArg::Eta, TermArg::Column(1), TermArg::Column(0)],
        )
        .unwrap();
        let plan = GridShape {
            l2: 3,
            block: BLOCK,
            tile: 32,
            min_blocks: 3,
            product: true,
        };
        let spec = LinearGridSpec {
            value: term,
            slope: term,
            pair: None,
            runs: None,
            columns: 3,
        };
        // Column 0 is a scalar, column 1 and 2 full.
        let src = scalar::render(&spec, &[false, true, true], plan).unwrap();
        if std::env::var_os("GEARBOX_PRINT_SOURCE").is_some() {
            println!("{src}");
        }
        assert!(src.contains("gb_f(eta, cs[t * NF + 0], sc0, 1)"), "{src}");
        assert!(src.contains("const double sc0 = col0[0];"), "{src}");
        assert!(
            src.contains("cs[t * NF + 1] = t < n ? col2[base + t] : 0.0;"),
            "{src}"
        );
        assert!(src.contains("#define L2 3"), "{src}");
        assert_eq!(src.matches("__device__ double gb_f").count(), 1, "{src}");
        // With a pair, one call per observation: both terms' arguments and
        // flags, then the slope's address.
        let paired = LinearGridSpec {
            pair: Some(FnRef(&PAIR)),
            ..spec
        };
        let src = scalar::render(&paired, &[false, true, true], plan).unwrap();
        let call = "v += gb_pair(eta, cs[t * NF + 0], sc0, eta, cs[t * NF + 0], sc0, 1, 1, &s);";
        assert!(src.contains(call), "{src}");
        assert!(!src.contains("gb_f("), "{src}");
        // The tensor-core kernel: the same calls into its per-group sums,
        // both kernels' entry points, the product's digits per lane.
        let src = mma::render(&paired, &[false, true, true], plan, 2).unwrap();
        if std::env::var_os("GEARBOX_PRINT_SOURCE").is_some() {
            println!("{src}");
        }
        let call = "v[p] += gb_pair(eta, cs[t * NF + 0], sc0, eta, cs[t * NF + 0], sc0, 1, 1, &s);";
        assert!(src.contains(call), "{src}");
        assert!(src.contains("mma.sync.aligned.m8n8k4.row.col.f64"), "{src}");
        assert!(src.contains("gb_point_quarter(const double* sets"), "{src}");
        assert!(src.contains("gb_linear_grid_finish"), "{src}");
    }

    #[test]
    fn narrow_kernels_ask_for_three_blocks_and_wide_tensor_core_ones_for_two() {
        if std::env::var_os("GEARBOX_CUDA_GRID_MIN_BLOCKS").is_some() {
            return;
        }
        let mma = GridKernel::Mma {
            groups: 1,
            block: 256,
        };
        let cases = [
            (GridKernel::Scalar, 4, 3),
            (GridKernel::Scalar, 200, 0),
            (mma, 8, 3),
            (mma, 32, 3),
            (mma, 33, 2),
            (mma, 64, 2),
            (mma, 65, 0),
        ];
        for (kernel, l2, want) in cases {
            assert_eq!(min_blocks(kernel, l2), want, "{kernel:?} at {l2}");
        }
        let other_block = GridKernel::Mma {
            groups: 1,
            block: 128,
        };
        assert_eq!(min_blocks(other_block, 14), 0);
    }

    #[test]
    fn the_tensor_cores_take_the_widths_they_can_on_devices_that_have_them() {
        if [
            "GEARBOX_CUDA_GRID_MMA",
            "GEARBOX_CUDA_GRID_MMA_GROUPS",
            "GEARBOX_CUDA_GRID_MMA_BLOCK",
        ]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
        {
            return;
        }
        assert_eq!(grid_kernel((9, 0), 4), GridKernel::Scalar);
        assert_eq!(
            grid_kernel((9, 0), 64),
            GridKernel::Mma {
                groups: 1,
                block: 256
            }
        );
        assert_eq!(
            grid_kernel((8, 0), 128),
            GridKernel::Mma {
                groups: 1,
                block: 256
            }
        );
        assert_eq!(grid_kernel((9, 0), 129), GridKernel::Scalar);
        assert_eq!(grid_kernel((7, 5), 64), GridKernel::Scalar);
    }
}
