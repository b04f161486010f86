//! The host-side cost of one small GLM grid call and one small many_lm fit
//! on a device, measured on the simulated device (host memory, no GPU), so
//! the runtime's own work per call (planning, dispatch, residency, launch
//! bookkeeping) can be profiled on any machine: `perf record` on this
//! example shows where a small call's time goes. Prints microseconds per
//! call. `GEARBOX_OVERHEAD_CALLS` sets the repetitions (default 20000);
//! `GEARBOX_OVERHEAD_PART` (`route`, `per-point`, `gemm`, `lm`) keeps some
//! parts. `route` times the routing check's small chain `exp(x) y + sin(x) -
//! 2 y` (f32, 4096 elements, host inputs and result) with the device
//! registered but declining the work (thresholds above it) and with GPU
//! backends off: the difference is what routing costs.

use std::time::Instant;

use gearbox_core::runtime::testing::{uniform_thresholds, SimulatedBackend};
use gearbox_core::runtime::{registry::probe_backend, set_options, RuntimeOptions};
use gearbox_core::{Array, Result};
use gearbox_stats::glm::{GlmModel, GlmSpec, Strategy};
use gearbox_stats::lm::{many_lm, LmOptions};

mod support;

fn main() -> Result<()> {
    set_options(RuntimeOptions {
        quiet: true,
        ..RuntimeOptions::default()
    });
    SimulatedBackend::new("sim")
        .with_thresholds(uniform_thresholds(1e6, 1e6))
        .register();
    probe_backend("sim", false);
    let calls: usize = std::env::var("GEARBOX_OVERHEAD_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20000);
    let (l1, l2, m1) = (8, 3, 4);
    let (x, y, beta) = support::simulated_glm("binomial", l1, l2)?;
    let x = Array::from_vec([l1, l2], x)?;
    x.to_device("sim")?;
    let y = Array::from_vec([l1], y)?;
    let spec = GlmSpec::parse("binomial", Some("logit"), None)?;
    let model = GlmModel::with_standard_prior(&x, &y, &spec)?;
    let beta = Array::from_vec([l2, 1], beta)?;
    let b = ((Array::randn([l2, m1], 2)? * 0.05)? + &beta)?;
    b.to_device("sim")?;
    b.gather()?;
    b.to_device("sim")?;
    let part = std::env::var("GEARBOX_OVERHEAD_PART").unwrap_or_default();
    if part.is_empty() || part.contains("route") {
        routing(calls)?;
    }
    for strategy in [Strategy::PerPoint, Strategy::Gemm] {
        if !part.is_empty() && !part.contains(strategy.name()) {
            continue;
        }
        let start = Instant::now();
        for _ in 0..calls {
            let g = model.grid_with(&b, Some(strategy))?;
            Array::eval_all(&[&g.qf, &g.gradient])?;
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / calls as f64;
        println!(
            "glm grid {l1} x {l2} x {m1} {}: {us:.1} us a call",
            strategy.name()
        );
    }
    if !part.is_empty() && !part.contains("lm") {
        return Ok(());
    }
    // Above lm::SMALL_FIT_FLOPS, so the fit stays on the device.
    let (n, p, k) = (256, 8, 1100);
    let xd = Array::randn([n, p], 3)?;
    let yd = Array::randn([n, k], 4)?;
    xd.to_device("sim")?;
    yd.to_device("sim")?;
    let start = Instant::now();
    for _ in 0..calls / 10 {
        let fit = many_lm(&xd, &yd, &LmOptions::default())?;
        std::hint::black_box(&fit);
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / (calls / 10) as f64;
    println!("many_lm {n} x {p} x {k}: {us:.1} us a call");
    Ok(())
}

/// The routing check's chain at 4096 f32 elements, routed (the simulated
/// device declines it) and with GPU backends off.
fn routing(calls: usize) -> Result<()> {
    use gearbox_core::runtime::{options, set_options, RuntimeOptions};
    use gearbox_core::{DType, Precision};
    let n = 4096;
    let values: Vec<f64> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5)
        .collect();
    let x = Array::from_vec([n], values.clone())?
        .astype(DType::F32)?
        .with_precision(Precision::Fast)?;
    let y = Array::from_vec([n], values.into_iter().rev().collect())?
        .astype(DType::F32)?
        .with_precision(Precision::Fast)?;
    x.eval()?;
    y.eval()?;
    for (label, optional) in [("routed", true), ("cpu only", false), ("routed", true)] {
        let saved = set_options(RuntimeOptions {
            optional_backends: optional,
            ..options()
        });
        let start = Instant::now();
        for _ in 0..calls {
            let c = (((x.exp()? * &y)? + &x.sin()?)? - &(2.0 * &y)?)?;
            std::hint::black_box(c.buffer()?);
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / calls as f64;
        set_options(saved);
        println!("chain f32 {n} {label}: {us:.2} us a call");
    }
    Ok(())
}
