//! The OpenCL backend's knobs, read once per process from the environment.
//!
//! | variable | what | default |
//! |---|---|---|
//! | `GEARBOX_OPENCL_ALLOW_CPU` | `1`: drive a device that is the CPU (pocl, Intel's CPU runtime) | off |
//! | `GEARBOX_OPENCL_DEVICE` | the device to drive: its position in the status table's order or part of its name | the best |
//! | `GEARBOX_OPENCL_POOL_BYTES` | freed device memory the pool keeps for reuse | 8 GiB |
//! | `GEARBOX_OPENCL_CLBLAST` | `0`: GEMM through the library's own tiled kernel (`library::gemm`) even where CLBlast is installed | on |
//! | `GEARBOX_OPENCL_REDUCE_GROUPS` | work-groups of a full reduction's first pass | 4 per compute unit |
//! | `GEARBOX_OPENCL_FULL_RATE_F64` | `1` or `0`: whether the device's f64 is full rate (strict work needs it) | by name |
//! | `GEARBOX_CLBLAST_LIB` | the CLBlast library to load | `libclblast.so.1`, then `libclblast.so` |

use std::sync::OnceLock;

use gearbox_core::runtime::config::{env_switch, env_value};

/// The knobs.
#[derive(Debug, Clone)]
pub struct Params {
    /// Whether a CPU device may be driven.
    pub allow_cpu: bool,
    /// The device to drive, by position or part of its name.
    pub device: Option<String>,
    /// Freed device memory the pool keeps for reuse, in bytes.
    pub pool_bytes: u64,
    /// Whether GEMM may go through CLBlast.
    pub clblast: bool,
    /// Most work-groups of a full reduction's first pass, when set.
    pub reduce_groups: Option<u32>,
    /// Whether the device's f64 is full rate, when set (else by name).
    pub full_rate_f64: Option<bool>,
}

/// The knobs of this process.
pub fn params() -> &'static Params {
    static PARAMS: OnceLock<Params> = OnceLock::new();
    PARAMS.get_or_init(|| Params {
        allow_cpu: env_switch("GEARBOX_OPENCL_ALLOW_CPU").unwrap_or(false),
        device: std::env::var("GEARBOX_OPENCL_DEVICE").ok(),
        pool_bytes: env_value("GEARBOX_OPENCL_POOL_BYTES", |_: &u64| true).unwrap_or(8 << 30),
        clblast: env_switch("GEARBOX_OPENCL_CLBLAST").unwrap_or(true),
        reduce_groups: env_value("GEARBOX_OPENCL_REDUCE_GROUPS", |v: &u32| *v > 0),
        full_rate_f64: env_switch("GEARBOX_OPENCL_FULL_RATE_F64"),
    })
}
