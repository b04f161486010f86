//! The typed inner loops of the fused CPU kernels: one node over one tile.
//!
//! Each function matches on the dtypes and on the op once and then runs a
//! tight loop specialised for that op (the op is a constant inside the loop,
//! so the per-op `match` of [`UnaryOp::apply`] and friends folds away and the
//! loop can vectorize). The values come from the same functions as the
//! op-by-op CPU path, so fused and unfused results are identical.

use std::cell::Cell;

use crate::buffer::{CastTo, HostBuffer};
use crate::cpu::vectorized_fn;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::{FnRef, MAX_CALL_ARGS};
use crate::ops::binary::BinaryOp;
use crate::ops::integer;
use crate::ops::select::Pick;
use crate::ops::unary::{Real, UnaryOp};

/// A node's values over one tile: a slice of `m` values, or one value that
/// holds at every position.
#[derive(Debug, Clone, Copy)]
pub(super) enum Src<'a, T> {
    /// One value per position.
    Slice(&'a [T]),
    /// The same value at every position.
    Splat(T),
}

/// [`Src`] of any dtype.
#[derive(Debug, Clone, Copy)]
pub(super) enum Val<'a> {
    Bool(Src<'a, bool>),
    I64(Src<'a, i64>),
    F32(Src<'a, f32>),
    F64(Src<'a, f64>),
}

/// One value of any dtype: a node that is the same at every position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Scalar {
    Bool(bool),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl Scalar {
    /// The first value of `buf`, if it has one.
    pub(super) fn first(buf: &HostBuffer) -> Option<Scalar> {
        Some(match buf {
            HostBuffer::Bool(v) => Scalar::Bool(*v.first()?),
            HostBuffer::I64(v) => Scalar::I64(*v.first()?),
            HostBuffer::F32(v) => Scalar::F32(*v.first()?),
            HostBuffer::F64(v) => Scalar::F64(*v.first()?),
        })
    }

    /// The value splatted over a tile.
    pub(super) fn val(self) -> Val<'static> {
        match self {
            Scalar::Bool(x) => Val::Bool(Src::Splat(x)),
            Scalar::I64(x) => Val::I64(Src::Splat(x)),
            Scalar::F32(x) => Val::F32(Src::Splat(x)),
            Scalar::F64(x) => Val::F64(Src::Splat(x)),
        }
    }

    /// Writes the value over all of `buf`.
    pub(super) fn fill(self, buf: &mut HostBuffer) {
        match (self, buf) {
            (Scalar::Bool(x), HostBuffer::Bool(v)) => v.fill(x),
            (Scalar::I64(x), HostBuffer::I64(v)) => v.fill(x),
            (Scalar::F32(x), HostBuffer::F32(v)) => v.fill(x),
            (Scalar::F64(x), HostBuffer::F64(v)) => v.fill(x),
            // A slot always has its node's dtype; nothing to do otherwise.
            _ => {}
        }
    }
}

/// The first `m` values of a scratch buffer.
pub(super) fn head(buf: &HostBuffer, m: usize) -> Val<'_> {
    match buf {
        HostBuffer::Bool(v) => Val::Bool(Src::Slice(&v[..m])),
        HostBuffer::I64(v) => Val::I64(Src::Slice(&v[..m])),
        HostBuffer::F32(v) => Val::F32(Src::Slice(&v[..m])),
        HostBuffer::F64(v) => Val::F64(Src::Slice(&v[..m])),
    }
}

/// Values `lo..hi` of an input.
pub(super) fn window(buf: &HostBuffer, lo: usize, hi: usize) -> Val<'_> {
    match buf {
        HostBuffer::Bool(v) => Val::Bool(Src::Slice(&v[lo..hi])),
        HostBuffer::I64(v) => Val::I64(Src::Slice(&v[lo..hi])),
        HostBuffer::F32(v) => Val::F32(Src::Slice(&v[lo..hi])),
        HostBuffer::F64(v) => Val::F64(Src::Slice(&v[lo..hi])),
    }
}

