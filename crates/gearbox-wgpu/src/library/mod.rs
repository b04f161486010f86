//! Library calls on the wgpu device: the operations the fused renderer does
//! not write (data movement, scans, random streams, matrix products), each
//! a hand-written WGSL module in its own file here, compiled once per
//! device and kept in [`Modules`].
//!
//! A call the backend does not offer ([`offered`]) is declined with an
//! error naming it; the runtime's gates never send one (the capabilities
//! list only what is offered), so such an error means a caller skipped the
//! gates.

use std::sync::Arc;

use gearbox_core::runtime::backend::LibraryCall;
use gearbox_core::runtime::programs::ProgramCache;
use gearbox_core::{DType, DeviceErrorKind, Error, Result, Shape};

use crate::buffer::WgpuBuf;
use crate::device::{fault, Device};
use crate::program::{Program, WgslCompiler};

/// Invocations per workgroup of the library kernels (WebGPU's default
/// limit, which every adapter allows).
pub const WORKGROUP: u32 = 256;

/// A library call declined for `why`: an error of kind `Compile`, so the
/// runtime reruns the call on the CPU and keeps the backend healthy (the
/// input did not fit what the device does; nothing failed on it).
pub(crate) fn declined(call: &str, why: impl std::fmt::Display) -> Error {
    Error::Device {
        backend: "wgpu".into(),
        op: call.into(),
        reason: why.to_string(),
        kind: DeviceErrorKind::Compile,
    }
}

/// Workgroups of [`WORKGROUP`] invocations for a grid-stride loop over
/// `items` items: enough for one item each, at most the adapter's limit
/// per dimension (the loop covers the rest), at least one.
pub(crate) fn workgroups(dev: &Device, items: usize) -> u32 {
    let most = dev.limits.max_compute_workgroups_per_dimension.max(1) as usize;
    items.div_ceil(WORKGROUP as usize).clamp(1, most) as u32
}

/// naga's verdict on a library module's `source` (f64 and i64 allowed):
/// `Err` with its diagnostics. Shared by the library modules' tests.
#[cfg(test)]
pub(crate) fn validate_wgsl(source: &str) -> std::result::Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let caps = naga::valid::Capabilities::FLOAT64 | naga::valid::Capabilities::SHADER_INT64;
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .validate(&module)
        .map_err(|e| e.emit_to_string(source))?;
    Ok(())
}

/// Hand-written WGSL modules loaded on one device, by key (a module's
/// name and the parameters its source was written for), in the shared
/// program cache (counted with the fused kernels' hits and misses).
#[derive(Default)]
pub struct Modules {
    cache: ProgramCache<Program, ()>,
}

impl Modules {
    /// The module of `key`, compiled from `source()` with `entries` on
    /// first use.
    pub fn get(
        &self,
        dev: &Device,
        key: &str,
        source: impl FnOnce() -> String,
        entries: &[&str],
    ) -> Result<Arc<Program>> {
        self.cache.keyed(
            &WgslCompiler(dev),
            key.to_string(),
            entries,
            || Ok(source()),
        )
    }

    /// (hits, misses) of the module cache.
    pub fn counts(&self) -> (u64, u64) {
        self.cache.counts()
    }
}

pub mod gemm;
pub mod movement;
pub mod permute;
pub mod random;
pub mod scan;
pub mod take;

/// The library calls a device with `features` offers (by kind: parameters
/// are placeholders, see [`LibraryCall::same_kind`]): copies, takes, permutes and scans
/// everywhere (f64 scans only where the device has f64 shaders, which
/// [`call`] checks), random streams only with f64 and i64 shaders.
pub fn offered(features: wgpu::Features) -> Vec<LibraryCall> {
    let mut calls = vec![
        LibraryCall::Slice {
            axis: 0,
            start: 0,
            end: 0,
        },
        LibraryCall::Concat { axis: 0 },
        LibraryCall::Take { axis: 0 },
        LibraryCall::Permute {
            order: gearbox_core::ops::permute::AxisOrder::EMPTY,
        },
        LibraryCall::Matmul,
        LibraryCall::Crossprod,
        LibraryCall::Tcrossprod,
        LibraryCall::Scan {
            product: false,
            axis: None,
        },
    ];
    if crate::device::has_64_bit(features) {
        calls.push(LibraryCall::Random {
            seed: 0,
            normal: false,
        });
    }
    calls
}

/// Runs `call` on `inputs` (buffer and shape), producing `out` shape and
/// dtype.
pub fn call(
    dev: &Device,
    modules: &Modules,
    call: LibraryCall,
    inputs: &[(&WgpuBuf, &Shape)],
    out: (&Shape, DType),
) -> Result<WgpuBuf> {
    let first = || {
        inputs
            .first()
            .copied()
            .ok_or_else(|| declined(call.name(), "no input"))
    };
    match call {
        LibraryCall::Slice { axis, start, end } => {
            movement::slice(dev, modules, first()?, (axis, start, end), out)
        }
        LibraryCall::Concat { axis } => movement::concat(dev, modules, inputs, axis, out),
        LibraryCall::Take { axis } => match inputs {
            [x, (idx, _)] => take::take(dev, modules, *x, idx, axis, out),
            _ => Err(declined("take", format!("{} inputs", inputs.len()))),
        },
        LibraryCall::Permute { order } => permute::permute(dev, modules, first()?, order, out),
        LibraryCall::Matmul | LibraryCall::Crossprod | LibraryCall::Tcrossprod => {
            gemm::call(dev, modules, call, inputs, out)
        }
        LibraryCall::Scan { product, axis } => {
            let acc = scan::Accumulation::of(crate::device::has_64_bit(dev.features));
            scan::scan(dev, modules, first()?, (product, axis), out, acc)
        }
        LibraryCall::Random { seed, normal } => {
            random::check_dtype(out.1, normal)?;
            random::random(dev, modules, (seed, normal), 0, out.0.numel())
        }
        _ => Err(fault(
            "library call",
            format!("the wgpu backend offers no {}", call.name()),
        )),
    }
}
