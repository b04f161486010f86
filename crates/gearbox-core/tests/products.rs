//! `prod` and `cumprod` (`ops/product.rs`): partial products never overflow
//! or underflow, as R's long double accumulator (and beyond its range), so a
//! zero factor gives a zero of the exact product's sign and an actual
//! infinity times zero is NaN; fused and op-by-op results agree. Expected
//! values come from exact reasoning: factors `±o · 2^k` with small odd `o`,
//! whose products are exact in float64.

mod common;

use std::sync::Mutex;

use common::{fused_then_op_by_op, TestRng};
use gearbox_core::fusion::cpu::TILE;
use gearbox_core::{Array, DType, Result};

static LOCK: Mutex<()> = Mutex::new(());

/// The values of `build()` with fusion on, then op by op.
fn both(build: impl Fn() -> Result<Array>) -> [Vec<f64>; 2] {
    fused_then_op_by_op(&LOCK, build, |a| a.to_f64_vec()).map(Result::unwrap)
}

/// Bitwise equality (any NaN matches any NaN).
fn same_bits(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "{what}[{i}]: got {g:e}, want {w:e}"
        );
    }
}

fn vector(v: &[f64]) -> Array {
    Array::from_vec([v.len()], v.to_vec()).unwrap()
}

/// `prod(v)` fused (`(v * 1).prod()`, one kernel) and op by op (`v.prod()`
/// with fusion off): both must be `want`, bit for bit.
fn check_prod(v: &[f64], want: f64) {
    let x = vector(v);
    let [fused, _] = both(|| (&x * 1.0)?.prod());
    let [_, unfused] = both(|| x.prod());
    same_bits(&fused, &[want], &format!("fused prod of {v:?}"));
    same_bits(&unfused, &[want], &format!("prod of {v:?}"));
}

#[test]
fn the_cases_of_the_issue() {
    check_prod(&[1e300, 1e300, 0.0], 0.0); // R: 0
    check_prod(&[1e300, -1e300, 0.0], -0.0); // the exact product's sign
    check_prod(&[0.0, 1e300, 1e300], 0.0);
    check_prod(&[f64::INFINITY, 0.0], f64::NAN); // R: NaN
    check_prod(&[0.0, 2.0, f64::NEG_INFINITY], f64::NAN);
    check_prod(&[1e300, 1e300], f64::INFINITY);
    check_prod(&[-1e300, 1e300, 1.0], f64::NEG_INFINITY);
    check_prod(&[1e-300, -1e-300], -0.0);
    check_prod(&[1e300, f64::NAN, 0.0], f64::NAN);
    check_prod(&[], 1.0);
    // 2^-600 · 2^-600 · 2^700 · 2^500 = 1: underflow on the way, then back.
    let p = |k: i32| 2f64.powi(k);
    check_prod(&[p(-600), p(-600), p(700), p(500)], 1.0);
    // R: prod(c(1e-300, 1e-300, 1e300, 1e300)) is 1 to rounding.
    let [f, u] = both(|| vector(&[1e-300, 1e-300, 1e300, 1e300]).prod());
    assert!(
        (f[0] - 1.0).abs() < 1e-15 && (u[0] - 1.0).abs() < 1e-15,
        "{f:?} {u:?}"
    );
    // f32 and i64 data: the product of the values, rounded once.
    let f32s = vector(&[3e38, 3e38, 0.0]).astype(DType::F32).unwrap();
    let [f, u] = both(|| f32s.prod());
    same_bits(&f, &[0.0], "f32 fused");
    same_bits(&u, &[0.0], "f32");
    let i = Array::from_vec([3], vec![i64::MAX, i64::MAX, 0]).unwrap();
    let [f, u] = both(|| i.prod());
    same_bits(&f, &[0.0], "i64 fused");
    same_bits(&u, &[0.0], "i64");
}

