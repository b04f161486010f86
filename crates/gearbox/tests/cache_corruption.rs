//! The cache-corruption suite: every kind of file the cache directory
//! holds (compiled programs of each GPU backend, the wgpu pipeline cache,
//! calibration JSON) is damaged every way a disk, a crash or an upgrade
//! damages files (truncated, half-written with the temporary file left
//! beside it, zeroed, garbage, emptied, appended to, from another driver,
//! in an older format), and the **next process** must run correctly on the
//! device (the crash-isolated probe included), rebuild what it deleted and
//! say so in its repair log ([`gearbox::runtime::cache_repairs`]).
//!
//! Each process is a child of this binary ([`child`]), on the backends
//! usable here (lavapipe and pocl in CI; CUDA, wgpu and OpenCL on the GPU
//! machine).

mod common;

use std::path::{Path, PathBuf};

use gearbox::runtime::testing::gpu::{fast_f32, lock, on_cpu, values};
use gearbox::runtime::{cache_repairs, fallback_log};
use gearbox::DType;

/// The variable that turns this binary into a child process of a test.
const CHILD: &str = "GEARBOX_CACHE_CHILD";

/// A way to damage a file's bytes.
type Damage = fn(&Path, Vec<u8>) -> Vec<u8>;

/// Every damage the suite applies, by name.
const DAMAGES: [(&str, Damage); 8] = [
    ("truncated", |_, b| b[..b.len() / 3].to_vec()),
    ("half-written, temporary left", |p, b| {
        let name = p.file_name().unwrap().to_string_lossy();
        let tmp = p.with_file_name(format!(".{name}.4242.ThreadId(1).tmp"));
        std::fs::write(tmp, &b[..b.len() / 2]).unwrap();
        b[..b.len() / 2].to_vec()
    }),
    ("zeroed", |_, b| vec![0; b.len()]),
    ("garbage", |_, b| {
        (0..b.len())
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
            .collect()
    }),
    ("emptied", |_, _| Vec::new()),
    ("appended to", |_, mut b| {
        b.extend_from_slice(b"\n\x00trailing bytes");
        b
    }),
    ("from another driver", |_, b| other_producer(&b)),
    ("an older format", |_, b| payload_of(&b)),
];

/// The entry's bytes with its producer replaced by another driver's (a
/// whole, checksummed entry: only the producer is wrong).
fn other_producer(bytes: &[u8]) -> Vec<u8> {
    if !bytes.starts_with(b"GEARBOX-CACHE\0") {
        return b"{\"version\": 99, \"backends\": 7}".to_vec(); // JSON of another build
    }
    let dir = std::env::temp_dir().join(format!("gearbox-other-{}", std::process::id()));
    let path = dir.join("entry");
    gearbox::runtime::cache_file::write_entry(
        &path,
        "another device, driver 0.0",
        &payload_of(bytes),
    )
    .unwrap();
    let b = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    b
}

/// The payload of an entry (what an older build wrote without a header).
fn payload_of(bytes: &[u8]) -> Vec<u8> {
    if !bytes.starts_with(b"GEARBOX-CACHE\0") {
        return bytes[..bytes.len() / 2].to_vec();
    }
    let producer = u32::from_le_bytes(bytes[18..22].try_into().unwrap()) as usize;
    bytes[22 + producer + 16..].to_vec()
}

