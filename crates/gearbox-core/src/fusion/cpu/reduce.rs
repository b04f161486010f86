//! The trailing reduction of a fused CPU kernel.
//!
//! The iteration space is seen in the `(inner, len, outer)` layout of
//! [`Shape::split_at_axis`] (`(1, n, 1)` for a full reduction); lane
//! `i + inner * o` collects the `len` values at `i + inner * (k + len * o)`.
//! Each task (a fixed range of positions) folds its tiles into a
//! [`Partial`]: accumulators for the lanes it touches. Partials are then
//! combined in task order (sums over a single lane by a pairwise tree), so the
//! result does not depend on the number of threads.
//!
//! Sums and means accumulate in f64, integer sums and means exactly in i128
//! (a sum outside i64 is an error, see [`crate::ops::integer`]), products in
//! a `Scaled` float whose exponent never overflows (see
//! [`crate::ops::product`]), min and max propagate NaN. Within a tile, a run
//! of one lane (axis 0 and full reductions: contiguous values) is folded in
//! eight independent accumulators combined in a fixed tree; rows of an inner
//! axis are added lane by lane.

use rayon::prelude::*;

use crate::buffer::{CastTo, HostBuffer};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::{IrReduce, KernelIr};
use crate::memory;
use crate::ops::integer;
use crate::ops::loops::worth_parallel;
use crate::ops::product::{Factor, Scaled};
use crate::ops::reduce::ReduceOp;

use super::eval::{internal, Src, Val};

/// The narrowest block of lanes a task of an inner-axis reduction splits
/// into ([`Reducer::lane_blocks`]).
const LANE_BLOCK_MIN: usize = 1024;

/// How values combine into an accumulator.
trait Fold<A: Copy> {
    /// The value of an empty fold.
    const ID: A;
    /// Adds `b` to `a`.
    fn comb(a: A, b: A) -> A;
    /// Folds whole eights of `xs` into `lanes`, value `8q + j` into lane
    /// `j`, in order: `lanes[j] = comb(lanes[j], xs[8q + j])`.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
    fn eights<T: CastTo<A> + Factor>(lanes: &mut [A; 8], xs: &[T]) {
        for c in xs.chunks_exact(8) {
            for j in 0..8 {
                lanes[j] = Self::comb(lanes[j], c[j].cast_to());
            }
        }
    }
    /// Folds one row's run into as many lanes: `acc[i] = comb(acc[i],
    /// xs[i])`.
    #[inline(always)]
    fn row<T: CastTo<A> + Factor>(acc: &mut [A], xs: &[T]) {
        acc.iter_mut()
            .zip(xs)
            .for_each(|(a, &x)| *a = Self::comb(*a, x.cast_to()));
    }
}

struct Sum;
struct Prod;
struct Min;
struct Max;

impl Fold<f64> for Sum {
    const ID: f64 = 0.0;
    #[inline(always)]
    fn comb(a: f64, b: f64) -> f64 {
        a + b
    }
}

impl Fold<i128> for Sum {
    const ID: i128 = 0;
    #[inline(always)]
    fn comb(a: i128, b: i128) -> i128 {
        // Cannot overflow: fewer than 2^64 values of magnitude at most 2^63.
        a + b
    }
}

impl Fold<Scaled> for Prod {
    const ID: Scaled = Scaled::ONE;
    #[inline(always)]
    fn comb(a: Scaled, b: Scaled) -> Scaled {
        a.times(b)
    }
    /// Eight rounds of plain f64 multiplications between normalizations
    /// where every factor is safe ([`crate::ops::product::times_eights`]):
    /// the same values.
    #[inline(always)]
    fn eights<T: CastTo<Scaled> + Factor>(lanes: &mut [Scaled; 8], xs: &[T]) {
        crate::ops::product::times_eights(lanes, xs);
    }
    /// Plain multiplications where every factor of the run is safe
    /// ([`crate::ops::product::times_row`]): the same values.
    #[inline(always)]
    fn row<T: CastTo<Scaled> + Factor>(acc: &mut [Scaled], xs: &[T]) {
        crate::ops::product::times_row(acc, xs);
    }
}

// Integer values widen exactly into the exact-sum accumulator.
impl CastTo<i128> for i64 {
    #[inline(always)]
    fn cast_to(self) -> i128 {
        i128::from(self)
    }
}

