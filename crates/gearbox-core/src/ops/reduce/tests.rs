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
            let shifted: Vec<f64> = x.iter().map(|v| crate::ops::vmath::exp(v - m)).collect();
            m + pairwise(&shifted).ln()
        }
    }
}

/// The reference of `op` over an f32 lane (widened): as [`reference`],
/// except that `logsumexp` takes its terms `e^(x - m)` in f32.
fn reference32(op: ReduceOp, x: &[f64]) -> f64 {
    if op != ReduceOp::LogSumExp || x.is_empty() {
        return reference(op, x);
    }
    let m = reference(ReduceOp::Max, x);
    if !m.is_finite() {
        return m;
    }
    let shifted: Vec<f64> = x
        .iter()
        .map(|v| crate::ops::vmath::single::exp(*v as f32 - m as f32) as f64)
        .collect();
    m + pairwise(&shifted).ln()
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
                        let (want, want32) = (reference(op, &lane), reference32(op, &lane32));
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
                        // f32 terms keep the f64 result within f32's
                        // precision of the exact one.
                        let exact32 = reference(op, &lane32);
                        assert!(
                            (want32 - exact32).abs() <= 1e-6 * exact32.abs().max(1.0)
                                || same(want32, exact32),
                            "{what} (f32): {want32} is not {exact32} to f32 precision"
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

/// Every op's value on every lane of `x` (an `(inner, len, outer)`
/// layout), in f64 and as f32, on one thread and on four, against the
/// reference.
fn check_layout(op: ReduceOp, x: &[f64], (inner, len, outer): (usize, usize, usize), what: &str) {
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let one = in_pool(1, || reduce_lanes(op, x, inner, len, outer).unwrap());
    let four = in_pool(4, || reduce_lanes(op, x, inner, len, outer).unwrap());
    let f32_two = in_pool(2, || reduce_lanes(op, &x32, inner, len, outer).unwrap());
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| i + inner * (k + len * o);
            let lane: Vec<f64> = (0..len).map(|k| x[at(k)]).collect();
            let lane32: Vec<f64> = (0..len).map(|k| x32[at(k)] as f64).collect();
            let l = i + inner * o;
            let (want, want32) = (reference(op, &lane), reference32(op, &lane32));
            let what = format!("{} {what} ({inner}, {len}, {outer}) lane {l}", op.name());
            assert!(same(one[l], want), "{what}: {} != {want}", one[l]);
            assert!(
                same(four[l], want),
                "{what}: 4 threads {} != {want}",
                four[l]
            );
            assert!(
                same(f32_two[l], want32),
                "{what} (f32): {} != {want32}",
                f32_two[l]
            );
        }
    }
}

/// Layouts of the odd lengths (1, 7, 63, 65, 1003) contiguous and strided,
/// narrow and wide, and long lanes that split into parallel pieces.
fn odd_layouts() -> Vec<(usize, usize, usize)> {
    let mut v = Vec::new();
    for len in [1, 7, 63, 65, 1003] {
        for (inner, outer) in [(1, 3), (1, 70), (7, 2), (65, 1), (1003, 1), (3000, 1)] {
            v.push((inner, len, outer));
        }
    }
    // Long lanes: parallel pieces, row chunks, tiles over every row.
    v.extend([
        (1, 100_003, 2),
        (3, 40_001, 1),
        (64, 3_000, 1),
        (5_000, 9, 1),
    ]);
    v
}

#[test]
fn extremes_keep_the_first_nan_and_the_first_extreme_on_odd_layouts() {
    for (n, &layout) in odd_layouts().iter().enumerate() {
        let size = layout.0 * layout.1 * layout.2;
        for kind in 0..4 {
            let x = values(kind, size, (n * 7 + kind) as u64 + 11);
            for op in [
                ReduceOp::Min,
                ReduceOp::Max,
                ReduceOp::ArgMin,
                ReduceOp::ArgMax,
            ] {
                check_layout(op, &x, layout, &format!("kind {kind}"));
            }
        }
    }
}

