//! Helpers for the device-vs-Rust tests: argument grids and a check that
//! runs a device function over rows of arguments (on the test binary's
//! engine, g++ or OpenCL: `common::run_one`) and compares with the Rust
//! function to 1e-13 relative.
#![allow(dead_code)]

use crate::common::{close, run_one};

/// Reproducible values spread over `10^lo .. 10^hi`, both signs if `signed`.
pub fn spread(n: usize, seed: u64, lo: f64, hi: f64, signed: bool) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let mag = 10f64.powf(lo + u * (hi - lo));
            if signed && (s >> 7) & 1 == 1 {
                -mag
            } else {
                mag
            }
        })
        .collect()
}

/// Reproducible uniform values in `(0, 1)`.
pub fn unit(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        })
        .collect()
}

/// The four `(lower_tail, log_p)` combinations as 0/1 values.
pub const FLAGS: [(f64, f64); 4] = [(1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (0.0, 1.0)];

/// Runs device function `name` over `rows` and compares every
/// result with `f` (same arguments, ints as whole f64) to 1e-13 relative.
pub fn check(name: &str, rows: &[Vec<f64>], f: impl Fn(&[f64]) -> f64) {
    let got = run_one(name, rows);
    let mut bad = Vec::new();
    for (r, g) in rows.iter().zip(got) {
        let want = f(r);
        if !close(g, want, 1e-13) {
            bad.push(format!("{name}({r:?}): device {g:e}, rust {want:e}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} rows differ:\n{}",
        bad.len(),
        rows.len(),
        bad.join("\n")
    );
}

/// A 0/1 column as a bool.
pub fn flag(v: f64) -> bool {
    v != 0.0
}
