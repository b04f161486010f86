//! log1pexp against the Rust function: the same algorithm in both, so they
//! agree to 1e-13 relative on random and edge-case inputs.

use crate::common::{close, have_engine, run_one};
use gearbox_stats::nmath;

/// Edge cases every real argument is tried with.
const EDGES: [f64; 9] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    1e-300,
    1e300,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

/// Reproducible spread of values over many magnitudes and both signs.
fn spread(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let mag = 10f64.powf(u * 8.0 - 4.0);
            if (s >> 7) & 1 == 1 {
                -mag
            } else {
                mag
            }
        })
        .collect()
}

fn check1(name: &str, f: impl Fn(f64) -> f64, xs: &[f64]) {
    let rows: Vec<Vec<f64>> = xs.iter().map(|&x| vec![x]).collect();
    let got = run_one(name, &rows);
    for (x, g) in xs.iter().zip(got) {
        let want = f(*x);
        assert!(
            close(g, want, 1e-13),
            "{name}({x:e}): device {g:e}, rust {want:e}"
        );
    }
}

#[test]
fn log1pexp_matches() {
    if !have_engine() {
        return;
    }
    let mut xs = spread(500, 1);
    xs.extend(EDGES);
    xs.extend([18.0, 18.5, 33.3, 33.4, -745.0, 40.0]);
    check1("gb_log1pexp", nmath::log1pexp, &xs);
}
