//! The wgpu backend's benchmark: the memory-bound fused kernels (the chain
//! `exp(x) y + sin(x) - 2 y`, a full sum, column means) on resident f32
//! data, on wgpu and, where there is one, on the CUDA backend in the same
//! run; the device's own buffer-copy bandwidth as the ceiling; the time a
//! new fused kernel takes to build (render, module, pipeline); and the
//! chain fused against op by op (each op its own kernel) and against the
//! CPU. Medians of repeats,
//! synchronized. Prints one JSON object; `GEARBOX_BENCH_LOG2N` sets the
//! chain's size (default 28 on a GPU, 22 on a CPU adapter);
//! `GEARBOX_BENCH_QUICK=1` leaves out the op-by-op chain and the CPU.

use std::time::Instant;

use gearbox_core::runtime::{set_options, Backend, RuntimeOptions};
use gearbox_core::{Array, DType, Precision, Result};

fn backend(name: &str) -> Option<std::sync::Arc<dyn Backend>> {
    gearbox_core::runtime::registry::candidates(true)
        .into_iter()
        .find(|c| {
            c.status.backend == name && c.status.health == gearbox_core::runtime::Health::Healthy
        })
        .and_then(|c| c.backend)
}

fn median_ms(b: &dyn Backend, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    b.synchronize()?;
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        let s = Instant::now();
        f()?;
        b.synchronize()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

fn force(name: Option<&str>, fusion: bool) {
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: name.map(String::from),
        fusion,
        ..RuntimeOptions::from_env()
    });
}

fn resident(shape: &[usize], seed: u64, on: &str) -> Result<Array> {
    let a = Array::randn(shape.to_vec(), seed)?
        .astype(DType::F32)?
        .with_precision(Precision::Fast)?;
    a.eval()?;
    a.to_device(on)?;
    Ok(a)
}

fn chain(x: &Array, y: &Array) -> Result<Array> {
    ((x.exp()? * y)? + &x.sin()?)? - &(2.0 * y)?
}

/// The chain one op at a time on the forced backend: each intermediate is
/// evaluated (one kernel each), as a library without fusion runs it.
fn chain_op_by_op(x: &Array, y: &Array) -> Result<()> {
    let step = |a: Array| -> Result<Array> {
        a.eval()?;
        Ok(a)
    };
    let e = step(x.exp()?)?;
    let ey = step((e * y)?)?;
    let s = step(x.sin()?)?;
    let sum = step((ey + &s)?)?;
    let twice = step((2.0 * y)?)?;
    step((sum - &twice)?)?;
    Ok(())
}

