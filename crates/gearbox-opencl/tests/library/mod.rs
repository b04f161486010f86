//! What the library-call tests share (`gpu_opencl_library.rs`,
//! `gpu_opencl_scan.rs`, `gpu_opencl_gemm.rs`; named apart from the wgpu
//! backend's `gpu_*` tests, whose binaries `scripts/gpu.sh` copies beside
//! these): the device with the registered backend, the library's functions
//! called directly ([`with_lib`]), the CPU as reference, reproducible
//! values, and a library call run on the backend directly.

#![allow(dead_code)]

use std::sync::{Arc, MutexGuard, OnceLock};

use gearbox_core::runtime::backend::{Backend, DeviceArc, DeviceBuffer, LibraryCall};
use gearbox_core::runtime::{options, set_options, RuntimeOptions};
use gearbox_core::{Array, DType, HostBuffer, Result, Shape};
use gearbox_opencl::library::{Lib, Library};
use gearbox_opencl::OpenClBackend;

use super::common;

/// The shared setup ([`common::device`]: the lock, the backend forced and
/// healthy) and the registered backend, to call directly.
pub fn device() -> Option<(MutexGuard<'static, ()>, Arc<OpenClBackend>)> {
    let guard = common::device()?;
    Some((guard, gearbox_opencl::shared().expect("registered")))
}

/// `f` with the library functions of `b`'s device: its compiler and a
/// library of programs kept for the whole test binary (beside the
/// backend's own, so CLBlast and the programs load once per binary).
pub fn with_lib<T>(b: &OpenClBackend, f: impl FnOnce(&Lib<'_>) -> T) -> T {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    let dev = b.device().expect("the device");
    let compiler = b.compiler(dev);
    f(&Lib {
        dev,
        compiler: &compiler,
        library: LIBRARY.get_or_init(Library::default),
    })
}

/// `f` with the CPU alone (the reference).
pub fn on_cpu<T>(f: impl FnOnce() -> T) -> T {
    let before = options();
    set_options(RuntimeOptions {
        force_backend: None,
        optional_backends: false,
        ..before.clone()
    });
    let out = f();
    set_options(before);
    out
}

/// `n` reproducible values of `dtype` from `seed`, never zero: floats in
/// `[-2, 2)`, integers in `-7..=7`, bools mixed.
pub fn values(n: usize, dtype: DType, seed: u64) -> HostBuffer {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let floats: Vec<f64> = (0..n)
        .map(|_| match 4.0 * next() - 2.0 {
            v if v.abs() < 1e-3 => 0.5,
            v => v,
        })
        .collect();
    match dtype {
        DType::F64 => HostBuffer::F64(floats),
        DType::F32 => HostBuffer::F32(floats.iter().map(|&v| v as f32).collect()),
        DType::I64 => HostBuffer::I64(
            floats
                .iter()
                .map(|&v| match (v * 3.75).round() as i64 {
                    0 => 3,
                    k => k,
                })
                .collect(),
        ),
        DType::Bool => HostBuffer::Bool(floats.iter().map(|&v| v > 0.0).collect()),
    }
}

/// Runs `call` on the backend with `inputs` uploaded; the result, downloaded.
pub fn run(
    b: &OpenClBackend,
    call: LibraryCall,
    inputs: &[(&HostBuffer, &Shape)],
    out: (&Shape, DType),
) -> Result<HostBuffer> {
    let bufs: Vec<DeviceArc> = inputs
        .iter()
        .map(|(h, _)| b.upload(h))
        .collect::<Result<_>>()?;
    let args: Vec<(&dyn DeviceBuffer, &Shape)> = bufs
        .iter()
        .zip(inputs)
        .map(|(d, (_, s))| (d.as_ref(), *s))
        .collect();
    let y = b.library_call(call, &args, out)?;
    assert_eq!(y.backend(), "opencl");
    assert_eq!((y.len(), y.dtype()), (out.0.numel(), out.1));
    b.download(y.as_ref())
}

/// An array of `host` values in `shape`.
pub fn array(shape: &Shape, host: &HostBuffer) -> Array {
    Array::from_buffer(shape.clone(), host.clone()).unwrap()
}
