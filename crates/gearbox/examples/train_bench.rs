//! Issue 15's benchmark, Gearbox's side (PyTorch's is
//! `scripts/bench_train_torch.py`; `scripts/gpu.sh run autodiff` runs both):
//! one training step of an MLP 784-1024-1024-10 (relu, softmax
//! cross-entropy, Adam, batch 4096, float32 `fast`) on the dispatcher's GPU,
//! parameters and optimizer state resident, the median step time over
//! `GEARBOX_TRAIN_STEPS` steps (default 200) after warm-up, and the
//! device pool's counters and memory in use before and after (flat memory:
//! nothing grows across steps); then `grad` of the five-op chain
//! `sum(exp(sin(x) * 2 + x) / 3)` over 2^26 float32 elements (one read of
//! `x`, one write of the gradient). Prints one JSON object.

use std::time::Instant;

use gearbox::nn::{self, Activation, Adam, Linear, Module, Sequential};
use gearbox::runtime::bench::{force, healthy, median_ms};
use gearbox::{autodiff, Array, DType, Precision, Result};

fn main() -> Result<()> {
    gearbox::init();
    let backend = std::env::var("GEARBOX_TRAIN_BACKEND").unwrap_or_else(|_| "cuda".into());
    force(Some(&backend), true);
    let Some(b) = healthy(&backend) else {
        eprintln!("no usable {backend} backend");
        std::process::exit(2);
    };
    let steps: usize = std::env::var("GEARBOX_TRAIN_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let f32_fast = |a: Array| a.astype(DType::F32)?.with_precision(Precision::Fast);
    let batch = 4096;
    let x = f32_fast(Array::randn([batch, 784], 1)?)?;
    let classes: Vec<usize> = (0..batch).map(|i| (i * 7919) % 10).collect();
    let y = f32_fast(nn::one_hot(&classes, 10)?)?;
    x.to_device(&backend)?;
    y.to_device(&backend)?;
    let mut model = Sequential::new()
        .push(Linear::new(784, 1024, true, 11)?)
        .push(Activation::Relu)
        .push(Linear::new(1024, 1024, true, 12)?)
        .push(Activation::Relu)
        .push(Linear::new(1024, 10, true, 13)?);
    model.cast(DType::F32, Precision::Fast)?;
    let mut opt = Adam::new(1e-3)?;
    let loss_fn = |m: &nn::Bound<'_, Sequential>, io: &[Array]| {
        nn::softmax_cross_entropy(&m.forward(&io[0])?, &io[1])
    };
    let io = [x.clone(), y.clone()];
    let mut out = serde_json::Map::new();
    let mut put = |k: &str, v: f64| {
        eprintln!("{k}: {v:.4}");
        out.insert(k.into(), serde_json::json!(v));
    };
    for _ in 0..5 {
        nn::train_step(&mut model, loss_fn, &mut opt, &io)?;
    }
    b.synchronize()?;
    let mem0 = b.memory_stats().in_use;
    let (_, fresh0) = b.pool_counters();
    let mut times = Vec::with_capacity(steps);
    let mut loss = Array::scalar(0.0f32);
    for _ in 0..steps {
        let s = Instant::now();
        loss = nn::train_step(&mut model, loss_fn, &mut opt, &io)?;
        b.synchronize()?;
        times.push(s.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let mem1 = b.memory_stats().in_use;
    let (_, fresh1) = b.pool_counters();
    put("mlp_step_ms", times[times.len() / 2]);
    put("mlp_final_loss", loss.item()?);
    put("mlp_memory_in_use_before_bytes", mem0 as f64);
    put("mlp_memory_in_use_after_bytes", mem1 as f64);
    put(
        "mlp_fresh_allocations_during_steps",
        (fresh1 - fresh0) as f64,
    );
    let n = 1usize << 26;
    let xs = f32_fast(Array::randn([n], 3)?)?;
    xs.to_device(&backend)?;
    let chain =
        |a: &[Array]| -> Result<Array> { ((((&a[0].sin()? * 2.0)? + &a[0])?.exp()? / 3.0)?).sum() };
    let ms = median_ms(b.as_ref(), 20, || {
        autodiff::grad(chain, std::slice::from_ref(&xs))?[0].eval()
    })?;
    put("grad_chain_2^26_ms", ms);
    put("grad_chain_2^26_GBps", 2.0 * 4.0 * n as f64 / ms / 1e6);
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
