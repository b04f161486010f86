//! Compiled GPU programs, cached in memory and on disk, for every backend
//! that compiles source at run time: the backend gives a [`Compiler`]
//! (source to binary, binary to a loaded program), this module decides
//! when to call it.
//!
//! Three ways to find a program, fastest first:
//! - by the fused kernel's IR ([`ProgramCache::prepare`]): a kernel seen
//!   before is neither rendered nor hashed again (rendering costs tens of
//!   microseconds, as much as a memory-bound pass over a large array);
//! - by a key the caller builds from the parameters its source is made
//!   from ([`ProgramCache::keyed`]), or by the address of a source fixed
//!   at build time ([`ProgramCache::fixed`]);
//! - by the source's hash ([`ProgramCache::source`]), in memory, then on
//!   disk: `<cache dir>/kernels/<hash>.<extension>`, the hash taken over
//!   the source's hash and the compiler's target (device and driver), so
//!   a second process running the same work compiles nothing. Entries
//!   are checked ([`crate::runtime::cache_file`]: written atomically,
//!   header with the target and a checksum); one that fails the check, or
//!   that the driver refuses to load, is deleted and compiled again.
//!
//! `hits` counts programs found in memory or on disk, `misses` those the
//! compiler had to build. A compile error is the compiler's (with its log).

use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::fusion::ir::KernelIr;
use crate::runtime::cache_file::{discard, read_entry, write_entry, Entry};

/// Turns source into a binary and a binary into a loaded program, for one
/// device.
pub trait Compiler {
    /// A loaded program whose entry points can be launched.
    type Program: Send + Sync;

    /// What a binary is valid for (device and driver): binaries on disk are
    /// kept apart by it.
    fn target(&self) -> String;

    /// The file extension of binaries on disk.
    fn extension(&self) -> &'static str;

    /// Compiles `source` to a binary the device can load.
    fn compile(&self, source: &str) -> Result<Vec<u8>>;

    /// Loads `binary` with entry points `entries`.
    fn load(&self, binary: &[u8], entries: &[&str]) -> Result<Self::Program>;
}

/// A fused kernel ready to launch: what its rendering says about launching
/// it (`L`), and its program.
pub struct Prepared<L, P> {
    /// Launch facts of the rendering (kind, vector width, thread mapping).
    pub launch: L,
    /// The loaded program.
    pub program: Arc<P>,
}

/// What rendering a fused kernel gives: launch facts, source and entry
/// points.
pub struct Rendered<L> {
    /// Launch facts.
    pub launch: L,
    /// The complete source.
    pub source: String,
    /// The entry points to load.
    pub entries: Vec<&'static str>,
}

/// Programs remembered by IR or by key before the map starts over (caches
/// of renderings; the programs stay in the source cache).
const MAX_REMEMBERED: usize = 4096;

/// The program cache of one device: programs `P`, launch facts `L`.
pub struct ProgramCache<P, L> {
    /// Where binaries are kept between processes (`None`: memory only).
    disk: Option<PathBuf>,
    by_ir: Mutex<HashMap<KernelIr, Arc<Prepared<L, P>>>>,
    by_source: Mutex<HashMap<u64, Arc<P>>>,
    by_key: Mutex<HashMap<String, Arc<P>>>,
    /// Programs found in memory or on disk.
    pub hits: AtomicU64,
    /// Programs the compiler built.
    pub misses: AtomicU64,
}

impl<P, L> Default for ProgramCache<P, L> {
    /// A cache keeping binaries under the cache directory's `kernels/`
    /// ([`crate::runtime::config::cache_dir`]).
    fn default() -> Self {
        ProgramCache::with_disk(disk_dir())
    }
}

