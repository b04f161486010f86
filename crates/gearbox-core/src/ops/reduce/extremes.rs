//! `min`, `max`, `argmin` and `argmax` of the op-by-op reductions: of
//! contiguous lanes ([`lane_extreme`], [`lane_arg`]) and of tiles of strided
//! lanes ([`strided_extreme`]).
//!
//! The rules ([`crate::ops::reduce`]): `min` and `max` give the lane's first
//! NaN if it has one (its payload kept), else the extreme with `-0.0` below
//! `+0.0`; `argmin` and `argmax` the position of the first NaN, else of the
//! first extreme (`-0.0` ties `+0.0`).
//!
//! How: values are compared in their own precision ([`Native`]) by plain
//! selects that vectorize, `a = v` where `v < a || v != v` (`>` for the
//! maximum). Such a select lets a NaN in, and then keeps a NaN (no value
//! compares below it), so one pass tells whether a lane holds a NaN and
//! otherwise gives its extreme up to the sign of a zero. Only the rare
//! lanes that end on a NaN or a zero are read again, for their first NaN
//! or for the zero that wins. Positions are found by reading again only
//! the chunks whose extreme improves on the best so far (strictly, so the
//! first extreme keeps its place).
//!
//! The selects also exist compiled for AVX2, picked at run time where the
//! CPU has it (the same operations on wider vectors, so the same results).

use rayon::prelude::*;

use super::native::{Float, Native};
use super::sums::Rows;
use crate::ops::loops::worth_parallel;

/// Accumulators of a contiguous select of a long run (a few vectors'
/// worth, so that their dependency chains overlap); a short one (below
/// [`LONG`] values) takes [`SHORT_ACC`], whose tree is cheaper.
const ACC: usize = 32;
/// Accumulators of a contiguous select of a short run.
const SHORT_ACC: usize = 8;
/// The shortest run selected with [`ACC`] accumulators.
const LONG: usize = 256;
/// Values per chunk of a position search: a chunk that improves on the
/// best value so far is read again for the position.
const ARG_CHUNK: usize = 1024;
/// Values a position search tests at once.
const GROUP: usize = 32;
/// Values per parallel piece of a long lane.
const PIECE: usize = 1 << 15;

/// Whether a select replaces `a` by `v`: `v` is below `a` (`MAX`: above),
/// or NaN. Non-short-circuiting, so that it vectorizes.
#[inline(always)]
#[allow(clippy::eq_op)] // v != v is the NaN test
fn take<const MAX: bool, N: Float>(v: N, a: N) -> bool {
    (if MAX { v > a } else { v < a }) | (v != v)
}

/// `v` where [`take`] says so, else `a`.
#[inline(always)]
fn pick<const MAX: bool, N: Float>(a: N, v: N) -> N {
    if take::<MAX, N>(v, a) {
        v
    } else {
        a
    }
}

