//! The OpenCL backend's benchmark, beside the CUDA backend in the same run
//! where there is one (PyTorch at the same shapes is in
//! `scripts/bench_wgpu_torch.py`'s output of the same run): the fused chain
//! `exp(x) y + sin(x) - 2 y` and a full sum on resident f32 and f64 data,
//! the device's buffer-copy bandwidth, square f32 and f64 products
//! (CLBlast where installed, else the tiled kernel; cuBLAS on CUDA), the
//! host cost of a launch, and the time a new fused kernel takes to build
//! with the program cache's hits and misses. Medians of repeats,
//! synchronized. Prints one JSON object; `GEARBOX_BENCH_LOG2N` lists the
//! sizes (`20,24,28` on a GPU, 22 on a CPU device).

use std::time::Instant;

use gearbox_core::runtime::bench::{chain, force, healthy, launch_us, median_ms, resident};
use gearbox_core::runtime::Backend;
use gearbox_core::{DType, Result};

/// The memory-bound cases at `2^log2n` elements of `dtype` on backend `name`.
fn memory_cases(
    put: &mut dyn FnMut(String, f64),
    name: &str,
    b: &dyn Backend,
    log2n: u32,
    dtype: DType,
) -> Result<()> {
    force(Some(name), true);
    let n = 1usize << log2n;
    let x = resident(&[n], 1, name, dtype)?;
    let y = resident(&[n], 2, name, dtype)?;
    let t = if dtype == DType::F32 { "f32" } else { "f64" };
    let reps = if log2n >= 26 { 10 } else { 30 };
    put(
        format!("{name}/chain/{t}/2^{log2n}"),
        median_ms(b, reps, || chain(&x, &y)?.eval())?,
    );
    put(
        format!("{name}/sum/{t}/2^{log2n}"),
        median_ms(b, reps, || x.sum()?.eval())?,
    );
    Ok(())
}

/// Square products of `dtype` on backend `name`.
fn gemm_cases(
    put: &mut dyn FnMut(String, f64),
    name: &str,
    b: &dyn Backend,
    sizes: &[usize],
) -> Result<()> {
    force(Some(name), true);
    for dtype in [DType::F32, DType::F64] {
        for &k in sizes {
            let a = resident(&[k, k], 3, name, dtype)?;
            let c = resident(&[k, k], 4, name, dtype)?;
            let reps = if k >= 2048 { 10 } else { 20 };
            let t = if dtype == DType::F32 { "f32" } else { "f64" };
            let ms = median_ms(b, reps, || a.matmul(&c)?.eval())?;
            put(format!("{name}/matmul/{t}/{k}"), ms);
            put(
                format!("{name}/matmul/{t}/{k}/tflops"),
                2.0 * (k as f64).powi(3) / ms / 1e9,
            );
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    gearbox_opencl::allow_cpu_devices(true);
    gearbox_cuda::register();
    gearbox_opencl::register();
    force(Some("opencl"), true);
    let Some(opencl) = healthy("opencl") else {
        return Err(gearbox_core::Error::InvalidArgument {
            op: "opencl_bench",
            name: "device",
            value: "opencl".into(),
            why: "no usable OpenCL device".into(),
        });
    };
    let dev = gearbox_opencl::shared()
        .expect("registered")
        .device()?
        .clone();
    let mut out = serde_json::Map::new();
    let mut put = |k: String, v: f64| {
        eprintln!("{k}: {v:.4}");
        out.insert(k, serde_json::json!(v));
    };
    eprintln!("device: {}", dev.info.name);
    let sizes: Vec<u32> = std::env::var("GEARBOX_BENCH_LOG2N")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| if dev.cpu { vec![22] } else { vec![20, 24, 28] });
    let gemm_sizes: &[usize] = if dev.cpu { &[256] } else { &[1024, 4096] };
    let mut targets = vec![("opencl", opencl.clone())];
    if let Some(cuda) = healthy("cuda") {
        targets.push(("cuda", cuda));
    }
    for (name, b) in &targets {
        for &log2n in &sizes {
            memory_cases(&mut put, name, b.as_ref(), log2n, DType::F32)?;
            if dev.fp64 {
                memory_cases(&mut put, name, b.as_ref(), log2n, DType::F64)?;
            }
        }
        gemm_cases(&mut put, name, b.as_ref(), gemm_sizes)?;
        put(format!("{name}/launch_us"), launch_us(name, b.as_ref())?);
    }
    // The device's own copy bandwidth at the largest size: read + write.
    let top = *sizes.iter().max().unwrap_or(&22);
    let bytes = (1usize << top) * 4;
    let src = dev.alloc(1 << top, DType::F32)?;
    let mut dst = dev.alloc(1 << top, DType::F32)?;
    let copy_ms = median_ms(opencl.as_ref(), 10, || {
        // SAFETY: both buffers hold `bytes` bytes.
        unsafe {
            dev.queue
                .enqueue_copy_buffer(src.block(), dst.block_mut(), 0, 0, bytes, &[])
                .map(|_| ())
                .map_err(|e| gearbox_core::Error::InvalidArgument {
                    op: "copy",
                    name: "buffer",
                    value: format!("{e}"),
                    why: "the copy failed".into(),
                })
        }
    })?;
    put(
        "opencl/copy_GBps".into(),
        2.0 * bytes as f64 / copy_ms / 1e6,
    );
    // A kernel never seen in this process: render, build (or the disk
    // cache's binary), load; then the same kernel again (in memory).
    force(Some("opencl"), true);
    let x = resident(&[4096], 3, "opencl", DType::F32)?;
    let (h0, m0) = opencl.kernel_cache_stats();
    let start = Instant::now();
    ((x.tanh()? * 0.75)? - &x.cos()?)?.eval()?;
    opencl.synchronize()?;
    put(
        "opencl/new_kernel_ms".into(),
        start.elapsed().as_secs_f64() * 1e3,
    );
    let (h1, m1) = opencl.kernel_cache_stats();
    put("opencl/new_kernel_cache_hits".into(), (h1 - h0) as f64);
    put("opencl/new_kernel_cache_misses".into(), (m1 - m0) as f64);
    let again = median_ms(opencl.as_ref(), 5, || {
        ((x.tanh()? * 0.75)? - &x.cos()?)?.eval()
    })?;
    put("opencl/seen_kernel_ms".into(), again);
    // A warm process (binaries on disk from an earlier run) builds none.
    let built = gearbox_opencl::shared().map_or(0, |b| b.programs_built());
    put("opencl/programs_built_from_source".into(), built as f64);
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
