//! `any` and `all` of the op-by-op reductions: of contiguous lanes
//! ([`lane_logical`]) and of tiles of strided lanes ([`strided_logical`]).
//!
//! Both read a lane in looks of many values, each a vectorized OR (`any`)
//! or AND (`all`) of truth values (a bool's byte), and stop at the first
//! look that decides the answer: a true value for `any`, a false one for
//! `all`. Strided lanes are decided together: a tile stops once every one
//! of its lanes is.

use rayon::prelude::*;

use super::native::Native;
use super::sums::Rows;
use crate::ops::loops::{worth_parallel, PAR_MIN};

/// Values per look of a contiguous lane.
const LOOK: usize = 256;
/// Rows between checks of whether a strided tile is decided.
const ROWS_PER_CHECK: usize = 8;
/// The widest tile of strided lanes.
const WIDEST: usize = 2048;
/// Values per task when the rows of a few long strided lanes are split.
const ROW_CHUNK: usize = 1 << 16;

/// `any` (`any`) or `all` of every lane of an `(inner, len, outer)` layout
/// into `out` (lane `i + inner * o` at `i + inner * o`; 1.0 for true).
pub(super) fn logical_lanes<T: Native>(
    any: bool,
    x: &[T],
    (inner, len, outer): (usize, usize, usize),
    out: &mut [f64],
) {
    let layout = (inner, len, outer);
    match (any, inner) {
        (true, 1) => contiguous_lanes::<true, T>(x, len, out),
        (false, 1) => contiguous_lanes::<false, T>(x, len, out),
        (true, _) => strided_lanes::<true, T>(x, layout, out),
        (false, _) => strided_lanes::<false, T>(x, layout, out),
    }
}

/// Contiguous lanes of `len` values. Every lane's first look is probed on
/// this thread where that is cheap (random data decides there, and waking
/// the pool would cost more than the work); the lanes left open are read
/// on, in parallel when that is much.
fn contiguous_lanes<const ANY: bool, T: Native>(x: &[T], len: usize, out: &mut [f64]) {
    let lanes = out.len();
    let lane = |o: usize| &x[o * len..(o + 1) * len];
    // Open lanes are NaN until read on.
    let skip = if lanes * probe_len(len) <= PAR_MIN {
        for (o, r) in out.iter_mut().enumerate() {
            *r = probe::<ANY, T>(lane(o)).map_or(f64::NAN, |a| a as u8 as f64);
        }
        probe_len(len)
    } else {
        out.fill(f64::NAN);
        0
    };
    let open = out.iter().filter(|r| r.is_nan()).count();
    let read_on = |(o, r): (usize, &mut f64)| {
        if r.is_nan() {
            *r = lane_logical::<ANY, T>(lane(o), skip) as u8 as f64;
        }
    };
    if worth_parallel(open * (len - skip), 1) && lanes > 1 {
        let group = (PAR_MIN / len.max(1)).max(1);
        out.par_iter_mut()
            .enumerate()
            .with_min_len(group)
            .for_each(read_on);
    } else {
        out.iter_mut().enumerate().for_each(read_on);
    }
}

