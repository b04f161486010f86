//! Compiling generated CUDA C with NVRTC: the CUDA [`Compiler`] of the
//! shared program cache ([`gearbox_core::runtime::programs`]), which keeps
//! PTX in memory and on disk, keyed by the source, the compute capability
//! and the driver version. A compile error carries NVRTC's log.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};
use gearbox_codegen::{run_fused, run_fused_into, FusedOutputs, Toolchain};
use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::runtime::programs::{Compiler, ProgramCache};
use gearbox_core::{DeviceErrorKind, Error, Result};

use crate::codegen::{self, RenderedKernel};
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// A loaded module and its entry points.
pub struct Compiled {
    _module: Arc<CudaModule>,
    functions: HashMap<String, CudaFunction>,
}

impl Compiled {
    /// The function called `name`.
    pub fn function(&self, name: &str) -> Result<&CudaFunction> {
        self.functions
            .get(name)
            .ok_or_else(|| fault("launch", format!("kernel {name} is not in its module")))
    }
}

/// NVRTC for one device: PTX for its virtual architecture, which the driver
/// turns into machine code for the exact device at load time.
struct Nvrtc<'a>(&'a Device);

impl Compiler for Nvrtc<'_> {
    type Program = Compiled;

    fn target(&self) -> String {
        let dev = self.0;
        format!("sm{}{}-drv{}", dev.cc.0, dev.cc.1, dev.driver_version)
    }

    fn extension(&self) -> &'static str {
        "ptx"
    }

    fn compile(&self, source: &str) -> Result<Vec<u8>> {
        Ok(compile(self.0, source)?.to_src().into_bytes())
    }

    fn load(&self, binary: &[u8], entries: &[&str]) -> Result<Compiled> {
        let text = String::from_utf8(binary.to_vec())
            .map_err(|_| fault("load module", "cached PTX is not text"))?;
        let module = self
            .0
            .ctx
            .load_module(Ptx::from_src(text))
            .map_err(|e| fault("load module", e))?;
        let mut functions = HashMap::new();
        for name in entries {
            functions.insert(
                name.to_string(),
                module
                    .load_function(name)
                    .map_err(|e| fault("load function", e))?,
            );
        }
        Ok(Compiled {
            _module: module,
            functions,
        })
    }
}

/// The kernel cache of one device: the shared program cache driven by
/// NVRTC.
#[derive(Default)]
pub struct KernelCache(ProgramCache<Compiled, RenderedKernel>);

fn compile_error(e: CompileError) -> Error {
    let reason = match &e {
        CompileError::CompileError { log, options, .. } => {
            format!(
                "NVRTC rejected the kernel (options {options:?}):\n{}",
                log.to_string_lossy()
            )
        }
        other => format!("NVRTC failed: {other:?}"),
    };
    Error::Device {
        backend: "cuda".into(),
        op: "compile".into(),
        reason,
        kind: DeviceErrorKind::Compile,
    }
}

impl KernelCache {
    /// Kernels found in memory or on disk, and those NVRTC compiled.
    pub fn counts(&self) -> (u64, u64) {
        self.0.counts()
    }

    /// Runs the fused kernel for `ir` on `inputs`: rendered and compiled
    /// on first use and then found by the IR alone, launched by the shared
    /// runtime.
    pub fn run(
        &self,
        dev: &Device,
        ir: &KernelIr,
        inputs: &[&CudaBuf],
    ) -> Result<FusedOutputs<CudaBuf>> {
        let tools = Toolchain {
            dialect: &codegen::CUDA,
            tuning: crate::params::params().tuning,
            compiler: &Nvrtc(dev),
            cache: &self.0,
        };
        run_fused(&tools, dev, crate::run::grid_limits(dev), ir, inputs)
    }

    /// [`KernelCache::run`] writing into existing buffers (see
    /// [`gearbox_codegen::run_fused_into`]).
    pub fn run_into(
        &self,
        dev: &Device,
        ir: &KernelIr,
        inputs: &[&CudaBuf],
        outputs: &[&CudaBuf],
        reduced: &[&CudaBuf],
    ) -> Result<()> {
        let tools = Toolchain {
            dialect: &codegen::CUDA,
            tuning: crate::params::params().tuning,
            compiler: &Nvrtc(dev),
            cache: &self.0,
        };
        run_fused_into(
            &tools,
            dev,
            crate::run::grid_limits(dev),
            ir,
            inputs,
            outputs,
            reduced,
        )
    }

    /// The compiled module that `render` gives the source of, found by
    /// `key` once it has been rendered (the key must determine the source).
    pub fn keyed(
        &self,
        dev: &Device,
        key: String,
        entries: &[&str],
        render: impl FnOnce() -> Result<String>,
    ) -> Result<Arc<Compiled>> {
        self.0.keyed(&Nvrtc(dev), key, entries, render)
    }

    /// The compiled module of a source fixed at build time, found by its
    /// address rather than by hashing it on every launch.
    pub fn fixed(
        &self,
        dev: &Device,
        source: &'static str,
        entries: &[&str],
    ) -> Result<Arc<Compiled>> {
        self.0.fixed(&Nvrtc(dev), source, entries)
    }

    /// The compiled module for `source`, with functions `entries`.
    pub fn get(&self, dev: &Device, source: &str, entries: &[&str]) -> Result<Arc<Compiled>> {
        self.0.source(&Nvrtc(dev), source, entries)
    }
}

/// NVRTC options: C++17 and the device's virtual architecture (PTX, which
/// the driver turns into machine code for the exact device at load time);
/// no FMA contraction for sources carrying
/// [`crate::codegen::NO_FMA_MARKER`].
fn compile(dev: &Device, source: &str) -> Result<Ptx> {
    static ARCH: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    let arch = *ARCH
        .get_or_init(|| Box::leak(format!("compute_{}{}", dev.cc.0, dev.cc.1).into_boxed_str()));
    let opts = CompileOptions {
        arch: Some(arch),
        options: if source.contains(crate::codegen::NO_FMA_MARKER) {
            vec!["-std=c++17".into(), "--fmad=false".into()]
        } else {
            vec!["-std=c++17".into()]
        },
        ..Default::default()
    };
    compile_ptx_with_opts(source, opts).map_err(compile_error)
}
