//! Launching on the wgpu device: the [`KernelRuntime`] through which the
//! shared runtime ([`gearbox_codegen::run_fused`]) allocates buffers and
//! dispatches fused kernels, binding arguments as the WGSL dialect lays
//! them out ([`crate::wgsl`]'s launch ABI), and the grid limits.

use gearbox_codegen::{GridLimits, KernelArg, KernelRuntime, BLOCK_SIZE};
use gearbox_core::runtime::backend::DeviceBuffer;
use gearbox_core::{DType, DeviceErrorKind, Result};

use crate::buffer::WgpuBuf;
use crate::device::{fault, Device};
use crate::program::Program;
use crate::wgsl::{binding_base, pack_view_binding};

impl KernelRuntime for Device {
    type Buffer = WgpuBuf;
    type Program = Program;

    fn alloc(&self, len: usize, dtype: DType) -> Result<WgpuBuf> {
        Device::alloc(self, len, dtype)
    }

    fn launch(
        &self,
        program: &Program,
        entry: &str,
        grid: u32,
        block: u32,
        args: &[KernelArg<'_, WgpuBuf>],
    ) -> Result<()> {
        if block != BLOCK_SIZE {
            return Err(fault(
                "launch",
                format!("WGSL kernels run {BLOCK_SIZE} invocations a workgroup, not {block}"),
            ));
        }
        let pipeline = program.pipeline(entry)?;
        let base = binding_base(entry);
        let mut counts = Vec::new();
        let mut buffers = Vec::new();
        for a in args {
            match a {
                KernelArg::Buffer(b) => buffers.push(*b),
                KernelArg::Count(n) => counts.push(i32::try_from(*n).map_err(|_| {
                    fault(
                        "launch",
                        format!("count {n} exceeds the 32-bit indices of WGSL kernels"),
                    )
                })?),
            }
        }
        counts.resize(4, 0);
        let words: Vec<u8> = counts.iter().flat_map(|c| c.to_le_bytes()).collect();
        let views = program.packed;
        self.dispatch_views(pipeline, base, &buffers, &words, [grid.max(1), 1, 1], views)
    }
}

impl Device {
    /// Records one dispatch of `pipeline` over `groups` workgroups, with
    /// `buffers` bound from binding `base` on, in order, and `uniform`
    /// (when not empty) as a uniform buffer bound right after them.
    pub fn dispatch(
        &self,
        pipeline: &wgpu::ComputePipeline,
        base: u32,
        buffers: &[&WgpuBuf],
        uniform: &[u8],
        groups: [u32; 3],
    ) -> Result<()> {
        self.dispatch_views(pipeline, base, buffers, uniform, groups, false)
    }

    /// [`Device::dispatch`], also binding each buffer of 4-byte elements
    /// at its `vec4` view's binding when `views` (kernels of the packed
    /// dialect, [`crate::wgsl::WGSL_PACKED`]).
    fn dispatch_views(
        &self,
        pipeline: &wgpu::ComputePipeline,
        base: u32,
        buffers: &[&WgpuBuf],
        uniform: &[u8],
        groups: [u32; 3],
        views: bool,
    ) -> Result<()> {
        let uniform = (!uniform.is_empty()).then(|| self.uniform(uniform));
        let mut entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: base + i as u32,
                resource: b.block().as_entire_binding(),
            })
            .collect();
        if views {
            for (i, b) in buffers.iter().enumerate() {
                if matches!(b.dtype(), DType::F32 | DType::Bool) {
                    entries.push(wgpu::BindGroupEntry {
                        binding: pack_view_binding(base, i as u32),
                        resource: b.block().as_entire_binding(),
                    });
                }
            }
        }
        if let Some(u) = &uniform {
            entries.push(wgpu::BindGroupEntry {
                binding: base + buffers.len() as u32,
                resource: u.as_entire_binding(),
            });
        }
        let bind_group = self.checked("kernel launch", DeviceErrorKind::Fault, || {
            self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            })
        })?;
        self.compute_pass(|pass| {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        })
    }
}

/// The most workgroups per dispatch: the adapter's limit per dimension,
/// and for the first pass of a full reduction the `reduce_groups` knob
/// ([`crate::params`]) or else 1024 on a GPU, where the pass needs many
/// invocations in flight to cover the memory's latency, and 64 on a CPU
/// adapter, whose few threads run the workgroups one after another (there
/// more workgroups only add per-workgroup overhead and partials).
pub fn grid_limits(dev: &Device) -> GridLimits {
    let most = dev.limits.max_compute_workgroups_per_dimension.max(1);
    let groups = crate::params::params()
        .reduce_groups
        .unwrap_or(if dev.cpu_adapter { 64 } else { 1024 });
    GridLimits {
        elementwise: most,
        heavy_elementwise: most,
        full_reduce: most.min(groups),
        axis_reduce: most,
    }
}
