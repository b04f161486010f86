//! `gearbox demo`: the "zero to first matmul" walk-through.

use std::time::Instant;

use clap::Args;
use gearbox::runtime::{explain, gpu_status, use_gpu, UseGpuOptions};
use gearbox::{Array, DType, Precision, Result};

/// Options of `gearbox demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Size n of the n x n matrices multiplied.
    #[arg(long, default_value_t = 1024, allow_negative_numbers = true)]
    pub size: usize,
    /// Seed of the random inputs (Philox4x32-10; same numbers on every backend).
    #[arg(long, default_value_t = 42, allow_negative_numbers = true)]
    pub seed: u64,
}

fn section(title: &str) {
    println!(
        "\n── {title} {}",
        "─".repeat(66usize.saturating_sub(title.chars().count()))
    );
}

/// Largest |got - want| over largest |want|.
fn relative_error(got: &[f64], want: &[f64]) -> f64 {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max)
        / scale
}

/// Multiplies under `precision`, prints the plan, the time, where it ran and
/// the error against the CPU float64 result.
fn product(a: &Array, b: &Array, precision: Precision, reference: &[f64]) -> Result<()> {
    let dtype = if precision == Precision::Fast {
        DType::F32
    } else {
        DType::F64
    };
    let (a, b) = (
        a.astype(dtype)?.with_precision(precision)?,
        b.astype(dtype)?.with_precision(precision)?,
    );
    Array::eval_all(&[&a, &b])?;
    let c = a.matmul(&b)?;
    explain(&c)?;
    let t = Instant::now();
    c.eval()?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let got = c.to_f64_vec()?;
    let n = a.dims()[0] as f64;
    println!(
        "{precision} ({dtype}) product: computed on {} in {ms:.1} ms ({:.0} GFLOP/s, first call includes setup); relative error vs CPU float64: {:.1e}",
        c.device(),
        2.0 * n.powi(3) / (ms * 1e-3) / 1e9,
        relative_error(&got, reference)
    );
    Ok(())
}

/// Runs the demo, printing each step.
pub fn run(args: &DemoArgs) -> Result<()> {
    let n = args.size;
    println!(
        "gearbox {} — zero to first matmul",
        env!("CARGO_PKG_VERSION")
    );

    section("1. which backends are there?");
    let gpu = use_gpu(UseGpuOptions::default());
    print!("{}", gpu_status());

    section("2. build two random matrices (lazy: nothing is computed yet)");
    let a = Array::randn([n, n], args.seed)?;
    let b = Array::randn([n, n], args.seed + 1)?;
    println!(
        "A = randn([{n}, {n}], seed {}), B = randn([{n}, {n}], seed {})",
        args.seed,
        args.seed + 1
    );
    println!(
        "A: shape {}  dtype {}  precision {}  evaluated: {}",
        a.shape(),
        a.dtype(),
        a.precision(),
        a.is_evaluated()
    );
    Array::eval_all(&[&a, &b])?;

    section("3. the reference: float64 on the CPU (precision exact)");
    let t = Instant::now();
    let reference = a
        .with_precision(Precision::Exact)?
        .matmul(&b.with_precision(Precision::Exact)?)?;
    let want = reference.to_vec::<f64>()?;
    println!(
        "CPU float64 product in {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    print!("{}", reference.rows(0..4.min(n))?.cols(0..4.min(n))?);

    section("4. fast precision: float32, GPU-eligible");
    product(&a, &b, Precision::Fast, &want)?;

    section("5. strict precision: float64, GPU-eligible on full-rate float64 devices");
    product(&a, &b, Precision::Strict, &want)?;

    section("6. a small matrix stays on the CPU");
    let small = Array::randn([64, 64], args.seed)?
        .astype(DType::F32)?
        .with_precision(Precision::Fast)?;
    let plan = explain(&small.crossprod(&small)?)?;
    println!(
        "→ the 64 x 64 product runs on {}: {}",
        plan.chosen,
        match gpu {
            Some(_) => "too small to pay for the trip to the GPU",
            None => "no GPU backend is usable here (see the status table)",
        }
    );

    section("7. reduce it");
    let c = Array::from_vec([n, n], want)?;
    let col_means = c.col_means()?;
    let first: Vec<String> = col_means
        .to_vec::<f64>()?
        .iter()
        .take(4)
        .map(|v| format!("{v:.4}"))
        .collect();
    println!("col_means(C)[0..4] = [{}]", first.join(", "));
    println!(
        "mean(C) = {:.6}, sd(C) = {:.4} (about 0 and sqrt(n) = {:.4})",
        c.mean()?.item()?,
        c.sd()?.item()?,
        (n as f64).sqrt()
    );
    println!(
        "\nmetrics: {}",
        serde_json::to_string(&gearbox::runtime::metrics()).unwrap_or_default()
    );
    Ok(())
}
