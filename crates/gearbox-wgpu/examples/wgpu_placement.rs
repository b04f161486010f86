//! How the device memory a wgpu process holds changes the speed of reading
//! one array (the slow wgpu processes of docs/perf/wgpu.md): a resident f32
//! array of 2^`GEARBOX_PLACEMENT_LOG2N` (28) values (1 GiB) is summed on the device's clock (median of
//! 5; needs `GEARBOX_WGPU_TIMESTAMPS=1`) alone, then after each further
//! `GEARBOX_PLACEMENT_STEP_MIB` (256) of device buffers is held beside it,
//! up to `GEARBOX_PLACEMENT_MOST_MIB` (8192), then after they are freed
//! (with `GEARBOX_WGPU_POOL_BYTES=0` they go back to the driver), then
//! `GEARBOX_PLACEMENT_NEW` (4) new arrays made after them, each kept. Prints one line per step and a JSON object.
//!
//! Run: `GEARBOX_WGPU_TIMESTAMPS=1 cargo run --release -p gearbox-wgpu
//! --example wgpu_placement`.

use gearbox_core::runtime::bench::{force, healthy, resident};
use gearbox_core::runtime::Backend;
use gearbox_core::{Array, DType, Result};

/// The device time of one `sum` of `x`, in ms: the median of 5 runs.
fn device_sum_ms(b: &dyn Backend, x: &Array) -> Result<f64> {
    let clock = || {
        b.device_compute_seconds()
            .ok_or_else(|| gearbox_core::Error::InvalidArgument {
                op: "wgpu_placement",
                name: "GEARBOX_WGPU_TIMESTAMPS",
                value: "unset".into(),
                why: "set it to 1: the sums are timed on the device's clock".into(),
            })
    };
    let mut times = Vec::with_capacity(5);
    for _ in 0..5 {
        b.synchronize()?;
        let before = clock()?;
        x.sum()?.eval()?;
        b.synchronize()?;
        times.push((clock()? - before) * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

fn main() -> Result<()> {
    gearbox_wgpu::register();
    let Some(wgpu) = healthy("wgpu") else {
        let why = gearbox_core::runtime::registry::candidates(true)
            .into_iter()
            .find(|c| c.status.backend == "wgpu")
            .map(|c| c.status.reason)
            .unwrap_or_default();
        eprintln!("no usable wgpu adapter: {why}");
        std::process::exit(2);
    };
    force(Some("wgpu"), true);
    let env = |name: &str, default: usize| -> usize {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let log2n = env("GEARBOX_PLACEMENT_LOG2N", 28);
    let step_mib = env("GEARBOX_PLACEMENT_STEP_MIB", 256);
    let most_mib = env("GEARBOX_PLACEMENT_MOST_MIB", 8192);
    let mut out = serde_json::Map::new();
    let mut report = |label: String, ms: f64| {
        println!("{label}: sum {ms:.3} ms");
        out.insert(label, serde_json::json!(ms));
    };
    let backend = gearbox_wgpu::shared().expect("registered");
    let dev = backend.device()?;
    if let Some(memory) = gearbox_wgpu::raw_memory::describe(&dev.device) {
        println!("{memory}");
    }
    // The measured array, then other memory held beside it, a step at a
    // time, then given back.
    let x = resident(&[1usize << log2n], 100, "wgpu", DType::F32)?;
    report("held 0 MiB".into(), device_sum_ms(wgpu.as_ref(), &x)?);
    let mut held = Vec::new();
    for step in 1..=most_mib / step_mib.max(1) {
        held.push(dev.alloc(step_mib << 18, DType::F32)?);
        report(
            format!("held {} MiB", step * step_mib),
            device_sum_ms(wgpu.as_ref(), &x)?,
        );
    }
    held.clear();
    dev.wait()?;
    report(
        "held memory freed".into(),
        device_sum_ms(wgpu.as_ref(), &x)?,
    );
    let mut made = Vec::new();
    for i in 0..env("GEARBOX_PLACEMENT_NEW", 4) {
        let y = resident(&[1usize << log2n], 101 + i as u64, "wgpu", DType::F32)?;
        report(format!("new array {i}"), device_sum_ms(wgpu.as_ref(), &y)?);
        made.push(y);
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
