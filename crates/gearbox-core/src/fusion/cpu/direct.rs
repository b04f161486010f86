//! Float sums, means and products along an inner axis of an input read as
//! it is (`x.sum_axis(1)` of a column-major matrix): the tiled fold's
//! values, computed without its tiles.
//!
//! The tiled fold ([`super::reduce`]) gives each lane its values in row
//! order within a task (a fixed range of positions) and combines the
//! tasks' partials in task order. Here every task's lanes are cut into
//! blocks of at most [`BLOCK`] lanes, all run in parallel, and a block
//! folds its rows several at a time into its lanes' accumulators: the same
//! additions (multiplications) in the same order, so the same bits, with
//! each accumulator loaded and stored once per several rows and each row's
//! run of the block read once, at memory speed on every core.

use rayon::prelude::*;

use super::reduce::{Partial, Reducer};
use super::{KernelOutputs, TASK};
use crate::buffer::{CastTo, HostBuffer};
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::fusion::ir::{IrReduce, KernelIr};
use crate::memory;
use crate::ops::loops::worth_parallel;
use crate::ops::product::{Factor, Scaled, ScaledLanes};
use crate::ops::reduce::ReduceOp;

/// The widest block of lanes: its accumulators stay in the core's cache.
const BLOCK: usize = 2048;
/// The widest block of lanes of a product (three values a lane: mantissa,
/// exponent and a block's plain products).
const PRODUCT_BLOCK: usize = 1024;

/// The kernel's reduction (a sum, mean or product of `x`, the input it
/// loads whole) along an inner axis, or `None` where this does not apply
/// (contiguous lanes, which the tiled fold reads well; integer and bool
/// values, whose sums are exact folds of their own; nothing to reduce).
pub(super) fn fold_an_input(
    kernel: &KernelIr,
    r: &IrReduce,
    x: &HostBuffer,
) -> Result<Option<KernelOutputs>> {
    let reducer = Reducer::new(kernel, r)?;
    let n = kernel.shape().numel();
    if reducer.inner() < 2 || n == 0 {
        return Ok(None);
    }
    let reduced = match x {
        HostBuffer::F64(v) => fold(&reducer, v)?,
        HostBuffer::F32(v) => fold(&reducer, v)?,
        _ => return Ok(None),
    };
    Ok(Some(KernelOutputs {
        outputs: Vec::new(),
        reduced: vec![reduced],
    }))
}

/// Every (task, block of lanes) folded, in parallel where the input is
/// large, the partials combined in task order; where every task covers
/// whole slabs (each lane lies in one task), the blocks fold straight into
/// the total instead (a task's partial merges into the identity
/// unchanged).
fn fold<T: Sync + Factor>(r: &Reducer, x: &[T]) -> Result<HostBuffer> {
    // The tiled fold's tasks (run_tiled), so that each partial covers the
    // rows it covers there.
    let (n, task, inner, len) = (x.len(), r.task_len(TASK), r.inner(), r.lane_len());
    let widest = if r.op() == ReduceOp::Prod {
        PRODUCT_BLOCK
    } else {
        BLOCK
    };
    let width = inner.min(widest);
    let parallel = worth_parallel(n, 1);
    if task.is_multiple_of(inner * len) {
        return match r.dtype() {
            DType::F32 => Ok(HostBuffer::F32(to_result(r, x, width, parallel)?)),
            DType::F64 => Ok(HostBuffer::F64(to_result(r, x, width, parallel)?)),
            other => Err(super::eval::internal(&format!(
                "a float fold into {other:?}"
            ))),
        };
    }
    let units: Vec<(usize, usize)> = (0..n.div_ceil(task))
        .flat_map(|t| (0..inner).step_by(width).map(move |i0| (t, i0)))
        .collect();
    let unit = |&(t, i0): &(usize, usize)| {
        let (a, b) = (t * task, ((t + 1) * task).min(n));
        block(r, x, (a, b), (i0, (i0 + width).min(inner)))
    };
    let parts: Vec<Vec<Partial>> = if parallel {
        units.par_iter().map(unit).collect::<Result<_>>()?
    } else {
        units.iter().map(unit).collect::<Result<_>>()?
    };
    r.finish(parts.into_iter().flatten().collect())
}

