//! Products that neither overflow nor underflow on the way: the accumulator
//! of `prod` and `cumprod` on every CPU path (op by op and fused).
//!
//! # The rule
//!
//! A product is accumulated as `m · 2^e`, a float64 `m` and a separate
//! integer exponent `e`, so partial products have an unbounded exponent
//! range and only the final value is rounded into float64 (to ±Inf above
//! its range, to a subnormal or ±0 below it). This is what R gets from
//! accumulating in long double (`LDOUBLE`), and more: long double's
//! exponent stops near 1e±4932, this one does not. Consequences:
//!
//! - finite factors with an exact zero among them give a zero (R: `prod(c(1e300, 1e300, 0))`
//!   is 0; a float64 accumulator gives `Inf · 0 = NaN`);
//! - the sign of a zero or infinite result is the exact product's sign (the
//!   XOR of the factors' signs), so `prod([1e300, -1e300, 0])` is `-0.0`
//!   (R prints it as 0);
//! - an actual infinity among the factors stays: `Inf · 0 = NaN` (R:
//!   `prod(c(Inf, 0))` is NaN), and NaN propagates;
//! - where a float64 accumulator would neither overflow nor underflow, the
//!   result is bit for bit the float64 product in the same order: scaling
//!   by powers of two is exact, so every multiplication rounds as it would
//!   there.
//!
//! `cumprod` applies the same accumulator and rounds each running product
//! (R's `cumprod` also runs in long double).

/// `|m|` is kept in `[2^-LIMIT, 2^LIMIT]`, so the product of two such values
/// is a normal float64 (within `[2^-1022, 2^1022]`) and rounds like any.
const LIMIT: i32 = 511;

/// A product `m · 2^e`. `m` is zero, infinite or NaN (then `e` plays no
/// part), or `|m|` is within `[2^-511, 2^511]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scaled {
    m: f64,
    e: i64,
}

/// Whether `|x|` is within `[2^-LIMIT, 2^LIMIT]`.
#[inline(always)]
fn in_range(x: f64) -> bool {
    let a = x.abs();
    (f64::from_bits(((1023 - LIMIT) as u64) << 52)..=f64::from_bits(((1023 + LIMIT) as u64) << 52))
        .contains(&a)
}

/// `x = f · 2^k` with `|f|` in `[0.5, 1)`, for finite non-zero `x` (exact,
/// subnormals included).
fn frexp(x: f64) -> (f64, i64) {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    if field == 0 {
        // Subnormal: scale into the normal range first (exact).
        let (f, k) = frexp(x * f64::from_bits((1023 + 64) << 52));
        return (f, k - 64);
    }
    (
        f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52)),
        field - 1022,
    )
}

/// `2^k` for `k` in `[-1074, 1023]` (subnormal powers included).
fn pow2(k: i64) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// `f · 2^k` rounded once to float64, for `|f|` in `[0.5, 1)`.
fn ldexp(f: f64, k: i64) -> f64 {
    if k > 1024 {
        return f * f64::INFINITY;
    }
    if k >= -1021 {
        // A normal result: 2f is in [1, 2), so (2f) · 2^(k-1) is exact.
        return (f * 2.0) * pow2(k - 1);
    }
    // Below the normal range: one exact scaling into [2^-1022, 2^-1021),
    // then one rounding multiplication by a (possibly subnormal) power of two.
    let j = k + 1021;
    if j < -1074 {
        return f * 0.0;
    }
    (f * pow2(-1021)) * pow2(j)
}

impl Scaled {
    /// The empty product.
    pub(crate) const ONE: Scaled = Scaled { m: 1.0, e: 0 };

    /// `x` as a product of one factor.
    #[inline(always)]
    pub(crate) fn of(x: f64) -> Scaled {
        if in_range(x) || x == 0.0 || !x.is_finite() {
            Scaled { m: x, e: 0 }
        } else {
            let (m, e) = frexp(x);
            Scaled { m, e }
        }
    }

    /// `self · other`.
    #[inline(always)]
    pub(crate) fn times(self, other: Scaled) -> Scaled {
        let m = self.m * other.m;
        let e = self.e.saturating_add(other.e);
        if in_range(m) || m == 0.0 || !m.is_finite() {
            Scaled { m, e }
        } else {
            let (f, k) = frexp(m);
            Scaled {
                m: f,
                e: e.saturating_add(k),
            }
        }
    }

