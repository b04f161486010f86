//! The CPU kernels of op-by-op float and bool reductions ([`reduce_lanes`]):
//! every lane of an `(inner, len, outer)` layout reduced at memory speed on
//! all cores, with the semantics in the docs of [`crate::ops::reduce`].
//!
//! - Contiguous lanes (`inner == 1`: axis 0, or everything) are reduced
//!   from slices, many lanes in parallel; a long lane's sums split into
//!   parallel halves of a fixed pairwise tree ([`super::sums`]) and its
//!   extremes into pieces combined in order ([`super::extremes`]).
//! - Strided lanes (`inner > 1`: a later axis) are reduced a tile of
//!   consecutive lanes at a time, each row of the tile a contiguous run of
//!   values added into per-lane accumulators (vectorizable), tiles (and,
//!   for sums, halves of the row range) in parallel. Extremes and their
//!   positions take tiles of at least 64 lanes over every row where there
//!   are enough of them for every thread, else chunks of rows.
//! - `any` and `all` stop reading where the answer is known
//!   ([`super::logical`]).
//!
//! Every lane is reduced in an order that depends only on its length, so
//! results have the same bits on any number of threads. The hot loops also
//! exist compiled for AVX2 and are picked at run time where the CPU has it
//! (the crate is built for baseline x86-64): the same operations on wider
//! vectors, so the same bits. `var` is R's two
//! passes over the refined mean `m` (`mean + Σ(x - mean)/n`):
//! `(Σ(x - m)² - (Σ(x - m))²/n) / (n - 1)`, its two sums in one pass.
//! `prod` multiplies in lane order ([`crate::ops::product`]); `argmin` and
//! `argmax` give the first extreme (`-0.0` ties `+0.0`) or the first NaN;
//! `min` and `max` the first NaN, else the extreme with `-0.0 < +0.0`.
//! `logsumexp` is two passes: the lane's maximum `m`, then `m + log(Σ
//! exp(x - m))` (a sum as any other; f32 terms in f32,
//! [`super::native::Float::shifted_exp`]).

use rayon::prelude::*;

use super::extremes::{lane_arg, lane_extreme, strided_extreme};
use super::logical::{lane_logical, logical_lanes, strided_logical};
use super::native::{Float, Native};
use super::sums::{lane_sum, rows_sum, Rows};
use super::{below, ReduceOp};
use crate::error::Result;
use crate::memory;
use crate::ops::loops::{worth_parallel, PAR_MIN};
use crate::ops::product::{self, Scaled, ScaledLanes};

/// The widest tile of strided lanes.
const TILE: usize = 2048;
/// The narrowest tile worth a task of its own when tiles are shared out.
const MIN_WIDTH: usize = 64;
/// Values per task when the rows of strided lanes are split into chunks.
const ROW_CHUNK: usize = 1 << 16;

