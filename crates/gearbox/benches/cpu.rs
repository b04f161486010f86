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
use gearbox::runtime::bench::REDUCE_CASES;
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
