//! The fast reduction and scan kernels against simple references (one lane
//! at a time, read element by element): random nonzero values, NaN
//! placements, ties, signed zeros, empty lanes, layouts straddling the
//! blocks, tiles and parallel thresholds, and the same bits on one thread
//! and on four.

use super::lanes::reduce_lanes;
use super::scan::scan;
use super::{below, ReduceOp};
use crate::ops::product::{self, Scaled};

/// The documented summation order (`reduce/sums.rs`), written out simply.
fn pairwise(x: &[f64]) -> f64 {
    if x.len() <= 128 {
        let mut a = [0.0; 8];
        let whole = x.len() / 8 * 8;
        for (k, v) in x[..whole].iter().enumerate() {
            a[k % 8] += v;
        }
        let t = x[whole..].iter().fold(0.0, |s, v| s + v);
        let h = [a[0] + a[4], a[1] + a[5], a[2] + a[6], a[3] + a[7]];
        return ((h[0] + h[2]) + (h[1] + h[3])) + t;
    }
    let (l, r) = x.split_at(x.len() / 2);
    pairwise(l) + pairwise(r)
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let n = x.len() as f64;
    let m = pairwise(x) / n;
    if !m.is_finite() {
        return m;
    }
    let dev: Vec<f64> = x.iter().map(|v| v - m).collect();
    m + pairwise(&dev) / n
}

fn variance(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return f64::NAN;
    }
    let m = mean(x);
    let dev: Vec<f64> = x.iter().map(|v| v - m).collect();
    let sq: Vec<f64> = dev.iter().map(|d| d * d).collect();
    let n = x.len() as f64;
    (pairwise(&sq) - pairwise(&dev) * pairwise(&dev) / n) / (n - 1.0)
}

