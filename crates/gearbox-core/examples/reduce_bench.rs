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

use gearbox_core::{nn, Array, DType, Result};

type Case = fn(&Array, &Array) -> Result<Array>;

/// `(name, work)`; `x` is the float input, `b` the bool `x > 0`.
const CASES: &[(&str, Case)] = &[
    ("sum0", |x, _| x.sum_axis(0)),
    ("sum1", |x, _| x.sum_axis(1)),
    ("mean0", |x, _| x.mean_axis(0)),
    ("mean1", |x, _| x.mean_axis(1)),
    ("min0", |x, _| x.min_axis(0)),
    ("min1", |x, _| x.min_axis(1)),
    ("max0", |x, _| x.max_axis(0)),
    ("max1", |x, _| x.max_axis(1)),
    ("prod0", |x, _| x.prod_axis(0)),
    ("prod1", |x, _| x.prod_axis(1)),
    ("var0", |x, _| x.var_axis(0)),
    ("var1", |x, _| x.var_axis(1)),
    ("var_all", |x, _| x.var()),
    ("sd0", |x, _| x.sd_axis(0)),
    ("sd1", |x, _| x.sd_axis(1)),
    ("argmin0", |x, _| x.argmin_axis(0)),
    ("argmin1", |x, _| x.argmin_axis(1)),
    ("argmax0", |x, _| x.argmax_axis(0)),
    ("argmax1", |x, _| x.argmax_axis(1)),
    ("any0", |_, b| b.any_axis(0)),
    ("any1", |_, b| b.any_axis(1)),
    ("all0", |_, b| b.all_axis(0)),
    ("all1", |_, b| b.all_axis(1)),
    ("cumsum0", |x, _| x.cumsum_axis(0)),
    ("cumsum1", |x, _| x.cumsum_axis(1)),
    ("cumprod0", |x, _| x.cumprod_axis(0)),
    ("cumprod1", |x, _| x.cumprod_axis(1)),
    ("center0", |x, _| x.sub(&x.mean_axis(0)?)),
    ("center1", |x, _| x.sub(&x.mean_axis(1)?)),
    ("standardize0", |x, _| {
        x.sub(&x.mean_axis(0)?)?.div(&x.sd_axis(0)?)
    }),
    ("standardize1", |x, _| {
        x.sub(&x.mean_axis(1)?)?.div(&x.sd_axis(1)?)
    }),
    ("softmax0", |x, _| softmax(x, 0)),
    ("softmax1", |x, _| softmax(x, 1)),
    ("log_softmax1", |x, _| nn::log_softmax(x)),
    ("logsumexp0", |x, _| logsumexp(x, 0)),
    ("logsumexp1", |x, _| logsumexp(x, 1)),
];

fn softmax(x: &Array, axis: usize) -> Result<Array> {
    let e = x.sub(&x.max_axis(axis)?)?.exp()?;
    e.div(&e.sum_axis(axis)?)
}

fn logsumexp(x: &Array, axis: usize) -> Result<Array> {
    let m = x.max_axis(axis)?;
    m.add(&x.sub(&m)?.exp()?.sum_axis(axis)?.log()?)
}

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
            for (name, case) in CASES {
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
