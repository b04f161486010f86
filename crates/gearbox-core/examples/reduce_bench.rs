//! Times everyday reductions and composites on the CPU backend, the same
//! cases as `scripts/bench_numpy_reduce.py` runs in NumPy: axis reductions
//! (`sum`, `mean`, `min`, `max`, `prod`, `var`, `sd`, `argmin`, `argmax`,
//! `any`, `all`) along both axes and over everything, scans along both
//! axes, centring, standardization, softmax, log-softmax and log-sum-exp
//! along either axis, on a tall (10^6 x 64), a square (4000 x 4000) and a
//! wide (64 x 10^6) matrix, f64 and f32.
//!
//! ```text
//! cargo run --release -p gearbox-core --example reduce_bench -- \
//!     [--shapes tall,square,wide] [--dtypes f64,f32] [--cases var0,sd1] \
//!     [--repeats 5] [--scale 1.0]
//! ```
//!
//! Prints one JSON object `{"reduce/<dtype>/<shape>/<case>": seconds}`
//! (medians; inputs are evaluated before timing, each repeat builds the
//! graph and evaluates it); progress goes to stderr.

use std::time::Instant;

use gearbox_core::runtime::bench::REDUCE_CASES;
use gearbox_core::{Array, DType, Result};

fn median_secs(repeats: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?; // warm-up
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[repeats / 2])
}

fn arg_list(args: &[String], flag: &str, default: &str) -> Vec<String> {
    let value = args
        .iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
        .unwrap_or(default);
    value.split(',').map(str::to_string).collect()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let shapes = arg_list(&args, "--shapes", "tall,square,wide");
    let dtypes = arg_list(&args, "--dtypes", "f64,f32");
    let wanted = arg_list(&args, "--cases", "all");
    let repeats: usize = arg_list(&args, "--repeats", "5")[0].parse().unwrap_or(5);
    let scale: f64 = arg_list(&args, "--scale", "1")[0].parse().unwrap_or(1.0);
    eprintln!("rayon threads: {}", rayon::current_num_threads());
    let mut out = Vec::new();
    for shape in &shapes {
        let big = (1e6 * scale) as usize;
        let dims = match shape.as_str() {
            "tall" => [big, 64],
            "square" => [(4000.0 * scale.sqrt()) as usize; 2],
            "wide" => [64, big],
            other => panic!("unknown shape {other}"),
        };
        for dtype in &dtypes {
            let dt = if dtype == "f32" {
                DType::F32
            } else {
                DType::F64
            };
            let x = Array::randn(dims, 1)?.astype(dt)?;
            let b = x.gt_scalar(0.0)?;
            Array::eval_all(&[&x, &b])?;
            for (name, case) in REDUCE_CASES {
                if wanted[0] != "all" && !wanted.iter().any(|w| w == name) {
                    continue;
                }
                let secs = median_secs(repeats, || case(&x, &b)?.eval())?;
                let key = format!("reduce/{dtype}/{shape}/{name}");
                eprintln!("{key}: {:.2} ms", secs * 1e3);
                out.push(format!("\"{key}\": {secs:e}"));
            }
        }
    }
    println!("{{{}}}", out.join(", "));
    Ok(())
}