#[test]
fn extremes_of_long_lanes_across_pieces_and_chunks() {
    // One lane of 100,000 values (pieces of 32,768, chunks of 1,024): the
    // extreme twice, in different pieces (the first wins), then a NaN in
    // a later piece (it wins, whatever its payload), then a second NaN.
    let n = 100_000;
    let nan2 = f64::from_bits(f64::NAN.to_bits() | 0x5);
    for (lo, hi) in [
        (40_000, 70_000),
        (1_023, 1_024),
        (32_767, 32_768),
        (0, n - 1),
    ] {
        let mut x: Vec<f64> = values(0, n, 3);
        x[lo] = -1e9;
        x[hi] = -1e9;
        x[lo + 1] = 1e9;
        x[(hi + 1).min(n - 1)] = 1e9;
        for op in [
            ReduceOp::Min,
            ReduceOp::Max,
            ReduceOp::ArgMin,
            ReduceOp::ArgMax,
        ] {
            check_layout(op, &x, (1, n, 1), &format!("extremes at {lo}, {hi}"));
            // The same lane strided among three.
            let mut s = vec![0.5; 3 * n];
            (0..n).for_each(|k| s[3 * k + 1] = x[k]);
            check_layout(
                op,
                &s,
                (3, n, 1),
                &format!("strided extremes at {lo}, {hi}"),
            );
        }
        x[hi.max(lo + 2)] = nan2;
        x[n - 1] = f64::NAN;
        for op in [
            ReduceOp::Min,
            ReduceOp::Max,
            ReduceOp::ArgMin,
            ReduceOp::ArgMax,
        ] {
            check_layout(op, &x, (1, n, 1), &format!("NaN after {lo}"));
        }
    }
    // Extremes that are zeros: the winning zero (-0.0 for min, +0.0 for
    // max) wherever it sits, and the first zero for the positions.
    for len in [1, 7, 65, 1003, 40_000] {
        for at in [0, len / 2, len - 1] {
            let mut x: Vec<f64> = (0..len).map(|k| 1.0 + k as f64).collect();
            x[at] = -0.0;
            x[len / 3] = 0.0;
            for op in [ReduceOp::Min, ReduceOp::ArgMin] {
                check_layout(op, &x, (1, len, 1), "zeros");
                check_layout(op, &x, (len, 1, 1), "zeros across");
            }
            let neg: Vec<f64> = x.iter().map(|&v| if v == 0.0 { v } else { -v }).collect();
            for op in [ReduceOp::Max, ReduceOp::ArgMax] {
                check_layout(op, &neg, (1, len, 1), "zeros");
            }
        }
    }
}

#[test]
fn any_and_all_read_on_until_a_lane_is_decided() {
    // Lanes false everywhere but one place (true for `any`), or true
    // everywhere but one place (false for `all`): that place at the start,
    // either side of a look (256 values), at the end, or nowhere.
    for &(inner, len, outer) in &[
        (1, 1, 3),
        (1, 1003, 5),
        (1, 40_000, 2),
        (7, 65, 3),
        (64, 3_000, 1),
        (3_000, 63, 1),
        (5_000, 9, 2),
    ] {
        let size = inner * len * outer;
        for place in [Some(0), Some(255), Some(256), Some(len - 1), None] {
            for any in [true, false] {
                let op = if any { ReduceOp::Any } else { ReduceOp::All };
                let mut x = vec![if any { 0.0 } else { 1.0 }; size];
                if let Some(k) = place.filter(|&k| k < len) {
                    // Lane 0 and the last lane hold the odd one out.
                    x[k * inner] = if any { 1.0 } else { 0.0 };
                    x[size - 1 - (len - 1 - k) * inner] = if any { 1.0 } else { 0.0 };
                }
                check_layout(
                    op,
                    &x,
                    (inner, len, outer),
                    &format!("odd one at {place:?}"),
                );
            }
        }
        // Random bools, mostly one way.
        for p in [0.001, 0.5, 0.999] {
            let mut r = Rng(size as u64);
            let x: Vec<f64> = (0..size).map(|_| (r.next() < p) as u8 as f64).collect();
            for op in [ReduceOp::Any, ReduceOp::All] {
                check_layout(op, &x, (inner, len, outer), &format!("p = {p}"));
            }
        }
    }
}
