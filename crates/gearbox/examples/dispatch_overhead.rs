//! Measures the fixed cost of evaluating a tiny operation (planning and
//! dispatch), with the facade's backends registered.
use std::time::Instant;
fn main() -> gearbox::Result<()> {
    gearbox::init();
    let x = gearbox::Array::from_vec([16], vec![1.0; 16])?;
    for _ in 0..100 {
        x.add_scalar(1.0)?.eval()?;
    }
    let n = 20_000;
    let t = Instant::now();
    for _ in 0..n {
        x.add_scalar(1.0)?.eval()?;
    }
    println!(
        "tiny op, build + evaluate: {:.2} us each",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    // A healthy device whose threshold keeps tiny work on the CPU.
    use gearbox::runtime::testing::{uniform_thresholds, SimulatedBackend};
    let t_all = uniform_thresholds(1e6, 1e5);
    SimulatedBackend::new("sim")
        .with_thresholds(t_all)
        .register();
    gearbox::runtime::set_options(gearbox::runtime::RuntimeOptions {
        quiet: true,
        ..gearbox::runtime::options()
    });
    x.add_scalar(1.0)?.eval()?;
    let t = Instant::now();
    for _ in 0..n {
        x.add_scalar(1.0)?.eval()?;
    }
    println!(
        "with a healthy device declining it: {:.2} us each",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    Ok(())
}