/// One lane, element by element (the semantics in the module docs).
fn reference(op: ReduceOp, x: &[f64]) -> f64 {
    use ReduceOp::*;
    let len = x.len();
    match op {
        Sum => pairwise(x),
        Prod => product::product(x.iter().copied()),
        Mean => mean(x),
        Var => variance(x),
        Sd => variance(x).sqrt(),
        Min | Max => {
            let mut best = x[0];
            for &v in &x[1..] {
                if v.is_nan() {
                    return v;
                }
                if (op == Min && below(v, best)) || (op == Max && below(best, v)) {
                    best = v;
                }
            }
            best
        }
        ArgMin | ArgMax => {
            let (mut best, mut arg) = (x[0], 0);
            if best.is_nan() {
                return 0.0;
            }
            for (i, &v) in x.iter().enumerate().skip(1) {
                if v.is_nan() {
                    return i as f64;
                }
                if (op == ArgMin && v < best) || (op == ArgMax && v > best) {
                    best = v;
                    arg = i;
                }
            }
            arg as f64
        }
        Any => (0..len).any(|i| x[i] != 0.0) as u8 as f64,
        All => (0..len).all(|i| x[i] != 0.0) as u8 as f64,
        LogSumExp if len == 0 => f64::NEG_INFINITY,
        LogSumExp => {
            let m = reference(Max, x);
            if !m.is_finite() {
                return m;
            }
            let shifted: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
            m + pairwise(&shifted).ln()
        }
    }
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Values of one kind: random nonzero, ties, signed zeros, NaNs sprinkled
/// (two payloads), or bools.
fn values(kind: usize, n: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng(seed);
    let nan2 = f64::from_bits(f64::NAN.to_bits() | 0x5);
    (0..n)
        .map(|_| {
            let u = r.next();
            match kind {
                0 => (u - 0.3) * 50.0 + 1e-3,
                1 => [-2.0, -1.0, 1.0, 2.0][(u * 4.0) as usize],
                2 => [-0.0, 0.0, -0.0, 1.5][(u * 4.0) as usize],
                3 if u < 0.002 => f64::NAN,
                3 if u < 0.004 => nan2,
                3 => (u - 0.5) * 3.0 + 1e-3,
                _ => (u < 0.9) as u8 as f64,
            }
        })
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

const LAYOUTS: &[(usize, usize, usize)] = &[
    (1, 0, 3),
    (4, 0, 2),
    (1, 1, 1),
    (1, 2, 5),
    (1, 3, 1),
    (1, 7, 9),
    (1, 129, 3),
    (1, 257, 200),
    (1, 1025, 2),
    (1, 40_000, 1),
    (1, 70_001, 1),
    (2, 9, 3),
    (3, 128, 2),
    (9, 255, 1),
    (64, 1_000, 1),
    (513, 129, 1),
    (600, 64, 2),
    (17, 2_049, 3),
    (1_100, 33, 1),
    (9, 20_000, 1),
    (3, 50_000, 2),
    (2_100, 20, 1),
];

#[test]
fn every_reduction_matches_its_reference_on_every_layout() {
    for &(inner, len, outer) in LAYOUTS {
        for kind in 0..5 {
            let x = values(
                kind,
                inner * len * outer,
                (inner * 31 + len * 7 + kind) as u64,
            );
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            for &op in ReduceOp::ALL {
                if len == 0 && op.needs_elements() {
                    continue;
                }
                if matches!(op, ReduceOp::Any | ReduceOp::All) != (kind == 4) {
                    continue;
                }
                let one = in_pool(1, || reduce_lanes(op, &x, inner, len, outer).unwrap());
                let four = in_pool(4, || reduce_lanes(op, &x, inner, len, outer).unwrap());
                let f32_four = in_pool(4, || reduce_lanes(op, &x32, inner, len, outer).unwrap());
                for o in 0..outer {
                    for i in 0..inner {
                        let at = |k: usize| i + inner * (k + len * o);
                        let lane: Vec<f64> = (0..len).map(|k| x[at(k)]).collect();
                        let lane32: Vec<f64> = (0..len).map(|k| x32[at(k)] as f64).collect();
                        let l = i + inner * o;
                        let (want, want32) = (reference(op, &lane), reference(op, &lane32));
                        let what = format!(
                            "{} ({inner}, {len}, {outer}) kind {kind} lane {l}",
                            op.name()
                        );
                        assert!(same(one[l], want), "{what}: {} != {want}", one[l]);
                        assert!(
                            same(four[l], one[l]),
                            "{what}: 4 threads {} != {}",
                            four[l],
                            one[l]
                        );
                        assert!(
                            same(f32_four[l], want32),
                            "{what} (f32): {} != {want32}",
                            f32_four[l]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn min_and_max_return_the_first_nan_and_order_signed_zeros() {
    let nan2 = f64::from_bits(f64::NAN.to_bits() | 0x5);
    for n in [3, 9, 1030, 70_000] {
        let mut x = vec![1.0; n];
        x[n / 3] = nan2;
        x[n - 1] = f64::NAN;
        let r = reduce_lanes(ReduceOp::Min, &x, 1, n, 1).unwrap();
        assert_eq!(r[0].to_bits(), nan2.to_bits());
        let r = reduce_lanes(ReduceOp::ArgMax, &x, 1, n, 1).unwrap();
        assert_eq!(r[0], (n / 3) as f64);
        let z: Vec<f64> = (0..n)
            .map(|k| if k % 2 == 0 { 0.0 } else { -0.0 })
            .collect();
        let min = reduce_lanes(ReduceOp::Min, &z, 1, n, 1).unwrap()[0];
        let max = reduce_lanes(ReduceOp::Max, &z, 1, n, 1).unwrap()[0];
        assert!(min == 0.0 && min.is_sign_negative() && max.is_sign_positive());
        // -0.0 ties +0.0 for the positions: the first zero.
        assert_eq!(reduce_lanes(ReduceOp::ArgMin, &z, 1, n, 1).unwrap()[0], 0.0);
        assert_eq!(reduce_lanes(ReduceOp::ArgMax, &z, 1, n, 1).unwrap()[0], 0.0);
    }
}

#[test]
fn scans_match_running_values_in_lane_order_on_any_thread_count() {
    for &(inner, len, outer) in LAYOUTS {
        let x = values(0, inner * len * outer, (inner + len + outer) as u64);
        let sums = |t| {
            in_pool(t, || {
                scan("cumsum", &x, (inner, len, outer), 0.0, |a, b| a + b, |a| a).unwrap()
            })
        };
        let prods = |t| {
            in_pool(t, || {
                let step = |p: Scaled, v: f64| p.times(Scaled::of(v));
                scan(
                    "cumprod",
                    &x,
                    (inner, len, outer),
                    Scaled::ONE,
                    step,
                    Scaled::value,
                )
                .unwrap()
            })
        };
        let (s1, s4, p1, p4) = (sums(1), sums(4), prods(1), prods(4));
        for o in 0..outer {
            for i in 0..inner {
                let (mut s, mut p) = (0.0, Scaled::ONE);
                for k in 0..len {
                    let at = i + inner * (k + len * o);
                    s += x[at];
                    p = p.times(Scaled::of(x[at]));
                    assert_eq!(
                        s1[at].to_bits(),
                        s.to_bits(),
                        "cumsum ({inner}, {len}, {outer}) at {at}"
                    );
                    assert_eq!(p1[at].to_bits(), p.value().to_bits(), "cumprod at {at}");
                }
            }
        }
        assert!(s1.iter().zip(&s4).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(p1.iter().zip(&p4).all(|(a, b)| same(*a, *b)));
    }
}