/// The select of a non-empty contiguous run: a NaN if it holds one, else
/// its least (`MAX`: greatest) value, either zero where zeros tie.
fn select<const MAX: bool, T: Native>(c: &[T]) -> T::N {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { select_avx2::<MAX, T>(c) };
    }
    select_body::<MAX, T>(c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn select_avx2<const MAX: bool, T: Native>(c: &[T]) -> T::N {
    select_body::<MAX, T>(c)
}

/// [`select`], with as many accumulators as the run's length calls for.
#[inline(always)]
fn select_body<const MAX: bool, T: Native>(c: &[T]) -> T::N {
    if c.len() >= LONG {
        select_with::<MAX, T, ACC>(c)
    } else {
        select_with::<MAX, T, SHORT_ACC>(c)
    }
}

/// [`select`] with `ACC` accumulators, folded in a halving tree, then the
/// values past the last whole group.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
fn select_with<const MAX: bool, T: Native, const ACC: usize>(c: &[T]) -> T::N {
    let mut acc = [c[0].native(); ACC];
    let mut groups = c.chunks_exact(ACC);
    for g in &mut groups {
        for j in 0..ACC {
            acc[j] = pick::<MAX, _>(acc[j], g[j].native());
        }
    }
    let mut half = ACC / 2;
    while half > 0 {
        for j in 0..half {
            acc[j] = pick::<MAX, _>(acc[j], acc[j + half]);
        }
        half /= 2;
    }
    groups
        .remainder()
        .iter()
        .fold(acc[0], |a, x| pick::<MAX, _>(a, x.native()))
}

/// A lane's min (`MAX`: max) from its select `m`: the lane's first NaN
/// where `m` is NaN, the winning zero where `m` is a zero (both read again
/// from `lane`), else `m`.
#[allow(clippy::eq_op)] // v != v is the NaN test
fn finish<const MAX: bool, N: Float>(m: N, mut lane: impl Iterator<Item = N>) -> f64 {
    if m != m {
        return lane.find(|&v| v != v).map_or(f64::NAN, Float::wide);
    }
    if m == N::ZERO {
        // -0.0 wins a minimum if the lane has one, +0.0 a maximum.
        let has = lane.any(|v| v == N::ZERO && v.negative() != MAX);
        return if has != MAX { -0.0 } else { 0.0 };
    }
    m.wide()
}

/// Min (`MAX`: max) of a non-empty contiguous lane; a long one in parallel
/// pieces.
pub(super) fn lane_extreme<const MAX: bool, T: Native>(xs: &[T]) -> f64 {
    let m = if worth_parallel(xs.len(), 1) {
        let parts: Vec<T::N> = xs.par_chunks(PIECE).map(select::<MAX, T>).collect();
        parts[1..]
            .iter()
            .fold(parts[0], |a, &v| pick::<MAX, _>(a, v))
    } else {
        select::<MAX, T>(xs)
    };
    finish::<MAX, _>(m, xs.iter().map(|x| x.native()))
}

/// Position of the first min (`MAX`: max) of a non-empty contiguous lane,
/// or of its first NaN; a long one in parallel pieces, combined in order.
#[allow(clippy::eq_op)] // v != v is the NaN test
pub(super) fn lane_arg<const MAX: bool, T: Native>(xs: &[T]) -> usize {
    if !worth_parallel(xs.len(), 1) {
        return piece_arg::<MAX, T>(xs).1;
    }
    let parts: Vec<(T::N, usize)> = xs.par_chunks(PIECE).map(piece_arg::<MAX, T>).collect();
    let (mut best, mut at) = parts[0];
    for (q, &(v, p)) in parts.iter().enumerate().skip(1) {
        if best != best {
            break;
        }
        // Strictly better, or NaN: an equal extreme later keeps the first.
        if v != v || (if MAX { v > best } else { v < best }) {
            (best, at) = (v, q * PIECE + p);
        }
    }
    at
}

/// (value, position) of the first extreme of a non-empty run, or (a NaN,
/// the position of its first NaN).
#[allow(clippy::eq_op)] // v != v is the NaN test
fn piece_arg<const MAX: bool, T: Native>(c: &[T]) -> (T::N, usize) {
    let mut best: Option<(T::N, usize)> = None;
    for (q, chunk) in c.chunks(ARG_CHUNK).enumerate() {
        let m = select::<MAX, T>(chunk);
        let at = q * ARG_CHUNK;
        if m != m {
            return (m, at + first(chunk, |v| v != v));
        }
        let better = best.is_none_or(|(b, _)| if MAX { m > b } else { m < b });
        if better {
            // `==` finds the first value equal to the extreme (either zero
            // where it is a zero: they tie).
            best = Some((m, at + first(chunk, |v| v == m)));
        }
    }
    best.expect("a non-empty run")
}

/// Position of the first value of `c` meeting `hit` (`c.len()` if none):
/// groups of [`GROUP`] tested at once (a vectorized OR), then the group
/// that holds it value by value.
#[inline(always)]
fn first<T: Native>(c: &[T], hit: impl Fn(T::N) -> bool) -> usize {
    let g = c
        .chunks(GROUP)
        .position(|g| g.iter().fold(false, |a, x| a | hit(x.native())))
        .unwrap_or(c.len() / GROUP);
    let at = (g * GROUP).min(c.len());
    at + c[at..]
        .iter()
        .position(|x| hit(x.native()))
        .unwrap_or(c.len() - at)
}

/// Min (`MAX`: max) of each of a tile of strided lanes (`len >= 1` rows)
/// into `out`, by the rules in the module docs.
pub(super) fn strided_extreme<const MAX: bool, T: Native>(
    rows: Rows<'_, T>,
    len: usize,
    out: &mut [f64],
) {
    let mut acc: Vec<T::N> = rows.row(0).iter().map(|x| x.native()).collect();
    fold_rows::<MAX, T>(rows, 1, len, &mut acc);
    for (i, (o, &m)) in out.iter_mut().zip(&acc).enumerate() {
        *o = finish::<MAX, _>(m, (0..len).map(|k| rows.row(k)[i].native()));
    }
}

/// Rows `lo..hi` of `rows` selected into `acc` (one entry per lane).
fn fold_rows<const MAX: bool, T: Native>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    acc: &mut [T::N],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { fold_rows_avx2::<MAX, T>(rows, lo, hi, acc) };
    }
    fold_rows_body::<MAX, T>(rows, lo, hi, acc)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_rows_avx2<const MAX: bool, T: Native>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    acc: &mut [T::N],
) {
    fold_rows_body::<MAX, T>(rows, lo, hi, acc)
}

/// [`fold_rows`], `R` rows at a time, so each accumulator is loaded and
/// stored once per `R` values: eight rows where rows lie apart (each then
/// read as a stream of its own), two where they are contiguous (the tile
/// is every lane, and eight interleaved reads of one stretch of memory
/// ran at half the speed of two: measured on 64 x 10^6, docs/perf/cpu.md).
#[inline(always)]
fn fold_rows_body<const MAX: bool, T: Native>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    acc: &mut [T::N],
) {
    if rows.stride == rows.width {
        fold_r::<MAX, T, 2>(rows, lo, hi, acc)
    } else {
        fold_r::<MAX, T, 8>(rows, lo, hi, acc)
    }
}

/// Rows `lo..hi` selected into `acc`, `R` at a time.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
fn fold_r<const MAX: bool, T: Native, const R: usize>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    acc: &mut [T::N],
) {
    let w = acc.len();
    let mut k = lo;
    while k + R <= hi {
        let r: [&[T]; R] = std::array::from_fn(|j| &rows.row(k + j)[..w]);
        for i in 0..w {
            let mut a = acc[i];
            for j in 0..R {
                a = pick::<MAX, _>(a, r[j][i].native());
            }
            acc[i] = a;
        }
        k += R;
    }
    for k in k..hi {
        let r = &rows.row(k)[..w];
        for i in 0..w {
            acc[i] = pick::<MAX, _>(acc[i], r[i].native());
        }
    }
}
