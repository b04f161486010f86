//! Pairwise sums of the op-by-op reductions, over contiguous lanes and over
//! strided lanes (runs of `inner` contiguous values), in one summation order
//! that depends only on the lane's length.
//!
//! # The order
//!
//! A lane of `n` values `x_0 .. x_{n-1}` is summed by recursive halving:
//! `S(lo, hi) = S(lo, mid) + S(mid, hi)` with `mid = lo + (hi - lo) / 2`,
//! down to blocks of at most [`BLOCK`] values. A block is summed in eight
//! accumulators `a_j = Σ x_{lo + 8q + j}` (each from `+0.0`, so a sum of
//! negative zeros is `+0.0`, as R's), the values past the last whole eight
//! in a ninth, `t`; the block's sum is
//! `((a_0 + a_4) + (a_2 + a_6)) + ((a_1 + a_5) + (a_3 + a_7)) + t`
//! (the fused interpreter's block order). Error `O(log n · ε)`.
//!
//! The same tree is used whether the lane is contiguous (`sum_axis(0)`) or
//! strided (`sum_axis(1)` of a column-major matrix, where a block of rows
//! adds whole runs of `inner` values into per-lane accumulators), so the
//! two give the same bits for transposed inputs. Halves with enough work
//! ([`worth_parallel`]) run as `rayon::join` tasks: the tree is fixed, so
//! the result does not depend on the number of threads.
//!
//! `logsumexp`'s terms `e^(x - m)` of an f32 lane are computed a block at a
//! time, 16 to a vector, before the block is summed ([`lane_exp_sum32`]):
//! the same terms in the same tree as a sum mapped value by value.
//!
//! A sum may add `N` terms per value at once (`f(x) -> [f64; N]`): the
//! variance's deviations and squared deviations share one pass, each summed
//! in the tree above (the same bits as two separate passes).

use crate::cpu::vectorized_fn;
use crate::dtype::Element;
use crate::ops::loops::worth_parallel;
use crate::ops::vmath::single;

use super::ReduceOp;

/// Work per value of a halving's sums, for [`worth_parallel`]: whether its
/// two halves run as parallel tasks (a load, a mapping, an add or two).
const HALF_COST: usize = 2;

/// Values (rows, for strided lanes) summed in one block.
pub(super) const BLOCK: usize = 128;

#[inline(always)]
fn add<const N: usize>(a: [f64; N], b: [f64; N]) -> [f64; N] {
    std::array::from_fn(|j| a[j] + b[j])
}

/// The lane halved recursively down to blocks of at most [`BLOCK`] values
/// (the order in the module docs), each block's `[f64; N]` from `block`
/// and the halves' added; halves with more than `cost` units of work a
/// value to share out ([`worth_parallel`]) run as parallel tasks.
fn halving<T: Sync, const N: usize>(
    xs: &[T],
    cost: usize,
    block: &(impl Fn(&[T]) -> [f64; N] + Sync),
) -> [f64; N] {
    if xs.len() <= BLOCK {
        return block(xs);
    }
    let (l, r) = xs.split_at(xs.len() / 2);
    let (a, b) = if worth_parallel(xs.len(), cost) {
        rayon::join(|| halving(l, cost, block), || halving(r, cost, block))
    } else {
        (halving(l, cost, block), halving(r, cost, block))
    };
    add(a, b)
}

/// Pairwise sum of `f(x)` over a contiguous lane (the order in the module
/// docs).
pub(super) fn lane_sum<T: Element, const N: usize, F>(xs: &[T], f: &F) -> [f64; N]
where
    F: Fn(f64) -> [f64; N] + Sync,
{
    halving(xs, HALF_COST, &|b: &[T]| block_sum(b, f))
}

/// `Σ e^(x - m)` over an f32 lane (`m` its maximum), in [`lane_sum`]'s
/// tree: each block's terms computed first, 16 to a vector
/// ([`shifted_exps`]), then summed as [`lane_sum`] sums a block.
pub(super) fn lane_exp_sum32(xs: &[f32], m: f32) -> f64 {
    let block = |b: &[f32]| {
        let mut terms = [0.0f32; BLOCK];
        let terms = &mut terms[..b.len()];
        shifted_exps(b, m, terms);
        block_sum(terms, &|v| [v])
    };
    halving(xs, ReduceOp::LogSumExp.cost(), &block)[0]
}

