//! CPU benchmarks, run beside numpy by `scripts/bench-cpu.sh`:
//! matmul (512, 1024, 2048; f64 and f32), the elementwise chain
//! `exp(x)*y + sin(x) - 2*y` over 10^7 f64, column means of a
//! 4000 x 2500 f64 matrix, and everyday reductions and composites
//! (`reduce/<dtype>/<shape>/<case>`: axis reductions, scans, centring,
//! standardization, softmax, log-softmax, log-sum-exp along either axis
//! of a tall 10^6 x 64, a square 4000 x 4000 and a wide 64 x 10^6
//! matrix; the same cases as `gearbox-core`'s `reduce_bench` example and
//! `scripts/bench_numpy_reduce.py`). `GEARBOX_BENCH_REDUCE=0` leaves the
//! reductions out. Inputs are evaluated before timing; each iteration
//! builds the graph and evaluates it.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gearbox::{Array, DType};
use std::time::Duration;

fn inputs(shape: [usize; 2], dtype: DType) -> (Array, Array) {
    let a = Array::randn(shape, 1)
        .and_then(|a| a.astype(dtype))
        .expect("random input");
    let b = Array::randn(shape, 2)
        .and_then(|b| b.astype(dtype))
        .expect("random input");
    Array::eval_all(&[&a, &b]).expect("inputs evaluate");
    (a, b)
}

fn matmul(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    for (dtype, name) in [(DType::F64, "f64"), (DType::F32, "f32")] {
        for n in [512usize, 1024, 2048] {
            let (a, b) = inputs([n, n], dtype);
            g.bench_with_input(BenchmarkId::new(name, n), &n, |bench, _| {
                bench.iter(|| a.matmul(&b).and_then(|c| c.eval()).expect("matmul"))
            });
        }
    }
    g.finish();
}

fn elementwise_chain(c: &mut Criterion) {
    let mut g = c.benchmark_group("chain");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    let (x, y) = inputs([10_000_000, 1], DType::F64);
    g.bench_function("f64/10000000", |bench| {
        bench.iter(|| {
            let z = (x.exp().expect("exp") * &y + &x.sin().expect("sin")
                - &(2.0 * &y).expect("2y"))
                .expect("chain");
            z.eval().expect("eval")
        })
    });
    g.finish();
}

fn column_means(c: &mut Criterion) {
    let mut g = c.benchmark_group("col_means");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    let (x, _) = inputs([4000, 2500], DType::F64);
    g.bench_function("f64/4000x2500", |bench| {
        bench.iter(|| x.col_means().and_then(|m| m.eval()).expect("col_means"))
    });
    g.finish();
}

type Case = fn(&Array, &Array) -> gearbox::Result<Array>;

fn softmax(x: &Array, axis: usize) -> gearbox::Result<Array> {
    let e = x.sub(&x.max_axis(axis)?)?.exp()?;
    e.div(&e.sum_axis(axis)?)
}

fn logsumexp(x: &Array, axis: usize) -> gearbox::Result<Array> {
    let m = x.max_axis(axis)?;
    m.add(&x.sub(&m)?.exp()?.sum_axis(axis)?.log()?)
}

/// `(name, work)`; `x` is the float input, `b` the bool `x > 0`.
const REDUCE_CASES: &[(&str, Case)] = &[
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
    ("softmax0", |x, _| softmax(x, 0)),
    ("softmax1", |x, _| softmax(x, 1)),
    ("log_softmax1", |x, _| gearbox::nn::log_softmax(x)),
    ("logsumexp0", |x, _| logsumexp(x, 0)),
    ("logsumexp1", |x, _| logsumexp(x, 1)),
];

fn reductions(c: &mut Criterion) {
    if std::env::var("GEARBOX_BENCH_REDUCE").as_deref() == Ok("0") {
        return;
    }
    let mut g = c.benchmark_group("reduce");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (shape, dims) in [
        ("tall", [1_000_000, 64]),
        ("square", [4000, 4000]),
        ("wide", [64, 1_000_000]),
    ] {
        for (dtype, name) in [(DType::F64, "f64"), (DType::F32, "f32")] {
            let (x, _) = inputs(dims, dtype);
            let b = x.gt_scalar(0.0).expect("x > 0");
            b.eval().expect("bool input");
            for (case, work) in REDUCE_CASES {
                g.bench_function(format!("{name}/{shape}/{case}"), |bench| {
                    bench.iter(|| work(&x, &b).and_then(|r| r.eval()).expect(case))
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, matmul, elementwise_chain, column_means, reductions);
criterion_main!(benches);
