//! Entries of the cache directory that can never be loaded as good when
//! they are not: compiled programs and drivers' pipeline caches are
//! handed to a driver, which may crash on bytes it did not write (pocl
//! asserts on a truncated binary, inside the crash-isolated probe too).
//!
//! Every entry is written to a temporary file and renamed into place (a
//! process killed mid-write leaves no half-written entry), and carries a
//! header: a magic string, the format version, the **producer** (the
//! device and driver the bytes are valid for), the payload's length and a
//! checksum over producer and payload. A read checks all of it before the
//! bytes go anywhere; an entry that fails is deleted, logged
//! ([`repairs`], and a warning) and rebuilt by the caller.
//!
//! A temporary file a killed writer left behind is deleted by the first
//! read of its folder in a later process, once it is older than
//! [`STALE_TEMPORARY`] (a younger one may be another process's write).
//!
//! JSON files of the cache directory (calibrations) are written the same
//! atomic way by [`crate::runtime::config::write_cache_json`]; one that
//! does not parse is deleted with a repair entry too.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The first bytes of every entry.
const MAGIC: &[u8; 14] = b"GEARBOX-CACHE\0";

/// The header's layout version.
const FORMAT: u32 = 1;

/// How old a temporary file must be before a reader deletes it as left
/// behind by a writer that was killed.
pub const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(600);

/// Deletes the temporary files older than [`STALE_TEMPORARY`] in `dir`,
/// once per folder and process.
fn sweep_temporaries(dir: &Path) {
    static SWEPT: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
        if swept.iter().any(|d| d == dir) {
            return;
        }
        swept.push(dir.to_path_buf());
    }
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let age = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok());
        if name.starts_with('.')
            && name.ends_with(".tmp")
            && age.is_some_and(|a| a > STALE_TEMPORARY)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A cache entry deleted because it could not be trusted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheRepair {
    /// UTC time, `YYYY-MM-DD HH:MM:SS`.
    pub timestamp: String,
    /// The file deleted.
    pub file: String,
    /// What was wrong with it.
    pub why: String,
}

impl std::fmt::Display for CacheRepair {
    /// `<file>: <why>; deleted and rebuilt`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}; deleted and rebuilt", self.file, self.why)
    }
}

static REPAIRS: Mutex<Vec<CacheRepair>> = Mutex::new(Vec::new());

/// Every cache entry this process deleted as untrustworthy (and a probe
/// child's, which its report carries back), oldest first.
pub fn repairs() -> Vec<CacheRepair> {
    REPAIRS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Deletes `path` and records why (a warning and a [`repairs`] entry); the
/// caller rebuilds the entry.
pub fn discard(path: &Path, why: &str) {
    let removed = match std::fs::remove_file(path) {
        Ok(()) => String::new(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => format!(" (not deleted: {e})"),
    };
    tracing::warn!("cache entry {}: {why}; rebuilt{removed}", path.display());
    note(CacheRepair {
        timestamp: crate::runtime::fallback::utc_now(),
        file: path.display().to_string(),
        why: format!("{why}{removed}"),
    });
}

/// Adds `repair` to [`repairs`] (the probe passes on its child's).
pub(crate) fn note(repair: CacheRepair) {
    REPAIRS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(repair);
}

/// What reading an entry found.
#[derive(Debug, PartialEq)]
pub enum Entry {
    /// No entry: build it.
    Missing,
    /// The payload, checked.
    Valid(Vec<u8>),
    /// The entry was unusable, and is deleted (the reason is logged).
    Discarded,
}

/// The checksum of an entry: FNV-1a over the producer, a separator and
/// the payload.
fn checksum(producer: &[u8], payload: &[u8]) -> u64 {
    let mut bytes = Vec::with_capacity(producer.len() + 1 + payload.len());
    bytes.extend_from_slice(producer);
    bytes.push(0);
    bytes.extend_from_slice(payload);
    crate::runtime::programs::fnv1a64(&bytes)
}

/// Writes `payload` as the entry at `path` for `producer`: header and
/// payload into a temporary file beside it, then renamed over `path` (a
/// reader sees the old entry or the new one, never part of one).
pub fn write_entry(path: &Path, producer: &str, payload: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut bytes = Vec::with_capacity(MAGIC.len() + 28 + producer.len() + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&(producer.len() as u32).to_le_bytes());
    bytes.extend_from_slice(producer.as_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&checksum(producer.as_bytes(), payload).to_le_bytes());
    bytes.extend_from_slice(payload);
    write_atomically(path, &bytes)
}

/// Writes `bytes` to `path` through a temporary file of this process and
/// thread and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let temporary = path.with_file_name(format!(
        ".{name}.{}.{:?}.tmp",
        std::process::id(),
        std::thread::current().id()
    ));
    let written = std::fs::File::create(&temporary)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_data()))
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Reads the entry at `path` for `producer`: its payload when the header
/// is intact, of this format, of `producer`, and the length and checksum
/// match; else the file is deleted with a repair entry naming why.
pub fn read_entry(path: &Path, producer: &str) -> Entry {
    if let Some(dir) = path.parent() {
        sweep_temporaries(dir);
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Entry::Missing,
        Err(e) => {
            discard(path, &format!("unreadable ({e})"));
            return Entry::Discarded;
        }
    };
    match parse(&bytes, producer) {
        Ok(payload) => Entry::Valid(payload.to_vec()),
        Err(why) => {
            discard(path, &why);
            Entry::Discarded
        }
    }
}