/// The result where every task covers whole slabs, so that each lane's
/// partial would merge into the identity unchanged: each block of lanes
/// folds all its rows from the identity and finishes its lanes as
/// [`Reducer::result`] does (a mean divided by the lane length, a product
/// rounded, then the result's dtype), written straight into the result.
fn to_result<T: Sync + Factor, D: Element>(
    r: &Reducer,
    x: &[T],
    width: usize,
    parallel: bool,
) -> Result<Vec<D>>
where
    f64: CastTo<D>,
{
    let (inner, len, op) = (r.inner(), r.lane_len(), r.op());
    let mut out = memory::zeroed::<D>(op.name(), x.len() / len)?;
    each_block(&mut out, inner, width, parallel, |piece, o, i0| {
        let at = Rows {
            start: o * inner * len + i0,
            stride: inner,
            width: piece.len(),
            rows: len,
        };
        if op == ReduceOp::Prod {
            let mut lanes = ScaledLanes::of(&vec![Scaled::ONE; piece.len()]);
            let rows: Vec<&[T]> = (0..at.rows).map(|k| at.row(x, k)).collect();
            lanes.times_rows(&rows);
            piece
                .iter_mut()
                .zip(lanes.values())
                .for_each(|(p, v)| *p = v.cast_to());
        } else {
            let mut acc = vec![0.0; piece.len()];
            add_rows(&mut acc, x, at);
            let n = if op == ReduceOp::Mean {
                len as f64
            } else {
                1.0
            };
            piece
                .iter_mut()
                .zip(acc)
                .for_each(|(p, a)| *p = if op == ReduceOp::Mean { a / n } else { a }.cast_to());
        }
    });
    Ok(out)
}

/// `f(piece, o, i0)` for every block of at most `width` lanes of `total`
/// (lanes `i0..` of slab `o`), in parallel or not.
fn each_block<A: Send>(
    total: &mut [A],
    inner: usize,
    width: usize,
    parallel: bool,
    f: impl Fn(&mut [A], usize, usize) + Sync,
) {
    let blocks = total.chunks_mut(inner).enumerate().flat_map(|(o, slab)| {
        slab.chunks_mut(width)
            .enumerate()
            .map(move |(j, p)| (o, j * width, p))
    });
    if parallel {
        blocks
            .collect::<Vec<_>>()
            .into_par_iter()
            .for_each(|(o, i0, p)| f(p, o, i0));
    } else {
        blocks.for_each(|(o, i0, p)| f(p, o, i0));
    }
}

/// Lanes `i0..i1` of the positions `a..b` (a task): one partial per slab
/// the task touches, each folding its rows in order (a task need not start
/// or end on a whole row: its first and last rows may hold only some of
/// the block's lanes).
fn block<T: Factor>(
    r: &Reducer,
    x: &[T],
    (a, b): (usize, usize),
    (i0, i1): (usize, usize),
) -> Result<Vec<Partial>> {
    let (inner, len) = (r.inner(), r.lane_len());
    // The block's lanes present in row `q` (a row of the whole layout).
    let lanes_of = |q: usize| {
        let lo = i0.max(a.saturating_sub(q * inner));
        (lo, i1.min(b - q * inner).max(lo))
    };
    let mut parts = Vec::new();
    let (mut q, end) = (a / inner, b.div_ceil(inner));
    while q < end {
        let o = q / len;
        let slab_end = ((o + 1) * len).min(end);
        let mut p = r.slab_partial(o, (i0, i1))?;
        while q < slab_end {
            // A run of rows holding every lane of the block, or one row.
            let mut run = q;
            while run < slab_end && lanes_of(run) == (i0, i1) {
                run += 1;
            }
            let (rows, (lo, hi)) = if run > q {
                (run - q, (i0, i1))
            } else {
                (1, lanes_of(q))
            };
            let at = Rows {
                start: q * inner + lo,
                stride: inner,
                width: hi - lo,
                rows,
            };
            fold_rows(r.op(), &mut p, x, at, lo - i0)?;
            q += rows;
        }
        parts.push(p);
    }
    Ok(parts)
}

