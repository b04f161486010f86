//! `take` (a gather of positions along an axis, R's scattered `x[i, ]`)
//! on each usable backend with the array resident: rows of a 10^6 x 64
//! f32 matrix drawn with replacement (a bootstrap sample), a permutation
//! of the columns of a 4096 x 4096 f32 matrix, and 2^26 positions of an
//! f32 vector. Each run includes making and uploading the positions (8
//! bytes each), as a caller pays. Medians of 10 synchronized runs after a
//! warm one; prints one JSON object (`take/<backend>/<case>` in ms).
//! PyTorch's and NumPy's side: `scripts/bench_take_torch.py`.

use gearbox::runtime::bench::{force, healthy, host_randn, median_ms, resident};
use gearbox::runtime::{options, set_options, RuntimeOptions};
use gearbox::{DType, Result};

/// The cases: name, shape, axis, number of positions.
const CASES: [(&str, [usize; 2], usize, usize); 3] = [
    ("rows_1e6x64", [1_000_000, 64], 0, 1_000_000),
    ("cols_4096x4096", [4096, 4096], 1, 4096),
    ("vector_2^26", [1 << 26, 1], 0, 1 << 26),
];

/// `n` positions below `len` from `seed` (a permutation when `n == len`
/// and `permute`, else drawn with replacement).
fn positions(len: usize, n: usize, seed: u64, permute: bool) -> Vec<usize> {
    let mut state = seed | 1;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    if permute {
        let mut p: Vec<usize> = (0..len).collect();
        for i in (1..len).rev() {
            p.swap(i, next() % (i + 1));
        }
        p
    } else {
        (0..n).map(|_| next() % len).collect()
    }
}

fn main() -> Result<()> {
    gearbox::init();
    let mut out = serde_json::Map::new();
    for backend in ["cpu", "cuda", "wgpu", "opencl"] {
        // The CPU backend: every optional backend off, arrays in host memory.
        let (b, on): (std::sync::Arc<dyn gearbox::runtime::Backend>, &str) = if backend == "cpu" {
            set_options(RuntimeOptions {
                optional_backends: false,
                force_backend: None,
                ..options()
            });
            (
                std::sync::Arc::new(gearbox::runtime::cpu::CpuBackend),
                "cpu",
            )
        } else {
            set_options(RuntimeOptions {
                optional_backends: true,
                ..options()
            });
            let Some(b) = healthy(backend) else {
                eprintln!("{backend}: not usable, skipped");
                continue;
            };
            force(Some(backend), true);
            (b, backend)
        };
        for (name, shape, axis, n) in CASES {
            let at = positions(shape[axis], n, 9, name.starts_with("cols"));
            let made = if on == "cpu" {
                host_randn(&shape, 5, DType::F32)
            } else {
                resident(&shape, 5, on, DType::F32)
            };
            let timed = made.and_then(|x| median_ms(b.as_ref(), 10, || x.take(axis, &at)?.eval()));
            match timed {
                Ok(ms) => {
                    eprintln!("take/{backend}/{name}: {ms:.3} ms");
                    out.insert(format!("take/{backend}/{name}"), serde_json::json!(ms));
                }
                Err(e) => eprintln!("take/{backend}/{name}: {e}"),
            }
        }
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