impl CastTo<i128> for bool {
    #[inline(always)]
    fn cast_to(self) -> i128 {
        i128::from(self)
    }
}

/// Any value as a one-factor product (through f64, as op by op).
macro_rules! scaled_from {
    ($($t:ty),*) => {$(
        impl CastTo<Scaled> for $t {
            #[inline(always)]
            fn cast_to(self) -> Scaled {
                Scaled::of(CastTo::<f64>::cast_to(self))
            }
        }
    )*};
}
scaled_from!(bool, i64, f32, f64);

impl Fold<f64> for Min {
    const ID: f64 = f64::INFINITY;
    /// NaN wins; `-0.0` is below `+0.0` (as in the op-by-op path), so the
    /// result does not depend on the order of folding.
    #[inline(always)]
    fn comb(a: f64, b: f64) -> f64 {
        if b < a || b.is_nan() || (b == a && b.is_sign_negative()) {
            b
        } else {
            a
        }
    }
}

impl Fold<f64> for Max {
    const ID: f64 = f64::NEG_INFINITY;
    /// NaN wins; `+0.0` is above `-0.0`.
    #[inline(always)]
    fn comb(a: f64, b: f64) -> f64 {
        if b > a || b.is_nan() || (b == a && b.is_sign_positive()) {
            b
        } else {
            a
        }
    }
}

impl Fold<i64> for Min {
    const ID: i64 = i64::MAX;
    #[inline(always)]
    fn comb(a: i64, b: i64) -> i64 {
        a.min(b)
    }
}

impl Fold<i64> for Max {
    const ID: i64 = i64::MIN;
    #[inline(always)]
    fn comb(a: i64, b: i64) -> i64 {
        a.max(b)
    }
}

/// Which [`Fold`] a reduction uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sum,
    Prod,
    Min,
    Max,
}

/// Accumulators for a range of lanes.
#[derive(Debug, Clone)]
pub(super) enum Acc {
    F64(Vec<f64>),
    /// Integer minima and maxima.
    I64(Vec<i64>),
    /// Exact integer sums (and means).
    I128(Vec<i128>),
    /// Products.
    Prod(Vec<Scaled>),
}

impl Acc {
    /// The accumulators, where they are f64 values (float sums and
    /// means, float minima and maxima).
    pub(super) fn f64_lanes_mut(&mut self) -> Option<&mut [f64]> {
        match self {
            Acc::F64(a) => Some(a),
            _ => None,
        }
    }

    /// The accumulators, where they are products.
    pub(super) fn products_mut(&mut self) -> Option<&mut [Scaled]> {
        match self {
            Acc::Prod(a) => Some(a),
            _ => None,
        }
    }
}

impl Partial {
    /// The accumulators.
    pub(super) fn acc_mut(&mut self) -> &mut Acc {
        &mut self.acc
    }
}

/// A task's accumulators: lanes `lane0..lane0 + len`.
#[derive(Debug, Clone)]
pub(super) struct Partial {
    lane0: usize,
    acc: Acc,
}

/// The reduction closing a kernel, with its layout.
#[derive(Debug, Clone)]
pub(super) struct Reducer {
    op: ReduceOp,
    axis: Option<usize>,
    kind: Kind,
    int_acc: bool,
    dtype: DType,
    inner: usize,
    len: usize,
    outer: usize,
}

impl Reducer {
    /// The reducer for `r`, closing `kernel`; an error when min or max would
    /// have to reduce an empty lane.
    pub(super) fn new(kernel: &KernelIr, r: &IrReduce) -> Result<Reducer> {
        let shape = kernel.shape();
        let (inner, len, outer) = match r.axis {
            None => (1, shape.numel(), 1),
            Some(a) => shape.split_at_axis(a),
        };
        let kind = match r.op {
            ReduceOp::Sum | ReduceOp::Mean => Kind::Sum,
            ReduceOp::Prod => Kind::Prod,
            ReduceOp::Min | ReduceOp::All => Kind::Min,
            ReduceOp::Max | ReduceOp::Any => Kind::Max,
            other => return Err(internal(&format!("a fused {} reduction", other.name()))),
        };
        if len == 0 && inner * outer > 0 && matches!(r.op, ReduceOp::Min | ReduceOp::Max) {
            return Err(Error::Empty {
                op: r.op.name(),
                shape: shape.clone(),
                why: "it has no element to return",
            });
        }
        let int_input = matches!(kernel.nodes()[r.node].dtype, DType::I64 | DType::Bool);
        Ok(Reducer {
            op: r.op,
            axis: r.axis,
            kind,
            int_acc: int_input && kind != Kind::Prod,
            dtype: r.dtype,
            inner,
            len,
            outer,
        })
    }

