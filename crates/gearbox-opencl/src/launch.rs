//! Launching on the OpenCL device: the [`KernelRuntime`] through which the
//! shared runtime ([`gearbox_codegen::run_fused`]) allocates buffers and
//! enqueues fused kernels (buffers as `cl_mem`, counts as `long`), and the
//! grid limits.

use gearbox_codegen::{GridLimits, KernelArg, KernelRuntime};
use gearbox_core::{DType, Result};
use opencl3::kernel::Kernel;

use crate::buffer::{mem, ClBuf};
use crate::device::{cl_error, Device};
use crate::program::Program;

/// One argument of an OpenCL kernel, as [`Device::enqueue`] sets it.
pub enum Arg<'a> {
    /// A buffer.
    Buf(&'a ClBuf),
    /// A `long`.
    Long(i64),
    /// A `long8` (eight `long`s, e.g. a permute's axis lengths).
    Long8([i64; 8]),
    /// An `int`.
    Int(i32),
    /// A `double`.
    Double(f64),
    /// A `float`.
    Float(f32),
    /// `__local` memory of this many bytes.
    Local(usize),
}

impl KernelRuntime for Device {
    type Buffer = ClBuf;
    type Program = Program;

    fn alloc(&self, len: usize, dtype: DType) -> Result<ClBuf> {
        Device::alloc(self, len, dtype)
    }

    fn launch(
        &self,
        program: &Program,
        entry: &str,
        grid: u32,
        block: u32,
        args: &[KernelArg<'_, ClBuf>],
    ) -> Result<()> {
        let args: Vec<Arg<'_>> = args
            .iter()
            .map(|a| match a {
                KernelArg::Buffer(b) => Arg::Buf(b),
                KernelArg::Count(n) => Arg::Long(*n),
            })
            .collect();
        let kernel = program.kernel(entry)?;
        self.enqueue(
            &kernel,
            &args,
            [grid.max(1) as usize * block as usize, 1],
            [block as usize, 1],
        )
    }
}

impl Device {
    /// Sets `args` on `kernel` and enqueues it over `global` work-items in
    /// work-groups of `local` (two dimensions; the second 1 for a flat
    /// launch). The caller holds the kernel's lock.
    pub fn enqueue(
        &self,
        kernel: &Kernel,
        args: &[Arg<'_>],
        global: [usize; 2],
        local: [usize; 2],
    ) -> Result<()> {
        for (i, a) in args.iter().enumerate() {
            let i = i as u32;
            // SAFETY: each argument has the size and type the kernel's
            // parameter declares (the dialect's launch ABI and the library
            // kernels' signatures); buffers outlive the enqueue, as the
            // driver retains them until the command completes.
            let set = unsafe {
                match a {
                    Arg::Buf(b) => kernel.set_arg(i, &mem(b)),
                    Arg::Long(v) => kernel.set_arg(i, v),
                    Arg::Long8(v) => kernel.set_arg(i, v),
                    Arg::Int(v) => kernel.set_arg(i, v),
                    Arg::Double(v) => kernel.set_arg(i, v),
                    Arg::Float(v) => kernel.set_arg(i, v),
                    Arg::Local(bytes) => kernel.set_arg_local_buffer(i, *bytes),
                }
            };
            set.map_err(cl_error("set kernel argument"))?;
        }
        let dims = if global[1] > 1 || local[1] > 1 { 2 } else { 1 };
        // SAFETY: the sizes arrays hold `dims` entries and the kernel's
        // arguments are all set.
        unsafe {
            self.queue
                .enqueue_nd_range_kernel(
                    kernel.get(),
                    dims,
                    std::ptr::null(),
                    global.as_ptr(),
                    local.as_ptr(),
                    &[],
                )
                .map_err(cl_error("launch"))?;
        }
        Ok(())
    }
}

/// The most work-groups per launch: on a GPU, its compute units times the
/// CUDA backend's blocks per multiprocessor (1024 elementwise, 16 for an
/// elementwise kernel with a heavy body, 4 for a full reduction's first
/// pass, 64 along axes); on a CPU device, whose few
/// threads run the groups one after another, 4 per compute unit (more
/// groups only add per-group overhead and partials).
/// `GEARBOX_OPENCL_REDUCE_GROUPS` sets the first pass's.
pub fn grid_limits(dev: &Device) -> GridLimits {
    let units = dev.compute_units.max(1);
    let (elementwise, heavy, full, axis) = if dev.cpu {
        (4, 4, 4, 4)
    } else {
        (1024, 16, 4, 64)
    };
    GridLimits {
        elementwise: units.saturating_mul(elementwise),
        heavy_elementwise: units.saturating_mul(heavy),
        full_reduce: crate::params::params()
            .reduce_groups
            .unwrap_or(units.saturating_mul(full)),
        axis_reduce: units.saturating_mul(axis),
    }
}
