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
use gearbox_core::{DType, Result, Shape};

use crate::buffer::WgpuBuf;
use crate::device::{fault, Device};
use crate::program::{Program, WgslCompiler};

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
        self.cache
            .keyed(&WgslCompiler(dev), key.to_string(), entries, || Ok(source()))
    }

    /// (hits, misses) of the module cache.
    pub fn counts(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.cache.hits.load(Relaxed), self.cache.misses.load(Relaxed))
    }
}

/// The library calls a device with `features` offers.
pub fn offered(_features: wgpu::Features) -> Vec<LibraryCall> {
    Vec::new()
}

/// Runs `call` on `inputs` (buffer and shape), producing `out` shape and
/// dtype.
pub fn call(
    _dev: &Device,
    _modules: &Modules,
    call: LibraryCall,
    _inputs: &[(&WgpuBuf, &Shape)],
    _out: (&Shape, DType),
) -> Result<WgpuBuf> {
    Err(fault(
        "library call",
        format!("the wgpu backend offers no {}", call.name()),
    ))
}
