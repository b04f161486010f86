//! `gearbox demo`: the "zero to first matmul" walk-through.

use std::time::Instant;

use clap::Args;
use gearbox::runtime::{backend_plan, gpu_status, use_gpu, UseGpuOptions};
use gearbox::{Array, DType, Precision};

use crate::output::{CliResult, Out};

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

fn section(out: &mut Out, title: &str) -> CliResult {
    out.line(format_args!(
        "\n── {title} {}",
        "─".repeat(66usize.saturating_sub(title.chars().count()))
    ))
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
fn product(
    out: &mut Out,
    (a, b): (&Array, &Array),
    precision: Precision,
    reference: &[f64],
) -> CliResult {
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
    out.text(backend_plan(&c)?)?;
    let t = Instant::now();
    c.eval()?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let got = c.to_f64_vec()?;
    let n = a.dims()[0] as f64;
    out.line(format_args!(
        "{precision} ({dtype}) product: computed on {} in {ms:.1} ms ({:.0} GFLOP/s, first call includes setup); relative error vs CPU float64: {:.1e}",
        c.device(),
        2.0 * n.powi(3) / (ms * 1e-3) / 1e9,
        relative_error(&got, reference)
    ))
}

/// Runs the demo, printing each step.
pub fn run(args: &DemoArgs, out: &mut Out) -> CliResult {
    let n = args.size;
    out.line(format_args!(
        "gearbox {} — zero to first matmul",
        env!("CARGO_PKG_VERSION")
    ))?;

    section(out, "1. which backends are there?")?;
    // Quiet: the library would print its confirmation with println!.
    let gpu = use_gpu(UseGpuOptions {
        backend: None,
        quiet: true,
    });
    out.line(match &gpu {
        Some(name) => format!("GPU enabled: the {name} backend (its device is in the table)"),
        None => "no GPU backend could be enabled; the table says why".to_string(),
    })?;
    out.text(gpu_status())?;

    section(
        out,
        "2. build two random matrices (lazy: nothing is computed yet)",
    )?;
    let a = Array::randn([n, n], args.seed)?;
    let b = Array::randn([n, n], args.seed + 1)?;
    out.line(format_args!(
        "A = randn([{n}, {n}], seed {}), B = randn([{n}, {n}], seed {})",
        args.seed,
        args.seed + 1
    ))?;
    out.line(format_args!(
        "A: shape {}  dtype {}  precision {}  evaluated: {}",
        a.shape(),
        a.dtype(),
        a.precision(),
        a.is_evaluated()
    ))?;
    Array::eval_all(&[&a, &b])?;

    section(
        out,
        "3. the reference: float64 on the CPU (precision exact)",
    )?;
    let t = Instant::now();
    let reference = a
        .with_precision(Precision::Exact)?
        .matmul(&b.with_precision(Precision::Exact)?)?;
    let want = reference.to_vec::<f64>()?;
    out.line(format_args!(
        "CPU float64 product in {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    ))?;
    out.text(reference.rows(0..4.min(n))?.cols(0..4.min(n))?)?;

    section(out, "4. fast precision: float32, GPU-eligible")?;
    product(out, (&a, &b), Precision::Fast, &want)?;

    section(
        out,
        "5. strict precision: float64, GPU-eligible on full-rate float64 devices",
    )?;
    product(out, (&a, &b), Precision::Strict, &want)?;

    section(out, "6. a small matrix, where the thresholds decide")?;
    let small = Array::randn([64, 64], args.seed)?
        .astype(DType::F32)?
        .with_precision(Precision::Fast)?;
    let plan = backend_plan(&small.crossprod(&small)?)?;
    out.text(&plan)?;
    out.line(format_args!(
        "→ the 64 x 64 product runs on {}: {}",
        plan.chosen,
        match gpu {
            None => "no GPU backend is usable here (see the status table)",
            Some(_) if plan.chosen == "cpu" => "too small to pay for the trip to the GPU",
            Some(_) => "this device's calibrated threshold is at or below this size",
        }
    ))?;

    section(out, "7. reduce it")?;
    let c = Array::from_vec([n, n], want)?;
    let col_means = c.col_means()?;
    let first: Vec<String> = col_means
        .to_vec::<f64>()?
        .iter()
        .take(4)
        .map(|v| format!("{v:.4}"))
        .collect();
    out.line(format_args!("col_means(C)[0..4] = [{}]", first.join(", ")))?;
    out.line(format_args!(
        "mean(C) = {:.6}, sd(C) = {:.4} (about 0 and sqrt(n) = {:.4})",
        c.mean()?.item()?,
        c.sd()?.item()?,
        (n as f64).sqrt()
    ))?;
    out.line(format_args!(
        "\nmetrics: {}",
        serde_json::to_string(&gearbox::runtime::metrics()).unwrap_or_default()
    ))
}