/// Reduces the `inner * outer` lanes of a `(inner, len, outer)` layout to
/// f64 values (lane `i + inner * o` at position `i + inner * o`).
pub(super) fn reduce_lanes<T: Native>(
    op: ReduceOp,
    x: &[T],
    inner: usize,
    len: usize,
    outer: usize,
) -> Result<Vec<f64>> {
    let lanes = inner * outer;
    let mut out = memory::zeroed::<f64>(op.name(), lanes)?;
    if lanes == 0 {
        return Ok(out);
    }
    if matches!(op, ReduceOp::Any | ReduceOp::All) {
        logical_lanes(op == ReduceOp::Any, x, (inner, len, outer), &mut out);
        return Ok(out);
    }
    let parallel = worth_parallel(lanes * len, op.cost());
    if inner == 1 {
        let lane = |(o, r): (usize, &mut f64)| *r = contiguous(op, &x[o * len..(o + 1) * len]);
        // Lanes in groups of at least PAR_MIN values.
        let group = (PAR_MIN / len.max(1)).max(1);
        if parallel && outer > 1 {
            out.par_iter_mut()
                .enumerate()
                .with_min_len(group)
                .for_each(lane);
        } else {
            out.iter_mut().enumerate().for_each(lane);
        }
        return Ok(out);
    }
    // Tiles of consecutive lanes within a slab. Sums split long lanes into
    // parallel halves of their tree, so their tiles stay wide; the others
    // take narrower tiles when there are few (the width never changes a
    // lane's value), or, for extremes and any/all, chunks of rows.
    let threads = rayon::current_num_threads().max(1);
    let sums = matches!(
        op,
        ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Var | ReduceOp::Sd | ReduceOp::LogSumExp
    );
    let wide = inner.min(TILE);
    let width = if sums {
        wide
    } else {
        let per_slab = (lanes * len / (PAR_MIN / 4)).max(1).min(8 * threads);
        (inner.div_ceil(per_slab.div_ceil(outer))).clamp(8, TILE)
    };
    // Too few tiles of at least MIN_WIDTH lanes to share out: chunks of
    // rows in parallel instead, for extremes and their positions (sums
    // split their trees, products run whole lanes).
    let few = outer * (inner / MIN_WIDTH) < 4 * threads;
    if parallel && !sums && op != ReduceOp::Prod && few {
        let rows = (ROW_CHUNK / wide).max(8);
        if len >= 2 * rows {
            for (o, slab) in out.chunks_mut(inner).enumerate() {
                for (t, piece) in slab.chunks_mut(wide).enumerate() {
                    let lanes = Rows {
                        x,
                        start: o * inner * len + t * wide,
                        stride: inner,
                        width: piece.len(),
                    };
                    by_row_chunks(op, lanes, len, rows, piece);
                }
            }
            return Ok(out);
        }
    }
    let tiles = inner.div_ceil(width);
    let task = |(t, piece): (usize, &mut [f64])| {
        let (o, i0) = (t / tiles, t % tiles * width);
        let rows = Rows {
            x,
            start: o * inner * len + i0,
            stride: inner,
            width: piece.len(),
        };
        strided(op, rows, len, piece);
    };
    let pieces = out
        .chunks_mut(inner)
        .flat_map(|slab| slab.chunks_mut(width));
    if parallel {
        pieces
            .enumerate()
            .collect::<Vec<_>>()
            .into_par_iter()
            .for_each(task);
    } else {
        pieces.enumerate().for_each(task);
    }
    Ok(out)
}

/// One contiguous lane.
fn contiguous<T: Native>(op: ReduceOp, xs: &[T]) -> f64 {
    use ReduceOp::*;
    if xs.is_empty() && op.needs_elements() {
        return f64::NAN;
    }
    match op {
        Sum => lane_sum(xs, &|v| [v])[0],
        Mean => mean(xs),
        Var => variance(xs),
        Sd => variance(xs).sqrt(),
        Prod => product::product_of(xs),
        Min => lane_extreme::<false, T>(xs),
        Max => lane_extreme::<true, T>(xs),
        ArgMin => lane_arg::<false, T>(xs) as f64,
        ArgMax => lane_arg::<true, T>(xs) as f64,
        Any => lane_logical::<true, T>(xs, 0) as u8 as f64,
        All => lane_logical::<false, T>(xs, 0) as u8 as f64,
        LogSumExp if xs.is_empty() => f64::NEG_INFINITY,
        LogSumExp => {
            let m = lane_extreme::<true, T>(xs);
            shifted_log_sum(
                m,
                if m.is_finite() {
                    T::exp_sum(xs, m)
                } else {
                    0.0
                },
            )
        }
    }
}

/// `m + log(s)` for a lane's maximum `m` and `s = Σ exp(x - m)`: the
/// maximum itself where it is not finite (`±Inf`, or NaN), whose shifted
/// sum is no number.
fn shifted_log_sum(m: f64, s: f64) -> f64 {
    if m.is_finite() {
        m + s.ln()
    } else {
        m
    }
}

/// R's mean with its refinement pass; NaN when empty.
fn mean<T: Native>(xs: &[T]) -> f64 {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return f64::NAN;
    }
    let m = lane_sum(xs, &|v| [v])[0] / n;
    if !m.is_finite() {
        return m;
    }
    m + lane_sum(xs, &|v| [v - m])[0] / n
}

/// Sample variance (two passes over the refined mean); NaN below two values.
fn variance<T: Native>(xs: &[T]) -> f64 {
    let n = xs.len();
    if n < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let [dev, ss] = lane_sum(xs, &|v| [v - m, (v - m) * (v - m)]);
    (ss - dev * dev / n as f64) / (n - 1) as f64
}

