//! `gearbox demo`: the "zero to first matmul" walk-through.

use std::time::Instant;

use clap::Args;
use gearbox::{Array, Result};

/// Options of `gearbox demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Size n of the n x n matrices multiplied.
    #[arg(long, default_value_t = 1024)]
    pub size: usize,
    /// Seed of the random inputs (Philox4x32-10; same numbers on every backend).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

fn section(title: &str) {
    println!(
        "\n── {title} {}",
        "─".repeat(60usize.saturating_sub(title.len()))
    );
}

/// Runs the demo, printing each step.
pub fn run(args: &DemoArgs) -> Result<()> {
    let n = args.size;
    println!(
        "gearbox {} — zero to first matmul",
        env!("CARGO_PKG_VERSION")
    );

    section("1. build two random matrices (lazy: nothing is computed yet)");
    let a = Array::randn([n, n], args.seed)?;
    let b = Array::randn([n, n], args.seed + 1)?;
    println!(
        "A = randn([{n}, {n}], seed {}), B = randn([{n}, {n}], seed {})",
        args.seed,
        args.seed + 1
    );
    println!(
        "A: shape {}  dtype {}  precision {}  device {}",
        a.shape(),
        a.dtype(),
        a.precision(),
        a.device()
    );

    section("2. multiply them");
    let c = a.matmul(&b)?;
    println!(
        "C = A.matmul(&B) built a graph node; evaluated: {}",
        c.is_evaluated()
    );
    let t_inputs = Instant::now();
    Array::eval_all(&[&a, &b])?;
    let gen_ms = t_inputs.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    c.eval()?;
    let secs = t.elapsed().as_secs_f64();
    let gflops = 2.0 * (n as f64).powi(3) / secs / 1e9;
    println!(
        "inputs generated in {gen_ms:.1} ms; C computed in {:.1} ms ({gflops:.1} GFLOP/s)",
        secs * 1e3
    );
    println!("top-left corner of C:");
    print!("{}", c.rows(0..4.min(n))?.cols(0..4.min(n))?);

    section("3. check it against a plain float64 dot product");
    let (i, j) = (n / 3, n / 2);
    let mut reference = 0.0;
    for k in 0..n {
        reference += a.get(&[i, k])? * b.get(&[k, j])?;
    }
    let got = c.get(&[i, j])?;
    println!(
        "C[{i}, {j}] = {got:.12}; reference {reference:.12}; |difference| {:.1e}",
        (got - reference).abs()
    );

    section("4. reduce it");
    let col_means = c.col_means()?;
    let first: Vec<String> = col_means
        .to_vec::<f64>()?
        .iter()
        .take(4)
        .map(|v| format!("{v:.4}"))
        .collect();
    println!("col_means(C)[0..4] = [{}]", first.join(", "));
    println!(
        "mean(C) = {:.6}, sd(C) = {:.4} (expected about 0 and sqrt(n) = {:.4})",
        c.mean()?.item()?,
        c.sd()?.item()?,
        (n as f64).sqrt()
    );

    section("5. where does work run, and why");
    print!("{}", gearbox::runtime::gpu_status());
    if gearbox::runtime::gpu_status().rows.is_empty() {
        println!(
            "no GPU backend is compiled into this build: every region runs on the CPU reference"
        );
    }
    let big = a.matmul(&b)?;
    println!("\nexplain(A.matmul(&B)) for the {n} x {n} product:");
    gearbox::runtime::explain(&big)?;
    let small = Array::randn([64, 64], args.seed)?;
    let small_product = small.crossprod(&small)?;
    println!("\nexplain(crossprod) for a 64 x 64 matrix:");
    let plan = gearbox::runtime::explain(&small_product)?;
    println!(
        "→ the 64 x 64 product runs on {}: small work stays on the CPU, where it is fastest.",
        plan.chosen
    );
    println!(
        "backend threads: {} (faer GEMM and rayon for elementwise work and reductions)",
        rayon::current_num_threads()
    );
    Ok(())
}
