//! Issue 16's benchmark, Gearbox's side (PyTorch's is
//! `scripts/bench_iterative_torch.py`; `scripts/gpu.sh run resident` runs
//! both): IRLS for a logistic regression (`GEARBOX_IRLS_N` x 50 float64,
//! default 10^6, 25 iterations) and power iteration (8192 x 8192 float32
//! `fast`, 100 steps), each written with immutable arrays and with
//! resident handles (`gearbox::iterative`), on `GEARBOX_BENCH_BACKEND`
//! (default cuda) with the inputs resident. Medians of 3 whole runs (set-up
//! included: the handles' buffers are made in each run), and the pool
//! blocks each version takes per iteration. Prints one JSON object.

use std::time::Instant;

use gearbox::iterative::{
    irls_logistic, irls_logistic_resident, power_iteration, power_iteration_resident,
};
use gearbox::runtime::bench::{force, healthy};
use gearbox::runtime::metrics;
use gearbox::{Array, DType, Precision, Result, UnaryOp};

fn main() -> Result<()> {
    gearbox::init();
    let backend = std::env::var("GEARBOX_BENCH_BACKEND").unwrap_or_else(|_| "cuda".into());
    force(Some(&backend), true);
    let Some(b) = healthy(&backend) else {
        eprintln!("no usable {backend} backend");
        std::process::exit(2);
    };
    let n: usize = std::env::var("GEARBOX_IRLS_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut out = serde_json::Map::new();
    let put = |out: &mut serde_json::Map<String, serde_json::Value>, k: &str, v: f64| {
        eprintln!("{k}: {v:.4}");
        out.insert(k.into(), serde_json::json!(v));
    };
    let blocks = || {
        let m = metrics();
        let s = m.of(&backend);
        s.pool_reused + s.pool_fresh
    };
    // Median of 3 whole runs (after a warm one) and pool blocks per iteration.
    let time = |iterations: usize, f: &dyn Fn() -> Result<()>| -> Result<(f64, f64)> {
        f()?;
        b.synchronize()?;
        let mut t = Vec::new();
        let before = blocks();
        for _ in 0..3 {
            let s = Instant::now();
            f()?;
            b.synchronize()?;
            t.push(s.elapsed().as_secs_f64() * 1e3);
        }
        t.sort_by(f64::total_cmp);
        Ok((t[1], (blocks() - before) as f64 / (3 * iterations) as f64))
    };
    let record = |out: &mut serde_json::Map<String, serde_json::Value>,
                  name: &str,
                  (ms, per_iteration): (f64, f64)| {
        put(out, &format!("{name}_ms"), ms);
        put(
            out,
            &format!("{name}_pool_blocks_per_iteration"),
            per_iteration,
        );
    };

    // IRLS: X n x 50 (an intercept and standard normals), y drawn from the model.
    let p = 50;
    let ones = Array::ones([n, 1], DType::F64)?;
    let x = Array::concat(&[&ones, &Array::randn([n, p - 1], 1)?], 1)?;
    let truth = Array::from_vec(
        [p, 1],
        (0..p).map(|j| 0.3 * ((j % 7) as f64 - 3.0) / 3.0).collect(),
    )?;
    let prob = x.matmul(&truth)?.unary(UnaryOp::Sigmoid)?;
    let y = Array::rand([n, 1], 2)?.lt(&prob)?.astype(DType::F64)?;
    x.to_device(&backend)?;
    y.to_device(&backend)?;
    let iters = 25;
    record(
        &mut out,
        "irls_immutable",
        time(iters, &|| irls_logistic(&x, &y, iters)?.eval())?,
    );
    record(
        &mut out,
        "irls_handles",
        time(iters, &|| {
            irls_logistic_resident(&x, &y, iters, &backend)?.eval()
        })?,
    );
    let a = irls_logistic(&x, &y, iters)?.to_vec::<f64>()?;
    let h = irls_logistic_resident(&x, &y, iters, &backend)?.to_vec::<f64>()?;
    let diff = a
        .iter()
        .zip(&h)
        .map(|(u, v)| (u - v).abs() / v.abs().max(1.0))
        .fold(0.0, f64::max);
    put(&mut out, "irls_max_rel_difference", diff);
    drop((x, y));

    // Power iteration: 8192 x 8192 f32.
    let m = 8192;
    let fast = |a: Array| a.astype(DType::F32)?.with_precision(Precision::Fast);
    let a = fast(Array::randn([m, m], 3)?)?;
    let start = fast(Array::ones([m, 1], DType::F64)?)?;
    a.to_device(&backend)?;
    start.to_device(&backend)?;
    let steps = 100;
    record(
        &mut out,
        "power_immutable",
        time(steps, &|| power_iteration(&a, &start, steps).map(|_| ()))?,
    );
    record(
        &mut out,
        "power_handles",
        time(steps, &|| {
            power_iteration_resident(&a, &start, steps, &backend).map(|_| ())
        })?,
    );
    let (l1, _) = power_iteration(&a, &start, steps)?;
    let (l2, _) = power_iteration_resident(&a, &start, steps, &backend)?;
    put(&mut out, "power_lambda_immutable", l1);
    put(&mut out, "power_lambda_handles", l2);
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
