//! The running product of the GPU scans (`cumprod`): the rule every
//! backend's scan kernels implement, in their own language, so that no
//! prefix overflows or underflows on the way, as on the CPU
//! ([`crate::ops::product`]); and [`Running`], a host model of exactly
//! that arithmetic, which the unit tests hold against the CPU.
//!
//! # The representation
//!
//! A running product is a pair `(m, e)` standing for `m · S^e`: the
//! representation of the `prod` reduction's compound accumulator
//! (`gearbox-codegen`'s `compound.rs`, kind `Scaled`), with the same unit
//! `S`: `2^400` when the accumulator is double ([`Accumulation::Double`]),
//! `2^60` when it is float ([`Accumulation::Compensated`]). `m` is zero,
//! infinite or NaN (then `e` is 0 and plays no part), or `|m|` is within
//! `[1/S, S]`.
//!
//! # The rule
//!
//! - `rescale(m, e)`: zero, infinite and NaN `m` give `(m, 0)`; `|m| > S`
//!   gives `(m / S, e + 1)`; `|m| < 1/S` gives `(m · S, e - 1)`; else
//!   `(m, e)`. Scaling by `S` is exact, and one step brings the product of
//!   two in-range mantissas (within `[1/S², S²]`) back into range.
//! - `lift(x) = rescale(rescale(x, 0))`: two steps, because one value may
//!   lie two units out (`1e300` is about `2^997`; a float's `2^127` is more
//!   than `2^60 · 2^60`); two reach every finite value of the dtype.
//! - `join(a, b) = rescale(a.m · b.m, a.e + b.e)`: associative up to the
//!   rounding of the multiplication, so the kernels may group factors as
//!   their pieces and trees do. Zeros stay zero (their exponent resets),
//!   `Inf · 0` is NaN and NaN propagates, as in a plain product; the sign
//!   of every result is the exact product's.
//! - `value(a)`: `m` when zero or not finite; `m · ∞` (signed infinity)
//!   for `e > 3`; `m · 0` (signed zero) for `e < -3`; else `m` multiplied
//!   by `S` (or `1/S`) `|e|` times. Only the last multiplication can
//!   round (the ones before stay in the normal range, or the result is
//!   below half the smallest subnormal anyway), so the value is `m · S^e`
//!   rounded once, as the CPU's [`crate::ops::product`] rounds.
//!
//! # What that gives
//!
//! Every multiplication of mantissas rounds as the CPU's does for the same
//! two operands (both are the true products scaled by powers of two, in
//! the normal range). So a lane scanned one factor after the other (the
//! scan kernels' pieces, when a lane is one piece) has the CPU's bits; the
//! combination of pieces' totals and trees within tiles reassociates the
//! product, which moves it by at most about `k` roundings of the
//! accumulator after `k` factors ([`tolerance`]). f32 results go through
//! the double value (rounded once more, as on the CPU), except with the
//! float accumulator, whose products round in f32 throughout.

use crate::dtype::DType;
use crate::runtime::scan_plan::Accumulation;

/// `log2` of the unit `S` of the running product kept with `acc`: 400 in
/// double, 60 in float (those of the `prod` reduction's accumulator).
pub fn unit_log2(acc: Accumulation) -> i32 {
    match acc {
        Accumulation::Double => 400,
        Accumulation::Compensated => 60,
    }
}

/// The relative bound within which a device's running product of `k`
/// factors (`k >= 1`), kept with `acc` and written as `out`, lies from the
/// CPU's: each side is within `k - 1` roundings of the accumulator of the
/// exact product (in whatever grouping), and each rounds that once more
/// into `out` (twice for f32 results of a double accumulator), so
/// `2 (k + 1) u_acc + 2 u_out` with `u` the unit roundoff of each.
pub fn tolerance(k: usize, acc: Accumulation, out: DType) -> f64 {
    let u_acc = match acc {
        Accumulation::Double => f64::EPSILON / 2.0,
        Accumulation::Compensated => f32::EPSILON as f64 / 2.0,
    };
    let u_out = if out == DType::F32 {
        f32::EPSILON as f64 / 2.0
    } else {
        f64::EPSILON / 2.0
    };
    2.0 * (k as f64 + 1.0) * u_acc + 2.0 * u_out
}

/// A host model of the kernels' running product in double
/// ([`Accumulation::Double`]): the rule of the module docs, step for step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Running {
    /// The mantissa.
    pub m: f64,
    /// The exponent, in units of `2^400`.
    pub e: i64,
}

/// `2^400`, the double accumulator's unit.
const S: f64 = f64::from_bits((1023 + 400) << 52);
/// `2^-400`.
const INV: f64 = f64::from_bits((1023 - 400) << 52);

impl Running {
    /// The empty product.
    pub const ONE: Running = Running { m: 1.0, e: 0 };

    fn rescale(m: f64, e: i64) -> Running {
        if m == 0.0 || !m.is_finite() {
            Running { m, e: 0 }
        } else if m.abs() > S {
            Running {
                m: m * INV,
                e: e + 1,
            }
        } else if m.abs() < INV {
            Running { m: m * S, e: e - 1 }
        } else {
            Running { m, e }
        }
    }

    /// The product of one factor.
    pub fn lift(x: f64) -> Running {
        let r = Running::rescale(x, 0);
        Running::rescale(r.m, r.e)
    }