impl<P, L> ProgramCache<P, L> {
    /// A cache keeping binaries in `dir` (`None`: in memory only).
    pub fn with_disk(dir: Option<PathBuf>) -> Self {
        ProgramCache {
            disk: dir,
            by_ir: Mutex::default(),
            by_source: Mutex::default(),
            by_key: Mutex::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// (programs found in memory or on disk, programs the compiler built).
    pub fn counts(&self) -> (u64, u64) {
        (
            self.hits.load(std::sync::atomic::Ordering::Relaxed),
            self.misses.load(std::sync::atomic::Ordering::Relaxed),
        )
    }
}

/// Adds `value` under `key` to a map of at most [`MAX_REMEMBERED`] entries
/// (a full one starts over: its values are cheap to make again).
fn remember<K: Hash + Eq, V>(map: &Mutex<HashMap<K, Arc<V>>>, key: K, value: &Arc<V>) {
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= MAX_REMEMBERED {
        map.clear();
    }
    map.insert(key, Arc::clone(value));
}

fn disk_dir() -> Option<PathBuf> {
    crate::runtime::config::cache_dir().map(|d| d.join("kernels"))
}

impl<P: Send + Sync, L> ProgramCache<P, L> {
    /// The fused kernel prepared for `ir` already, if there is one
    /// (counted as a hit): lets a caller skip the checks that come before
    /// a first rendering.
    pub fn prepared(&self, ir: &KernelIr) -> Option<Arc<Prepared<L, P>>> {
        self.found(&self.by_ir, ir)
    }

    /// The fused kernel for `ir`: rendered by `render` and compiled on
    /// first use, then found by the IR alone.
    pub fn prepare<C: Compiler<Program = P>>(
        &self,
        compiler: &C,
        ir: &KernelIr,
        render: impl FnOnce() -> Result<Rendered<L>>,
    ) -> Result<Arc<Prepared<L, P>>> {
        if let Some(p) = self.found(&self.by_ir, ir) {
            return Ok(p);
        }
        let r = render()?;
        let program = self.source(compiler, &r.source, &r.entries)?;
        let prepared = Arc::new(Prepared {
            launch: r.launch,
            program,
        });
        remember(&self.by_ir, ir.clone(), &prepared);
        Ok(prepared)
    }

    /// The entry for `key` in `map`, counted as a hit.
    fn found<K: Hash + Eq, V>(&self, map: &Mutex<HashMap<K, Arc<V>>>, key: &K) -> Option<Arc<V>> {
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

    /// The program whose source `render` gives, found by `key` once it has
    /// been rendered (the key must determine the source).
    pub fn keyed<C: Compiler<Program = P>>(
        &self,
        compiler: &C,
        key: String,
        entries: &[&str],
        render: impl FnOnce() -> Result<String>,
    ) -> Result<Arc<P>> {
        if let Some(c) = self.found(&self.by_key, &key) {
            return Ok(c);
        }
        let program = self.source(compiler, &render()?, entries)?;
        remember(&self.by_key, key, &program);
        Ok(program)
    }

    /// The program of a source fixed at build time, found by its address
    /// rather than by hashing it on every launch.
    pub fn fixed<C: Compiler<Program = P>>(
        &self,
        compiler: &C,
        source: &'static str,
        entries: &[&str],
    ) -> Result<Arc<P>> {
        let key = format!("fixed@{:p}", source.as_ptr());
        self.keyed(compiler, key, entries, || Ok(source.to_string()))
    }

    /// The program for `source` with entry points `entries`: from memory,
    /// from disk, or compiled (and then written to disk).
    pub fn source<C: Compiler<Program = P>>(
        &self,
        compiler: &C,
        source: &str,
        entries: &[&str],
    ) -> Result<Arc<P>> {
        let source_hash = fnv1a64(source.as_bytes());
        if let Some(c) = self.found(&self.by_source, &source_hash) {
            return Ok(c);
        }
        let target = compiler.target();
        let key = format!("{source_hash:016x}-{target}");
        let path = self.disk.as_ref().map(|d| {
            d.join(format!(
                "{}.{}",
                fnv1a64(key.as_bytes()),
                compiler.extension()
            ))
        });
        let cached = path.as_ref().and_then(|p| match read_entry(p, &target) {
            Entry::Valid(binary) => Some(binary),
            Entry::Missing | Entry::Discarded => None,
        });
        let from_disk = match cached {
            Some(binary) => match compiler.load(&binary, entries) {
                Ok(program) => {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    Some(program)
                }
                Err(e) => {
                    if let Some(p) = &path {
                        discard(p, &format!("the driver refused the binary ({e})"));
                    }
                    None
                }
            },
            None => None,
        };
        let program = match from_disk {
            Some(program) => program,
            None => {
                let binary = compiler.compile(source)?;
                self.misses.fetch_add(1, Ordering::Relaxed);
                if let Some(p) = &path {
                    if let Err(e) = write_entry(p, &target, &binary) {
                        tracing::warn!("kernel cache {} not written: {e}", p.display());
                    }
                }
                compiler.load(&binary, entries)?
            }
        };
        let program = Arc::new(program);
        self.by_source
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(source_hash, Arc::clone(&program));
        Ok(program)
    }
}

/// FNV-1a, 64 bits: a hash of `bytes` that is the same on every platform,
/// Rust version and run (source hashes, disk cache names).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn fnv_reference_values() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    /// Compiles by reversing the source; counts its calls.
    struct Reverse {
        target: &'static str,
        compiled: Cell<usize>,
        loaded: Cell<usize>,
    }

    impl Compiler for Reverse {
        type Program = (String, Vec<String>);
        fn target(&self) -> String {
            self.target.into()
        }
        fn extension(&self) -> &'static str {
            "rev"
        }
        fn compile(&self, source: &str) -> Result<Vec<u8>> {
            self.compiled.set(self.compiled.get() + 1);
            Ok(source.bytes().rev().collect())
        }
        fn load(&self, binary: &[u8], entries: &[&str]) -> Result<Self::Program> {
            self.loaded.set(self.loaded.get() + 1);
            if binary.first() == Some(&b'!') {
                return Err(crate::Error::Config {
                    name: "binary".into(),
                    value: String::from_utf8_lossy(binary).into(),
                    why: "the test driver refuses binaries starting with !".into(),
                });
            }
            Ok((
                String::from_utf8(binary.to_vec()).expect("utf-8"),
                entries.iter().map(|e| e.to_string()).collect(),
            ))
        }
    }

    fn reverse(target: &'static str) -> Reverse {
        Reverse {
            target,
            compiled: Cell::new(0),
            loaded: Cell::new(0),
        }
    }

    #[test]
    fn a_source_compiles_once_and_a_second_cache_reads_it_from_disk() {
        let dir = std::env::temp_dir().join(format!("gearbox-programs-{}", std::process::id()));
        let cache = || -> ProgramCache<(String, Vec<String>), ()> {
            ProgramCache::with_disk(Some(dir.clone()))
        };
        let source = format!("kernel {}", fnv1a64(dir.to_string_lossy().as_bytes()));
        let c = reverse("dev-a");
        let first = cache();
        let p = first.source(&c, &source, &["main"]).unwrap();
        assert_eq!(p.0, source.chars().rev().collect::<String>());
        assert_eq!(p.1, vec!["main".to_string()]);
        first.source(&c, &source, &["main"]).unwrap();
        assert_eq!((c.compiled.get(), c.loaded.get()), (1, 1));
        assert_eq!(first.misses.load(Ordering::Relaxed), 1);
        assert_eq!(first.hits.load(Ordering::Relaxed), 1);
        // Another process (a fresh cache): loaded from disk, not compiled.
        cache().source(&c, &source, &["main"]).unwrap();
        assert_eq!((c.compiled.get(), c.loaded.get()), (1, 2));
        // Another device or driver compiles its own.
        let other = reverse("dev-b");
        cache().source(&other, &source, &["main"]).unwrap();
        assert_eq!(other.compiled.get(), 1);
        // Memory only: nothing is read or written.
        let none = reverse("dev-a");
        ProgramCache::<(String, Vec<String>), ()>::with_disk(None)
            .source(&none, &source, &["main"])
            .unwrap();
        assert_eq!(none.compiled.get(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keys_and_fixed_sources_render_once() {
        let c = reverse("dev-k");
        let cache: ProgramCache<(String, Vec<String>), ()> = ProgramCache::default();
        let renders = Cell::new(0);
        for _ in 0..3 {
            cache
                .keyed(&c, "grid/14".into(), &["main"], || {
                    renders.set(renders.get() + 1);
                    Ok(format!("grid {}", 14 + fnv1a64(b"k") % 7))
                })
                .unwrap();
        }
        assert_eq!(renders.get(), 1);
        static FIXED: &str = "fixed source";
        let a = cache.fixed(&c, FIXED, &["f"]).unwrap();
        let b = cache.fixed(&c, FIXED, &["f"]).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn a_damaged_or_refused_binary_on_disk_is_deleted_and_compiled_again() {
        let dir = std::env::temp_dir().join(format!("gearbox-programs-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = || -> ProgramCache<(String, Vec<String>), ()> {
            ProgramCache::with_disk(Some(dir.clone()))
        };
        let source = "kernel that survives damage";
        let c = reverse("dev-d");
        cache().source(&c, source, &["main"]).unwrap();
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let good = std::fs::read(&file).unwrap();
        let damaged: [Vec<u8>; 4] = [
            good[..good.len() - 3].to_vec(),
            vec![0; good.len()],
            b"garbage".to_vec(),
            Vec::new(),
        ];
        for (i, bytes) in damaged.into_iter().enumerate() {
            std::fs::write(&file, bytes).unwrap();
            let compiled = c.compiled.get();
            let p = cache().source(&c, source, &["main"]).unwrap();
            assert_eq!(p.0, source.chars().rev().collect::<String>(), "damage {i}");
            assert_eq!(c.compiled.get(), compiled + 1, "damage {i}: not rebuilt");
            assert_eq!(
                std::fs::read(&file).unwrap(),
                good,
                "damage {i}: not rewritten"
            );
            assert!(crate::runtime::cache_file::repairs()
                .iter()
                .any(|r| r.file == file.display().to_string()));
        }
        // A whole entry the driver refuses (here: a binary starting with
        // '!'): deleted and built from source again.
        let refused = "! reversed this ends with a bang";
        let r = reverse("dev-d");
        let fresh = cache();
        let key = format!("{:016x}-dev-d", fnv1a64(refused.as_bytes()));
        let path = dir.join(format!("{}.rev", fnv1a64(key.as_bytes())));
        crate::runtime::cache_file::write_entry(&path, "dev-d", b"!bad").unwrap();
        let p = fresh.source(&r, refused, &["main"]).unwrap();
        assert_eq!(p.0, refused.chars().rev().collect::<String>());
        assert_eq!((r.compiled.get(), r.loaded.get()), (1, 2));
        assert!(crate::runtime::cache_file::repairs()
            .iter()
            .any(|x| x.why.contains("refused")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