vectorized_fn!(
    /// `e^(x - m)` of each of `xs` into `out`, in f32.
    fn shifted_exps[](xs: &[f32], m: f32, out: &mut [f32]) {
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = single::exp(x - m);
        }
    }
);

/// One block ([`block_sum_body`]), in a copy compiled for AVX2 where the
/// CPU has it (the same operations, so the same bits, on wider vectors).
fn block_sum<T: Element, const N: usize, F>(xs: &[T], f: &F) -> [f64; N]
where
    F: Fn(f64) -> [f64; N],
{
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { block_sum_avx2(xs, f) };
    }
    block_sum_body(xs, f)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_sum_avx2<T: Element, const N: usize, F>(xs: &[T], f: &F) -> [f64; N]
where
    F: Fn(f64) -> [f64; N],
{
    block_sum_body(xs, f)
}

/// One block: eight accumulators, a tail, a fixed combination tree.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
fn block_sum_body<T: Element, const N: usize, F>(xs: &[T], f: &F) -> [f64; N]
where
    F: Fn(f64) -> [f64; N],
{
    let mut acc = [[0.0f64; 8]; N];
    let mut chunks = xs.chunks_exact(8);
    for c in &mut chunks {
        for j in 0..8 {
            let v = f(c[j].to_f64());
            for t in 0..N {
                acc[t][j] += v[t];
            }
        }
    }
    let mut tail = [0.0f64; N];
    for x in chunks.remainder() {
        let v = f(x.to_f64());
        for t in 0..N {
            tail[t] += v[t];
        }
    }
    std::array::from_fn(|t| combine8(&acc[t]) + tail[t])
}

#[inline(always)]
fn combine8(a: &[f64; 8]) -> f64 {
    let h = [a[0] + a[4], a[1] + a[5], a[2] + a[6], a[3] + a[7]];
    (h[0] + h[2]) + (h[1] + h[3])
}

/// Strided lanes: `width` lanes whose value `k` lies at
/// `x[start + k * stride ..][..width]` (a run of contiguous values per row).
#[derive(Clone, Copy)]
pub(super) struct Rows<'a, T> {
    /// The values.
    pub x: &'a [T],
    /// Offset of row 0's first lane.
    pub start: usize,
    /// Distance between rows.
    pub stride: usize,
    /// Lanes.
    pub width: usize,
}

impl<'a, T: Element> Rows<'a, T> {
    /// Row `k`'s run of values.
    #[inline(always)]
    pub(super) fn row(&self, k: usize) -> &'a [T] {
        let s = self.start + k * self.stride;
        &self.x[s..s + self.width]
    }
}

/// Pairwise sums of `f(p, x)` over rows `lo..hi` of `rows`, per lane (`p`
/// the lane's entry of `params`), into `out` (`rows.width` entries), in the
/// order in the module docs.
pub(super) fn rows_sum<T: Element, const N: usize, F>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    params: &[f64],
    f: &F,
    out: &mut [[f64; N]],
) where
    F: Fn(f64, f64) -> [f64; N] + Sync,
{
    if hi - lo <= BLOCK {
        rows_block(rows, lo, hi, params, f, out);
        return;
    }
    let mid = lo + (hi - lo) / 2;
    let mut right = vec![[0.0; N]; rows.width];
    if worth_parallel((hi - lo) * rows.width, HALF_COST) {
        rayon::join(
            || rows_sum(rows, lo, mid, params, f, out),
            || rows_sum(rows, mid, hi, params, f, &mut right),
        );
    } else {
        rows_sum(rows, lo, mid, params, f, out);
        rows_sum(rows, mid, hi, params, f, &mut right);
    }
    out.iter_mut()
        .zip(&right)
        .for_each(|(o, r)| *o = add(*o, *r));
}

