//! The wgpu backend's benchmark, beside the CUDA backend in the same run
//! where there is one (and PyTorch, `scripts/bench_wgpu_torch.py`, at the
//! same shapes): the memory-bound cases (the fused chain
//! `exp(x) y + sin(x) - 2 y`, a full sum, column means, `cumsum`, `randn`) on resident f32 and
//! f64 data at several sizes; square f32 products; the host cost of a
//! launch; the device's buffer-copy bandwidth; the time a new fused kernel
//! takes to build (render, module, pipeline) and the cache's hits and
//! misses for it; the chain fused against op by op (each op its own
//! kernel) and against the CPU. Medians of repeats, synchronized. Prints
//! one JSON object; `GEARBOX_BENCH_LOG2N` lists the sizes (`16,20,24,28`
//! on a GPU, 22 on a CPU adapter); `GEARBOX_BENCH_QUICK=1` keeps f32
//! memory cases and the launch cost only; `GEARBOX_BENCH_ALLOCATOR=1` adds
//! wgpu's memory blocks and reserved bytes after each case.

use std::time::Instant;

use gearbox_core::runtime::bench::{
    chain, force, healthy as backend, launch_us, median_ms, resident,
};
use gearbox_core::runtime::{Backend, RuntimeOptions};
use gearbox_core::{Array, DType, Precision, Result};

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

/// Times `f` on backend `b` under `key`: the median host time, and where
/// the backend reports its device's clock (wgpu with
/// `GEARBOX_WGPU_TIMESTAMPS=1`) the device time per run under
/// `<key>/device`.
fn timed(
    put: &mut dyn FnMut(String, f64),
    key: String,
    b: &dyn Backend,
    reps: usize,
    f: impl FnMut() -> Result<()>,
) -> Result<()> {
    b.synchronize()?;
    let before = b.device_compute_seconds();
    let ms = median_ms(b, reps, f)?;
    if let (Some(s0), Some(s1)) = (before, b.device_compute_seconds()) {
        put(format!("{key}/device"), (s1 - s0) * 1e3 / (reps + 1) as f64);
    }
    if key.starts_with("wgpu/") && std::env::var("GEARBOX_BENCH_ALLOCATOR").is_ok_and(|v| v == "1")
    {
        // Where wgpu's allocator stands after the case: the memory blocks
        // it holds and their bytes (for the slow processes of
        // docs/perf/wgpu.md).
        let shared = gearbox_wgpu::shared().expect("registered");
        if let Some(r) = shared.device()?.device.generate_allocator_report() {
            put(format!("{key}/blocks"), r.blocks.len() as f64);
            put(
                format!("{key}/reserved_MiB"),
                r.total_reserved_bytes as f64 / 1048576.0,
            );
        }
    }
    put(key, ms);
    Ok(())
}

/// The memory-bound cases at `2^log2n` elements of `dtype` on backend
/// `name`: the chain, `sum`, column means, `cumsum`, and (f64) `randn`.
fn memory_cases(
    put: &mut dyn FnMut(String, f64),
    name: &str,
    b: &dyn Backend,
    log2n: u32,
    dtype: DType,
    reps: usize,
) -> Result<()> {
    force(Some(name), true);
    let n = 1usize << log2n;
    let x = resident(&[n], 1, name, dtype)?;
    let y = resident(&[n], 2, name, dtype)?;
    let t = if dtype == DType::F32 { "f32" } else { "f64" };
    let shape = format!("2^{log2n}");
    timed(put, format!("{name}/chain/{t}/{shape}"), b, reps, || {
        chain(&x, &y)?.eval()
    })?;
    timed(put, format!("{name}/sum/{t}/{shape}"), b, reps, || {
        x.sum()?.eval()
    })?;
    let (rows, cols) = (1usize << (log2n / 2 + 2), 1usize << (log2n - log2n / 2 - 2));
    let m = x.reshape([rows, cols])?;
    timed(
        put,
        format!("{name}/col_means/{t}/{rows}x{cols}"),
        b,
        reps,
        || m.col_means()?.eval(),
    )?;
    timed(put, format!("{name}/cumsum/{t}/{shape}"), b, reps, || {
        x.cumsum()?.eval()
    })?;
    if dtype == DType::F64 {
        timed(put, format!("{name}/randn/f64/{shape}"), b, reps, || {
            Array::randn(vec![n], 7)?.eval()
        })?;
    }
    Ok(())
}

