//! What the backends' benchmark examples share: a healthy backend by name,
//! the median of synchronized repeats, forcing work onto one backend,
//! random arrays made resident on it, the fused chain they time, the
//! host cost of a launch and the CPU reduction benchmarks' cases. Timing
//! lives in the examples and `docs/perf/`, never in tests.

use std::sync::Arc;
use std::time::Instant;

use crate::dtype::DType;
use crate::error::Result;
use crate::precision::Precision;
use crate::runtime::backend::Backend;
use crate::runtime::{set_options, Health, RuntimeOptions};
use crate::Array;

/// The registered backend `name` if it is healthy (probing it if needed).
pub fn healthy(name: &str) -> Option<Arc<dyn Backend>> {
    crate::runtime::registry::candidates(true)
        .into_iter()
        .find(|c| c.status.backend == name && c.status.health == Health::Healthy)
        .and_then(|c| c.backend)
}

/// The median wall time in milliseconds of `reps` runs of `f` on `b`, each
/// synchronized, after one warm-up run.
pub fn median_ms(b: &dyn Backend, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    b.synchronize()?;
    let mut t = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let s = Instant::now();
        f()?;
        b.synchronize()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

/// Sends all work to backend `name` (`None`: the dispatcher decides), with
/// fusion on or off, quietly.
pub fn force(name: Option<&str>, fusion: bool) {
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: name.map(String::from),
        fusion,
        ..RuntimeOptions::from_env()
    });
}

/// Standard normal values of `dtype` (f32 in `fast` precision, else
/// `strict`) from stream `seed`, evaluated in host memory: the arrays the
/// CPU columns of the benchmarks time.
pub fn host_randn(shape: &[usize], seed: u64, dtype: DType) -> Result<Array> {
    let precision = if dtype == DType::F32 {
        Precision::Fast
    } else {
        Precision::Strict
    };
    let a = Array::randn(shape.to_vec(), seed)?
        .astype(dtype)?
        .with_precision(precision)?;
    a.eval()?;
    Ok(a)
}

/// [`host_randn`]'s values, resident on backend `on`.
pub fn resident(shape: &[usize], seed: u64, on: &str, dtype: DType) -> Result<Array> {
    let a = host_randn(shape, seed, dtype)?;
    a.to_device(on)?;
    Ok(a)
}

/// The fused chain the backends' benchmarks time: `exp(x) y + sin(x) - 2 y`.
pub fn chain(x: &Array, y: &Array) -> Result<Array> {
    ((x.exp()? * y)? + &x.sin()?)? - &(y * 2.0)?
}

/// Host cost in microseconds of one launch on backend `name` (`b`): 2,000
/// evaluations of a kernel already built, `exp(x) 1.5 + x` on a resident
/// f32 array of 4,096 values, with one synchronization at the end.
pub fn launch_us(name: &str, b: &dyn Backend) -> Result<f64> {
    force(Some(name), true);
    let x = resident(&[4096], 3, name, DType::F32)?;
    let run = || ((x.exp()? * 1.5)? + &x)?.eval();
    run()?;
    b.synchronize()?;
    let launches = 2000;
    let start = Instant::now();
    for _ in 0..launches {
        run()?;
    }
    b.synchronize()?;
    Ok(start.elapsed().as_secs_f64() * 1e6 / launches as f64)
}

/// One reduction benchmark's work on a float input `x` and the bool
/// `b = x > 0` (the CPU benchmarks and `reduce_bench` time the same cases).
pub type ReduceCase = fn(&Array, &Array) -> Result<Array>;

/// The CPU reduction benchmarks' cases, `(name, work)`: axis reductions
/// along both axes (the suffix is the axis), scans, centring,
/// standardization, softmax, log-softmax and log-sum-exp.
pub const REDUCE_CASES: &[(&str, ReduceCase)] = &[
    ("sum0", |x, _| x.sum_axis(0)),
    ("sum1", |x, _| x.sum_axis(1)),
    ("mean0", |x, _| x.mean_axis(0)),
    ("mean1", |x, _| x.mean_axis(1)),
    ("min0", |x, _| x.min_axis(0)),
    ("min1", |x, _| x.min_axis(1)),
    ("max0", |x, _| x.max_axis(0)),
    ("max1", |x, _| x.max_axis(1)),
    ("prod0", |x, _| x.prod_axis(0)),
    ("prod1", |x, _| x.prod_axis(1)),
    ("var0", |x, _| x.var_axis(0)),
    ("var1", |x, _| x.var_axis(1)),
    ("var_all", |x, _| x.var()),
    ("sd0", |x, _| x.sd_axis(0)),
    ("sd1", |x, _| x.sd_axis(1)),
    ("argmin0", |x, _| x.argmin_axis(0)),
    ("argmin1", |x, _| x.argmin_axis(1)),
    ("argmax0", |x, _| x.argmax_axis(0)),
    ("argmax1", |x, _| x.argmax_axis(1)),
    ("any0", |_, b| b.any_axis(0)),
    ("any1", |_, b| b.any_axis(1)),
    ("all0", |_, b| b.all_axis(0)),
    ("all1", |_, b| b.all_axis(1)),
    ("cumsum0", |x, _| x.cumsum_axis(0)),
    ("cumsum1", |x, _| x.cumsum_axis(1)),
    ("cumprod0", |x, _| x.cumprod_axis(0)),
    ("cumprod1", |x, _| x.cumprod_axis(1)),
    ("center0", |x, _| x.sub(&x.mean_axis(0)?)),
    ("center1", |x, _| x.sub(&x.mean_axis(1)?)),
    ("standardize0", |x, _| {
        x.sub(&x.mean_axis(0)?)?.div(&x.sd_axis(0)?)
    }),
    ("standardize1", |x, _| {
        x.sub(&x.mean_axis(1)?)?.div(&x.sd_axis(1)?)
    }),
    ("softmax0", |x, _| x.softmax_axis(0)),
    ("softmax1", |x, _| x.softmax_axis(1)),
    ("log_softmax1", |x, _| crate::nn::log_softmax(x)),
    ("logsumexp0", |x, _| x.logsumexp_axis(0)),
    ("logsumexp1", |x, _| x.logsumexp_axis(1)),
];
