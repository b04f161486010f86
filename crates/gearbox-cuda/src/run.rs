//! Launching on the CUDA device: the [`KernelRuntime`] through which the
//! shared runtime ([`gearbox_codegen::run_fused`]) allocates from the pool
//! and launches fused kernels, and the grid limits of this device.

use cudarc::driver::{LaunchConfig, PushKernelArg};
use gearbox_codegen::{GridLimits, KernelArg, KernelRuntime};
use gearbox_core::{DType, Result};

use crate::compile::Compiled;
use crate::device::{fault, Device};
use crate::params::params;
use crate::pool::CudaBuf;

impl KernelRuntime for Device {
    type Buffer = CudaBuf;
    type Program = Compiled;

    fn alloc(&self, len: usize, dtype: DType) -> Result<CudaBuf> {
        self.pool.alloc(len, dtype)
    }

    fn launch(
        &self,
        program: &Compiled,
        entry: &str,
        grid: u32,
        block: u32,
        args: &[KernelArg<'_, CudaBuf>],
    ) -> Result<()> {
        let f = program.function(entry)?;
        // Every parameter of a generated kernel is 64 bits wide: a device
        // pointer, or a count whose two's-complement bits are passed as is.
        let words: Vec<u64> = args
            .iter()
            .map(|a| match a {
                KernelArg::Buffer(b) => self.ptr(b),
                KernelArg::Count(n) => *n as u64,
            })
            .collect();
        let mut builder = self.stream.launch_builder(f);
        for w in &words {
            builder.arg(w);
        }
        let cfg = LaunchConfig {
            grid_dim: (grid.max(1), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the shared runtime passes the arguments of the launch ABI
        // (gearbox_codegen's crate docs) for the kernel's entry point, and
        // every buffer holds at least the elements the kernel touches.
        unsafe { builder.launch(cfg) }
            .map(|_| ())
            .map_err(|e| fault("kernel launch", e))
    }
}

/// The most blocks per launch on `dev`: its SM count times the blocks per
/// SM of each kernel kind ([`params`]).
pub fn grid_limits(dev: &Device) -> GridLimits {
    let sms = dev.sm_count.max(1);
    let p = params();
    GridLimits {
        elementwise: sms.saturating_mul(p.blocks_per_sm),
        heavy_elementwise: sms.saturating_mul(p.heavy_blocks_per_sm),
        full_reduce: sms.saturating_mul(p.reduce_blocks_per_sm),
        axis_reduce: sms.saturating_mul(p.axis_blocks_per_sm),
    }
}