    /// The product rounded to float64.
    pub(crate) fn value(self) -> f64 {
        if self.m == 0.0 || !self.m.is_finite() {
            return self.m;
        }
        if self.e == 0 {
            // A normal m (every Scaled's m is in range, 0 or not finite).
            return self.m;
        }
        let (f, k) = frexp(self.m);
        ldexp(f, self.e.saturating_add(k))
    }

    /// `self` brought back into range (the invariant [`Scaled::times`]
    /// keeps after every factor).
    #[inline(always)]
    fn normalized(self) -> Scaled {
        if in_range(self.m) || self.m == 0.0 || !self.m.is_finite() {
            self
        } else {
            let (f, k) = frexp(self.m);
            Scaled {
                m: f,
                e: self.e.saturating_add(k),
            }
        }
    }
}

/// Factors of magnitude in `[2^-48, 2^48]` (not zero, not NaN): eight of
/// them times an accumulator in range (`[2^-511, 2^511]`) stay within
/// `[2^-895, 2^895]`, normal and finite, so they can be multiplied in plain
/// f64 and the accumulator normalized once after them. Every plain product
/// rounds exactly as the scaled one would (scaling by powers of two
/// commutes with rounding in the normal range), so the result has the bits
/// of folding [`Scaled::times`] one factor at a time.
#[inline(always)]
fn safe(x: f64) -> bool {
    let a = x.abs();
    (f64::from_bits((1023 - 48) << 52)..=f64::from_bits((1023 + 48) << 52)).contains(&a)
}

/// Folds `rounds` rounds of eight factors (`at(8q + j)` into `lanes[j]`)
/// as [`Scaled::times`] one at a time would, with the same bits: a round
/// whose factors are all plain `safe` values (exponent 0) multiplies the
/// lanes' mantissas in plain f64, and the lanes are normalized after at
/// most eight such rounds, or before a round that is not all safe (which
/// then goes factor by factor).
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
pub(crate) fn times_eights(lanes: &mut [Scaled; 8], rounds: usize, at: impl Fn(usize) -> Scaled) {
    let mut plain = 0;
    for q in 0..rounds {
        let f: [Scaled; 8] = std::array::from_fn(|j| at(8 * q + j));
        if f.iter().fold(true, |a, s| a & (s.e == 0) & safe(s.m)) {
            for j in 0..8 {
                lanes[j].m *= f[j].m;
            }
            plain += 1;
            if plain == 8 {
                lanes.iter_mut().for_each(|a| *a = a.normalized());
                plain = 0;
            }
        } else {
            if plain > 0 {
                lanes.iter_mut().for_each(|a| *a = a.normalized());
                plain = 0;
            }
            for j in 0..8 {
                lanes[j] = lanes[j].times(f[j]);
            }
        }
    }
    if plain > 0 {
        lanes.iter_mut().for_each(|a| *a = a.normalized());
    }
}

/// The product of up to eight `safe` values' worth of `xs` at a time
/// (the same bits as [`product`]).
pub(crate) fn product_of<T: crate::dtype::Element>(xs: &[T]) -> f64 {
    let mut p = Scaled::ONE;
    let mut chunks = xs.chunks_exact(8);
    for c in &mut chunks {
        let v: [f64; 8] = std::array::from_fn(|j| c[j].to_f64());
        if v.iter().fold(true, |a, &x| a & safe(x)) {
            let m = v.iter().fold(p.m, |m, &x| m * x);
            p = Scaled { m, e: p.e }.normalized();
        } else {
            p = v.iter().fold(p, |p, &x| p.times(Scaled::of(x)));
        }
    }
    chunks
        .remainder()
        .iter()
        .fold(p, |p, x| p.times(Scaled::of(x.to_f64())))
        .value()
}

/// Multiplies accumulator `acc[i]` by `rows[r][i]` for each row in order
/// (at most eight rows): plain multiplications when every factor is
/// `safe`, then one normalization; the same bits as [`Scaled::times`].
#[inline(always)]
pub(crate) fn times_rows<T: crate::dtype::Element>(acc: &mut [Scaled], rows: &[&[T]]) {
    debug_assert!(rows.len() <= 8);
    let plain = rows
        .iter()
        .all(|r| r.iter().fold(true, |a, x| a & safe(x.to_f64())));
    if plain {
        for r in rows {
            acc.iter_mut().zip(*r).for_each(|(a, x)| a.m *= x.to_f64());
        }
        acc.iter_mut().for_each(|a| *a = a.normalized());
    } else {
        for r in rows {
            acc.iter_mut()
                .zip(*r)
                .for_each(|(a, x)| *a = a.times(Scaled::of(x.to_f64())));
        }
    }
}

