//! The OpenCL backend on whatever device this machine has (pocl in CI,
//! NVIDIA's OpenCL driver on the H100): its status row, the probe, and the
//! shared conformance suite forced onto it and compared with the CPU. CPU
//! devices are allowed here (they are not by default). Without a device
//! the tests print `SKIP: <reason>` and pass, unless
//! `GEARBOX_REQUIRE_OPENCL=1` (CI sets it: there the device must be found).

mod common;

use common::{device, OPENCL};

#[test]
fn the_status_row_names_the_device_or_what_is_missing() {
    let _g = common::lock();
    OPENCL.check_status_row("OpenCL");
}

#[test]
fn the_conformance_suite_passes_on_the_device() {
    let Some(_g) = device() else { return };
    OPENCL.check_conformance(|| {
        let dev = gearbox_opencl::shared().expect("registered");
        let dev = dev.device().expect("a device");
        println!("device: {} (fp64: {})", dev.info.name, dev.fp64);
    });
}

#[test]
fn a_second_process_loads_binaries_from_the_disk_cache() {
    use gearbox_core::runtime::Backend;
    use gearbox_core::{DType, HostBuffer};
    let Some(_g) = device() else { return };
    // Two fresh backends stand for two processes sharing the disk cache.
    let ir = gearbox_core::fusion::ir::probe_kernel(1000, DType::F64).unwrap();
    let x: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.37).sin()).collect();
    let run = |b: &gearbox_opencl::OpenClBackend| -> Vec<f64> {
        let xs = b.upload(&HostBuffer::F64(x.clone())).unwrap();
        let c = b.upload(&HostBuffer::F64(vec![0.25])).unwrap();
        let out = b.run_kernel(&ir, &[xs.as_ref(), c.as_ref()]).unwrap();
        match b.download(out.outputs[0].as_ref()).unwrap() {
            HostBuffer::F64(v) => v,
            other => panic!("{other:?}"),
        }
    };
    let want: Vec<f64> = x.iter().map(|v| v * v + 0.25).collect();
    let first = gearbox_opencl::OpenClBackend::new();
    assert_eq!(run(&first), want);
    let second = gearbox_opencl::OpenClBackend::new();
    assert_eq!(run(&second), want);
    println!(
        "programs built from source: first process {}, second {}",
        first.programs_built(),
        second.programs_built()
    );
    if gearbox_core::runtime::config::cache_dir().is_some() {
        assert_eq!(second.programs_built(), 0, "the binary came from disk");
    }
}

#[test]
fn a_failed_build_carries_the_build_log() {
    use gearbox_core::runtime::programs::Compiler;
    let Some(_g) = device() else { return };
    let backend = gearbox_opencl::OpenClBackend::new();
    let dev = backend.device().unwrap();
    let err = backend
        .compiler(dev)
        .compile("__kernel void broken(__global float* x) { x[0] = undefined_name; }")
        .expect_err("the build fails")
        .to_string();
    assert!(
        err.contains("build log") && err.contains("undefined_name"),
        "{err}"
    );
}
