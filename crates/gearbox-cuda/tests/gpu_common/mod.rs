//! Helpers shared by the GPU test binaries: the device lock and skip rule,
//! seeded inputs, CPU-vs-GPU evaluation and tolerance checks.
#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard};

use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::{gpu_status, set_options, Health, RuntimeOptions};
use gearbox_core::{Array, DType, Precision};

static LOCK: Mutex<()> = Mutex::new(());

/// Holds the lock while the GPU is healthy and forced; `None` (after printing
/// why) when there is no usable device.
pub fn gpu() -> Option<MutexGuard<'static, ()>> {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    gearbox_cuda::register();
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: Some("cuda".into()),
        ..RuntimeOptions::from_env()
    });
    if probe_backend("cuda", false) != Health::Healthy {
        let row = gpu_status().rows.into_iter().find(|r| r.backend == "cuda");
        println!(
            "SKIP: no usable CUDA device: {}",
            row.map_or("cuda not registered".into(), |r| r.reason)
        );
        return None;
    }
    Some(guard)
}

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| lo + (hi - lo) * self.next()).collect()
    }
}

pub fn array(shape: &[usize], data: Vec<f64>, dtype: DType, p: Precision) -> Array {
    Array::from_vec(shape.to_vec(), data)
        .unwrap()
        .astype(dtype)
        .unwrap()
        .with_precision(p)
        .unwrap()
}

/// Evaluates `build` on the GPU (precision `p`) and on the CPU (exact), and
/// returns both as f64 with the device the GPU result lives on.
pub fn both(build: &dyn Fn(Precision) -> Array, p: Precision) -> (Vec<f64>, Vec<f64>, String) {
    let g = build(p);
    g.eval().unwrap();
    let device = g.device();
    let c = build(Precision::Exact);
    (g.to_f64_vec().unwrap(), c.to_f64_vec().unwrap(), device)
}

pub fn close(got: &[f64], want: &[f64], rtol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want
        .iter()
        .filter(|v| v.is_finite())
        .fold(1e-300f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if w.is_nan() {
            assert!(g.is_nan(), "{what}[{i}]: got {g}, want NaN");
        } else if w.is_infinite() {
            assert_eq!(g, w, "{what}[{i}]");
        } else {
            let err = (g - w).abs() / w.abs().max(scale * 1e-2).max(1e-300);
            assert!(
                err <= rtol,
                "{what}[{i}]: got {g}, want {w}, relative error {err:e} > {rtol:e}"
            );
        }
    }
}

/// The part of the child's output from `marker` on (libtest prints the
/// test's name before what the test prints).
pub fn marker_line(text: &str, marker: &str) -> String {
    text.lines()
        .find_map(|l| l.find(marker).map(|i| l[i..].to_string()))
        .unwrap_or_else(|| panic!("no {marker} in the child's output: {text}"))
}

/// Normwise comparison, for GEMM and factorizations: max |got - want| over
/// max |want| (elementwise relative error is meaningless for entries that
/// cancel to near zero).
pub fn close_normwise(got: &[f64], want: &[f64], rtol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max)
        / scale;
    assert!(
        err <= rtol,
        "{what}: normwise relative error {err:e} > {rtol:e}"
    );
}

pub fn tol(dtype: DType) -> f64 {
    if dtype == DType::F32 {
        2e-6
    } else {
        1e-13
    }
}

pub const SIZES: [usize; 10] = [1, 2, 3, 127, 128, 129, 255, 256, 257, 100_003];