/// Lanes `rows` (each `len` rows long) reduced into `out` ([`strided_body`]),
/// in a copy compiled for AVX2 where the CPU has it (the same operations,
/// so the same bits, on wider vectors).
fn strided<T: Native>(op: ReduceOp, rows: Rows<'_, T>, len: usize, out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { strided_avx2(op, rows, len, out) };
    }
    strided_body(op, rows, len, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn strided_avx2<T: Native>(op: ReduceOp, rows: Rows<'_, T>, len: usize, out: &mut [f64]) {
    strided_body(op, rows, len, out)
}

/// Lanes `rows` (each `len` rows long) reduced into `out`.
#[inline(always)]
fn strided_body<T: Native>(op: ReduceOp, rows: Rows<'_, T>, len: usize, out: &mut [f64]) {
    use ReduceOp::*;
    let w = rows.width;
    let n = len as f64;
    let zeros = vec![0.0; w];
    // R's mean per lane, with its refinement pass.
    let means = |out: &mut [f64]| {
        let mut s = vec![[0.0]; w];
        rows_sum(rows, 0, len, &zeros, &|_, v| [v], &mut s);
        let m: Vec<f64> = s.iter().map(|s| s[0] / n).collect();
        rows_sum(rows, 0, len, &m, &|m, v| [v - m], &mut s);
        for ((o, m), r) in out.iter_mut().zip(&m).zip(&s) {
            *o = if m.is_finite() { m + r[0] / n } else { *m };
        }
    };
    match op {
        Sum => {
            let mut s = vec![[0.0]; w];
            rows_sum(rows, 0, len, &zeros, &|_, v| [v], &mut s);
            out.iter_mut().zip(&s).for_each(|(o, s)| *o = s[0]);
        }
        Mean if len == 0 => out.fill(f64::NAN),
        Mean => means(out),
        Var | Sd if len < 2 => out.fill(f64::NAN),
        Var | Sd => {
            let mut m = vec![0.0; w];
            means(&mut m);
            let mut s = vec![[0.0; 2]; w];
            rows_sum(rows, 0, len, &m, &|m, v| [v - m, (v - m) * (v - m)], &mut s);
            for (o, [dev, ss]) in out.iter_mut().zip(s) {
                let var = (ss - dev * dev / n) / (len - 1) as f64;
                *o = if op == Sd { var.sqrt() } else { var };
            }
        }
        Prod => {
            let mut acc = ScaledLanes::of(&vec![Scaled::ONE; w]);
            let all: Vec<&[T]> = (0..len).map(|k| rows.row(k)).collect();
            acc.times_rows(&all);
            out.iter_mut().zip(acc.values()).for_each(|(o, v)| *o = v);
        }
        Min | Max if len == 0 => out.fill(f64::NAN),
        Min => strided_extreme::<false, T>(rows, len, out),
        Max => strided_extreme::<true, T>(rows, len, out),
        ArgMin | ArgMax if len == 0 => out.fill(f64::NAN),
        ArgMin => strided_arg::<false, T>(rows, len, out, &mut vec![0.0; w]),
        ArgMax => strided_arg::<true, T>(rows, len, out, &mut vec![0.0; w]),
        LogSumExp if len == 0 => out.fill(f64::NEG_INFINITY),
        LogSumExp => {
            let mut m = vec![0.0; w];
            strided_extreme::<true, T>(rows, len, &mut m);
            let mut s = vec![[0.0]; w];
            rows_sum(rows, 0, len, &m, &|m, v| [T::N::shifted_exp(v, m)], &mut s);
            for ((o, m), s) in out.iter_mut().zip(m).zip(s) {
                *o = shifted_log_sum(m, s[0]);
            }
        }
        Any | All => {
            let mut acc = vec![op == All; w];
            if op == Any {
                strided_logical::<true, T>(rows, 0, len, &mut acc);
            } else {
                strided_logical::<false, T>(rows, 0, len, &mut acc);
            }
            out.iter_mut()
                .zip(acc)
                .for_each(|(o, a)| *o = a as u8 as f64);
        }
    }
}

/// Strided argmin (`MAX`: argmax): plain strict selects (the first
/// extreme; `-0.0` ties `+0.0`) and the first NaN's position per lane,
/// into `out`; the extremes (NaN for a lane with one) into `vals`.
#[inline(always)]
#[allow(clippy::eq_op)] // x != x is the NaN test
fn strided_arg<const MAX: bool, T: Native>(
    rows: Rows<'_, T>,
    len: usize,
    out: &mut [f64],
    vals: &mut [f64],
) {
    let w = rows.width;
    let mut best: Vec<f64> = rows.row(0).iter().map(|x| x.to_f64()).collect();
    let mut first_nan = vec![f64::INFINITY; w];
    out.fill(0.0);
    for k in 0..len {
        let kf = k as f64;
        let row = rows.row(k);
        for (((b, a), n), x) in best
            .iter_mut()
            .zip(out.iter_mut())
            .zip(&mut first_nan)
            .zip(row)
        {
            let v = x.to_f64();
            let better = if MAX { v > *b } else { v < *b };
            *a = if better { kf } else { *a };
            *b = if better { v } else { *b };
            *n = if v != v && *n == f64::INFINITY {
                kf
            } else {
                *n
            };
        }
    }
    for (((a, n), v), b) in out.iter_mut().zip(first_nan).zip(vals.iter_mut()).zip(best) {
        *v = if n != f64::INFINITY { f64::NAN } else { b };
        if n != f64::INFINITY {
            *a = n;
        }
    }
}

/// [`strided_arg`] in a copy compiled for AVX2 where the CPU has it.
fn arg_chunk<const MAX: bool, T: Native>(
    rows: Rows<'_, T>,
    len: usize,
    out: &mut [f64],
    vals: &mut [f64],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { arg_chunk_avx2::<MAX, T>(rows, len, out, vals) };
    }
    strided_arg::<MAX, T>(rows, len, out, vals)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn arg_chunk_avx2<const MAX: bool, T: Native>(
    rows: Rows<'_, T>,
    len: usize,
    out: &mut [f64],
    vals: &mut [f64],
) {
    strided_arg::<MAX, T>(rows, len, out, vals)
}

/// Extremes, their positions, `any` or `all` of long strided lanes: rows
/// `0..len` cut into chunks of `rows` rows reduced in parallel, then the
/// chunks' results combined per lane in row order (the first NaN, the
/// first extreme: the same result as one pass).
fn by_row_chunks<T: Native>(
    op: ReduceOp,
    lanes: Rows<'_, T>,
    len: usize,
    rows: usize,
    out: &mut [f64],
) {
    use ReduceOp::*;
    let w = lanes.width;
    let chunks: Vec<(Vec<f64>, Vec<f64>)> = (0..len.div_ceil(rows))
        .into_par_iter()
        .map(|c| {
            let k0 = c * rows;
            let part = Rows {
                start: lanes.start + k0 * lanes.stride,
                ..lanes
            };
            let n = rows.min(len - k0);
            let (mut v, mut p) = (vec![0.0; w], vec![0.0; w]);
            match op {
                ArgMin => arg_chunk::<false, T>(part, n, &mut p, &mut v),
                ArgMax => arg_chunk::<true, T>(part, n, &mut p, &mut v),
                _ => strided(op, part, n, &mut v),
            }
            p.iter_mut().for_each(|p| *p += k0 as f64);
            (v, p)
        })
        .collect();
    let (first, rest) = chunks.split_first().expect("at least two chunks");
    let (mut best, mut pos) = (first.0.clone(), first.1.clone());
    for (v, p) in rest {
        for i in 0..w {
            let (b, x) = (best[i], v[i]);
            let take = match op {
                Min => !b.is_nan() && (x.is_nan() || below(x, b)),
                Max => !b.is_nan() && (x.is_nan() || below(b, x)),
                ArgMin => !b.is_nan() && (x.is_nan() || x < b),
                ArgMax => !b.is_nan() && (x.is_nan() || x > b),
                Any => x != 0.0,
                _ => x == 0.0,
            };
            if take {
                best[i] = x;
                pos[i] = p[i];
            }
        }
    }
    out.copy_from_slice(if matches!(op, ArgMin | ArgMax) {
        &pos
    } else {
        &best
    });
}
