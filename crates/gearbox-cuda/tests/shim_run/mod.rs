//! What the host tests of fixed CUDA sources share: the shim of the CUDA
//! built-ins (`tests/shim/cuda_host_shim.h`), whether g++ is there, and a
//! translation unit compiled and run, its standard output returned.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether g++ runs here; if not, prints why the calling test is skipped.
pub fn gxx_available() -> bool {
    let ok = matches!(Command::new("g++").arg("--version").output(), Ok(o) if o.status.success());
    if !ok {
        eprintln!("skipped: g++ is not available to compile the kernels on the host");
    }
    ok
}

/// The shim's source, to put before a kernel source.
pub fn shim() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shim/cuda_host_shim.h"),
    )
    .expect("shim")
}

/// A file `name` in this test's scratch folder `dir`.
fn scratch(dir: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// Compiles `tu` (C++17) as `name` in scratch folder `dir`, runs it and
/// returns what it printed; a compile error or a failed run fails the test.
pub fn compile_and_run(dir: &str, name: &str, tu: &str) -> String {
    let (src, exe) = (
        scratch(dir, &format!("{name}.cpp")),
        scratch(dir, &format!("{name}.exe")),
    );
    std::fs::write(&src, tu).unwrap();
    let built = Command::new("g++")
        .args(["-std=c++17", "-O1", "-pthread", "-w", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
            .chars()
            .take(6000)
            .collect::<String>()
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    String::from_utf8(run.stdout).unwrap()
}
