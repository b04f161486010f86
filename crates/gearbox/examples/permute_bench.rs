//! Transposes and flips (one permute call, data movement) on each usable
//! backend with the array resident: the transpose of a 6000 x 6000 f32
//! matrix (the tiled kernel), a flip of its columns (the strided copy), a
//! tall 10^6 x 8 transpose and the rotation `[2, 0, 1]` of a 256 x 256 x
//! 256 array (batched tiles). Medians of 10 synchronized runs after a warm
//! one; prints one JSON object (`permute/<backend>/<case>` in ms). The
//! kernels alone, against PyTorch: `scripts/check_permute_cuda.py`.

use gearbox::runtime::bench::{force, healthy, host_randn, median_ms, resident};
use gearbox::runtime::{options, set_options, RuntimeOptions};
use gearbox::{Array, DType, Result};

/// The cases: name, shape, and the permute.
type Case = (&'static str, &'static [usize], fn(&Array) -> Result<Array>);

const CASES: [Case; 4] = [
    ("t_6000x6000", &[6000, 6000], |x| x.t()),
    ("flip1_6000x6000", &[6000, 6000], |x| x.flip(1)),
    ("t_1e6x8", &[1_000_000, 8], |x| x.t()),
    ("rotate_256^3", &[256, 256, 256], |x| {
        x.transpose(&[2, 0, 1])
    }),
];

fn main() -> Result<()> {
    gearbox::init();
    let mut out = serde_json::Map::new();
    for backend in ["cpu", "cuda", "wgpu", "opencl"] {
        // The CPU backend: every optional backend off, arrays in host memory.
        let b: std::sync::Arc<dyn gearbox::runtime::Backend> = if backend == "cpu" {
            set_options(RuntimeOptions {
                optional_backends: false,
                force_backend: None,
                ..options()
            });
            std::sync::Arc::new(gearbox::runtime::cpu::CpuBackend)
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
            b
        };
        for (name, shape, op) in CASES {
            let made = if backend == "cpu" {
                host_randn(shape, 5, DType::F32)
            } else {
                resident(shape, 5, backend, DType::F32)
            };
            let timed = made.and_then(|x| median_ms(b.as_ref(), 10, || op(&x)?.eval()));
            let key = format!("permute/{backend}/{name}");
            match timed {
                Ok(ms) => {
                    eprintln!("{key}: {ms:.3} ms");
                    out.insert(key, serde_json::json!(ms));
                }
                Err(e) => eprintln!("{key}: {e}"),
            }
        }
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