/// A mutable piece of an output buffer.
#[derive(Debug)]
pub(super) enum OutSlice<'a> {
    Bool(&'a mut [bool]),
    I64(&'a mut [i64]),
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
}

/// `buf` cut into consecutive pieces of `len` values (the last may be shorter).
pub(super) fn pieces(buf: &mut HostBuffer, len: usize) -> Vec<OutSlice<'_>> {
    match buf {
        HostBuffer::Bool(v) => v.chunks_mut(len).map(OutSlice::Bool).collect(),
        HostBuffer::I64(v) => v.chunks_mut(len).map(OutSlice::I64).collect(),
        HostBuffer::F32(v) => v.chunks_mut(len).map(OutSlice::F32).collect(),
        HostBuffer::F64(v) => v.chunks_mut(len).map(OutSlice::F64).collect(),
    }
}

/// Writes a tile's values at `lo..lo + m` of an output piece.
pub(super) fn store(v: Val<'_>, out: &mut OutSlice<'_>, lo: usize, m: usize) -> Result<()> {
    match (v, out) {
        (Val::Bool(s), OutSlice::Bool(o)) => put(s, &mut o[lo..lo + m]),
        (Val::I64(s), OutSlice::I64(o)) => put(s, &mut o[lo..lo + m]),
        (Val::F32(s), OutSlice::F32(o)) => put(s, &mut o[lo..lo + m]),
        (Val::F64(s), OutSlice::F64(o)) => put(s, &mut o[lo..lo + m]),
        _ => return Err(internal("an output of another dtype than its node")),
    }
    Ok(())
}

fn put<T: Copy>(s: Src<'_, T>, o: &mut [T]) {
    match s {
        Src::Slice(x) => o.copy_from_slice(x),
        Src::Splat(x) => o.fill(x),
    }
}

/// An error for a combination that [`crate::fusion::ir::KernelIr::new`] rules
/// out; returned rather than panicking.
pub(super) fn internal(what: &str) -> Error {
    Error::InvalidArgument {
        op: "fused_kernel",
        name: "ir",
        value: "<kernel>".into(),
        why: format!("{what} (not a valid kernel)"),
    }
}

impl<T: Copy> Src<'_, T> {
    /// The value at position `j` of the tile.
    #[inline(always)]
    fn at(self, j: usize) -> T {
        match self {
            Src::Slice(x) => x[j],
            Src::Splat(x) => x,
        }
    }
}

// The tile loops below index plainly rather than through iterator
// adapters: inside a `vectorized_fn!` body the closures carry the body's
// target features, and a std adapter compiled without them (`Zip::fold`)
// cannot inline such a closure, so it would make a call per value.

#[inline(always)]
fn map<T: Copy, U: Copy>(a: Src<'_, T>, o: &mut [U], f: impl Fn(T) -> U) {
    match a {
        Src::Slice(x) => {
            let x = &x[..o.len()];
            for j in 0..o.len() {
                o[j] = f(x[j]);
            }
        }
        Src::Splat(x) => o.fill(f(x)),
    }
}

#[inline(always)]
fn zip<T: Copy, U: Copy>(a: Src<'_, T>, b: Src<'_, T>, o: &mut [U], f: impl Fn(T, T) -> U) {
    let n = o.len();
    match (a, b) {
        (Src::Slice(x), Src::Slice(y)) => {
            let (x, y) = (&x[..n], &y[..n]);
            for j in 0..n {
                o[j] = f(x[j], y[j]);
            }
        }
        (Src::Slice(x), Src::Splat(y)) => {
            let x = &x[..n];
            for j in 0..n {
                o[j] = f(x[j], y);
            }
        }
        (Src::Splat(x), Src::Slice(y)) => {
            let y = &y[..n];
            for j in 0..n {
                o[j] = f(x, y[j]);
            }
        }
        (Src::Splat(x), Src::Splat(y)) => o.fill(f(x, y)),
    }
}

