//! Library calls on the OpenCL device: the operations the fused renderer
//! does not write (data movement, scans, random streams, matrix
//! products), each an OpenCL C program in its own file here, built once per
//! device and kept in [`Library`], or a call into CLBlast.
//!
//! - [`movement`]: `slice` and `concat` as buffer copies;
//! - [`take`]: `take`, a gather along an axis;
//! - [`permute`]: transposes, `t()` and flips (tiled through local memory);
//! - [`scan`]: `cumsum` and `cumprod` (chunked and tiled three-phase
//!   scans, one pass for many contiguous lanes);
//! - [`random`]: the Philox streams of `rand` and `randn`;
//! - [`gemm`]: `matmul`, `crossprod`, `tcrossprod` (CLBlast, else a tiled
//!   kernel);
//! - [`clblast`]: CLBlast, loaded at run time.
//!
//! A call the backend does not offer ([`offered`]) is declined with an
//! error naming it; the runtime's gates never send one (the capabilities
//! list only what is offered), so such an error means a caller skipped the
//! gates.

use std::sync::Arc;

use gearbox_core::runtime::backend::LibraryCall;
use gearbox_core::runtime::programs::ProgramCache;
use gearbox_core::{DType, DeviceErrorKind, Error, Result, Shape};

use crate::buffer::ClBuf;
use crate::device::Device;
use crate::program::{ClCompiler, Program};

/// Work-items per work-group of the library kernels (every OpenCL GPU
/// allows 256; CPU devices allow more).
pub const GROUP: usize = 256;

/// The line that lets an OpenCL C program use `double`: first in every
/// library program that does.
pub(crate) const FP64_PRAGMA: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";

/// A library call declined for `why`: an error of kind `Compile`, so the
/// runtime reruns the call on the CPU and keeps the backend healthy (the
/// input did not fit what the device does; nothing failed on it).
pub(crate) fn declined(call: &str, why: impl std::fmt::Display) -> Error {
    Error::Device {
        backend: "opencl".into(),
        op: call.into(),
        reason: why.to_string(),
        kind: DeviceErrorKind::Compile,
    }
}

/// Work-items for a grid-stride loop over `items` items: one each, in
/// whole groups of [`GROUP`], at most 65,536 groups (the loop covers the
/// rest), at least one group.
pub(crate) fn global_size(items: usize) -> usize {
    items.div_ceil(GROUP).clamp(1, 65_536) * GROUP
}

/// The programs of the library calls, built on one device by key (a
/// program's name and the parameters its source was written for), in the
/// shared program cache (counted with the fused kernels' hits and misses;
/// binaries kept on disk like theirs); and CLBlast, loaded on first use.
#[derive(Default)]
pub struct Library {
    cache: ProgramCache<Program, ()>,
    /// CLBlast, when installed ([`clblast`]).
    pub clblast: clblast::Lazy,
}

impl Library {
    /// The program of `key`, built from `source()` with `entries` on first
    /// use.
    pub fn program(
        &self,
        compiler: &ClCompiler<'_>,
        key: &str,
        source: impl FnOnce() -> String,
        entries: &[&str],
    ) -> Result<Arc<Program>> {
        self.cache
            .keyed(compiler, key.to_string(), entries, || Ok(source()))
    }

    /// (hits, misses) of the program cache.
    pub fn counts(&self) -> (u64, u64) {
        self.cache.counts()
    }

    /// Runs `call` on `inputs` (buffer and shape), producing `out` shape
    /// and dtype.
    pub fn call(
        &self,
        dev: &Device,
        compiler: &ClCompiler<'_>,
        call: LibraryCall,
        inputs: &[(&ClBuf, &Shape)],
        out: (&Shape, DType),
    ) -> Result<ClBuf> {
        let first = || {
            inputs
                .first()
                .copied()
                .ok_or_else(|| declined(call.name(), "no input"))
        };
        let lib = Lib {
            dev,
            compiler,
            library: self,
        };
        match call {
            LibraryCall::Slice { axis, start, end } => {
                movement::slice(&lib, first()?, (axis, start, end), out)
            }
            LibraryCall::Concat { axis } => movement::concat(&lib, inputs, axis, out),
            LibraryCall::Take { axis } => match inputs {
                [x, (idx, _)] => take::take(&lib, *x, idx, axis, out),
                _ => Err(declined("take", format!("{} inputs", inputs.len()))),
            },
            LibraryCall::Permute { order } => permute::permute(&lib, first()?, order, out),
            LibraryCall::Matmul | LibraryCall::Crossprod | LibraryCall::Tcrossprod => {
                gemm::call(&lib, call, inputs, out)
            }
            LibraryCall::Scan { product, axis } => scan::scan(&lib, first()?, (product, axis), out),
            LibraryCall::Random { seed, normal } => random::random(&lib, (seed, normal), out),
            _ => Err(declined(
                call.name(),
                format!("the OpenCL backend offers no {}", call.name()),
            )),
        }
    }
}

/// What a library call works with: the device, its compiler and the
/// library's programs.
pub struct Lib<'a> {
    /// The device.
    pub dev: &'a Device,
    /// The compiler of OpenCL C on it.
    pub compiler: &'a ClCompiler<'a>,
    /// The programs and CLBlast.
    pub library: &'a Library,
}

impl Lib<'_> {
    /// The program of `key` ([`Library::program`]).
    pub fn program(
        &self,
        key: &str,
        source: impl FnOnce() -> String,
        entries: &[&str],
    ) -> Result<Arc<Program>> {
        self.library.program(self.compiler, key, source, entries)
    }
}

pub mod clblast;
pub mod gemm;
pub mod movement;
pub mod permute;
pub mod random;
pub mod scan;
pub mod take;

/// The library calls a device offers (by kind: parameters are
/// placeholders, see [`LibraryCall::same_kind`]): copies, takes, permutes, scans and GEMM
/// everywhere (f64 ones where the device has float64, which the calls
/// check; a scan is offered by kind, `cumsum` and `cumprod` alike),
/// random streams only with float64.
pub fn offered(fp64: bool) -> Vec<LibraryCall> {
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
    if fp64 {
        calls.push(LibraryCall::Random {
            seed: 0,
            normal: false,
        });
    }
    calls
}
