//! What the library-call tests share (`gpu_opencl_library.rs`,
//! `gpu_opencl_scan.rs`, `gpu_opencl_gemm.rs`; named apart from the wgpu
//! backend's `gpu_*` tests, whose binaries `scripts/gpu.sh` copies beside
//! these): the device with the registered backend and the library's
//! functions called directly ([`with_lib`]); the CPU as reference,
//! reproducible values and a library call run on the backend directly come
//! from [`gearbox_core::runtime::testing::gpu`], shared with the wgpu
//! backend's tests.

#![allow(dead_code)]

use std::sync::{Arc, MutexGuard, OnceLock};

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
