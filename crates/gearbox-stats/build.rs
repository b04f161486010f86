//! Embeds every device source file in `device/` (`prelude.h` and one
//! function per `gb_NAME.c`) as a table, so adding a function is adding a
//! file.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("device");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("device/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c" || x == "h"))
        .collect();
    files.sort();
    let mut table = String::from("/// (file stem, source) of every file in `device/`.\npub static DEVICE_FILES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let stem = f.file_stem().unwrap().to_str().unwrap();
        writeln!(
            table,
            "    ({stem:?}, include_str!({:?})),",
            f.display().to_string()
        )
        .unwrap();
    }
    table.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("device_files.rs");
    std::fs::write(out, table).unwrap();
}
