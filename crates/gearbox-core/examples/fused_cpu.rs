//! Times the fused CPU executor against the op-by-op path (one temporary per
//! op, as numpy does) on the benchmark workloads:
//!
//! - the chain `exp(x)*y + sin(x) - 2*y` over 10^7 f64;
//! - column means of a 4000 x 2500 f64 matrix.
//!
//! Run with `cargo run --release -p gearbox-core --example fused_cpu`.
//! Prints the median of several runs of each.

use std::time::Instant;

use gearbox_core::fusion::cpu;
use gearbox_core::fusion::ir::{Expr, IrNode, IrReduce, KernelIr};
use gearbox_core::{Array, BinaryOp, DType, HostBuffer, ReduceOp, Result, Shape, UnaryOp};

fn median_ms(repeats: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?; // warm-up
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[repeats / 2])
}

fn node(expr: Expr) -> IrNode {
    IrNode {
        expr,
        dtype: DType::F64,
    }
}

fn main() -> Result<()> {
    let threads = rayon::current_num_threads();
    println!(
        "rayon threads: {threads}, tiles of {} to {} positions",
        cpu::TILE,
        cpu::MAX_TILE
    );

    // The chain.
    let n = 10_000_000;
    let x = Array::randn([n], 1)?;
    let y = Array::randn([n], 2)?;
    Array::eval_all(&[&x, &y])?;
    let (xb, yb) = (x.buffer()?, y.buffer()?);
    let two = HostBuffer::F64(vec![2.0]);
    let shape = Shape::new(vec![n]);
    let chain = KernelIr::new(
        shape.clone(),
        vec![
            (shape.clone(), DType::F64),
            (shape.clone(), DType::F64),
            (Shape::scalar(), DType::F64),
        ],
        vec![
            node(Expr::Load(0)),
            node(Expr::Load(1)),
            node(Expr::Load(2)),
            node(Expr::Unary(UnaryOp::Exp, 0)),
            node(Expr::Binary(BinaryOp::Mul, 3, 1)),
            node(Expr::Unary(UnaryOp::Sin, 0)),
            node(Expr::Binary(BinaryOp::Add, 4, 5)),
            node(Expr::Binary(BinaryOp::Mul, 2, 1)),
            node(Expr::Binary(BinaryOp::Sub, 6, 7)),
        ],
        vec![8],
        None,
    )?;
    let fused = median_ms(9, || cpu::run(&chain, &[&xb, &yb, &two]).map(|_| ()))?;
    let op_by_op = median_ms(9, || {
        let z = ((x.exp()? * &y)? + &x.sin()? - &(2.0 * &y)?)?;
        z.eval()
    })?;
    // Same answer?
    let z = ((x.exp()? * &y)? + &x.sin()? - &(2.0 * &y)?)?;
    let same = cpu::run(&chain, &[&xb, &yb, &two])?.outputs[0] == *z.buffer()?;
    println!(
        "chain exp(x)*y + sin(x) - 2*y, 10^7 f64: fused {fused:.1} ms, op by op {op_by_op:.1} ms \
         ({:.2}x), identical: {same}",
        op_by_op / fused
    );

    // Column means.
    let (rows, cols) = (4000, 2500);
    let m = Array::randn([rows, cols], 3)?;
    m.eval()?;
    let mb = m.buffer()?;
    let mshape = Shape::new(vec![rows, cols]);
    let means = KernelIr::new(
        mshape.clone(),
        vec![(mshape, DType::F64)],
        vec![node(Expr::Load(0))],
        vec![],
        Some(IrReduce {
            op: ReduceOp::Mean,
            axis: Some(0),
            node: 0,
            dtype: DType::F64,
            companion: None,
        }),
    )?;
    let fused = median_ms(21, || cpu::run(&means, &[&mb]).map(|_| ()))?;
    let op = median_ms(21, || m.col_means()?.eval())?;
    let got = cpu::run(&means, &[&mb])?
        .reduced
        .first()
        .map(|b| b.to_f64_vec())
        .transpose()?;
    let want = m.col_means()?.to_f64_vec()?;
    let err = got
        .unwrap_or_default()
        .iter()
        .zip(&want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max);
    println!(
        "column means 4000 x 2500 f64: fused {fused:.2} ms, op-by-op col_means {op:.2} ms, \
         max abs difference {err:.1e}"
    );
    Ok(())
}
