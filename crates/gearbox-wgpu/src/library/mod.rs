//! Library calls on the wgpu device: the operations the fused renderer does
//! not write (data movement, scans, random streams, matrix products), each
//! a hand-written WGSL module in its own file here, compiled once per
//! device and kept in [`Modules`].
//!
//! A call the backend does not offer ([`offered`]) is declined with an
//! error naming it; the runtime's gates never send one (the capabilities
//! list only what is offered), so such an error means a caller skipped the
//! gates.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gearbox_core::runtime::backend::LibraryCall;
use gearbox_core::runtime::programs::Compiler;
use gearbox_core::{DType, Result, Shape};

use crate::buffer::WgpuBuf;
use crate::device::{fault, Device};
use crate::program::{Program, WgslCompiler};

/// Hand-written WGSL modules loaded on one device, by key (a module's
/// name and the parameters its source was written for).
#[derive(Default)]
pub struct Modules {
    loaded: Mutex<HashMap<String, Arc<Program>>>,
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
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = loaded.get(key) {
            return Ok(Arc::clone(p));
        }
        let program = Arc::new(WgslCompiler(dev).load(source().as_bytes(), entries)?);
        loaded.insert(key.to_string(), Arc::clone(&program));
        Ok(program)
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
