//! Times the fused chain `exp(x)*y + sin(x) - 2*y` over 10^7 f64 values,
//! before and after a parallel GEMM (which must not slow later work down).
use std::time::Instant;

fn chain(x: &gearbox::Array, y: &gearbox::Array) -> gearbox::Result<std::time::Duration> {
    let t = Instant::now();
    let z = (x.exp()? * y + &x.sin()? - &(2.0 * y)?)?;
    z.eval()?;
    Ok(t.elapsed())
}

fn main() -> gearbox::Result<()> {
    let x = gearbox::Array::randn([10_000_000, 1], 1)?;
    let y = gearbox::Array::randn([10_000_000, 1], 2)?;
    gearbox::Array::eval_all(&[&x, &y])?;
    println!("chain before any GEMM: {:?}", chain(&x, &y)?);
    let a = gearbox::Array::randn([1024, 1024], 3)?;
    for _ in 0..3 {
        let t = Instant::now();
        a.matmul(&a)?.eval()?;
        println!("matmul 1024: {:?}", t.elapsed());
    }
    for _ in 0..3 {
        println!("chain after GEMM: {:?}", chain(&x, &y)?);
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    println!("chain after 0.5 s idle: {:?}", chain(&x, &y)?);
    Ok(())
}