/// The product of `xs` (see the module docs), one factor at a time: the
/// reference the faster [`product_of`] and [`times_rows`] are tested against.
#[cfg(test)]
pub(crate) fn product(xs: impl Iterator<Item = f64>) -> f64 {
    xs.fold(Scaled::ONE, |p, x| p.times(Scaled::of(x))).value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldexp_rounds_once_into_subnormals() {
        let tiny = f64::from_bits(1); // 2^-1074
        assert_eq!(ldexp(0.5, -1073), tiny);
        assert_eq!(ldexp(0.75, -1073), 2.0 * tiny); // 1.5 ulps: ties to even
        assert_eq!(ldexp(0.5, -1074), 0.0); // exactly half: ties to even
        assert_eq!(ldexp(0.75, -1074), tiny); // above half
        assert_eq!(ldexp(-0.5, -5000).to_bits(), (-0.0f64).to_bits());
        assert_eq!(ldexp(0.5, 1024), 2f64.powi(1023));
        assert_eq!(ldexp(0.5, 1025), f64::INFINITY);
        assert_eq!(ldexp(-0.75, 3), -6.0);
        for x in [
            1.0,
            -3.5,
            1e300,
            1e-300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            let (f, k) = frexp(x);
            assert!((0.5..1.0).contains(&f.abs()), "{x}");
            assert_eq!(ldexp(f, k), x);
        }
    }

    /// The batched paths ([`product_of`], [`times_rows`], [`times_eights`])
    /// against one factor at a time, on factors that leave and re-enter the
    /// plain range (huge, tiny, subnormal, zero, infinite, NaN among them).
    #[test]
    fn batched_products_have_the_bits_of_one_factor_at_a_time() {
        let mut s = 7u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for kind in 0..4 {
            let xs: Vec<f64> = (0..3001)
                .map(|_| {
                    let u = next();
                    match kind {
                        0 => (u - 0.5) * 4.0 + 1e-3,
                        1 => (u * 700.0 - 350.0).exp2() * if u < 0.5 { -1.0 } else { 1.0 },
                        2 if u < 0.01 => {
                            [0.0, f64::INFINITY, f64::NAN, 5e-324][(u * 400.0) as usize % 4]
                        }
                        _ => 0.5 + u,
                    }
                })
                .collect();
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            for n in [0, 1, 7, 8, 63, 64, 65, 1000, 3001] {
                let want = product(xs[..n].iter().copied());
                assert!(
                    same(product_of(&xs[..n]), want),
                    "product_of kind {kind} n {n}"
                );
                // Eight lanes, value 8q + j into lane j.
                let whole = n / 8;
                let mut lanes = [Scaled::ONE; 8];
                times_eights(&mut lanes, whole, |k| Scaled::of(xs[k]));
                for j in 0..8 {
                    let want = product((0..whole).map(|q| xs[8 * q + j]));
                    assert!(
                        same(lanes[j].value(), want),
                        "times_eights kind {kind} n {n} lane {j}"
                    );
                }
                // Three lanes of rows.
                let rows: Vec<&[f64]> = xs[..n / 3 * 3].chunks(3).take(8).collect();
                let mut acc = [Scaled::ONE; 3];
                times_rows(&mut acc, &rows);
                for (i, a) in acc.iter().enumerate() {
                    let want = product(rows.iter().map(|r| r[i]));
                    assert!(
                        same(a.value(), want),
                        "times_rows kind {kind} n {n} lane {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn intermediate_products_never_overflow() {
        assert_eq!(product([1e300, 1e300, 0.0].into_iter()).to_bits(), 0);
        assert_eq!(
            product([1e300, -1e300, 0.0].into_iter()).to_bits(),
            (-0.0f64).to_bits()
        );
        assert!(product([f64::INFINITY, 0.0].into_iter()).is_nan());
        assert!(product([0.0, 1e300, f64::NEG_INFINITY].into_iter()).is_nan());
        assert_eq!(product([1e300, 1e300].into_iter()), f64::INFINITY);
        assert_eq!(
            product([-1e-300, 1e-300].into_iter()).to_bits(),
            (-0.0f64).to_bits()
        );
        // 2^-600 · 2^-600 · 2^700 · 2^500 = 1 exactly.
        let p = product(
            [
                2f64.powi(-600),
                2f64.powi(-600),
                2f64.powi(700),
                2f64.powi(500),
            ]
            .into_iter(),
        );
        assert_eq!(p, 1.0);
        assert_eq!(product(std::iter::empty()), 1.0);
    }
}
