//! Random arrays: Philox known answers, reproducibility, prefix and thread-count
//! independence, and statistical sanity of `rand` and `randn`.

use gearbox_core::random::{normal_at, philox4x32_10, uniform_at};
use gearbox_core::{Array, Shape};

const N: usize = 1_000_000;

/// Kolmogorov–Smirnov critical value of `sqrt(n) * D` at level 1e-3:
/// `sqrt(-ln(α / 2) / 2)` for α = 1e-3 (asymptotic, accurate for n = 10^6).
const KS_CRIT_1E3: f64 = 1.9495;

fn values(a: Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// `erf(x)` to about 1e-15 absolute: for |x| <= 6 the all-positive series
/// `erf(x) = 2/√π e^{-x²} Σ_n 2^n x^{2n+1} / (1·3·…·(2n+1))` (no cancellation),
/// beyond that ±1 (the remainder is below 2e-17).
fn erf(x: f64) -> f64 {
    let a = x.abs();
    if a > 6.0 {
        return x.signum();
    }
    let mut term = a;
    let mut sum = a;
    let mut n = 0.0;
    while term > 1e-17 * sum {
        n += 1.0;
        term *= 2.0 * a * a / (2.0 * n + 1.0);
        sum += term;
    }
    let v = 2.0 / std::f64::consts::PI.sqrt() * (-a * a).exp() * sum;
    v.min(1.0).copysign(x)
}

/// The standard normal CDF.
fn phi(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

/// `sqrt(n) * sup |F_n - F|` of a sample against the continuous CDF `cdf`.
fn ks_statistic(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in xs.iter().enumerate() {
        let f = cdf(x);
        d = d.max((i as f64 + 1.0) / n - f).max(f - i as f64 / n);
    }
    d * n.sqrt()
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

#[test]
fn erf_reference_values() {
    // erf(0.5), erf(1), erf(2) (Abramowitz & Stegun, table 7.1) and Φ(1.959964) = 0.975.
    assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-15);
    assert!((erf(1.0) - 0.842_700_792_949_714_9).abs() < 1e-15);
    assert!((erf(2.0) - 0.995_322_265_018_952_7).abs() < 1e-15);
    assert!((erf(-1.0) + 0.842_700_792_949_714_9).abs() < 1e-15);
    assert!((phi(1.959_963_984_540_054) - 0.975).abs() < 1e-14);
    assert!((phi(0.0) - 0.5).abs() < 1e-16);
    assert!(phi(-8.0) < 1e-15 && phi(8.0) > 1.0 - 1e-15);
}

#[test]
fn ks_statistic_detects_a_wrong_distribution() {
    // Guards the test itself: a visibly shifted sample must fail.
    let z: Vec<f64> = values(Array::randn([20_000], 5).unwrap());
    let shifted: Vec<f64> = z.iter().map(|x| x + 0.1).collect();
    assert!(ks_statistic(z, phi) < KS_CRIT_1E3);
    assert!(ks_statistic(shifted, phi) > KS_CRIT_1E3);
}

#[test]
fn philox_known_answers_through_the_public_api() {
    // Random123 examples/kat_vectors, philox4x32 10.
    assert_eq!(
        philox4x32_10([0; 4], [0; 2]),
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    );
    assert_eq!(
        philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    );
    assert_eq!(
        philox4x32_10(
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0]
        ),
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
    );
}

#[test]
fn element_zero_of_seed_zero_follows_the_documented_formula() {
    // counter 0, key 0 is the first KAT vector: x0 = 0x6627e8d5, x1 = 0xe169c58d.
    let bits = (0x6627e8d5_u64 << 21) ^ (0xe169c58d_u64 >> 11);
    let want = bits as f64 / 2f64.powi(53);
    assert_eq!(values(Array::rand([1], 0).unwrap()), vec![want]);
}

#[test]
fn same_seed_same_values_and_different_seeds_differ() {
    let makers: [fn(u64) -> Array; 2] = [
        |seed| Array::rand([50, 40], seed).unwrap(),
        |seed| Array::randn([50, 40], seed).unwrap(),
    ];
    for make in makers {
        let a = values(make(123));
        let b = values(make(123));
        let c = values(make(124));
        assert_eq!(a, b);
        let same = a.iter().zip(&c).filter(|(x, y)| x == y).count();
        assert_eq!(same, 0, "seeds 123 and 124 share {same} values");
    }
    // rand and randn with one seed use different streams.
    let u = values(Array::rand([1000], 9).unwrap());
    let z = values(Array::randn([1000], 9).unwrap());
    let shared = u.iter().zip(&z).filter(|(a, b)| a == b).count();
    assert_eq!(shared, 0);
}

#[test]
fn prefix_and_shape_stability() {
    for seed in [0, 1, u64::MAX, 0x0123_4567_89ab_cdef] {
        let short = values(Array::rand([100], seed).unwrap());
        let long = values(Array::rand([5000], seed).unwrap());
        assert_eq!(short[..], long[..100]);
        let zs = values(Array::randn([37], seed).unwrap());
        let zl = values(Array::randn([4096], seed).unwrap());
        assert_eq!(zs[..], zl[..37]);
        // Column-major linear index decides the value, not the shape.
        assert_eq!(
            values(Array::rand([6, 7, 2], seed).unwrap()),
            long[..84].to_vec()
        );
        let scalar = Array::rand(Shape::scalar(), seed).unwrap();
        assert_eq!(scalar.item().unwrap(), uniform_at(seed, 0));
    }
}

#[test]
fn values_do_not_depend_on_the_thread_count() {
    let n = 200_000; // several parallel chunks
    let serial: Vec<f64> = (0..n as u64).map(|i| uniform_at(77, i)).collect();
    let serial_z: Vec<f64> = (0..n as u64).map(|i| normal_at(77, i)).collect();
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (u, z) = pool.install(|| {
            (
                values(Array::rand([n], 77).unwrap()),
                values(Array::randn([n], 77).unwrap()),
            )
        });
        assert_eq!(u, serial, "{threads} thread(s)");
        assert_eq!(z, serial_z, "{threads} thread(s)");
    }
}

