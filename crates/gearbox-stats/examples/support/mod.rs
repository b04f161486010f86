//! What the statistics benchmarks share: timing with the device
//! synchronized, and simulated GLM data. Each benchmark uses a part of it.
#![allow(dead_code)]

use std::time::Instant;

use gearbox_core::runtime::Backend;
use gearbox_core::{Array, Result};

/// Waits for the CUDA device when `gpu` (timings must include its work).
pub fn sync(gpu: bool) -> Result<()> {
    match gearbox_cuda::shared() {
        Some(b) if gpu => b.synchronize(),
        _ => Ok(()),
    }
}

/// Median milliseconds of at least `reps` runs of `f` (more, up to 50,
/// until 100 ms have been timed) after warm-up runs that last at least
/// 50 ms, so the device's clocks have risen before a short call is timed;
/// the PyTorch sides time the same way (scripts/sweep_common.py's
/// time_ms).
pub fn median_ms(gpu: bool, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let warm = Instant::now();
    for i in 0.. {
        if i >= 1 && warm.elapsed().as_secs_f64() >= 0.05 {
            break;
        }
        f()?;
        sync(gpu)?;
    }
    let mut t = Vec::with_capacity(reps);
    while t.len() < reps || (t.iter().sum::<f64>() < 100.0 && t.len() < 50) {
        let s = Instant::now();
        f()?;
        sync(gpu)?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

/// `a` as an array that lives on the CUDA device alone when `gpu` (computed
/// there, no host copy, as a PyTorch tensor made on the device), so that
/// nothing can read a host copy for free; else `a`, evaluated.
pub fn device_only(gpu: bool, a: &Array) -> Result<Array> {
    if !gpu {
        a.eval()?;
        return Ok(a.clone());
    }
    use gearbox_core::runtime::{options, set_options, RuntimeOptions};
    let before = set_options(RuntimeOptions {
        force_backend: Some("cuda".into()),
        ..options()
    });
    let d = a.astype(a.dtype()).and_then(|d| d.eval().map(|()| d));
    set_options(before);
    d
}

/// Sets the sweep's runtime up and says where it runs: the CPU path (all
/// host cores, GPU backends off) when `GEARBOX_SWEEP_CPU=1`, else the CUDA
/// device if one is usable (`true`), else the CPU (`false`).
pub fn sweep_on_gpu() -> bool {
    gearbox_cuda::register();
    let cpu = std::env::var("GEARBOX_SWEEP_CPU").is_ok_and(|v| v == "1");
    gearbox_core::runtime::set_options(gearbox_core::runtime::RuntimeOptions {
        quiet: true,
        optional_backends: !cpu,
        ..gearbox_core::runtime::RuntimeOptions::from_env()
    });
    !cpu && gearbox_core::runtime::use_gpu(Default::default()).is_some()
}

/// The comma-separated numbers in variable `var`, else `default` (a sweep's
/// shape list).
pub fn env_list(var: &str, default: &[f64]) -> Vec<f64> {
    std::env::var(var)
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

/// The number in variable `var`, else `default`.
pub fn env_f64(var: &str, default: f64) -> f64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// A small reproducible uniform stream for simulated responses.
pub struct Lcg(pub u64);

impl Lcg {
    /// Uniform on (0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A poisson draw by inversion: fine for the small means simulated here.
    pub fn poisson(&mut self, lambda: f64) -> f64 {
        let (mut k, mut p, u) = (0.0, (-lambda).exp(), self.uniform());
        let mut cdf = p;
        while u > cdf && k < 1000.0 {
            k += 1.0;
            p *= lambda / k;
            cdf += p;
        }
        k
    }
}

/// A simulated GLM data set of `l1` observations: a design (column-major,
/// an intercept column and standard normal columns), the true coefficients
/// (0.2 for the intercept, then +-0.5/sqrt(l2) or 0), and a response of
/// `family` ("binomial": 0/1; else poisson counts) drawn from them.
pub fn simulated_glm(family: &str, l1: usize, l2: usize) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let mut x = Array::randn([l1, l2], 1)?.to_vec::<f64>()?;
    x[..l1].fill(1.0);
    let beta: Vec<f64> = (0..l2)
        .map(|j| {
            if j == 0 {
                0.2
            } else {
                0.5 / (l2 as f64).sqrt() * ((j % 3) as f64 - 1.0)
            }
        })
        .collect();
    let mut rng = Lcg(7);
    let y = (0..l1)
        .map(|i| {
            let eta: f64 = (0..l2).map(|j| x[i + j * l1] * beta[j]).sum();
            match family {
                "binomial" => f64::from(rng.uniform() < 1.0 / (1.0 + (-eta).exp())),
                _ => rng.poisson(eta.exp()),
            }
        })
        .collect();
    Ok((x, y, beta))
}