/// A factor `±o · 2^k` (`o` in 1, 3, 5, 7), with `o`, `k` and the sign.
fn factor(rng: &mut TestRng, kmax: i64) -> (f64, u64, i64, bool) {
    let o = [1u64, 3, 5, 7][(rng.next_u64() % 4) as usize];
    let k = (rng.next_u64() % (2 * kmax as u64 + 1)) as i64 - kmax;
    let neg = rng.next_u64().is_multiple_of(2);
    let v = o as f64 * 2f64.powi(k as i32);
    (if neg { -v } else { v }, o, k, neg)
}

/// The exact product `±o · 2^k` as a float64, when it is a normal number or
/// clearly out of range (`None` in the subnormal band, which this test does
/// not classify).
fn exact(o: u128, k: i64, neg: bool) -> Option<f64> {
    let bits = 128 - o.leading_zeros() as i64; // o < 2^bits
    let top = k + bits - 1; // the result is in [2^top, 2^(top + 1))
    let mag = if top >= 1024 {
        f64::INFINITY
    } else if top < -1100 {
        0.0
    } else if top >= -1022 {
        // o < 2^53 and 2^k split in two exact steps keep every value normal.
        (o as f64) * 2f64.powi((k / 2) as i32) * 2f64.powi((k - k / 2) as i32)
    } else {
        return None;
    };
    Some(if neg { -mag } else { mag })
}

#[test]
fn random_products_with_overflowing_partials_are_exact() {
    let mut checked = 0;
    for seed in 0..400u64 {
        let mut rng = TestRng::new(seed);
        let n = 2 + (rng.next_u64() % 16) as usize; // at most 17 odd factors: 7^17 < 2^53
        let mut v = Vec::new();
        let (mut o, mut k, mut neg) = (1u128, 0i64, false);
        for _ in 0..n {
            let (x, fo, fk, fneg) = factor(&mut rng, 700);
            v.push(x);
            (o, k, neg) = (o * fo as u128, k + fk, neg ^ fneg);
        }
        if seed % 2 == 0 {
            // Bring the total back near 1 with powers of two: the partials
            // overflowed or underflowed on the way, the result is normal.
            let target = (rng.next_u64() % 41) as i64 - 20;
            while k != target {
                let step = (target - k).clamp(-900, 900);
                v.push(2f64.powi(step as i32));
                k += step;
            }
        }
        let n = v.len();
        let Some(want) = exact(o, k, neg) else {
            continue;
        };
        check_prod(&v, want);
        // A zero among the factors: a zero of the exact product's sign; an
        // infinity among them too: NaN.
        let at = (rng.next_u64() % n as u64) as usize;
        let mut z = v.clone();
        z.insert(at, if seed % 3 == 0 { -0.0 } else { 0.0 });
        let zneg = neg ^ (seed % 3 == 0);
        check_prod(&z, if zneg { -0.0 } else { 0.0 });
        z.insert(0, f64::INFINITY);
        check_prod(&z, f64::NAN);
        checked += 1;
    }
    assert!(checked > 300, "{checked} cases classified");
}

#[test]
fn prod_along_an_axis_and_over_long_lanes() {
    // Columns of a (TILE + 3) x 3 matrix of powers of two whose partial
    // products climb to 2^25650 (column 0) or fall to 2^-25650 (column 1)
    // and come back to 1; column 2 climbs, meets a zero, and is 0.
    let m = TILE + 3;
    let mut v = Vec::with_capacity(3 * m);
    for step in [50, -50, 50] {
        let mut k = 0;
        for r in 0..m {
            let e = match r {
                _ if r + 1 == m => -k,
                _ if r < m / 2 => step,
                _ => -step,
            };
            k += e;
            let zero = step == 50 && v.len() >= 2 * m && r == m / 2;
            v.push(if zero { 0.0 } else { 2f64.powi(e) });
        }
    }
    let x = Array::from_vec([m, 3], v).unwrap();
    let [fused, _] = both(|| (&x * 1.0)?.prod_axis(0));
    let [_, unfused] = both(|| x.prod_axis(0));
    same_bits(&fused, &[1.0, 1.0, 0.0], "fused prod_axis");
    same_bits(&unfused, &[1.0, 1.0, 0.0], "prod_axis");
    let [fused, _] = both(|| (&x * 1.0)?.prod_axis(1));
    let [_, unfused] = both(|| x.prod_axis(1));
    assert_eq!(fused, unfused, "rows");
}

