//! Many products at once (the lanes of a reduction along an inner axis),
//! their mantissas and exponents held apart so that the multiplications
//! vectorize: [`ScaledLanes`].
//!
//! Rows of factors are multiplied in blocks of up to eight: where every
//! factor of a block is `safe` (magnitude within `[2^-48, 2^48]`), the
//! block's values are multiplied in plain f64 (a mantissa within
//! `[2^-511, 2^511]` stays normal through eight of them, so each product
//! rounds as the scaled one would) and the lanes are normalized once after
//! it; a block with any other factor (zero, infinite, NaN, huge, tiny)
//! goes factor by factor through [`Scaled::times`]. The values are those
//! of folding [`Scaled::times`] one factor at a time.

use super::{Factor, Scaled};
use crate::buffer::CastTo;

/// Factors per lane multiplied between two normalizations.
const BLOCK: usize = 8;

/// The products of a run of lanes, as separate mantissas and exponents
/// (each lane a [`Scaled`]: its invariant holds between calls).
pub(crate) struct ScaledLanes {
    m: Vec<f64>,
    e: Vec<i64>,
    /// Scratch for a block's plain products, kept only where every factor
    /// was safe.
    t: Vec<f64>,
}

impl ScaledLanes {
    /// Lanes holding the products `acc`.
    pub(crate) fn of(acc: &[Scaled]) -> ScaledLanes {
        ScaledLanes {
            m: acc.iter().map(|a| a.m).collect(),
            e: acc.iter().map(|a| a.e).collect(),
            t: vec![0.0; acc.len()],
        }
    }

    /// The products, written into `acc` (as long as the lanes).
    pub(crate) fn store(&self, acc: &mut [Scaled]) {
        for ((a, &m), &e) in acc.iter_mut().zip(&self.m).zip(&self.e) {
            *a = Scaled { m, e };
        }
    }

    /// The products rounded to float64 ([`Scaled::value`]), lane by lane.
    pub(crate) fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.m
            .iter()
            .zip(&self.e)
            .map(|(&m, &e)| Scaled { m, e }.value())
    }

    /// Multiplies lane `i` by `rows[r][i]` for every row in order (each
    /// row as long as the lanes).
    pub(crate) fn times_rows<T: Factor>(&mut self, rows: &[&[T]]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.times_rows_avx2(rows) };
        }
        self.times_rows_body(rows)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn times_rows_avx2<T: Factor>(&mut self, rows: &[&[T]]) {
        self.times_rows_body(rows)
    }

    /// [`ScaledLanes::times_rows`]: blocks of [`BLOCK`] rows, then the rows
    /// left one at a time.
    #[inline(always)]
    fn times_rows_body<T: Factor>(&mut self, rows: &[&[T]]) {
        // Rows that follow one another in memory are read one at a time:
        // eight interleaved reads of one stretch of memory ran at half the
        // speed, two at 60% (`prod_axis(1)` of 64 x 10^6, docs/perf/cpu.md).
        let w = self.m.len();
        let contiguous = rows.len() > 1 && rows[1].as_ptr() == rows[0][w..].as_ptr();
        let mut blocks = rows.chunks_exact(BLOCK);
        for b in &mut blocks {
            let b: [&[T]; BLOCK] = std::array::from_fn(|r| &b[r][..w]);
            if contiguous {
                self.block::<T, BLOCK, 1>(b);
            } else {
                self.block::<T, BLOCK, BLOCK>(b);
            }
        }
        for &row in blocks.remainder() {
            self.block::<T, 1, 1>([&row[..w]]);
        }
    }

    /// One block of `R` rows (`R <= BLOCK`), read `P` at a time: plain
    /// products where every factor is safe, then one normalization; else
    /// factor by factor.
    #[inline(always)]
    fn block<T: Factor, const R: usize, const P: usize>(&mut self, rows: [&[T]; R]) {
        let mut plain = true;
        for q in 0..R / P {
            let part: [&[T]; P] = std::array::from_fn(|j| rows[q * P + j]);
            let from = (q == 0).then_some(&self.m[..]);
            plain &= plain_products(from, &mut self.t, part);
        }
        if plain {
            std::mem::swap(&mut self.m, &mut self.t);
            let off = self.m.iter().fold(false, |f, &m| f | Scaled::off_range(m));
            if off {
                for (m, e) in self.m.iter_mut().zip(&mut self.e) {
                    let s = Scaled { m: *m, e: *e }.normalized();
                    (*m, *e) = (s.m, s.e);
                }
            }
            return;
        }
        for row in &rows {
            for ((m, e), x) in self.m.iter_mut().zip(&mut self.e).zip(*row) {
                let s = Scaled { m: *m, e: *e }.times(Scaled::of(x.cast_to()));
                (*m, *e) = (s.m, s.e);
            }
        }
    }
}

/// `t[i] = m[i] · rows[0][i] · rows[1][i] ...` in that order, `m` being
/// `t` itself where `from` is `None`, and whether every factor was safe.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
fn plain_products<T: Factor, const P: usize>(
    from: Option<&[f64]>,
    t: &mut [f64],
    rows: [&[T]; P],
) -> bool {
    let mut plain = true;
    for i in 0..t.len() {
        let mut a = from.map_or(t[i], |m| m[i]);
        for row in &rows {
            plain &= row[i].safe();
            a *= CastTo::<f64>::cast_to(row[i]);
        }
        t[i] = a;
    }
    plain
}