/// `match $v { $T::V => { const $OP: $T = $T::V; $body } ... }`: the op is a
/// constant inside each arm's loop.
macro_rules! const_dispatch {
    ($v:expr, $T:ident, $OP:ident => $body:expr; [$($var:ident)*] $(, _ => $other:expr)?) => {
        match $v {
            $( $T::$var => {
                const $OP: $T = $T::$var;
                $body
            } )*
            $( _ => $other, )?
        }
    };
}

/// `map` of an integer op that reports overflow: the first position of the
/// tile whose result overflowed, if any.
#[inline(always)]
fn map_i64(a: Src<'_, i64>, o: &mut [i64], f: impl Fn(i64) -> (i64, bool)) -> Option<usize> {
    let overflow = Cell::new(false);
    map(a, o, |v| {
        let (r, bad) = f(v);
        overflow.set(overflow.get() | bad);
        r
    });
    overflow
        .get()
        .then(|| (0..o.len()).find(|&j| f(a.at(j)).1))
        .flatten()
}

/// `zip` of an integer op that reports overflow, as [`map_i64`].
#[inline(always)]
fn zip_i64(
    a: Src<'_, i64>,
    b: Src<'_, i64>,
    o: &mut [i64],
    f: impl Fn(i64, i64) -> (i64, bool),
) -> Option<usize> {
    let overflow = Cell::new(false);
    zip(a, b, o, |p, q| {
        let (r, bad) = f(p, q);
        overflow.set(overflow.get() | bad);
        r
    });
    overflow
        .get()
        .then(|| (0..o.len()).find(|&j| f(a.at(j), b.at(j)).1))
        .flatten()
}

/// A unary op over a tile of `m` positions from position `at`:
/// `out[..m] = op(a)`.
pub(super) fn unary(
    op: UnaryOp,
    a: Val<'_>,
    out: &mut HostBuffer,
    m: usize,
    at: usize,
) -> Result<()> {
    use HostBuffer as B;
    match (a, out) {
        (Val::F64(x), B::F64(o)) => float_unary(op, x, &mut o[..m]),
        (Val::F32(x), B::F32(o)) => float_unary(op, x, &mut o[..m]),
        (Val::I64(x), B::I64(o)) => {
            let bad = const_dispatch!(op, UnaryOp, OP =>
                map_i64(x, &mut o[..m], |v| OP.apply_i64(v)); [Neg Abs Sign Floor Ceil Round],
                _ => return Err(internal("float math on i64")));
            if let Some(j) = bad {
                return Err(integer::unary_error(op, x.at(j), at + j));
            }
        }
        (Val::Bool(x), B::Bool(o)) if op == UnaryOp::Not => map(x, &mut o[..m], |v| !v),
        (a, B::Bool(o)) if op.is_predicate() => match a {
            Val::F64(x) => predicate(op, x, &mut o[..m]),
            Val::F32(x) => predicate(op, x, &mut o[..m]),
            // Integers and bools are never NaN and always finite.
            _ => o[..m].fill(op == UnaryOp::IsFinite),
        },
        _ => return Err(internal("a unary op on an operand of another dtype")),
    }
    Ok(())
}

/// A float unary op over a tile: the straight-line form of each op
/// ([`UnaryOp::apply_lane`]) in a loop compiled for the CPU's vector unit,
/// then the rare arguments that form does not cover.
fn float_unary<T: Real>(op: UnaryOp, x: Src<'_, T>, o: &mut [T]) {
    match x {
        Src::Splat(v) => o.fill(op.apply(v)),
        Src::Slice(xs) => {
            unary_lanes(op, xs, o);
            op.redo_uncovered(xs, o);
        }
    }
}

