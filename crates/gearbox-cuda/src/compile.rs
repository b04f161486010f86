//! Compiling generated CUDA C with NVRTC, cached in memory and on disk.
//!
//! The disk cache holds PTX in `<cache dir>/kernels/<key>.ptx`, where the key
//! is an FNV-1a hash of the source, the compute capability and the driver
//! version, so a second process running the same work compiles nothing.
//! `hits` counts kernels found in memory or on disk, `misses` those NVRTC had
//! to compile. A compile error carries NVRTC's log.
//!
//! In front of the source cache sits one keyed by the kernel IR itself
//! ([`KernelCache::prepare`]): rendering a kernel costs tens of
//! microseconds (about 40 us for a plain sum), as much as a tenth of a
//! memory-bound pass over a gigabyte, so a kernel seen before is neither
//! rendered nor hashed again. Library kernels rendered from their own
//! parameters (the GLM grid's, whose source holds the term functions'
//! device library) are found the same way by a key their caller builds
//! ([`KernelCache::keyed`]), and fixed sources by their address
//! ([`KernelCache::fixed`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};
use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::{DeviceErrorKind, Error, Result};

use crate::codegen::{self, fnv1a64, RenderedKernel};
use crate::device::{fault, Device};

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

/// A fused kernel ready to launch: its rendering and its loaded module.
pub struct Prepared {
    /// The rendered source and its launch facts.
    pub kernel: RenderedKernel,
    /// The module holding its entry points.
    pub compiled: Arc<Compiled>,
}

/// Kernels remembered by IR or by key before the map starts over (these
/// are caches of renderings; the modules stay in the source cache).
const MAX_PREPARED: usize = 4096;

/// The kernel cache of one device.
#[derive(Default)]
pub struct KernelCache {
    by_ir: Mutex<HashMap<KernelIr, Arc<Prepared>>>,
    by_source: Mutex<HashMap<u64, Arc<Compiled>>>,
    by_key: Mutex<HashMap<String, Arc<Compiled>>>,
    /// Kernels found in memory or on disk.
    pub hits: AtomicU64,
    /// Kernels compiled by NVRTC.
    pub misses: AtomicU64,
}

/// Adds `value` under `key` to a cache of at most [`MAX_PREPARED`] entries
/// (a full one starts over: its values are cheap to make again).
fn remember<K: std::hash::Hash + Eq, V>(map: &Mutex<HashMap<K, Arc<V>>>, key: K, value: &Arc<V>) {
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= MAX_PREPARED {
        map.clear();
    }
    map.insert(key, Arc::clone(value));
}

fn disk_dir() -> Option<PathBuf> {
    gearbox_core::runtime::config::cache_dir().map(|d| d.join("kernels"))
}

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
    /// The fused kernel for `ir`, rendered and compiled on first use and
    /// then found by the IR alone.
    pub fn prepare(&self, dev: &Device, ir: &KernelIr) -> Result<Arc<Prepared>> {
        if let Some(p) = self.found(&self.by_ir, ir) {
            return Ok(p);
        }
        let kernel = codegen::render(ir)?;
        let mut entries = vec![kernel.entry];
        entries.extend(kernel.finish_entry);
        let compiled = self.get(dev, &kernel.source, &entries)?;
        let prepared = Arc::new(Prepared { kernel, compiled });
        remember(&self.by_ir, ir.clone(), &prepared);
        Ok(prepared)
    }

    /// The entry for `key` in `map`, counted as a hit.
    fn found<K: std::hash::Hash + Eq, V>(
        &self,
        map: &Mutex<HashMap<K, Arc<V>>>,
        key: &K,
    ) -> Option<Arc<V>> {
        let hit = map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned();
        if hit.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        hit
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
        if let Some(c) = self.found(&self.by_key, &key) {
            return Ok(c);
        }
        let compiled = self.get(dev, &render()?, entries)?;
        remember(&self.by_key, key, &compiled);
        Ok(compiled)
    }

    /// The compiled module of a source fixed at build time, found by its
    /// address rather than by hashing it on every launch.
    pub fn fixed(
        &self,
        dev: &Device,
        source: &'static str,
        entries: &[&str],
    ) -> Result<Arc<Compiled>> {
        let key = format!("fixed@{:p}", source.as_ptr());
        self.keyed(dev, key, entries, || Ok(source.to_string()))
    }

    /// The compiled module for `source`, with functions `entries`.
    pub fn get(&self, dev: &Device, source: &str, entries: &[&str]) -> Result<Arc<Compiled>> {
        let source_hash = fnv1a64(source.as_bytes());
        if let Some(c) = self.found(&self.by_source, &source_hash) {
            return Ok(c);
        }
        let key = format!(
            "{source_hash:016x}-sm{}{}-drv{}",
            dev.cc.0, dev.cc.1, dev.driver_version
        );
        let path = disk_dir().map(|d| d.join(format!("{}.ptx", fnv1a64(key.as_bytes()))));
        let cached = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok());
        let ptx = match cached {
            Some(text) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Ptx::from_src(text)
            }
            None => {
                let ptx = compile(dev, source)?;
                self.misses.fetch_add(1, Ordering::Relaxed);
                if let Some(p) = &path {
                    let written = p
                        .parent()
                        .map(std::fs::create_dir_all)
                        .transpose()
                        .and_then(|_| std::fs::write(p, ptx.to_src()));
                    if let Err(e) = written {
                        tracing::warn!("kernel cache {} not written: {e}", p.display());
                    }
                }
                ptx
            }
        };
        let module = dev
            .ctx
            .load_module(ptx)
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
        let c = Arc::new(Compiled {
            _module: module,
            functions,
        });
        self.by_source
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(source_hash, Arc::clone(&c));
        Ok(c)
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
