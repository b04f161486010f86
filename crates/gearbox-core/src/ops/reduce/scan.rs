//! The CPU kernel of cumulative sums and products ([`scan`]): every lane of
//! an `(inner, len, outer)` layout scanned in lane order (a running f64 sum,
//! or a running [`crate::ops::product`] product), on all cores.
//!
//! Contiguous lanes (`inner == 1`) are scanned in parallel, a lane per
//! task. Strided lanes (`inner > 1`) are scanned a block of rows at a time:
//! within a block, tiles of consecutive lanes run in parallel, each carrying
//! its lanes' running values to the next block, and each row of a tile is a
//! contiguous run (vectorizable). Every lane is still accumulated strictly
//! in order, so results have the same bits on any number of threads.

use rayon::prelude::*;

use crate::error::Result;
use crate::memory;
use crate::ops::loops::{worth_parallel, PAR_MIN};

/// Elements per block of rows (strided lanes).
const BLOCK_VALUES: usize = 1 << 18;
/// The widest tile of strided lanes.
const TILE: usize = 512;

/// Inclusive scan of every lane: running accumulators `acc = f(acc, x)`
/// from `init`, each position getting `value(acc)`.
pub(super) fn scan<T, A, U>(
    op: &str,
    x: &[T],
    (inner, len, outer): (usize, usize, usize),
    init: A,
    f: impl Fn(A, T) -> A + Sync,
    value: impl Fn(A) -> U + Sync,
) -> Result<Vec<U>>
where
    T: Copy + Sync,
    A: Copy + Send + Sync,
    U: Copy + Default + Send + Sync,
{
    let mut y = memory::repeated(op, x.len(), U::default())?;
    if x.is_empty() {
        return Ok(y);
    }
    let parallel = worth_parallel(x.len(), 2);
    // A run of `xs` into `ys`, continuing from `acc` (one value per lane of
    // the run), leaving the running values in `acc`.
    let run = |acc: &mut [A], xs: &[T], ys: &mut [U]| {
        for ((a, &v), o) in acc.iter_mut().zip(xs).zip(ys) {
            *a = f(*a, v);
            *o = value(*a);
        }
    };
    if inner == 1 {
        let lane = |(xs, ys): (&[T], &mut [U])| {
            let mut a = init;
            for (&v, o) in xs.iter().zip(ys) {
                a = f(a, v);
                *o = value(a);
            }
        };
        if parallel && outer > 1 {
            let group = (PAR_MIN / len).max(1);
            x.par_chunks(len)
                .zip(y.par_chunks_mut(len))
                .with_min_len(group)
                .for_each(lane);
        } else {
            x.chunks(len).zip(y.chunks_mut(len)).for_each(lane);
        }
        return Ok(y);
    }
    let threads = rayon::current_num_threads().max(1);
    let width = inner.div_ceil(4 * threads).clamp(8, TILE).min(inner);
    let rows = (BLOCK_VALUES / inner).max(1);
    for (xo, yo) in x.chunks(inner * len).zip(y.chunks_mut(inner * len)) {
        let mut carries: Vec<Vec<A>> = (0..inner.div_ceil(width))
            .map(|t| vec![init; width.min(inner - t * width)])
            .collect();
        for (xb, yb) in xo.chunks(rows * inner).zip(yo.chunks_mut(rows * inner)) {
            if !parallel || carries.len() == 1 {
                for (xr, yr) in xb.chunks(inner).zip(yb.chunks_mut(inner)) {
                    for ((a, xs), ys) in carries
                        .iter_mut()
                        .zip(xr.chunks(width))
                        .zip(yr.chunks_mut(width))
                    {
                        run(a, xs, ys);
                    }
                }
                continue;
            }
            // Each tile's pieces of the block's rows, then the tiles in parallel.
            let mut pieces: Vec<Vec<(&[T], &mut [U])>> = carries
                .iter()
                .map(|_| Vec::with_capacity(xb.len() / inner))
                .collect();
            for (xr, yr) in xb.chunks(inner).zip(yb.chunks_mut(inner)) {
                for (p, piece) in pieces
                    .iter_mut()
                    .zip(xr.chunks(width).zip(yr.chunks_mut(width)))
                {
                    p.push(piece);
                }
            }
            pieces
                .into_par_iter()
                .zip(carries.par_iter_mut())
                .for_each(|(rows, a)| {
                    for (xs, ys) in rows {
                        run(a, xs, ys);
                    }
                });
        }
    }
    Ok(y)
}