#[test]
fn rand_is_lazy_and_empty_shapes_work() {
    let r = Array::rand([3, 3], 1).unwrap();
    assert!(!r.is_evaluated());
    let op = r.op().unwrap();
    assert_eq!(op.name(), "rand");
    assert!(r.inputs().is_empty());
    assert_eq!(Array::randn([2], 1).unwrap().op().unwrap().name(), "randn");
    assert!(values(Array::rand([0, 5], 1).unwrap()).is_empty());
    assert!(values(Array::randn([0], 1).unwrap()).is_empty());
}

#[test]
fn rand_statistics() {
    for seed in [2024, 0xdead_beef] {
        let u = values(Array::rand([N], seed).unwrap());
        assert!(u.iter().all(|x| (0.0..1.0).contains(x)));
        let (mean, var) = mean_var(&u);
        // Standard errors: 2.9e-4 for the mean, 7.5e-5 for the variance.
        assert!((mean - 0.5).abs() < 2e-3, "mean {mean}");
        assert!((var - 1.0 / 12.0).abs() < 5e-4, "var {var}");
        // Each tenth of [0, 1) holds 10% ± 0.03% (sd); allow 0.2%.
        let mut bins = [0usize; 10];
        for &x in &u {
            bins[(x * 10.0) as usize] += 1;
        }
        assert!(bins.iter().all(|&b| b.abs_diff(N / 10) < 2000), "{bins:?}");
        let ks = ks_statistic(u, |x| x);
        assert!(ks < KS_CRIT_1E3, "KS statistic {ks}");
    }
}

#[test]
fn randn_statistics() {
    for seed in [2024, 0xdead_beef] {
        let z = values(Array::randn([N], seed).unwrap());
        assert!(z.iter().all(|x| x.is_finite() && x.abs() < 8.6));
        let (mean, var) = mean_var(&z);
        // Standard errors: 1e-3 for the mean, 1.4e-3 for the variance.
        assert!(mean.abs() < 6e-3, "mean {mean}");
        assert!((var - 1.0).abs() < 8e-3, "var {var}");
        // E z^4 = 3 (sd of the estimate 0.0098); E z^3 = 0 (sd 0.0024).
        let m4 = z.iter().map(|x| x.powi(4)).sum::<f64>() / N as f64;
        let m3 = z.iter().map(|x| x.powi(3)).sum::<f64>() / N as f64;
        assert!((m4 - 3.0).abs() < 0.06, "fourth moment {m4}");
        assert!(m3.abs() < 0.015, "third moment {m3}");
        // P(|z| > 3) = 0.0027: 2700 ± 52 of 10^6.
        let tails = z.iter().filter(|x| x.abs() > 3.0).count();
        assert!((2400..3000).contains(&tails), "{tails} values beyond 3 sd");
        let ks = ks_statistic(z, phi);
        assert!(ks < KS_CRIT_1E3, "KS statistic {ks}");
    }
}
