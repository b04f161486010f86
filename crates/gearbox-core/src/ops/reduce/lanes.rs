//! The CPU kernels of op-by-op float and bool reductions ([`reduce_lanes`]):
//! every lane of an `(inner, len, outer)` layout reduced at memory speed on
//! all cores, with the semantics in the docs of [`crate::ops::reduce`].
//!
//! - Contiguous lanes (`inner == 1`: axis 0, or everything) are reduced
//!   from slices, many lanes in parallel; a long lane's sums split into
//!   parallel halves of a fixed pairwise tree ([`super::sums`]) and its
//!   extremes into chunks combined in order.
//! - Strided lanes (`inner > 1`: a later axis) are reduced a tile of
//!   consecutive lanes at a time, each row of the tile a contiguous run of
//!   values added into per-lane accumulators (vectorizable), tiles (and,
//!   for sums, halves of the row range) in parallel.
//!
//! Every lane is reduced in an order that depends only on its length, so
//! results have the same bits on any number of threads. `var` is R's two
//! passes over the refined mean `m` (`mean + Σ(x - mean)/n`):
//! `(Σ(x - m)² - (Σ(x - m))²/n) / (n - 1)`, its two sums in one pass.
//! `prod` multiplies in lane order ([`crate::ops::product`]); `argmin` and
//! `argmax` give the first extreme (`-0.0` ties `+0.0`) or the first NaN;
//! `min` and `max` the first NaN, else the extreme with `-0.0 < +0.0`.

use rayon::prelude::*;

use super::sums::{lane_sum, rows_sum, Rows};
use super::{below, ReduceOp};
use crate::dtype::Element;
use crate::error::Result;
use crate::memory;
use crate::ops::loops::PAR_MIN;
use crate::ops::product::{self, Scaled};

/// Values scanned at a time by the contiguous extreme kernels.
const CHUNK: usize = 1024;
/// The widest tile of strided lanes.
const TILE: usize = 512;

/// Reduces the `inner * outer` lanes of a `(inner, len, outer)` layout to
/// f64 values (lane `i + inner * o` at position `i + inner * o`).
pub(super) fn reduce_lanes<T: Element>(
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
    let parallel = lanes * len >= PAR_MIN;
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
    // Tiles of consecutive lanes within a slab: narrower when there are few,
    // so that enough tasks exist (the width never changes a lane's value).
    let threads = rayon::current_num_threads().max(1);
    let per_slab = (lanes * len / (PAR_MIN / 4)).max(1).min(8 * threads);
    let width = (inner.div_ceil(per_slab.div_ceil(outer))).clamp(8, TILE);
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
fn contiguous<T: Element>(op: ReduceOp, xs: &[T]) -> f64 {
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
        Min | Max => extreme(op == Max, xs),
        ArgMin | ArgMax => arg_extreme(op == ArgMax, xs) as f64,
        Any => xs.iter().any(|x| x.to_f64() != 0.0) as u8 as f64,
        All => xs.iter().all(|x| x.to_f64() != 0.0) as u8 as f64,
    }
}

