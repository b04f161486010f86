//! Finding and loading the CUDA libraries at run time.
//!
//! cudarc's loaders `dlopen` a library by name and panic when none is found.
//! This module looks first: for each library it searches
//! `GEARBOX_CUDA_LIB_DIR`, the usual CUDA folders, `LD_LIBRARY_PATH` and the
//! system linker's list, loads the first match globally by full path, and
//! keeps it loaded for the life of the process. cudarc's later `dlopen` by
//! soname then finds the loaded copy. A library that is missing makes the
//! backend unavailable with a reason naming it; nothing panics.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A CUDA library the backend needs, with the file names it may have.
struct Wanted {
    what: &'static str,
    names: &'static [&'static str],
}

const WANTED: &[Wanted] = &[
    Wanted {
        what: "the CUDA driver (libcuda)",
        names: &["libcuda.so.1", "libcuda.so"],
    },
    Wanted {
        what: "NVRTC (libnvrtc)",
        names: &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"],
    },
    Wanted {
        what: "cuBLASLt (libcublasLt)",
        names: &["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"],
    },
    Wanted {
        what: "cuBLAS (libcublas)",
        names: &["libcublas.so.13", "libcublas.so.12", "libcublas.so"],
    },
    Wanted {
        what: "cuSOLVER (libcusolver)",
        names: &["libcusolver.so.12", "libcusolver.so.11", "libcusolver.so"],
    },
];

/// Folders searched, in order.
fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Ok(d) = std::env::var("GEARBOX_CUDA_LIB_DIR") {
        dirs.extend(std::env::split_paths(&d));
    }
    for d in [
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/lib",
        "/usr/local/cuda/targets/x86_64-linux/lib",
        "/usr/local/nvidia/lib64",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib/wsl/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    if let Ok(p) = std::env::var("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    dirs
}

/// Where the system linker's cache says `name` lives, if anywhere.
fn from_ldconfig(name: &str) -> Option<PathBuf> {
    let out = std::process::Command::new("ldconfig")
        .arg("-p")
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.trim_start().starts_with(name) && l.contains("x86-64"))
        .find_map(|l| l.rsplit("=> ").next().map(|p| PathBuf::from(p.trim())))
        .filter(|p| p.exists())
}

fn find(w: &Wanted, dirs: &[PathBuf]) -> Option<PathBuf> {
    for name in w.names {
        if let Some(p) = dirs.iter().map(|d| d.join(name)).find(|p| p.exists()) {
            return Some(p);
        }
    }
    w.names.iter().find_map(|n| from_ldconfig(n))
}

/// The libraries found and loaded.
#[derive(Debug)]
pub struct Loaded {
    /// Full paths, in load order.
    pub paths: Vec<PathBuf>,
    _libs: Vec<libloading::os::unix::Library>,
}

static LOADED: OnceLock<Result<Loaded, String>> = OnceLock::new();

/// Loads every library once; the error names the first one missing and where
/// it was looked for.
pub fn load() -> Result<&'static Loaded, String> {
    LOADED
        .get_or_init(|| {
            let dirs = search_dirs();
            let mut paths = Vec::new();
            let mut libs = Vec::new();
            for w in WANTED {
                let Some(path) = find(w, &dirs) else {
                    return Err(format!(
                        "{} not found ({}; searched GEARBOX_CUDA_LIB_DIR, /usr/local/cuda/lib64, the system folders, \
                         LD_LIBRARY_PATH and the linker cache); set GEARBOX_CUDA_LIB_DIR to its folder",
                        w.what,
                        w.names[0]
                    ));
                };
                // SAFETY: loading a CUDA library runs its initializers, which is
                // what using it requires; RTLD_GLOBAL lets cudarc's later
                // dlopen by soname find this copy.
                let lib = unsafe {
                    libloading::os::unix::Library::open(
                        Some(&path),
                        libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
                    )
                };
                match lib {
                    Ok(l) => libs.push(l),
                    Err(e) => return Err(format!("{} at {} could not be loaded: {e}", w.what, path.display())),
                }
                paths.push(path);
            }
            Ok(Loaded { paths, _libs: libs })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The folder the runtime libraries were found in (for the status line).
pub fn library_dir() -> Option<&'static Path> {
    load()
        .ok()
        .and_then(|l| l.paths.get(1))
        .and_then(|p| p.parent())
}