vectorized_fn!(
    fn unary_lanes[T: Real](op: UnaryOp, x: &[T], o: &mut [T]) {
        crate::with_unary_ops!(const_dispatch!(op, UnaryOp, OP =>
            map(Src::Slice(x), o, #[inline(always)] |v| OP.apply_lane(v));))
    }
);

vectorized_fn!(
    fn predicate[T: Real](op: UnaryOp, x: Src<'_, T>, o: &mut [bool]) {
        if op == UnaryOp::IsNan {
            map(x, o, |v| UnaryOp::IsNan.predicate(v))
        } else {
            map(x, o, |v| UnaryOp::IsFinite.predicate(v))
        }
    }
);

/// A binary op over a tile of `m` positions from position `at`:
/// `out[..m] = op(a, b)`.
pub(super) fn binary(
    op: BinaryOp,
    a: Val<'_>,
    b: Val<'_>,
    out: &mut HostBuffer,
    m: usize,
    at: usize,
) -> Result<()> {
    use HostBuffer as B;
    match (a, b, out) {
        (Val::F64(x), Val::F64(y), B::F64(o)) => float_binary(op, x, y, &mut o[..m]),
        (Val::F32(x), Val::F32(y), B::F32(o)) => float_binary(op, x, y, &mut o[..m]),
        (Val::I64(x), Val::I64(y), B::I64(o)) => {
            let bad = const_dispatch!(op, BinaryOp, OP =>
                zip_i64(x, y, &mut o[..m], |p, q| OP.apply_i64(p, q)); [Add Sub Mul Minimum Maximum],
                _ => return Err(internal("float arithmetic on i64")));
            if let Some(j) = bad {
                return Err(integer::binary_error(op, x.at(j), y.at(j), at + j));
            }
        }
        (Val::Bool(x), Val::Bool(y), B::Bool(o)) if matches!(op, BinaryOp::And | BinaryOp::Or) => {
            if op == BinaryOp::And {
                zip(x, y, &mut o[..m], |p, q| BinaryOp::And.logical(p, q))
            } else {
                zip(x, y, &mut o[..m], |p, q| BinaryOp::Or.logical(p, q))
            }
        }
        (a, b, B::Bool(o)) => {
            let o = &mut o[..m];
            match (a, b) {
                (Val::F64(x), Val::F64(y)) => compare(op, x, y, o)?,
                (Val::F32(x), Val::F32(y)) => compare(op, x, y, o)?,
                (Val::I64(x), Val::I64(y)) => compare(op, x, y, o)?,
                (Val::Bool(x), Val::Bool(y)) => compare(op, x, y, o)?,
                _ => return Err(internal("a comparison of two dtypes")),
            }
        }
        _ => return Err(internal("a binary op on operands of another dtype")),
    }
    Ok(())
}

/// A float binary op over a tile: the straight-line form of each op
/// ([`BinaryOp::apply_lane`]) in a loop compiled for the CPU's vector unit,
/// then the rare pairs that form does not cover.
fn float_binary<T: Real>(op: BinaryOp, x: Src<'_, T>, y: Src<'_, T>, o: &mut [T]) {
    binary_lanes(op, x, y, o);
    if !op.has_uncovered_pairs() {
        return;
    }
    // Blocks found by a vectorized test first: the pairs to redo are rare.
    for start in (0..o.len()).step_by(REDO_BLOCK) {
        let end = (start + REDO_BLOCK).min(o.len());
        if all_covered(op, x, y, start, end) {
            continue;
        }
        for (j, v) in (start..end).zip(&mut o[start..end]) {
            let (p, q) = (x.at(j), y.at(j));
            if !op.lane_covers(p, q) {
                *v = op.apply(p, q);
            }
        }
    }
}

/// The positions [`float_binary`] tests at once for pairs to redo.
const REDO_BLOCK: usize = 256;

vectorized_fn!(
    /// Whether [`BinaryOp::lane_covers`] holds at positions `start..end`.
    fn all_covered[T: Real](op: BinaryOp, x: Src<'_, T>, y: Src<'_, T>, start: usize, end: usize) -> bool {
        (start..end).fold(true, |all, j| all & op.lane_covers(x.at(j), y.at(j)))
    }
);

vectorized_fn!(
    fn binary_lanes[T: Real](op: BinaryOp, x: Src<'_, T>, y: Src<'_, T>, o: &mut [T]) {
        crate::with_binary_ops!(
            const_dispatch!(op, BinaryOp, OP => zip(x, y, o, #[inline(always)] |p, q| OP.apply_lane(p, q));)
        )
    }
);

vectorized_fn!(
    fn compare[T: Copy + PartialOrd](
        op: BinaryOp,
        x: Src<'_, T>,
        y: Src<'_, T>,
        o: &mut [bool],
    ) -> Result<()> {
        const_dispatch!(op, BinaryOp, OP => zip(x, y, o, |p, q| OP.compare(p, q)); [
            Eq Ne Lt Le Gt Ge
        ], _ => return Err(internal("a non-comparison giving bool")));
        Ok(())
    }
);

/// `mask ? a : b` over a tile.
pub(super) fn select(
    mask: Val<'_>,
    a: Val<'_>,
    b: Val<'_>,
    out: &mut HostBuffer,
    m: usize,
) -> Result<()> {
    use HostBuffer as B;
    let Val::Bool(mask) = mask else {
        return Err(internal("a select mask that is not bool"));
    };
    match (a, b, out) {
        (Val::Bool(x), Val::Bool(y), B::Bool(o)) => pick(mask, x, y, &mut o[..m]),
        (Val::I64(x), Val::I64(y), B::I64(o)) => pick(mask, x, y, &mut o[..m]),
        (Val::F32(x), Val::F32(y), B::F32(o)) => pick(mask, x, y, &mut o[..m]),
        (Val::F64(x), Val::F64(y), B::F64(o)) => pick(mask, x, y, &mut o[..m]),
        _ => return Err(internal("select branches of another dtype")),
    }
    Ok(())
}

/// [`select`] over one dtype, branch-free ([`Pick`]).
fn pick<T: Pick>(mask: Src<'_, bool>, a: Src<'_, T>, b: Src<'_, T>, o: &mut [T]) {
    match (mask, a, b) {
        (Src::Splat(c), a, b) => put(if c { a } else { b }, o),
        (Src::Slice(c), Src::Slice(x), Src::Slice(y)) => o
            .iter_mut()
            .zip(c.iter().zip(x.iter().zip(y)))
            .for_each(|(o, (&c, (&x, &y)))| *o = T::pick(c, x, y)),
        (Src::Slice(c), Src::Slice(x), Src::Splat(y)) => o
            .iter_mut()
            .zip(c.iter().zip(x))
            .for_each(|(o, (&c, &x))| *o = T::pick(c, x, y)),
        (Src::Slice(c), Src::Splat(x), Src::Slice(y)) => o
            .iter_mut()
            .zip(c.iter().zip(y))
            .for_each(|(o, (&c, &y))| *o = T::pick(c, x, y)),
        (Src::Slice(c), Src::Splat(x), Src::Splat(y)) => {
            map(Src::Slice(c), o, |c| T::pick(c, x, y))
        }
    }
}

/// The first position of a float tile whose value i64 cannot hold.
fn first_unfit<T: Copy + Into<f64> + Sync>(x: Src<'_, T>, m: usize) -> Option<(usize, f64)> {
    match x {
        Src::Slice(v) => integer::first_unfit(&v[..m]),
        Src::Splat(v) => (m > 0 && !integer::fits_i64(v.into())).then(|| (0, v.into())),
    }
}

/// A dtype conversion over a tile of `m` positions from position `at`, by
/// the rules of [`HostBuffer::cast`]; a float that i64 cannot hold is an
/// error (see [`crate::ops::integer`]).
pub(super) fn cast(a: Val<'_>, out: &mut HostBuffer, m: usize, at: usize) -> Result<()> {
    fn conv<S: CastTo<D>, D: Copy>(x: Src<'_, S>, o: &mut [D]) {
        map(x, o, |v| v.cast_to())
    }
    if let HostBuffer::I64(_) = out {
        let bad = match a {
            Val::F64(x) => first_unfit(x, m).map(|b| (DType::F64, b)),
            Val::F32(x) => first_unfit(x, m).map(|b| (DType::F32, b)),
            _ => None,
        };
        if let Some((from, (j, v))) = bad {
            return Err(integer::cast_error(from, v, at + j));
        }
    }
    macro_rules! to {
        ($o:expr) => {
            match a {
                Val::Bool(x) => conv(x, $o),
                Val::I64(x) => conv(x, $o),
                Val::F32(x) => conv(x, $o),
                Val::F64(x) => conv(x, $o),
            }
        };
    }
    match out {
        HostBuffer::Bool(o) => to!(&mut o[..m]),
        HostBuffer::I64(o) => to!(&mut o[..m]),
        HostBuffer::F32(o) => to!(&mut o[..m]),
        HostBuffer::F64(o) => to!(&mut o[..m]),
    }
    Ok(())
}

/// A scalar function over a tile: every argument is float64, one call per
/// position (the functions are branchy special functions, not loop bodies
/// that vectorize).
pub(super) fn call(
    f: FnRef,
    flags: u8,
    args: &[Val<'_>],
    out: &mut HostBuffer,
    m: usize,
) -> Result<()> {
    let f = f.get();
    let srcs: Vec<Src<'_, f64>> = args
        .iter()
        .map(|a| match a {
            Val::F64(x) => Ok(*x),
            _ => Err(internal("a non-float64 argument reached a scalar function")),
        })
        .collect::<Result<_>>()?;
    let HostBuffer::F64(o) = out else {
        return Err(internal("a scalar function with a non-float64 result slot"));
    };
    let mut a = [0.0f64; MAX_CALL_ARGS];
    for (i, slot) in o[..m].iter_mut().enumerate() {
        for (x, s) in a.iter_mut().zip(&srcs) {
            *x = match s {
                Src::Slice(v) => v[i],
                Src::Splat(c) => *c,
            };
        }
        *slot = (f.eval)(&a[..srcs.len()], flags);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random f32 pairs, ordinary ones with every special kind of operand
    /// (zeros, subnormals, negatives, infinities, NaN) strewn among them.
    fn mixed_pairs(n: usize) -> (Vec<f32>, Vec<f32>) {
        let special = [
            0.0,
            -0.0,
            1e-40,
            -2.0,
            -0.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1.0,
            f32::MAX,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as f32 / (1u64 << 31) as f32
        };
        let mut value = |scale: f32| {
            if next() < 0.02 {
                special[(next() * special.len() as f32) as usize % special.len()]
            } else {
                (next() - 0.3) * scale
            }
        };
        (0..n).map(|_| (value(8.0), value(40.0))).unzip()
    }

    #[test]
    fn pow_tiles_redo_the_pairs_their_lanes_skip() {
        let (x, y) = mixed_pairs(5000);
        check_pow_tiles(&x, &y);
        let wide = |v: &[f32]| v.iter().map(|&a| f64::from(a)).collect::<Vec<f64>>();
        check_pow_tiles(&wide(&x), &wide(&y));
    }

    /// [`float_binary`]'s `pow` over slices and splats of `x` and `y`
    /// against [`BinaryOp::apply`], bit for bit (any NaN for a NaN).
    fn check_pow_tiles<T: Real>(x: &[T], y: &[T]) {
        let same = |a: T, b: T| {
            (a == b && a.is_sign_negative() == b.is_sign_negative()) || (a.is_nan() && b.is_nan())
        };
        let check = |o: &[T], at: &dyn Fn(usize) -> (T, T)| {
            for (j, &got) in o.iter().enumerate() {
                let (p, q) = at(j);
                let want = BinaryOp::Pow.apply(p, q);
                assert!(
                    same(got, want),
                    "pow({}, {}) = {}, want {}",
                    p.widen(),
                    q.widen(),
                    got.widen(),
                    want.widen()
                );
            }
        };
        let op = BinaryOp::Pow;
        let mut o = vec![T::zero(); x.len()];
        float_binary(op, Src::Slice(x), Src::Slice(y), &mut o);
        check(&o, &|j| (x[j], y[j]));
        for s in [-2.0, 0.0, f64::INFINITY, 2.5].map(T::narrow) {
            float_binary(op, Src::Splat(s), Src::Slice(y), &mut o);
            check(&o, &|j| (s, y[j]));
            float_binary(op, Src::Slice(x), Src::Splat(s), &mut o);
            check(&o, &|j| (x[j], s));
        }
    }
}