fn main() -> Result<()> {
    gearbox_wgpu::device::allow_cpu_adapters(true);
    gearbox_cuda::register();
    gearbox_wgpu::register();
    force(Some("wgpu"), true);
    let Some(wgpu) = backend("wgpu") else {
        eprintln!(
            "no usable wgpu adapter:\n{}",
            gearbox_core::runtime::gpu_status()
        );
        std::process::exit(2);
    };
    let cpu_adapter = wgpu.info()?.name.contains("Cpu");
    let log2n: u32 = std::env::var("GEARBOX_BENCH_LOG2N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cpu_adapter { 22 } else { 28 });
    let n = 1usize << log2n;
    let mut out = serde_json::Map::new();
    let mut put = |k: String, v: f64| {
        eprintln!("{k}: {v:.4}");
        out.insert(k, serde_json::json!(v));
    };
    put("_adapter_is_cpu".into(), cpu_adapter as u8 as f64);
    let reps = if cpu_adapter { 5 } else { 20 };
    let quick = std::env::var("GEARBOX_BENCH_QUICK").is_ok_and(|v| v == "1");
    let mut targets = vec![("wgpu", wgpu.clone())];
    if let Some(cuda) = backend("cuda") {
        targets.push(("cuda", cuda));
    }
    for (name, b) in &targets {
        force(Some(name), true);
        let x = resident(&[n], 1, name)?;
        let y = resident(&[n], 2, name)?;
        put(
            format!("{name}/chain/f32/2^{log2n}"),
            median_ms(b.as_ref(), reps, || chain(&x, &y)?.eval())?,
        );
        put(
            format!("{name}/sum/f32/2^{log2n}"),
            median_ms(b.as_ref(), reps, || x.sum()?.eval())?,
        );
        let (rows, cols) = (1usize << (log2n / 2 + 2), 1usize << (log2n - log2n / 2 - 2));
        let m = x.reshape([rows, cols])?;
        put(
            format!("{name}/col_means/f32/{rows}x{cols}"),
            median_ms(b.as_ref(), reps, || m.col_means()?.eval())?,
        );
        if *name == "wgpu" && !quick {
            put(
                format!("{name}/chain_op_by_op/f32/2^{log2n}"),
                median_ms(b.as_ref(), reps, || chain_op_by_op(&x, &y))?,
            );
        }
    }
    // The device's copy bandwidth: a buffer-to-buffer copy of the chain's
    // input size (reads and writes n f32 each).
    let dev = gearbox_wgpu::shared()
        .expect("registered")
        .device()?
        .clone();
    let bytes = (n * 4) as u64;
    let src = dev.alloc(n, DType::F32)?;
    let dst = dev.alloc(n, DType::F32)?;
    let copy_ms = median_ms(wgpu.as_ref(), reps, || {
        dev.flush()?;
        let mut e = dev
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        e.copy_buffer_to_buffer(src.buffer(), 0, dst.buffer(), 0, bytes);
        dev.queue.submit([e.finish()]);
        Ok(())
    })?;
    put("wgpu/copy_GBps".into(), 2.0 * bytes as f64 / copy_ms / 1e6);
    // Host to device and back, through the backend.
    let host = gearbox_core::HostBuffer::F32(vec![0.5; n]);
    let trip_ms = median_ms(wgpu.as_ref(), reps.min(5), || {
        let d = wgpu.upload(&host)?;
        wgpu.download(d.as_ref()).map(|_| ())
    })?;
    put(
        "wgpu/upload_download_GBps".into(),
        2.0 * bytes as f64 / trip_ms / 1e6,
    );
    // A fused kernel never seen before: render, WGSL module, pipeline, run.
    force(Some("wgpu"), true);
    let x = resident(&[4096], 3, "wgpu")?;
    let start = Instant::now();
    (((x.tanh()? * 3.25)? - &x.cos()?)?.sqrt()?).eval()?;
    wgpu.synchronize()?;
    put(
        "wgpu/new_kernel_ms".into(),
        start.elapsed().as_secs_f64() * 1e3,
    );
    let again = median_ms(wgpu.as_ref(), 5, || {
        ((x.tanh()? * 3.25)? - &x.cos()?)?.sqrt()?.eval()
    })?;
    put("wgpu/seen_kernel_ms".into(), again);
    // Host cost of one launch: many evaluations of a seen kernel on a
    // tiny resident array, one synchronization at the end.
    let launches = 2000;
    let start = Instant::now();
    for _ in 0..launches {
        ((x.tanh()? * 3.25)? - &x.cos()?)?.sqrt()?.eval()?;
    }
    wgpu.synchronize()?;
    put(
        "wgpu/launch_us".into(),
        start.elapsed().as_secs_f64() * 1e6 / launches as f64,
    );
    if quick {
        println!("{}", serde_json::Value::Object(out));
        return Ok(());
    }
    // The CPU on the same chain, host data.
    force(None, true);
    gearbox_core::runtime::set_options(RuntimeOptions {
        optional_backends: false,
        ..gearbox_core::runtime::options()
    });
    let xh = Array::randn(vec![n], 1)?
        .astype(DType::F32)?
        .with_precision(Precision::Fast)?;
    let yh = Array::randn(vec![n], 2)?
        .astype(DType::F32)?
        .with_precision(Precision::Fast)?;
    xh.eval()?;
    yh.eval()?;
    put(
        format!("cpu/chain/f32/2^{log2n}"),
        median_ms(&gearbox_core::runtime::cpu::CpuBackend, reps, || {
            chain(&xh, &yh)?.eval()
        })?,
    );
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