    /// Positions per task: `base`, or more for an inner axis, so that a task
    /// covers enough rows that its lane accumulators stay small next to the
    /// values it reads. (Eight tasks of eight rows for `sum_axis(1)` of a
    /// 10^6 x 64 matrix, instead of one, ran 30-40% slower on two cores:
    /// every task streams its 8 MB of accumulators once a row, and the
    /// partials cost a merge.)
    pub(super) fn task_len(&self, base: usize) -> usize {
        if self.inner > 1 && self.len > 0 {
            let rows = self.len.div_ceil(16).max(64).min(self.len);
            base.max(self.inner * rows)
        } else {
            base
        }
    }

    /// The lanes' count per slab (`inner` of the layout).
    pub(super) fn inner(&self) -> usize {
        self.inner
    }

    /// The values per lane (`len` of the layout).
    pub(super) fn lane_len(&self) -> usize {
        self.len
    }

    /// The reduction.
    pub(super) fn op(&self) -> ReduceOp {
        self.op
    }

    /// The result's dtype.
    pub(super) fn dtype(&self) -> DType {
        self.dtype
    }

    /// The width of the lane blocks that tasks of `task` positions (`tasks`
    /// of them) split into, or `None` where they do not split: a reduction
    /// along an inner axis whose tasks each lie within one slab, with too
    /// few tasks to keep `threads` busy. Blocks are at most a `tile` wide
    /// (their accumulators stay in cache) and at least [`LANE_BLOCK_MIN`].
    pub(super) fn lane_blocks(
        &self,
        task: usize,
        tasks: usize,
        threads: usize,
        tile: usize,
    ) -> Option<usize> {
        let slab = self.inner * self.len;
        let within_slabs = slab > 0 && slab.is_multiple_of(task);
        if self.inner < 2 * LANE_BLOCK_MIN || !within_slabs || tasks >= 4 * threads {
            return None;
        }
        let splits = (4 * threads).div_ceil(tasks);
        Some((self.inner / splits).clamp(LANE_BLOCK_MIN, tile.max(LANE_BLOCK_MIN)))
    }

    /// Empty accumulators for lanes `i0..i1` of slab `o`.
    pub(super) fn slab_partial(&self, o: usize, (i0, i1): (usize, usize)) -> Result<Partial> {
        Ok(Partial {
            lane0: o * self.inner + i0,
            acc: self.acc(i1 - i0)?,
        })
    }

    /// Accumulators for every lane, at the fold's identity: the total that
    /// [`Reducer::finish`] merges partials into and [`Reducer::result`]
    /// turns into the result.
    pub(super) fn empty_total(&self) -> Result<Acc> {
        self.acc(self.inner * self.outer)
    }

    /// `lanes` accumulators at the fold's identity (one per output lane:
    /// as many as the result has values, so allocated fallibly).
    fn acc(&self, lanes: usize) -> Result<Acc> {
        let op = self.op.name();
        Ok(match (self.kind, self.int_acc) {
            (Kind::Prod, _) => Acc::Prod(memory::repeated(op, lanes, <Prod as Fold<Scaled>>::ID)?),
            (Kind::Sum, true) => Acc::I128(memory::repeated(op, lanes, <Sum as Fold<i128>>::ID)?),
            (Kind::Min, true) => Acc::I64(memory::filled(op, lanes, <Min as Fold<i64>>::ID)?),
            (Kind::Max, true) => Acc::I64(memory::filled(op, lanes, <Max as Fold<i64>>::ID)?),
            (Kind::Sum, false) => Acc::F64(memory::filled(op, lanes, <Sum as Fold<f64>>::ID)?),
            (Kind::Min, false) => Acc::F64(memory::filled(op, lanes, <Min as Fold<f64>>::ID)?),
            (Kind::Max, false) => Acc::F64(memory::filled(op, lanes, <Max as Fold<f64>>::ID)?),
        })
    }

    /// Empty accumulators for the task over positions `a..b` (`a < b`).
    pub(super) fn partial(&self, a: usize, b: usize) -> Result<Partial> {
        let slab = (self.inner * self.len).max(1);
        let lane0 = a / slab * self.inner;
        let end = ((b.max(a + 1) - 1) / slab + 1) * self.inner;
        Ok(Partial {
            lane0,
            acc: self.acc(end - lane0)?,
        })
    }

