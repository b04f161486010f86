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

mod lanes;

pub(crate) use lanes::ScaledLanes;

use crate::buffer::CastTo;

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

    /// Whether `m` is a finite nonzero mantissa outside the range
    /// (`[2^-511, 2^511]`), which [`Scaled::normalized`] would change.
    /// Branch-free, so that it vectorizes.
    #[inline(always)]
    fn off_range(m: f64) -> bool {
        let a = m.abs();
        let lo = f64::from_bits(((1023 - LIMIT) as u64) << 52);
        let hi = f64::from_bits(((1023 + LIMIT) as u64) << 52);
        ((a < lo) & (a != 0.0)) | ((a > hi) & (a != f64::INFINITY))
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

/// A factor's type: its value in f64, and whether it is [`safe`], tested
/// in its own precision (f32 factors as f32: the same answer, since the
/// bounds are powers of two, with twice the values per vector).
pub(crate) trait Factor: Copy + CastTo<f64> {
    /// Whether the factor is [`safe`].
    fn safe(self) -> bool;
}

impl Factor for f64 {
    #[inline(always)]
    fn safe(self) -> bool {
        safe(self)
    }
}

impl Factor for f32 {
    #[inline(always)]
    fn safe(self) -> bool {
        let a = self.abs();
        (f32::from_bits((127 - 48) << 23)..=f32::from_bits((127 + 48) << 23)).contains(&a)
    }
}

impl Factor for i64 {
    #[inline(always)]
    fn safe(self) -> bool {
        safe(self.cast_to())
    }
}

impl Factor for bool {
    #[inline(always)]
    fn safe(self) -> bool {
        safe(self.cast_to())
    }
}

/// Folds the whole eights of `xs` into eight lanes, value `8q + j` into
/// lane `j`, with the values of [`Scaled::times`] one factor at a time:
/// groups of eight rounds whose 64 factors are all `safe` are multiplied
/// in plain f64 (a lane in range stays normal through eight of them) and
/// the lanes normalized once after them; a round with any other factor
/// goes factor by factor. In a copy compiled for AVX2 where the CPU has it
/// (the same operations on wider vectors).
pub(crate) fn times_eights<T: CastTo<f64>>(lanes: &mut [Scaled; 8], xs: &[T]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { times_eights_avx2(lanes, xs) };
    }
    times_eights_body(lanes, xs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn times_eights_avx2<T: CastTo<f64>>(lanes: &mut [Scaled; 8], xs: &[T]) {
    times_eights_body(lanes, xs)
}

#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
fn times_eights_body<T: CastTo<f64>>(lanes: &mut [Scaled; 8], xs: &[T]) {
    let mut m: [f64; 8] = std::array::from_fn(|j| lanes[j].m);
    let mut e: [i64; 8] = std::array::from_fn(|j| lanes[j].e);
    // One round of eight factors, factor by factor where one is not safe.
    let round = |m: &mut [f64; 8], e: &mut [i64; 8], v: &[f64]| {
        if v.iter().fold(true, |a, &x| a & safe(x)) {
            for j in 0..8 {
                m[j] *= v[j];
            }
            normalize_eight(m, e);
        } else {
            for j in 0..8 {
                let p = Scaled { m: m[j], e: e[j] }.times(Scaled::of(v[j]));
                (m[j], e[j]) = (p.m, p.e);
            }
        }
    };
    let mut groups = xs.chunks_exact(64);
    for g in &mut groups {
        let v: [f64; 64] = std::array::from_fn(|k| g[k].cast_to());
        if v.iter().fold(true, |a, &x| a & safe(x)) {
            for q in 0..8 {
                for j in 0..8 {
                    m[j] *= v[8 * q + j];
                }
            }
            normalize_eight(&mut m, &mut e);
        } else {
            for q in 0..8 {
                round(&mut m, &mut e, &v[8 * q..8 * q + 8]);
            }
        }
    }
    for c in groups.remainder().chunks_exact(8) {
        let v: [f64; 8] = std::array::from_fn(|j| c[j].cast_to());
        round(&mut m, &mut e, &v);
    }
    for j in 0..8 {
        lanes[j] = Scaled { m: m[j], e: e[j] };
    }
}

/// Multiplies `acc[i]` by `xs[i]` (one factor per lane), with the values
/// of [`Scaled::times`]: where every factor is safe, plain multiplications
/// (a mantissa in range stays normal through one) and the lanes that left
/// the range normalized; else factor by factor. In a copy compiled for
/// AVX2 where the CPU has it.
pub(crate) fn times_row<T: Factor>(acc: &mut [Scaled], xs: &[T]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { times_row_avx2(acc, xs) };
    }
    times_row_body(acc, xs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn times_row_avx2<T: Factor>(acc: &mut [Scaled], xs: &[T]) {
    times_row_body(acc, xs)
}

#[inline(always)]
fn times_row_body<T: Factor>(acc: &mut [Scaled], xs: &[T]) {
    if xs.iter().fold(true, |p, x| p & x.safe()) {
        for (a, &x) in acc.iter_mut().zip(xs) {
            a.m *= CastTo::<f64>::cast_to(x);
        }
        if acc.iter().fold(false, |f, a| f | Scaled::off_range(a.m)) {
            acc.iter_mut().for_each(|a| *a = a.normalized());
        }
    } else {
        for (a, &x) in acc.iter_mut().zip(xs) {
            *a = a.times(Scaled::of(x.cast_to()));
        }
    }
}

/// Eight lanes' mantissas brought back into range where one left it.
#[inline(always)]
fn normalize_eight(m: &mut [f64; 8], e: &mut [i64; 8]) {
    if m.iter().fold(false, |f, &x| f | Scaled::off_range(x)) {
        for (m, e) in m.iter_mut().zip(e.iter_mut()) {
            let s = Scaled { m: *m, e: *e }.normalized();
            (*m, *e) = (s.m, s.e);
        }
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

/// The product of `xs` (see the module docs), one factor at a time: the
/// reference the faster [`product_of`], [`times_eights`] and [`ScaledLanes`]
/// are tested against.
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

    /// The batched paths ([`product_of`], [`ScaledLanes`], [`times_eights`],
    /// [`times_row`])
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
        for kind in 0..5 {
            let xs: Vec<f64> = (0..3001)
                .map(|k| {
                    let u = next();
                    match kind {
                        // Plain factors whose products climb out of range
                        // and come back (normalized between blocks).
                        4 => (if k < 1500 { 30.0 } else { -30.0 } + u).exp2(),
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
                times_eights(&mut lanes, &xs[..8 * whole]);
                for j in 0..8 {
                    let want = product((0..whole).map(|q| xs[8 * q + j]));
                    assert!(
                        same(lanes[j].value(), want),
                        "times_eights kind {kind} n {n} lane {j}"
                    );
                }
                // One factor per lane (a row), onto products under way.
                let starts = [1.0, 1e300, -3e-200, 5e-324, 0.75];
                let mut acc: Vec<Scaled> = (0..n).map(|i| Scaled::of(starts[i % 5])).collect();
                times_row(&mut acc, &xs[..n]);
                for (i, a) in acc.iter().enumerate() {
                    let want = product([starts[i % 5], xs[i]].into_iter());
                    assert!(
                        same(a.value(), want),
                        "times_row kind {kind} n {n} lane {i}"
                    );
                }
                // Three lanes of rows (blocks of eight and the rows left),
                // from products already under way.
                let rows: Vec<&[f64]> = xs[..n / 3 * 3].chunks(3).collect();
                let start = [Scaled::ONE, Scaled::of(1e300), Scaled::of(-3e-200)];
                let mut lanes = ScaledLanes::of(&start);
                lanes.times_rows(&rows);
                let mut acc = [Scaled::ONE; 3];
                lanes.store(&mut acc);
                for (i, a) in acc.iter().enumerate() {
                    let want = std::iter::once(start[i].value()).chain(rows.iter().map(|r| r[i]));
                    assert!(
                        same(a.value(), product(want)),
                        "ScaledLanes kind {kind} n {n} lane {i}"
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
