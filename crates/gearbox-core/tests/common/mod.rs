//! Helpers shared by the integration tests: a seeded generator for random
//! inputs (never zeros), tolerance checks against f64 references and
//! ([`fusion`]) a kernel builder for the fused-executor tests.
#![allow(dead_code)]

pub mod fusion;
pub mod runtime;

use std::sync::Mutex;

use gearbox_core::runtime::{options, set_options, RuntimeOptions};
use gearbox_core::{Array, Result};

/// `build()` evaluated and read by `read` with fusion on, then op by op
/// (a fresh graph each time). The runtime options are process-wide:
/// `lock` keeps one test at a time changing them.
pub fn fused_then_op_by_op<T>(
    lock: &Mutex<()>,
    build: impl Fn() -> Result<Array>,
    read: impl Fn(Array) -> Result<T>,
) -> [Result<T>; 2] {
    let _g = lock.lock().unwrap_or_else(|e| e.into_inner());
    let run = |fusion: bool| {
        let saved = set_options(RuntimeOptions {
            fusion,
            ..options()
        });
        let r = build().and_then(&read);
        set_options(saved);
        r
    };
    [run(true), run(false)]
}

/// splitmix64: a small, well-known seeded generator for test inputs.
pub struct TestRng(u64);

impl TestRng {
    pub fn new(seed: u64) -> Self {
        TestRng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }

    /// `n` values uniform in [lo, hi).
    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

/// Asserts `got` matches `want` elementwise to `rtol` (relative, with an
/// absolute floor of `rtol` for values near zero); NaN must match NaN.
pub fn assert_close(got: &[f64], want: &[f64], rtol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if w.is_nan() {
            assert!(g.is_nan(), "{what}[{i}]: got {g}, want NaN");
            continue;
        }
        if w.is_infinite() {
            assert_eq!(g, w, "{what}[{i}]");
            continue;
        }
        let err = (g - w).abs() / w.abs().max(1.0);
        assert!(
            err <= rtol,
            "{what}[{i}]: got {g}, want {w} (relative error {err:e} > {rtol:e})"
        );
    }
}