/// Strided lanes: tiles of consecutive lanes over all their rows, in
/// parallel, each stopping once decided; where the lanes are too few to
/// make tiles for every thread, the first rows on this thread (which
/// decide random data), then chunks of the rest in parallel.
fn strided_lanes<const ANY: bool, T: Native>(
    x: &[T],
    (inner, len, outer): (usize, usize, usize),
    out: &mut [f64],
) {
    let threads = rayon::current_num_threads().max(1);
    let parallel = worth_parallel(inner * len * outer, 1);
    let width = (inner / (4 * threads)).clamp(64, WIDEST);
    let tiles = outer * inner.div_ceil(width);
    let slab_rows = |o: usize, i0: usize, w: usize| Rows {
        x,
        start: o * inner * len + i0,
        stride: inner,
        width: w,
    };
    let to_out = |piece: &mut [f64], acc: &[bool]| {
        piece
            .iter_mut()
            .zip(acc)
            .for_each(|(p, &a)| *p = a as u8 as f64);
    };
    if !parallel || tiles >= 2 * threads {
        let task = |(t, piece): (usize, &mut [f64])| {
            let per_slab = inner.div_ceil(width);
            let (o, i0) = (t / per_slab, t % per_slab * width);
            let mut acc = vec![!ANY; piece.len()];
            strided_logical::<ANY, T>(slab_rows(o, i0, piece.len()), 0, len, &mut acc);
            to_out(piece, &acc);
        };
        let pieces = out.chunks_mut(inner).flat_map(|s| s.chunks_mut(width));
        if parallel {
            pieces
                .enumerate()
                .collect::<Vec<_>>()
                .into_par_iter()
                .for_each(task);
        } else {
            pieces.enumerate().for_each(task);
        }
        return;
    }
    let head = (PAR_MIN / inner).clamp(1, len.max(1));
    let chunk = (ROW_CHUNK / inner).max(ROWS_PER_CHECK);
    for (o, slab) in out.chunks_mut(inner).enumerate() {
        let rows = slab_rows(o, 0, inner);
        let mut acc = vec![!ANY; inner];
        strided_logical::<ANY, T>(rows, 0, head, &mut acc);
        if !settled::<ANY>(&acc) && head < len {
            let parts: Vec<Vec<bool>> = (head..len)
                .step_by(chunk)
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(|k0| {
                    let mut a = vec![!ANY; inner];
                    strided_logical::<ANY, T>(rows, k0, (k0 + chunk).min(len), &mut a);
                    a
                })
                .collect();
            for p in parts {
                for (a, b) in acc.iter_mut().zip(p) {
                    *a = if ANY { *a | b } else { *a & b };
                }
            }
        }
        to_out(slab, &acc);
    }
}

/// Whether the look `c` decides `any` (`ANY`: it holds a true value) or
/// `all` (it holds a false one).
#[inline(always)]
fn decides<const ANY: bool, T: Native>(c: &[T]) -> bool {
    if ANY {
        c.iter().fold(false, |a, x| a | x.truth())
    } else {
        !c.iter().fold(true, |a, x| a & x.truth())
    }
}

/// `any` (`ANY`) or `all` of the values of a contiguous lane, from its
/// first look on; `skip` values known not to decide it come first (a
/// probe already read them).
pub(super) fn lane_logical<const ANY: bool, T: Native>(xs: &[T], skip: usize) -> bool {
    let rest = &xs[skip.min(xs.len())..];
    if rest.chunks(LOOK).any(decides::<ANY, T>) {
        ANY
    } else {
        !ANY
    }
}

/// Whether the first look of a contiguous lane decides it, and how:
/// `Some(answer)` or `None` (read on from [`probe_len`]).
fn probe<const ANY: bool, T: Native>(xs: &[T]) -> Option<bool> {
    let head = &xs[..probe_len(xs.len())];
    if decides::<ANY, T>(head) {
        Some(ANY)
    } else if head.len() == xs.len() {
        Some(!ANY)
    } else {
        None
    }
}

/// Values a [`probe`] reads of a lane of `len`.
fn probe_len(len: usize) -> usize {
    len.min(LOOK)
}

/// `any` (`ANY`) or `all` of a tile of strided lanes over rows `lo..hi`,
/// folded into `acc` (each lane's answer over the rows before: false for
/// `any`, true for `all`, where none were), stopping once every lane is
/// decided.
pub(super) fn strided_logical<const ANY: bool, T: Native>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    acc: &mut [bool],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { strided_logical_avx2::<ANY, T>(rows, lo, hi, acc) };
    }
    strided_logical_body::<ANY, T>(rows, lo, hi, acc)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn strided_logical_avx2<const ANY: bool, T: Native>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    acc: &mut [bool],
) {
    strided_logical_body::<ANY, T>(rows, lo, hi, acc)
}

#[inline(always)]
fn strided_logical_body<const ANY: bool, T: Native>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    acc: &mut [bool],
) {
    let w = acc.len();
    let mut k = lo;
    while k < hi && !settled::<ANY>(acc) {
        for k in k..(k + ROWS_PER_CHECK).min(hi) {
            let r = &rows.row(k)[..w];
            for i in 0..w {
                acc[i] = if ANY {
                    acc[i] | r[i].truth()
                } else {
                    acc[i] & r[i].truth()
                };
            }
        }
        k += ROWS_PER_CHECK;
    }
}

/// Whether every lane is decided: all true for `any` (`ANY`), all false
/// for `all`.
#[inline(always)]
fn settled<const ANY: bool>(acc: &[bool]) -> bool {
    if ANY {
        acc.iter().fold(true, |s, &a| s & a)
    } else {
        !acc.iter().fold(false, |s, &a| s | a)
    }
}
