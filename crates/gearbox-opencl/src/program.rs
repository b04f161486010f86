//! OpenCL programs: the [`Compiler`] of the shared program cache
//! ([`gearbox_core::runtime::programs`]). A binary is what the driver
//! returns for `CL_PROGRAM_BINARIES` after building the source (PTX on
//! NVIDIA, pocl's own format on pocl), kept on disk by the cache under a
//! target naming the device, platform and driver version; a loaded program
//! is one kernel object per entry point. A failed build's error carries the
//! driver's build log.

use std::collections::HashMap;
use std::sync::Mutex;

use gearbox_core::runtime::programs::Compiler;
use gearbox_core::{DeviceErrorKind, Error, Result};
use opencl3::kernel::Kernel;
use opencl3::program::Program as ClProgram;

use crate::device::{cl_error, fault, Device};

/// A loaded program: a kernel per entry point, each behind a lock (setting
/// a kernel's arguments and enqueueing it must not interleave).
pub struct Program {
    kernels: HashMap<String, Mutex<Kernel>>,
    _program: ClProgram,
}

// SAFETY: the program is only read after it is built (its kernels are
// created then), and every kernel is used under its lock; OpenCL program
// and kernel objects are thread-safe to retain and release.
unsafe impl Sync for Program {}

impl Program {
    /// The kernel of entry point `name`, locked for setting its arguments.
    pub fn kernel(&self, name: &str) -> Result<std::sync::MutexGuard<'_, Kernel>> {
        self.kernels
            .get(name)
            .ok_or_else(|| {
                fault(
                    "launch",
                    format!("entry point {name} is not in its program"),
                )
            })?
            .lock()
            .map_err(|_| fault("launch", format!("kernel {name} was poisoned by a panic")))
    }
}

/// The most build-log characters an error carries.
const LOG_CHARS: usize = 8000;

/// A compile error carrying the build log.
fn build_failed(log: &str, why: impl std::fmt::Display) -> Error {
    let mut log = log.trim().to_string();
    if log.len() > LOG_CHARS {
        let mut cut = LOG_CHARS;
        while !log.is_char_boundary(cut) {
            cut -= 1;
        }
        log.truncate(cut);
        log.push_str("\n[build log cut]");
    }
    Error::Device {
        backend: "opencl".into(),
        op: "compile".into(),
        reason: format!("the OpenCL C program did not build ({why}); build log:\n{log}"),
        kind: DeviceErrorKind::Compile,
    }
}

/// Builds OpenCL C on one device.
pub struct ClCompiler<'a> {
    /// The device.
    pub dev: &'a Device,
    /// Programs built from source by [`Compiler::compile`], by the hash of
    /// their binary, for [`Compiler::load`] to take rather than build the
    /// binary again.
    pub built: &'a Built,
}

/// Programs just built from source, waiting to be loaded, and how many
/// were built (a warm process, whose binaries come from the disk cache,
/// builds none).
#[derive(Default)]
pub struct Built {
    waiting: Mutex<Vec<(u64, ClProgram)>>,
    /// Programs built from source so far.
    pub from_source: std::sync::atomic::AtomicU64,
}

// SAFETY: the programs are only moved in and out under the lock.
unsafe impl Sync for Built {}

impl Compiler for ClCompiler<'_> {
    type Program = Program;

    fn target(&self) -> String {
        let i = &self.dev.info;
        format!("opencl-{}-{}", i.name, i.driver.as_deref().unwrap_or(""))
    }

    fn extension(&self) -> &'static str {
        "clbin"
    }

    fn compile(&self, source: &str) -> Result<Vec<u8>> {
        self.built
            .from_source
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dev = self.dev;
        let mut program =
            ClProgram::create_from_source(&dev.context, source).map_err(cl_error("compile"))?;
        if let Err(e) = program.build(&[dev.id()], &dev.build_options) {
            let log = program.get_build_log(dev.id()).unwrap_or_default();
            return Err(build_failed(&log, e));
        }
        let binary = program
            .get_binaries()
            .map_err(cl_error("compile"))?
            .into_iter()
            .next()
            .filter(|b| !b.is_empty())
            .ok_or_else(|| fault("compile", "the driver returned no program binary"))?;
        let key = gearbox_codegen::fnv1a64(&binary);
        let mut built = self
            .built
            .waiting
            .lock()
            .map_err(|_| fault("compile", "poisoned"))?;
        built.retain(|(k, _)| *k != key);
        built.push((key, program));
        if built.len() > 8 {
            built.remove(0);
        }
        Ok(binary)
    }

    fn load(&self, binary: &[u8], entries: &[&str]) -> Result<Program> {
        let dev = self.dev;
        let key = gearbox_codegen::fnv1a64(binary);
        let stashed = {
            let mut built = self
                .built
                .waiting
                .lock()
                .map_err(|_| fault("load", "poisoned"))?;
            built
                .iter()
                .position(|(k, _)| *k == key)
                .map(|i| built.remove(i).1)
        };
        let program = match stashed {
            Some(p) => p,
            None => {
                // SAFETY: the binary came from this device and driver (the
                // cache keys binaries by both); the driver checks it.
                let mut p =
                    unsafe { ClProgram::create_from_binary(&dev.context, &[dev.id()], &[binary]) }
                        .map_err(cl_error("load"))?;
                if let Err(e) = p.build(&[dev.id()], &dev.build_options) {
                    let log = p.get_build_log(dev.id()).unwrap_or_default();
                    return Err(build_failed(&log, e));
                }
                p
            }
        };
        let mut kernels = HashMap::new();
        for &entry in entries {
            let k = Kernel::create(&program, entry)
                .map_err(|e| fault("load", format!("entry point {entry}: {e} ({})", e.0)))?;
            kernels.insert(entry.to_string(), Mutex::new(k));
        }
        Ok(Program {
            kernels,
            _program: program,
        })
    }
}