/// R's mean with its refinement pass; NaN when empty.
fn mean<T: Element>(xs: &[T]) -> f64 {
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
fn variance<T: Element>(xs: &[T]) -> f64 {
    let n = xs.len();
    if n < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let [dev, ss] = lane_sum(xs, &|v| [v - m, (v - m) * (v - m)]);
    (ss - dev * dev / n as f64) / (n - 1) as f64
}

/// The first NaN of a chunk, if any.
#[inline(always)]
fn first_nan<T: Element>(c: &[T]) -> Option<usize> {
    // The branch-free test vectorizes; the search runs only on a hit.
    #[allow(clippy::eq_op)] // x != x is the NaN test
    let any = c.iter().fold(false, |a, x| a | (x.to_f64() != x.to_f64()));
    if any {
        c.iter().position(|x| x.to_f64().is_nan())
    } else {
        None
    }
}

/// Min (`max`: false) or max of a lane: its first NaN if it has one, else
/// the extreme with `-0.0` below `+0.0`.
fn extreme<T: Element>(max: bool, xs: &[T]) -> f64 {
    let chunk_best = |c: &[T]| -> f64 {
        if let Some(p) = first_nan(c) {
            return c[p].to_f64();
        }
        let mut acc = [c[0].to_f64(); 8];
        let mut it = c.chunks_exact(8);
        for e in &mut it {
            for j in 0..8 {
                let v = e[j].to_f64();
                if (!max && below(v, acc[j])) || (max && below(acc[j], v)) {
                    acc[j] = v;
                }
            }
        }
        let mut best = acc[0];
        for v in acc[1..]
            .iter()
            .copied()
            .chain(it.remainder().iter().map(|x| x.to_f64()))
        {
            if (!max && below(v, best)) || (max && below(best, v)) {
                best = v;
            }
        }
        best
    };
    let parts: Vec<f64> = if xs.len() >= PAR_MIN {
        xs.par_chunks(CHUNK).map(chunk_best).collect()
    } else {
        xs.chunks(CHUNK).map(chunk_best).collect()
    };
    let mut best = parts[0];
    for &v in &parts[1..] {
        if best.is_nan() {
            break;
        }
        if v.is_nan() || (!max && below(v, best)) || (max && below(best, v)) {
            best = v;
        }
    }
    best
}

/// Position of the first minimum (`max`: false) or maximum of a lane
/// (`-0.0` ties `+0.0`), or of its first NaN.
fn arg_extreme<T: Element>(max: bool, xs: &[T]) -> usize {
    // (extreme value, position) of a chunk, or its first NaN.
    let chunk_best = |(q, c): (usize, &[T])| -> (f64, usize) {
        if let Some(p) = first_nan(c) {
            return (f64::NAN, q * CHUNK + p);
        }
        let mut acc = [c[0].to_f64(); 8];
        let mut it = c.chunks_exact(8);
        for e in &mut it {
            for j in 0..8 {
                let v = e[j].to_f64();
                acc[j] = if max { acc[j].max(v) } else { acc[j].min(v) };
            }
        }
        let m = acc
            .iter()
            .copied()
            .chain(it.remainder().iter().map(|x| x.to_f64()))
            .fold(acc[0], |a, v| if max { a.max(v) } else { a.min(v) });
        let p = c.iter().position(|x| x.to_f64() == m).unwrap_or(0);
        (m, q * CHUNK + p)
    };
    let parts: Vec<(f64, usize)> = if xs.len() >= PAR_MIN {
        xs.par_chunks(CHUNK).enumerate().map(chunk_best).collect()
    } else {
        xs.chunks(CHUNK).enumerate().map(chunk_best).collect()
    };
    let (mut best, mut arg) = parts[0];
    for &(v, p) in &parts[1..] {
        if best.is_nan() {
            break;
        }
        if v.is_nan() || (!max && v < best) || (max && v > best) {
            (best, arg) = (v, p);
        }
    }
    arg
}

/// Lanes `rows` (each `len` rows long) reduced into `out`.
fn strided<T: Element>(op: ReduceOp, rows: Rows<'_, T>, len: usize, out: &mut [f64]) {
    use ReduceOp::*;
    let w = rows.width;
    let n = len as f64;
    // R's mean per lane, with its refinement pass.
    let means = |out: &mut [f64]| {
        let mut s = vec![[0.0]; w];
        rows_sum(rows, 0, len, &|_, v| [v], &mut s);
        let m: Vec<f64> = s.iter().map(|s| s[0] / n).collect();
        rows_sum(rows, 0, len, &|i, v| [v - m[i]], &mut s);
        for ((o, m), r) in out.iter_mut().zip(&m).zip(&s) {
            *o = if m.is_finite() { m + r[0] / n } else { *m };
        }
    };
    match op {
        Sum => {
            let mut s = vec![[0.0]; w];
            rows_sum(rows, 0, len, &|_, v| [v], &mut s);
            out.iter_mut().zip(&s).for_each(|(o, s)| *o = s[0]);
        }
        Mean if len == 0 => out.fill(f64::NAN),
        Mean => means(out),
        Var | Sd if len < 2 => out.fill(f64::NAN),
        Var | Sd => {
            let mut m = vec![0.0; w];
            means(&mut m);
            let mut s = vec![[0.0; 2]; w];
            rows_sum(
                rows,
                0,
                len,
                &|i, v| [v - m[i], (v - m[i]) * (v - m[i])],
                &mut s,
            );
            for (o, [dev, ss]) in out.iter_mut().zip(s) {
                let var = (ss - dev * dev / n) / (len - 1) as f64;
                *o = if op == Sd { var.sqrt() } else { var };
            }
        }
        Prod => {
            let mut acc = vec![Scaled::ONE; w];
            for k0 in (0..len).step_by(8) {
                let rows_here = (len - k0).min(8);
                let mut block: [&[T]; 8] = [&[]; 8];
                for (j, b) in block[..rows_here].iter_mut().enumerate() {
                    *b = rows.row(k0 + j);
                }
                product::times_rows(&mut acc, &block[..rows_here]);
            }
            out.iter_mut().zip(acc).for_each(|(o, a)| *o = a.value());
        }
        Min | Max if len == 0 => out.fill(f64::NAN),
        Min | Max => {
            let max = op == Max;
            let mut acc: Vec<f64> = rows.row(0).iter().map(|x| x.to_f64()).collect();
            for k in 1..len {
                for (a, x) in acc.iter_mut().zip(rows.row(k)) {
                    let v = x.to_f64();
                    let better = v.is_nan() || (!max && below(v, *a)) || (max && below(*a, v));
                    if !a.is_nan() && better {
                        *a = v;
                    }
                }
            }
            out.copy_from_slice(&acc);
        }
        ArgMin | ArgMax if len == 0 => out.fill(f64::NAN),
        ArgMin | ArgMax => {
            let max = op == ArgMax;
            let mut best: Vec<f64> = rows.row(0).iter().map(|x| x.to_f64()).collect();
            out.fill(0.0);
            for k in 1..len {
                let kf = k as f64;
                for ((b, a), x) in best.iter_mut().zip(out.iter_mut()).zip(rows.row(k)) {
                    let v = x.to_f64();
                    let better = v.is_nan() || (!max && v < *b) || (max && v > *b);
                    if !b.is_nan() && better {
                        *b = v;
                        *a = kf;
                    }
                }
            }
        }
        Any | All => {
            let any = op == Any;
            let mut acc = vec![!any; w];
            for k in 0..len {
                for (a, x) in acc.iter_mut().zip(rows.row(k)) {
                    let t = x.to_f64() != 0.0;
                    *a = if any { *a | t } else { *a & t };
                }
            }
            out.iter_mut()
                .zip(acc)
                .for_each(|(o, a)| *o = a as u8 as f64);
        }
    }
}