    /// `self · b`.
    pub fn join(self, b: Running) -> Running {
        Running::rescale(self.m * b.m, self.e.saturating_add(b.e))
    }

    /// The product, rounded once to f64.
    pub fn value(self) -> f64 {
        if self.e > 3 {
            return self.m * f64::INFINITY;
        }
        if self.e < -3 {
            return self.m * 0.0;
        }
        let mut x = self.m;
        for _ in 0..self.e.max(0) {
            x *= S;
        }
        for _ in 0..(-self.e).max(0) {
            x *= INV;
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::product::Scaled;

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// Factors of every kind: ordinary ones, huge and tiny ones (the
    /// running product leaves the range and comes back), subnormals,
    /// zeros, infinities, NaN, both signs.
    fn factors(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u, v) = (next(), next());
                let sign = if v < 0.5 { -1.0 } else { 1.0 };
                match (u * 100.0) as u32 {
                    0 => 0.0 * sign,
                    1 => f64::INFINITY * sign,
                    2 => f64::NAN,
                    3 => 5e-324 * sign,
                    4..=40 => sign * (v * 2046.0 - 1023.0).exp2() * (1.0 + u),
                    _ => sign * (v * 16.0 - 8.0).exp2() * (1.0 + u),
                }
            })
            .collect()
    }

    #[test]
    fn one_factor_at_a_time_has_the_cpu_bits() {
        for seed in 1..40 {
            let xs = factors(500, seed);
            let mut cpu = Scaled::ONE;
            let mut dev = Running::ONE;
            for (k, &x) in xs.iter().enumerate() {
                cpu = cpu.times(Scaled::of(x));
                dev = dev.join(Running::lift(x));
                assert!(
                    same(dev.value(), cpu.value()),
                    "seed {seed} at {k}: {} vs {}",
                    dev.value(),
                    cpu.value()
                );
            }
        }
    }

    #[test]
    fn lifts_are_in_range_and_exact() {
        for x in [
            f64::MAX,
            -f64::MAX,
            1e300,
            5e-324,
            -5e-324,
            f64::MIN_POSITIVE,
            1.0,
            S * 2.0,
            INV / 2.0,
        ] {
            let r = Running::lift(x);
            assert!((INV..=S).contains(&r.m.abs()), "{x}: {r:?}");
            assert_eq!(r.value(), x);
        }
        assert_eq!(Running::lift(-0.0).value().to_bits(), (-0.0f64).to_bits());
        assert!(Running::lift(f64::NAN).value().is_nan());
    }

    #[test]
    fn grouped_products_stay_within_the_tolerance() {
        // Pairs of halves (a tree of two levels) against the sequence.
        let xs: Vec<f64> = factors(4000, 5)
            .into_iter()
            .filter(|x| x.is_finite() && *x != 0.0 && x.abs() > 1e-300)
            .collect();
        let k = xs.len();
        let seq = xs
            .iter()
            .fold(Running::ONE, |a, &x| a.join(Running::lift(x)));
        let half = |s: &[f64]| {
            s.iter()
                .fold(Running::ONE, |a, &x| a.join(Running::lift(x)))
        };
        let tree = half(&xs[..k / 2]).join(half(&xs[k / 2..]));
        // Compare the mantissas at the same exponent.
        assert_eq!(seq.e, tree.e);
        let rel = (seq.m - tree.m).abs() / seq.m.abs();
        assert!(
            rel <= tolerance(k, Accumulation::Double, DType::F64),
            "{rel}"
        );
    }

    #[test]
    fn special_values_follow_a_plain_product() {
        let prod = |xs: &[f64]| {
            xs.iter()
                .fold(Running::ONE, |a, &x| a.join(Running::lift(x)))
                .value()
        };
        let cpu = |xs: &[f64]| {
            xs.iter()
                .fold(Scaled::ONE, |a, &x| a.times(Scaled::of(x)))
                .value()
        };
        assert_eq!(prod(&[1e300, 1e300, 1e-300]), cpu(&[1e300, 1e300, 1e-300]));
        assert!((prod(&[1e300, 1e300, 1e-300]) / 1e300 - 1.0).abs() < 1e-15);
        assert_eq!(prod(&[1e300, 1e300]), f64::INFINITY);
        assert_eq!(prod(&[1e300, 1e300, 0.0]).to_bits(), 0);
        assert_eq!(prod(&[1e300, -1e300, 0.0]).to_bits(), (-0.0f64).to_bits());
        assert!(prod(&[f64::INFINITY, 0.0]).is_nan());
        // An infinity after tiny factors stays infinite (its exponent is
        // not the tiny factors').
        assert_eq!(
            prod(
                &[1e-300; 6]
                    .iter()
                    .chain(&[-f64::INFINITY])
                    .copied()
                    .collect::<Vec<_>>()
            ),
            -f64::INFINITY
        );
        assert_eq!(
            prod(&[1e-300, 1e-300, 1e300]),
            cpu(&[1e-300, 1e-300, 1e300])
        );
        assert_eq!(prod(&[-1e-300, 1e-300]).to_bits(), (-0.0f64).to_bits());
        assert_eq!(unit_log2(Accumulation::Double), 400);
        assert_eq!(S, 2f64.powi(unit_log2(Accumulation::Double)));
    }
}