#[test]
fn cumprod_rounds_each_running_product_once() {
    // R (long double): cumprod(c(1e300, 1e300, 1e-300, 0)) is 1e300 Inf 1e300 0.
    let x = vector(&[1e300, 1e300, 1e-300, 0.0]);
    let [got, _] = both(|| x.cumprod());
    assert_eq!(got[0], 1e300);
    assert_eq!(got[1], f64::INFINITY);
    assert!((got[2] / 1e300 - 1.0).abs() < 1e-15, "{got:?}");
    same_bits(&got[3..], &[0.0], "cumprod after a zero");
    // Exact running products along an axis: powers of two that overflow
    // and come back.
    let p = |k: i32| 2f64.powi(k);
    let m = Array::from_vec(
        [3, 2],
        vec![p(1000), p(1000), p(-1000), -p(-900), p(-900), p(900)],
    )
    .unwrap();
    let [got, _] = both(|| m.cumprod_axis(0));
    same_bits(
        &got,
        &[p(1000), f64::INFINITY, p(1000), -p(-900), -0.0, -p(-900)],
        "cumprod_axis",
    );
}

/// A matrix (column-major, `m x n`) of factors `±2^k` whose products along
/// `axis` climb far above the float64 range and fall back (or fall below
/// it and climb back), with some lanes holding a zero, an infinity, both,
/// or a NaN; and each lane's exact product. Powers of two multiply
/// exactly, so every order of multiplication gives that product where
/// partial products neither overflow nor underflow; the accumulator's
/// unbounded exponent must give it whatever the partials do.
fn power_matrix(
    (m, n): (usize, usize),
    axis: usize,
    steps: &[i32],
    seed: u64,
) -> (Vec<f64>, Vec<f64>) {
    let mut rng = TestRng::new(seed);
    let (lanes, len) = if axis == 0 { (n, m) } else { (m, n) };
    let at = |lane: usize, k: usize| {
        if axis == 0 {
            k + m * lane
        } else {
            lane + m * k
        }
    };
    let mut x = vec![0.0; m * n];
    let mut want = vec![0.0; lanes];
    for lane in 0..lanes {
        // Half the lane climbs by `step` per factor, half comes back, then
        // a small remainder: the exact exponent is `rest`.
        let step = steps[lane % steps.len()];
        let rest = (rng.next_u64() % 41) as i32 - 20;
        let mut k_total = 0;
        let mut neg = false;
        for k in 0..len {
            let e = if k + 1 == len {
                rest - k_total
            } else if k < len / 2 {
                step
            } else {
                -step
            };
            let e = e.clamp(-1000, 1000);
            k_total += e;
            let sign = rng.next_u64().is_multiple_of(2);
            neg ^= sign;
            x[at(lane, k)] = if sign { -2f64.powi(e) } else { 2f64.powi(e) };
        }
        let mag = 2f64.powi(k_total);
        let mut w = if neg { -mag } else { mag };
        // Specials in some lanes: a zero (a zero of the product's sign),
        // an infinity (an infinity of its sign), both (NaN), a NaN.
        let spot = (rng.next_u64() % len as u64) as usize;
        let other = (spot + len / 2) % len;
        match lane % 7 {
            3 => {
                x[at(lane, spot)] = if x[at(lane, spot)] < 0.0 { -0.0 } else { 0.0 };
                w = if neg { -0.0 } else { 0.0 };
            }
            4 if len > 1 => {
                x[at(lane, spot)] = x[at(lane, spot)].signum() * f64::INFINITY;
                w = if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                };
            }
            5 if len > 1 && spot != other => {
                x[at(lane, spot)] = f64::INFINITY;
                x[at(lane, other)] = 0.0;
                w = f64::NAN;
            }
            6 => {
                x[at(lane, spot)] = f64::NAN;
                w = f64::NAN;
            }
            _ => {}
        }
        // Only exponents the rest keeps in range are expected exactly.
        if k_total.abs() > 1000 {
            w = f64::NAN;
        }
        want[lane] = w;
    }
    (x, want)
}