    /// Folds the values of positions `start..start + m` into `p`.
    pub(super) fn fold(&self, p: &mut Partial, start: usize, v: Val<'_>) -> Result<()> {
        macro_rules! each {
            ($F:ty, $A:ty, $acc:expr) => {
                match v {
                    Val::Bool(Src::Slice(x)) => self.tile::<$F, $A, _>(p.lane0, $acc, start, x),
                    Val::I64(Src::Slice(x)) => self.tile::<$F, $A, _>(p.lane0, $acc, start, x),
                    Val::F32(Src::Slice(x)) => self.tile::<$F, $A, _>(p.lane0, $acc, start, x),
                    Val::F64(Src::Slice(x)) => self.tile::<$F, $A, _>(p.lane0, $acc, start, x),
                    _ => return Err(internal("a reduction of a splatted value")),
                }
            };
        }
        match (self.kind, &mut p.acc) {
            (Kind::Sum, Acc::F64(a)) => each!(Sum, f64, a),
            (Kind::Sum, Acc::I128(a)) => match v {
                Val::Bool(Src::Slice(x)) => self.tile::<Sum, i128, _>(p.lane0, a, start, x),
                Val::I64(Src::Slice(x)) => self.tile::<Sum, i128, _>(p.lane0, a, start, x),
                _ => return Err(internal("an exact integer sum of floats")),
            },
            (Kind::Prod, Acc::Prod(a)) => each!(Prod, Scaled, a),
            (Kind::Min, Acc::F64(a)) => each!(Min, f64, a),
            (Kind::Min, Acc::I64(a)) => each!(Min, i64, a),
            (Kind::Max, Acc::F64(a)) => each!(Max, f64, a),
            (Kind::Max, Acc::I64(a)) => each!(Max, i64, a),
            _ => return Err(internal("an accumulator of another kind")),
        }
        Ok(())
    }

    /// Folds one tile's values (positions `start..`) into lanes `lane0..`.
    #[inline(always)]
    fn tile<F: Fold<A>, A: Copy, T: CastTo<A> + Factor>(
        &self,
        lane0: usize,
        acc: &mut [A],
        start: usize,
        xs: &[T],
    ) {
        let (inner, len) = (self.inner, self.len);
        let end = start + xs.len();
        let mut p = start;
        if inner == 1 {
            // Each lane is a contiguous run.
            let mut lane = start / len;
            while p < end {
                let stop = ((lane + 1) * len).min(end);
                let a = &mut acc[lane - lane0];
                *a = F::comb(*a, run::<F, A, T>(&xs[p - start..stop - start]));
                p = stop;
                lane += 1;
            }
        } else {
            // A row of `inner` consecutive values feeds `inner` lanes; the
            // position is tracked as (i, k, o) without dividing per row.
            let row = start / inner;
            let (mut i, mut o) = (start - row * inner, row / len);
            let mut k = row - o * len;
            while p < end {
                let stop = (p + inner - i).min(end);
                let l = o * inner + i - lane0;
                F::row(&mut acc[l..l + (stop - p)], &xs[p - start..stop - start]);
                p = stop;
                i = 0;
                k += 1;
                if k == len {
                    k = 0;
                    o += 1;
                }
            }
        }
    }

    /// Combines the partials (in task order) and finishes the result
    /// ([`Reducer::result`]).
    pub(super) fn finish(&self, parts: Vec<Partial>) -> Result<HostBuffer> {
        let lanes = self.inner * self.outer;
        let mut total = self.empty_total()?;
        match (&mut total, self.kind) {
            (Acc::F64(t), Kind::Sum) if lanes == 1 => {
                let sums: Vec<f64> = parts
                    .iter()
                    .filter_map(|p| match &p.acc {
                        Acc::F64(a) => a.first().copied(),
                        _ => None,
                    })
                    .collect();
                t[0] = pairwise(&sums);
            }
            (Acc::F64(t), Kind::Min) => merge_all::<Min, f64>(t, &parts, |a| match a {
                Acc::F64(a) => Some(a),
                _ => None,
            })?,
            (Acc::F64(t), Kind::Max) => merge_all::<Max, f64>(t, &parts, |a| match a {
                Acc::F64(a) => Some(a),
                _ => None,
            })?,
            (Acc::F64(t), _) => merge_all::<Sum, f64>(t, &parts, |a| match a {
                Acc::F64(a) => Some(a),
                _ => None,
            })?,
            (Acc::I64(t), Kind::Min) => merge_all::<Min, i64>(t, &parts, |a| match a {
                Acc::I64(a) => Some(a),
                _ => None,
            })?,
            (Acc::I64(t), _) => merge_all::<Max, i64>(t, &parts, |a| match a {
                Acc::I64(a) => Some(a),
                _ => None,
            })?,
            (Acc::I128(t), _) => merge_all::<Sum, i128>(t, &parts, |a| match a {
                Acc::I128(a) => Some(a),
                _ => None,
            })?,
            (Acc::Prod(t), _) => merge_all::<Prod, Scaled>(t, &parts, |a| match a {
                Acc::Prod(a) => Some(a),
                _ => None,
            })?,
        }
        self.result(total)
    }

