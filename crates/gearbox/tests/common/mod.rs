//! What the facade's device tests share: the GPU backends they try, with
//! CPU devices allowed (pocl, lavapipe), and which of them are usable.

#![allow(dead_code)]

use gearbox::runtime::testing::gpu::UnderTest;
use gearbox::runtime::{options, set_options};
use std::process::Command;

/// The GPU backends, in the runtime's order, and the variables that make
/// their absence a failure (CI and `scripts/gpu.sh` set them).
pub const DEVICES: [UnderTest; 3] = [
    UnderTest {
        backend: "cuda",
        kind: "CUDA",
        noun: "device",
        require: "GEARBOX_REQUIRE_CUDA",
    },
    UnderTest {
        backend: "wgpu",
        kind: "wgpu",
        noun: "adapter",
        require: "GEARBOX_REQUIRE_WGPU",
    },
    UnderTest {
        backend: "opencl",
        kind: "OpenCL",
        noun: "device",
        require: "GEARBOX_REQUIRE_OPENCL",
    },
];

/// Registers the backends and lets OpenCL and wgpu drive CPU devices.
pub fn init_allowing_cpu_devices() {
    gearbox::init();
    gearbox::opencl::allow_cpu_devices(true);
    gearbox_wgpu::device::allow_cpu_adapters(true);
}

/// The GPU backends usable here (each probed; a missing one prints
/// `SKIP: ...`), with the options as they were.
pub fn usable_devices() -> Vec<UnderTest> {
    init_allowing_cpu_devices();
    let saved = options();
    DEVICES
        .into_iter()
        .filter(|d| {
            let ok = d.forced_and_healthy();
            set_options(saved.clone());
            ok
        })
        .collect()
}

/// Runs this test binary's ignored test `child` with the environment
/// `env` (a test's way to make a fresh process): whether it succeeded,
/// and its exit status with its standard output and error.
pub fn run_child(env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .envs(env.iter().copied())
        .output()
        .expect("the test binary starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), format!("{:?}: {text}", out.status))
}
