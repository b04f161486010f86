//! The GPU benchmark of issue 4, Gearbox's side (PyTorch's is
//! `scripts/bench_torch.py`; `scripts/gpu.sh run` runs both and writes the
//! table). Inputs are device-resident unless the case says `cold`; each
//! timing is the median of repeats, synchronized. Prints one JSON object.

use std::time::Instant;

use gearbox_core::runtime::{set_options, RuntimeOptions};
use gearbox_core::{Array, DType, Precision, Result};

fn sync() -> Result<()> {
    use gearbox_core::runtime::Backend;
    gearbox_cuda::shared().expect("registered").synchronize()
}

fn median_ms(reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    sync()?;
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        let s = Instant::now();
        f()?;
        sync()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

fn resident(shape: &[usize], seed: u64, dtype: DType, p: Precision) -> Result<Array> {
    let a = Array::randn(shape.to_vec(), seed)?
        .astype(dtype)?
        .with_precision(p)?;
    a.eval()?;
    a.to_device("cuda")?;
    Ok(a)
}

fn main() -> Result<()> {
    gearbox_cuda::register();
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: Some("cuda".into()),
        ..RuntimeOptions::from_env()
    });
    if gearbox_core::runtime::use_gpu(Default::default()).is_none() {
        eprintln!(
            "no usable CUDA device:\n{}",
            gearbox_core::runtime::gpu_status()
        );
        std::process::exit(2);
    }
    let mut out = serde_json::Map::new();
    let mut put = |k: String, v: f64| {
        eprintln!("{k}: {v:.3} ms");
        out.insert(k, serde_json::json!(v));
    };
    let memory_only = std::env::var("GEARBOX_BENCH_ONLY").is_ok_and(|v| v == "memory");
    for (dtype, p) in [
        (DType::F32, Precision::Fast),
        (DType::F64, Precision::Strict),
    ] {
        for n in [4096usize, 8192].into_iter().filter(|_| !memory_only) {
            let a = resident(&[n, n], 1, dtype, p)?;
            let b = resident(&[n, n], 2, dtype, p)?;
            put(
                format!("gemm/{dtype}/{n}"),
                median_ms(if n == 4096 { 20 } else { 8 }, || a.matmul(&b)?.eval())?,
            );
        }
    }
    // 64 independent 256x256 products: one batched cuBLAS call, and (fusion
    // off, so no batching) one call each.
    for (dtype, p) in [
        (DType::F32, Precision::Fast),
        (DType::F64, Precision::Strict),
    ]
    .into_iter()
    .filter(|_| !memory_only)
    {
        let lhs: Vec<Array> = (0..64)
            .map(|i| resident(&[256, 256], 100 + i, dtype, p))
            .collect::<Result<_>>()?;
        let rhs: Vec<Array> = (0..64)
            .map(|i| resident(&[256, 256], 200 + i, dtype, p))
            .collect::<Result<_>>()?;
        let products = || -> Result<()> {
            let c: Vec<Array> = lhs
                .iter()
                .zip(&rhs)
                .map(|(a, b)| a.matmul(b))
                .collect::<Result<_>>()?;
            Array::eval_all(&c.iter().collect::<Vec<_>>())
        };
        put(format!("batched/{dtype}/64x256"), median_ms(20, products)?);
        let saved = set_options(RuntimeOptions {
            fusion: false,
            ..gearbox_core::runtime::options()
        });
        put(format!("loop/{dtype}/64x256"), median_ms(20, products)?);
        set_options(saved);
    }
    let n = 1usize << 28;
    let x = resident(&[n], 3, DType::F32, Precision::Fast)?;
    let y = resident(&[n], 4, DType::F32, Precision::Fast)?;
    let chain = |x: &Array, y: &Array| -> Result<Array> { x.exp()? * y + &x.sin()? - &(2.0 * y)? };
    put(
        "chain/f32/2^28".into(),
        median_ms(20, || chain(&x, &y)?.eval())?,
    );
    put("sum/f32/2^28".into(), median_ms(20, || x.sum()?.eval())?);
    let m = resident(&[32768, 8192], 5, DType::F32, Precision::Fast)?;
    put(
        "col_means/f32/32768x8192".into(),
        median_ms(20, || m.mean_axis(0)?.eval())?,
    );
    if memory_only {
        println!("{}", serde_json::Value::Object(out));
        return Ok(());
    }
    // Cold: host inputs (gather drops the device copy, keeps the host one),
    // upload + compute + download every time.
    let (xh, yh) = (x.gather()?, y.gather()?);
    put(
        "cold/chain/f32/2^28".into(),
        median_ms(5, || {
            let (xc, yc) = (xh.gather()?, yh.gather()?);
            chain(&xc, &yc)?.buffer().map(|_| ())
        })?,
    );
    put(
        "cold/sum/f32/2^28".into(),
        median_ms(5, || xh.gather()?.sum()?.item().map(|_| ()))?,
    );
    let ah = Array::randn([4096, 4096], 1)?
        .astype(DType::F32)?
        .with_precision(Precision::Fast)?;
    ah.eval()?;
    put(
        "cold/gemm/f32/4096".into(),
        median_ms(5, || {
            let a = ah.gather()?;
            a.matmul(&a)?.buffer().map(|_| ())
        })?,
    );
    let metrics = gearbox_core::runtime::metrics().of("cuda");
    out.insert("_kernel_cache".into(), serde_json::json!({"hits": metrics.kernel_cache_hits, "misses": metrics.kernel_cache_misses}));
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