/// One block of rows ([`rows_block_body`]), in a copy compiled for AVX2
/// where the CPU has it.
fn rows_block<T: Element, const N: usize, F>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    params: &[f64],
    f: &F,
    out: &mut [[f64; N]],
) where
    F: Fn(f64, f64) -> [f64; N],
{
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { rows_block_avx2(rows, lo, hi, params, f, out) };
    }
    rows_block_body(rows, lo, hi, params, f, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rows_block_avx2<T: Element, const N: usize, F>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    params: &[f64],
    f: &F,
    out: &mut [[f64; N]],
) where
    F: Fn(f64, f64) -> [f64; N],
{
    rows_block_body(rows, lo, hi, params, f, out)
}

/// One block of at most [`BLOCK`] rows: row `lo + 8q + j` into accumulator
/// `j`, the rows past the last whole eight into a tail, combined per lane as
/// [`block_sum`] combines.
#[inline(always)]
fn rows_block_body<T: Element, const N: usize, F>(
    rows: Rows<'_, T>,
    lo: usize,
    hi: usize,
    params: &[f64],
    f: &F,
    out: &mut [[f64; N]],
) where
    F: Fn(f64, f64) -> [f64; N],
{
    let w = rows.width;
    let whole = (hi - lo) / 8 * 8;
    let mut acc = vec![[0.0f64; N]; 9 * w];
    let (eight, tail) = acc.split_at_mut(8 * w);
    for r in 0..whole {
        let a = &mut eight[(r % 8) * w..(r % 8 + 1) * w];
        accumulate(a, rows.row(lo + r), params, f);
    }
    for r in whole..hi - lo {
        accumulate(tail, rows.row(lo + r), params, f);
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = std::array::from_fn(|t| {
            let a: [f64; 8] = std::array::from_fn(|j| eight[j * w + i][t]);
            combine8(&a) + tail[i][t]
        });
    }
}

#[inline(always)]
fn accumulate<T: Element, const N: usize, F>(acc: &mut [[f64; N]], row: &[T], params: &[f64], f: &F)
where
    F: Fn(f64, f64) -> [f64; N],
{
    for ((a, x), &p) in acc.iter_mut().zip(row).zip(params) {
        *a = add(*a, f(p, x.to_f64()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order in the module docs, written out directly.
    fn reference(x: &[f64]) -> f64 {
        if x.len() <= BLOCK {
            let mut a = [0.0; 8];
            let whole = x.len() / 8 * 8;
            for (k, v) in x[..whole].iter().enumerate() {
                a[k % 8] += v;
            }
            let t = x[whole..].iter().fold(0.0, |s, v| s + v);
            return combine8(&a) + t;
        }
        let (l, r) = x.split_at(x.len() / 2);
        reference(l) + reference(r)
    }

    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 1e3 + 0.25
            })
            .collect()
    }

    #[test]
    fn contiguous_and_strided_sums_follow_the_documented_tree() {
        for n in [0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 257, 1000, 40_000] {
            let x = values(n, n as u64);
            let want = reference(&x);
            assert_eq!(
                lane_sum(&x, &|v| [v])[0].to_bits(),
                want.to_bits(),
                "n = {n}"
            );
            // The same lane as the third of five strided lanes.
            let w = 5;
            let mut xs = vec![0.5; n * w];
            for k in 0..n {
                xs[k * w + 2] = x[k];
            }
            let mut out = vec![[0.0]; w];
            rows_sum(
                Rows {
                    x: &xs,
                    start: 0,
                    stride: w,
                    width: w,
                },
                0,
                n,
                &[0.0; 5],
                &|_, v| [v],
                &mut out,
            );
            assert_eq!(out[2][0].to_bits(), want.to_bits(), "strided n = {n}");
        }
    }

    #[test]
    fn a_sum_of_negative_zeros_is_positive_zero() {
        let x = vec![-0.0f64; 20];
        assert!(lane_sum(&x, &|v| [v])[0].is_sign_positive());
        let mut out = vec![[1.0]; 4];
        rows_sum(
            Rows {
                x: &x,
                start: 0,
                stride: 4,
                width: 4,
            },
            0,
            5,
            &[0.0; 4],
            &|_, v| [v],
            &mut out,
        );
        assert!(out.iter().all(|o| o[0] == 0.0 && o[0].is_sign_positive()));
    }
}