/// `rows` rows of `width` lanes of `x`, row `k` at `start + k * stride`.
#[derive(Clone, Copy)]
struct Rows {
    start: usize,
    stride: usize,
    width: usize,
    rows: usize,
}

impl Rows {
    /// Row `k`'s run of values.
    #[inline(always)]
    fn row<'a, T>(&self, x: &'a [T], k: usize) -> &'a [T] {
        let s = self.start + k * self.stride;
        &x[s..s + self.width]
    }
}

/// `at`'s rows folded into the partial's accumulators from `lane` on.
fn fold_rows<T: Factor>(
    op: ReduceOp,
    p: &mut Partial,
    x: &[T],
    at: Rows,
    lane: usize,
) -> Result<()> {
    let acc = p.acc_mut();
    if op == ReduceOp::Prod {
        if let Some(a) = acc.products_mut() {
            multiply_rows(&mut a[lane..lane + at.width], x, at);
            return Ok(());
        }
    } else if let Some(a) = acc.f64_lanes_mut() {
        add_rows(&mut a[lane..lane + at.width], x, at);
        return Ok(());
    }
    Err(super::eval::internal("the accumulators of a direct fold"))
}

/// `acc[i] = acc[i] · row_k[i]` for every row in order, with the values of
/// [`Scaled::times`] one factor at a time ([`ScaledLanes`]).
fn multiply_rows<T: Factor>(acc: &mut [Scaled], x: &[T], at: Rows) {
    let mut lanes = ScaledLanes::of(acc);
    let rows: Vec<&[T]> = (0..at.rows).map(|k| at.row(x, k)).collect();
    lanes.times_rows(&rows);
    lanes.store(acc);
}

/// `acc[i] += row_k[i]` for every row in order ([`add_rows_body`]), in a
/// copy compiled for AVX2 where the CPU has it (the same additions on wider
/// vectors).
fn add_rows<T: Factor>(acc: &mut [f64], x: &[T], at: Rows) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { add_rows_avx2(acc, x, at) };
    }
    add_rows_body(acc, x, at)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_rows_avx2<T: Factor>(acc: &mut [f64], x: &[T], at: Rows) {
    add_rows_body(acc, x, at)
}

/// [`add_rows`], `R` rows per load and store of an accumulator: eight
/// where rows lie apart (each then read as a stream of its own), one where
/// they are contiguous (the block is then one stretch of memory, read in
/// order: `sum_axis(1)` of a 256^3 f64 array took 3.6 ms so, 5.9 ms two
/// rows at a time, 4.6 ms eight, on this 2-core machine).
#[inline(always)]
fn add_rows_body<T: Factor>(acc: &mut [f64], x: &[T], at: Rows) {
    if at.stride == at.width {
        add_r::<T, 1>(acc, x, at)
    } else {
        add_r::<T, 8>(acc, x, at)
    }
}