    /// The result from every lane's total ([`Reducer::empty_total`] with
    /// everything folded in): means divided by the lane length, products
    /// rounded, then converted to the reduction's dtype.
    pub(super) fn result(&self, total: Acc) -> Result<HostBuffer> {
        let mean = |v: &mut [f64]| {
            if self.op == ReduceOp::Mean {
                let n = self.len as f64;
                if worth_parallel(v.len(), 1) {
                    v.par_iter_mut().for_each(|x| *x /= n);
                } else {
                    v.iter_mut().for_each(|x| *x /= n);
                }
            }
        };
        let buf = match total {
            // An empty lane of `any` (`all`) is false (true), not the
            // maximum's (minimum's) identity.
            Acc::I64(v) if self.len == 0 && matches!(self.op, ReduceOp::Any | ReduceOp::All) => {
                HostBuffer::Bool(vec![self.op == ReduceOp::All; v.len()])
            }
            Acc::I64(v) => HostBuffer::I64(v),
            Acc::I128(v) if self.op == ReduceOp::Mean => {
                // The exact total, rounded once, divided once (as op by op).
                let mut v: Vec<f64> = v.into_iter().map(|t| t as f64).collect();
                mean(&mut v);
                HostBuffer::F64(v)
            }
            Acc::I128(v) => HostBuffer::I64(integer::narrow_sums(&v, self.axis, self.len)?),
            Acc::Prod(v) if worth_parallel(v.len(), 3) => HostBuffer::F64(memory::par_collect(
                self.op.name(),
                v.par_iter().map(|p| p.value()),
            )?),
            Acc::Prod(v) => HostBuffer::F64(v.into_iter().map(Scaled::value).collect()),
            Acc::F64(mut v) => {
                mean(&mut v);
                HostBuffer::F64(v)
            }
        };
        Ok(if buf.dtype() == self.dtype {
            buf
        } else {
            buf.cast(self.dtype)?
        })
    }
}

/// Combines every partial's accumulators (read by `get`, which fails on
/// another kind) into `total`, in task order. Each lane meets its
/// partials in that order however the lanes are shared out, so large
/// totals merge in parallel chunks of lanes.
fn merge_all<F: Fold<A>, A: Copy + Send + Sync>(
    total: &mut [A],
    parts: &[Partial],
    get: impl Fn(&Acc) -> Option<&Vec<A>>,
) -> Result<()> {
    let views: Vec<(usize, &[A])> = parts
        .iter()
        .map(|p| {
            get(&p.acc)
                .map(|a| (p.lane0, a.as_slice()))
                .ok_or_else(|| internal("mixed accumulators"))
        })
        .collect::<Result<_>>()?;
    let merge = |(c, out): (usize, &mut [A])| {
        let lo = c * MERGE_CHUNK;
        let hi = lo + out.len();
        for &(l0, a) in &views {
            let (s, e) = (l0.max(lo), (l0 + a.len()).min(hi));
            if s < e {
                out[s - lo..e - lo]
                    .iter_mut()
                    .zip(&a[s - l0..e - l0])
                    .for_each(|(t, &x)| *t = F::comb(*t, x));
            }
        }
    };
    if worth_parallel(total.len(), 1) {
        total
            .par_chunks_mut(MERGE_CHUNK)
            .enumerate()
            .for_each(merge);
    } else {
        total.chunks_mut(MERGE_CHUNK).enumerate().for_each(merge);
    }
    Ok(())
}