/// Square f32 products on backend `name`.
fn gemm_cases(put: &mut dyn FnMut(String, f64), name: &str, b: &dyn Backend) -> Result<()> {
    force(Some(name), true);
    for k in [256usize, 1024, 2048, 4096] {
        let a = resident(&[k, k], 3, name, DType::F32)?;
        let c = resident(&[k, k], 4, name, DType::F32)?;
        let reps = if k >= 2048 { 10 } else { 20 };
        timed(put, format!("{name}/matmul/f32/{k}"), b, reps, || {
            a.matmul(&c)?.eval()
        })?;
    }
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
    let log2ns: Vec<u32> = match std::env::var("GEARBOX_BENCH_LOG2N") {
        Ok(v) => v.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
        Err(_) if cpu_adapter => vec![22],
        Err(_) => vec![16, 20, 24, 28],
    };
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
    let f64_on_wgpu = wgpu.capabilities().dtypes.contains(&DType::F64);
    // Arrays past the adapter's largest storage binding cannot be on wgpu:
    // those sizes are left out on both sides.
    let most_bytes = gearbox_wgpu::shared()
        .expect("registered")
        .device()?
        .limits
        .max_storage_buffer_binding_size;
    let fits = |log2n: u32, dtype: DType| (dtype.size_bytes() as u64) << log2n <= most_bytes;
    for (name, b) in &targets {
        for &log2n in &log2ns {
            if fits(log2n, DType::F32) {
                memory_cases(&mut put, name, b.as_ref(), log2n, DType::F32, reps)?;
            }
            if f64_on_wgpu && !quick && fits(log2n, DType::F64) {
                memory_cases(&mut put, name, b.as_ref(), log2n, DType::F64, reps)?;
            }
        }
        if !quick && !cpu_adapter {
            gemm_cases(&mut put, name, b.as_ref())?;
        }
        put(format!("{name}/launch_us"), launch_us(name, b.as_ref())?);
    }
    let top = *log2ns.iter().max().unwrap_or(&22);
    let n = 1usize << top;
    force(Some("wgpu"), true);
    if !quick {
        let x = resident(&[n], 1, "wgpu", DType::F32)?;
        let y = resident(&[n], 2, "wgpu", DType::F32)?;
        put(
            format!("wgpu/chain_op_by_op/f32/2^{top}"),
            median_ms(wgpu.as_ref(), reps, || chain_op_by_op(&x, &y))?,
        );
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
        e.copy_buffer_to_buffer(src.block(), 0, dst.block(), 0, bytes);
        dev.queue.submit([e.finish()]);
        Ok(())
    })?;
    put("wgpu/copy_GBps".into(), 2.0 * bytes as f64 / copy_ms / 1e6);
    // Host to device and back, through the backend, each way on its own.
    let host = gearbox_core::HostBuffer::F32(vec![0.5; n]);
    let up_ms = median_ms(wgpu.as_ref(), reps.min(5), || {
        wgpu.upload(&host).map(|_| ())
    })?;
    put("wgpu/upload_GBps".into(), bytes as f64 / up_ms / 1e6);
    let on_device = wgpu.upload(&host)?;
    let down_ms = median_ms(wgpu.as_ref(), reps.min(5), || {
        wgpu.download(on_device.as_ref()).map(|_| ())
    })?;
    put("wgpu/download_GBps".into(), bytes as f64 / down_ms / 1e6);
    // A fused kernel never seen before: render, WGSL module, pipeline, run.
    let x = resident(&[4096], 3, "wgpu", DType::F32)?;
    let (before_hits, before_misses) = wgpu.kernel_cache_stats();
    let start = Instant::now();
    (((x.tanh()? * 3.25)? - &x.cos()?)?.sqrt()?).eval()?;
    wgpu.synchronize()?;
    put(
        "wgpu/new_kernel_ms".into(),
        start.elapsed().as_secs_f64() * 1e3,
    );
    let (hits, misses) = wgpu.kernel_cache_stats();
    put(
        "wgpu/new_kernel_cache_hits".into(),
        (hits - before_hits) as f64,
    );
    put(
        "wgpu/new_kernel_cache_misses".into(),
        (misses - before_misses) as f64,
    );
    let again = median_ms(wgpu.as_ref(), 5, || {
        ((x.tanh()? * 3.25)? - &x.cos()?)?.sqrt()?.eval()
    })?;
    put("wgpu/seen_kernel_ms".into(), again);
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
        format!("cpu/chain/f32/2^{top}"),
        median_ms(&gearbox_core::runtime::cpu::CpuBackend, reps, || {
            chain(&xh, &yh)?.eval()
        })?,
    );
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