/// Every file of the cache directory `dir` (not the temporaries).
fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.file_name().unwrap().to_string_lossy().starts_with('.') {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Runs this binary's [`child`] for `backend` with the cache in `dir`.
fn run_child(backend: &str, dir: &Path) -> (bool, String) {
    let dir = dir.display().to_string();
    common::run_child(&[(CHILD, backend), ("GEARBOX_CACHE_DIR", &dir)])
}

/// The number after `label` in a child's output.
fn count(text: &str, label: &str) -> usize {
    text.split(label)
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {label} in: {text}"))
}

#[test]
fn every_damaged_cache_entry_is_rebuilt_by_the_next_process() {
    let _g = lock();
    let devices: Vec<&str> = common::usable_devices().iter().map(|d| d.backend).collect();
    for backend in devices {
        let dir =
            std::env::temp_dir().join(format!("gearbox-cache-{backend}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (ok, text) = run_child(backend, &dir);
        assert!(ok, "{backend}, clean cache: {text}");
        let files = cache_files(&dir);
        let kinds: Vec<String> = files
            .iter()
            .filter_map(|f| f.extension().map(|e| e.to_string_lossy().into_owned()))
            .collect();
        assert!(
            files.len() >= 3 && kinds.iter().any(|k| k == "json"),
            "{backend}: the first process left {files:?}"
        );
        let good: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        for (name, damage) in DAMAGES {
            for (f, bytes) in files.iter().zip(&good) {
                std::fs::write(f, damage(f, bytes.clone())).unwrap();
            }
            let (ok, text) = run_child(backend, &dir);
            assert!(ok, "{backend}, every entry {name}: {text}");
            let repaired = count(&text, "repairs:");
            assert!(
                repaired >= files.len(),
                "{backend}, every entry {name}: {repaired} repairs logged for {} files:\n{text}",
                files.len()
            );
            for f in &files {
                let back = std::fs::read(f).unwrap_or_default();
                assert!(
                    back.starts_with(b"GEARBOX-CACHE\0") || back.starts_with(b"{"),
                    "{backend}, {name}: {} was not rebuilt",
                    f.display()
                );
            }
            // The rebuilt cache is whole: a third process repairs nothing.
            let (ok, text) = run_child(backend, &dir);
            assert!(
                ok && count(&text, "repairs:") == 0,
                "{backend} after {name}: {text}"
            );
        }
        println!(
            "{backend}: {} files x {} damages: every process right, every entry rebuilt",
            files.len(),
            DAMAGES.len()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The child processes' entry point (ignored in a normal run): with
/// `GEARBOX_CACHE_CHILD=<backend>` it probes that backend (which must be
/// healthy), runs work on it against the CPU, reads and writes the
/// calibration file, and prints how many cache entries it repaired.
#[test]
#[ignore = "the entry point of the child processes the cache tests start"]
fn child() {
    let backend = std::env::var(CHILD).expect("started by a cache test");
    common::init_allowing_cpu_devices();
    let d = common::DEVICES
        .into_iter()
        .find(|d| d.backend == backend)
        .expect("a GPU backend");
    assert!(d.forced_and_healthy(), "{backend} is not healthy");
    let x = fast_f32(
        [96, 64],
        values(96 * 64, DType::F64, 3).to_vec::<f64>().unwrap(),
    );
    let y = fast_f32(
        [64, 80],
        values(64 * 80, DType::F64, 4).to_vec::<f64>().unwrap(),
    );
    let work = || {
        let p = x.matmul(&y).unwrap();
        let chain = ((&p * 0.5).unwrap().tanh().unwrap() + &p).unwrap();
        let mut v = chain
            .sum_axis(0)
            .unwrap()
            .astype(DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        v.extend(
            x.cumsum_axis(0)
                .unwrap()
                .astype(DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap(),
        );
        v
    };
    let got = work();
    let want = on_cpu(work);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-3 * (1.0 + w.abs()),
            "value {i}: {g} against {w}"
        );
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
    // The calibration file: read (a damaged one is deleted), then written.
    gearbox::runtime::calibration::reload();
    let b = gearbox::runtime::registry::candidates(false)
        .into_iter()
        .find(|c| c.status.backend == backend)
        .and_then(|c| c.backend)
        .expect("the backend");
    let device = b.info().expect("device info").name;
    let _ = gearbox::runtime::calibration::threshold(
        b.as_ref(),
        &device,
        gearbox::runtime::WorkClass::Elementwise,
        DType::F32,
    );
    let thresholds = vec![gearbox::runtime::Threshold::from(
        gearbox::runtime::WorkClass::Elementwise,
        DType::F32,
        1e6,
        1e4,
    )];
    gearbox::runtime::calibration::store(&backend, &device, thresholds).expect("stored");
    let repairs = cache_repairs();
    for r in &repairs {
        println!("repaired {r}");
    }
    println!("repairs: {}", repairs.len());
}