/// Lanes per parallel piece of [`merge_all`].
const MERGE_CHUNK: usize = 1 << 14;

/// Values folded directly by [`run_block`] before pairwise combination.
const PAIRWISE_BLOCK: usize = 128;

/// Folds a contiguous run pairwise: halves recursively down to blocks of
/// [`PAIRWISE_BLOCK`] values, each folded by [`run_block`], so a sum's
/// rounding error grows like `log2(n)`, not `n` (numpy's scheme).
#[inline(always)]
fn run<F: Fold<A>, A: Copy, T: CastTo<A> + Factor>(xs: &[T]) -> A {
    if xs.len() <= PAIRWISE_BLOCK {
        return run_block::<F, A, T>(xs);
    }
    let (l, r) = xs.split_at(xs.len() / 2);
    F::comb(run::<F, A, T>(l), run::<F, A, T>(r))
}

/// Folds at most a block: eight independent accumulators (so the loop
/// vectorizes), combined in a fixed halving tree (lane `j` with `j + 4`, then
/// `j` with `j + 2`, then the last two), then the tail.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // indexing keeps the lanes in vector order
fn run_block<F: Fold<A>, A: Copy, T: CastTo<A> + Factor>(xs: &[T]) -> A {
    let mut lanes = [F::ID; 8];
    let chunks = xs.chunks_exact(8);
    F::eights(&mut lanes, &xs[..xs.len() / 8 * 8]);
    let mut tail = F::ID;
    for &x in chunks.remainder() {
        tail = F::comb(tail, x.cast_to());
    }
    let mut half = [F::ID; 4];
    for j in 0..4 {
        half[j] = F::comb(lanes[j], lanes[j + 4]);
    }
    let pair = [F::comb(half[0], half[2]), F::comb(half[1], half[3])];
    F::comb(F::comb(pair[0], pair[1]), tail)
}

/// Pairwise sum of per-task partial sums.
fn pairwise(v: &[f64]) -> f64 {
    if v.len() <= 8 {
        return v.iter().fold(0.0, |a, &b| a + b);
    }
    let (l, r) = v.split_at(v.len() / 2);
    pairwise(l) + pairwise(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::binary::BinaryOp;
    use crate::ops::reduce::Identity;

    /// The CPU's accumulators are the definitions' monoids: the same
    /// identities and the same combination as the binary op, NaN and signed
    /// zeros included (the renderers spell the same binary ops).
    #[test]
    fn the_accumulators_are_the_definitions_monoids() {
        let samples = [
            -2.5,
            -0.0,
            0.0,
            1.0,
            3.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let same = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
        let check = |op: ReduceOp, id: f64, comb: fn(f64, f64) -> f64| {
            let m = op.monoid().unwrap();
            let want_id = match m.identity {
                Identity::Zero => 0.0,
                Identity::One => 1.0,
                Identity::Highest => f64::INFINITY,
                Identity::Lowest => f64::NEG_INFINITY,
            };
            assert_eq!(id.to_bits(), want_id.to_bits(), "{}", op.name());
            for a in samples {
                for b in samples {
                    let want = m.combine.apply(a, b);
                    assert!(same(comb(a, b), want), "{} {a} {b}", op.name());
                }
            }
        };
        check(
            ReduceOp::Sum,
            <Sum as Fold<f64>>::ID,
            <Sum as Fold<f64>>::comb,
        );
        check(
            ReduceOp::Min,
            <Min as Fold<f64>>::ID,
            <Min as Fold<f64>>::comb,
        );
        check(
            ReduceOp::Max,
            <Max as Fold<f64>>::ID,
            <Max as Fold<f64>>::comb,
        );
        assert_eq!(ReduceOp::Mean.monoid().unwrap().combine, BinaryOp::Add);
        assert!(ReduceOp::Mean.monoid().unwrap().divides_by_count);
        // Products accumulate with a scaled exponent: the same value as the
        // multiplication where it does not overflow.
        let m = ReduceOp::Prod.monoid().unwrap();
        assert_eq!((m.combine, m.identity), (BinaryOp::Mul, Identity::One));
        assert_eq!(<Prod as Fold<Scaled>>::ID.value(), 1.0);
        let p = <Prod as Fold<Scaled>>::comb(Scaled::of(3.0), Scaled::of(-2.5));
        assert_eq!(p.value(), BinaryOp::Mul.apply(3.0, -2.5));
    }
}