/// `acc[i] = (...(acc[i] + row_k[i]) + row_k+1[i]) ...`, `R` rows at a
/// time, then the rows left one at a time.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
fn add_r<T: Factor, const R: usize>(acc: &mut [f64], x: &[T], at: Rows) {
    let w = acc.len();
    let mut k = 0;
    while k + R <= at.rows {
        let r: [&[T]; R] = std::array::from_fn(|j| &at.row(x, k + j)[..w]);
        for i in 0..w {
            let mut a = acc[i];
            for row in &r {
                a += CastTo::<f64>::cast_to(row[i]);
            }
            acc[i] = a;
        }
        k += R;
    }
    for k in k..at.rows {
        let r = &at.row(x, k)[..w];
        for i in 0..w {
            acc[i] += CastTo::<f64>::cast_to(r[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use crate::buffer::HostBuffer;
    use crate::dtype::DType;
    use crate::fusion::ir::{Expr, IrNode, IrReduce, KernelIr};
    use crate::ops::reduce::ReduceOp;
    use crate::ops::unary::UnaryOp;
    use crate::shape::Shape;

    /// `op` along `axis` of the input read whole (the direct fold), or of
    /// `-(-x)` (the same values, computed: the tiled fold).
    fn reduce(
        x: &HostBuffer,
        dims: &[usize],
        op: ReduceOp,
        axis: usize,
        computed: bool,
    ) -> Vec<f64> {
        let shape = Shape::new(dims.to_vec());
        let dtype = x.dtype();
        let node = |expr| IrNode { expr, dtype };
        let mut nodes = vec![node(Expr::Load(0))];
        if computed {
            nodes.push(node(Expr::Unary(UnaryOp::Neg, 0)));
            nodes.push(node(Expr::Unary(UnaryOp::Neg, 1)));
        }
        let r = IrReduce {
            op,
            axis: Some(axis),
            node: nodes.len() - 1,
            dtype: op.result_dtype(dtype).unwrap(),
            companion: None,
        };
        let kernel =
            KernelIr::new(shape.clone(), vec![(shape, dtype)], nodes, vec![], Some(r)).unwrap();
        let out = run(&kernel, &[x]).unwrap().reduced.remove(0);
        out.cast(DType::F64)
            .unwrap()
            .as_slice::<f64>()
            .unwrap()
            .to_vec()
    }

    /// Values with spread exponents; for products, factors near 1 with
    /// huge and tiny ones, zeros, infinities and NaNs sprinkled.
    fn values(n: usize, seed: u64, product: bool) -> Vec<f64> {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                let sign = if s & 1 == 0 { 1.0 } else { -1.0 };
                match (product, (u * 1000.0) as u32) {
                    (true, 0) => 0.0,
                    (true, 1) => f64::INFINITY,
                    (true, 2) => f64::NAN,
                    (true, 3..=30) => sign * 1e200 * (1.0 + u),
                    (true, 31..=60) => sign * 1e-200 * (1.0 + u),
                    (true, _) => sign * (0.5 + 1.5 * u),
                    (false, k) => sign * (1.0 + u) * 2f64.powi(k as i32 % 40 - 20),
                }
            })
            .collect()
    }

    #[test]
    fn the_direct_fold_has_the_bits_of_the_tiled_fold() {
        // Tasks covering whole slabs (straight into the total), tasks
        // within a slab, and tasks straddling rows and slabs.
        let cases: &[(&[usize], usize)] = &[
            (&[7, 3], 1),
            (&[3000, 20], 1),
            (&[100_000, 8], 1),
            (&[100, 1000], 1),
            (&[4101, 65], 1),
            (&[64, 3, 2000], 1),
            (&[5, 7, 11], 1),
            (&[5, 7, 11], 2),
            (&[2000, 3, 50], 2),
        ];
        for (c, &(dims, axis)) in cases.iter().enumerate() {
            let n: usize = dims.iter().product();
            for op in [ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Prod] {
                let v = values(n, c as u64 + 1, op == ReduceOp::Prod);
                let f32s: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                for x in [HostBuffer::F64(v), HostBuffer::F32(f32s)] {
                    let direct = reduce(&x, dims, op, axis, false);
                    let tiled = reduce(&x, dims, op, axis, true);
                    for (i, (d, t)) in direct.iter().zip(&tiled).enumerate() {
                        assert!(
                            d.to_bits() == t.to_bits() || (d.is_nan() && t.is_nan()),
                            "{} {dims:?} axis {axis} {:?} lane {i}: {d:e} != {t:e}",
                            op.name(),
                            x.dtype()
                        );
                    }
                }
            }
        }
    }
}