/// The payload of an entry's bytes, or what is wrong with them.
fn parse<'a>(bytes: &'a [u8], producer: &str) -> Result<&'a [u8], String> {
    let mut rest = bytes;
    let mut take = |n: usize, what: &str| -> Result<&'a [u8], String> {
        if rest.len() < n {
            return Err(format!(
                "truncated ({} bytes, cut inside the {what})",
                bytes.len()
            ));
        }
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Ok(head)
    };
    if take(MAGIC.len(), "header")? != MAGIC {
        return Err(
            "not a gearbox cache entry (no header: garbage, zeroed, or an older format)".into(),
        );
    }
    let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let u64_at = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let format = u32_at(take(4, "header")?);
    if format != FORMAT {
        return Err(format!("format {format}, this build reads {FORMAT}"));
    }
    let producer_len = u32_at(take(4, "header")?) as usize;
    let stored = take(producer_len, "header")?;
    if stored != producer.as_bytes() {
        return Err(format!(
            "made for {:?}, not this device and driver ({producer:?})",
            String::from_utf8_lossy(stored)
        ));
    }
    let len = u64_at(take(8, "header")?);
    let sum = u64_at(take(8, "header")?);
    if rest.len() as u64 != len {
        return Err(format!(
            "{} payload bytes where the header says {len} (truncated or appended to)",
            rest.len()
        ));
    }
    if checksum(stored, rest) != sum {
        return Err("checksum mismatch (the bytes changed after they were written)".into());
    }
    Ok(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("gearbox-cache-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn an_entry_reads_back_only_whole_and_for_its_producer() {
        let d = dir("roundtrip");
        let path = d.join("k.bin");
        let payload: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        assert_eq!(read_entry(&path, "dev"), Entry::Missing);
        write_entry(&path, "dev 1.0", &payload).unwrap();
        assert_eq!(read_entry(&path, "dev 1.0"), Entry::Valid(payload.clone()));
        let whole = std::fs::read(&path).unwrap();
        type Damage = fn(&mut Vec<u8>);
        let damages: [(&str, Damage, &str); 7] = [
            ("truncated", |b| b.truncate(b.len() / 2), "payload bytes"),
            ("header cut", |b| b.truncate(20), "truncated"),
            ("empty", |b| b.clear(), "truncated"),
            ("zeroed", |b| b.iter_mut().for_each(|x| *x = 0), "no header"),
            ("flipped", |b| *b.last_mut().unwrap() ^= 1, "checksum"),
            ("appended", |b| b.extend_from_slice(b"xx"), "appended"),
            (
                "garbage",
                |b| {
                    b.iter_mut()
                        .enumerate()
                        .for_each(|(i, x)| *x = (i * 7) as u8)
                },
                "no header",
            ),
        ];
        for (name, damage, why) in damages {
            let mut b = whole.clone();
            damage(&mut b);
            std::fs::write(&path, &b).unwrap();
            let before = repairs().len();
            assert_eq!(read_entry(&path, "dev 1.0"), Entry::Discarded, "{name}");
            assert!(!path.exists(), "{name}: the bad entry stays");
            let r = repairs();
            assert!(
                r.len() > before && r.last().unwrap().why.contains(why),
                "{name}: {r:?}"
            );
        }
        // Another driver's entry.
        write_entry(&path, "dev 2.0", &payload).unwrap();
        assert_eq!(read_entry(&path, "dev 1.0"), Entry::Discarded);
        assert!(repairs().last().unwrap().why.contains("dev 2.0"));
        // An empty payload is an entry like any other.
        write_entry(&path, "dev", &[]).unwrap();
        assert_eq!(read_entry(&path, "dev"), Entry::Valid(Vec::new()));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn temporaries_left_by_killed_writers_are_deleted_once_old() {
        let d = dir("temporaries");
        std::fs::create_dir_all(&d).unwrap();
        let old = d.join(".k.bin.999.ThreadId(3).tmp");
        let young = d.join(".k.bin.998.ThreadId(4).tmp");
        for p in [&old, &young] {
            std::fs::write(p, b"half an entry").unwrap();
        }
        let long_ago = std::time::SystemTime::now() - STALE_TEMPORARY * 2;
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        assert_eq!(read_entry(&d.join("k.bin"), "dev"), Entry::Missing);
        assert!(!old.exists(), "an old temporary stays");
        assert!(young.exists(), "a young temporary (a write under way) went");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn writers_racing_on_one_entry_leave_a_whole_one() {
        let d = dir("race");
        let path = d.join("k.bin");
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..20 {
                        write_entry(path, "dev", &vec![t; 4096 + t as usize]).unwrap();
                        match read_entry(path, "dev") {
                            Entry::Valid(p) => assert!(p.iter().all(|&x| x == p[0])),
                            other => panic!("a reader saw {other:?}"),
                        }
                    }
                });
            }
        });
        let _ = std::fs::remove_dir_all(&d);
    }
}
