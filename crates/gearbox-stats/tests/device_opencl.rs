//! The device sources (`device/`) built as OpenCL C 1.2 with `cl_khr_fp64`
//! (pocl in CI) and run against the Rust nmath and GLM functions: the
//! cases of `device_host` (`device_cases`, same inputs and tolerances), one
//! kernel per function in one program of every function
//! (`common::opencl`); and each function's assembled source (prelude and
//! callees) compiled alone, which checks that it needs nothing else.
//!
//! Without an OpenCL device with `cl_khr_fp64` the tests print why and
//! pass, unless `GEARBOX_REQUIRE_OPENCL=1` is set.

mod common;
mod devcheck;
mod device_cases;
mod glm_rows;
mod r_reference;

use common::opencl;
use gearbox_stats::device;

#[test]
fn every_function_compiles_alone() {
    let dev = match opencl::device() {
        Ok(dev) => dev,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let mut names: Vec<&str> = device::functions().keys().copied().collect();
    names.sort_unstable();
    let failures: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let source = device::assemble(&[name]).unwrap_or_else(|e| panic!("{e}"));
            opencl::compile(dev, &source)
                .err()
                .map(|log| format!("{name}: {log}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} functions do not compile alone as OpenCL C on {}:\n{}",
        failures.len(),
        names.len(),
        dev.name,
        failures.join("\n")
    );
}