#[test]
fn prod_along_either_axis_with_partials_out_of_range() {
    let shapes = [
        (1, 7),
        (7, 1),
        (63, 65),
        (65, 63),
        (1003, 9),
        (9, 1003),
        (3000, 20),
        (20, 3000),
        (5000, 64),
    ];
    for (s, &(m, n)) in shapes.iter().enumerate() {
        // Steps out of the plain range (factor by factor), and steps
        // within it only (plain products, normalized between blocks).
        for (axis, steps) in [0, 1]
            .into_iter()
            .flat_map(|a| [&[300, -300, 40, -40, 1][..], &[40, -40, 20, -1][..]].map(|s| (a, s)))
        {
            let seed = s as u64 * 4 + axis as u64 * 2 + steps.len() as u64;
            let (v, want) = power_matrix((m, n), axis, steps, seed);
            let x = Array::from_vec([m, n], v).unwrap();
            let what = format!("prod_axis({axis}) of {m} x {n}, steps {steps:?}");
            // The input reduced as it is, and a computed value (the fused
            // fold), fused and op by op.
            let [whole, unfused] = both(|| x.prod_axis(axis));
            let [computed, _] = both(|| (&x * 1.0)?.prod_axis(axis));
            for (got, how) in [
                (&whole, "whole"),
                (&unfused, "op by op"),
                (&computed, "computed"),
            ] {
                same_bits(got, &want, &format!("{what} ({how})"));
            }
        }
    }
}

#[test]
fn prod_along_either_axis_of_f32_rounds_the_exact_product_once() {
    // f32 factors (±2^k within f32's range): the exact product, rounded
    // once to f32 (an infinity above its range, zero far below it).
    for &(m, n) in &[(65, 63), (9, 1003), (3000, 20), (5000, 64)] {
        for axis in [0, 1] {
            let mut rng = TestRng::new((m * n + axis) as u64);
            let (lanes, len) = if axis == 0 { (n, m) } else { (m, n) };
            let mut v = vec![0.0; m * n];
            let mut want = vec![0.0f64; lanes];
            for (lane, w) in want.iter_mut().enumerate() {
                let step = [100, -100, 1][lane % 3];
                let (mut total, mut neg) = (0i32, false);
                for k in 0..len {
                    let e = if k < len / 2 { step } else { -step } + (lane % 3 == 2) as i32;
                    let e = e.clamp(-120, 120);
                    let sign = rng.next_u64().is_multiple_of(2);
                    (total, neg) = (total + e, neg ^ sign);
                    let at = if axis == 0 {
                        k + m * lane
                    } else {
                        lane + m * k
                    };
                    v[at] = if sign { -2f64.powi(e) } else { 2f64.powi(e) };
                }
                let mag = if total > 127 {
                    f64::INFINITY
                } else if total < -149 {
                    0.0
                } else {
                    2f64.powi(total)
                };
                *w = if neg { -mag } else { mag };
            }
            let x = Array::from_vec([m, n], v)
                .unwrap()
                .astype(DType::F32)
                .unwrap();
            let [fused, unfused] = both(|| x.prod_axis(axis));
            let what = format!("f32 prod_axis({axis}) of {m} x {n}");
            same_bits(&fused, &want, &what);
            same_bits(&unfused, &want, &format!("{what} op by op"));
        }
    }
}
