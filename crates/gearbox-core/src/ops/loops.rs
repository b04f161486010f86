//! Parallel elementwise loops over broadcast operands.
//!
//! These are the CPU building blocks the elementwise primitives share: they
//! split the output into chunks that rayon runs on all cores, take fast paths
//! for equal shapes and scalars, and otherwise walk each input with a
//! [`BroadcastWalker`]. They know nothing about particular operations.
//!
//! Each allocates its output through [`crate::memory`]: a result too large
//! for the host is [`crate::Error::OutOfMemory`] naming `op` (the caller's
//! op name), never an abort.

use rayon::prelude::*;

use crate::dtype::Element;
use crate::error::Result;
use crate::memory;
use crate::shape::{BroadcastWalker, Shape};

/// Outputs at least this long are split across threads.
pub const PAR_MIN: usize = 1 << 15;

/// Whether a CPU kernel over `n` values of about `cost` units of work each
/// (an add is 1: [`crate::fusion::cpu::element_cost`]'s units) should share
/// them out on rayon's pool: at least [`PAR_MIN`] of them, and, from a
/// thread outside the pool, enough work to pay for handing it over and
/// waiting (measured once, `ops/handoff.rs`: about 35 us on a 2-core
/// virtual machine, where a sum of 2^18 f32 values takes 26 us on the
/// calling thread). Which threads compute never changes a value's bits.
pub fn worth_parallel(n: usize, cost: usize) -> bool {
    n >= PAR_MIN && n.saturating_mul(cost) >= super::handoff::parallel_min_units(0)
}

/// Chunk length for parallel loops.
pub(crate) const CHUNK: usize = 1 << 14;

/// `f` applied to every element of `x`, for `op`.
pub fn map<T, U, F>(op: &str, x: &[T], f: F) -> Result<Vec<U>>
where
    T: Copy + Sync,
    U: Send,
    F: Fn(T) -> U + Sync,
{
    if worth_parallel(x.len(), 1) {
        memory::par_collect(op, x.par_iter().with_min_len(CHUNK).map(|&v| f(v)))
    } else {
        memory::collect(op, x.iter().map(|&v| f(v)))
    }
}

/// `f(a, b)` over the broadcast of `a` (shape `sa`) and `b` (shape `sb`) to
/// `out`, for `op`.
#[allow(clippy::too_many_arguments)]
pub fn zip<A, B, U, F>(
    op: &str,
    a: &[A],
    sa: &Shape,
    b: &[B],
    sb: &Shape,
    out: &Shape,
    f: F,
) -> Result<Vec<U>>
where
    A: Copy + Sync,
    B: Copy + Sync,
    U: Element,
    F: Fn(A, B) -> U + Sync,
{
    let n = out.numel();
    if a.len() == n && b.len() == n {
        if worth_parallel(n, 1) {
            let pairs = a.par_iter().zip(b.par_iter()).with_min_len(CHUNK);
            return memory::par_collect(op, pairs.map(|(&x, &y)| f(x, y)));
        }
        return memory::collect(op, a.iter().zip(b).map(|(&x, &y)| f(x, y)));
    }
    if b.len() == 1 && a.len() == n {
        let y = b[0];
        return map(op, a, |x| f(x, y));
    }
    if a.len() == 1 && b.len() == n {
        let x = a[0];
        return map(op, b, |y| f(x, y));
    }
    fill_chunks(op, n, |start, chunk| {
        let mut wa = BroadcastWalker::new(sa, out, start);
        let mut wb = BroadcastWalker::new(sb, out, start);
        for o in chunk.iter_mut() {
            *o = f(a[wa.offset()], b[wb.offset()]);
            wa.advance();
            wb.advance();
        }
    })
}

/// `f(a, b, c)` over the broadcast of three operands to `out`, for `op`.
#[allow(clippy::too_many_arguments)]
pub fn zip3<A, B, C, U, F>(
    op: &str,
    a: &[A],
    sa: &Shape,
    b: &[B],
    sb: &Shape,
    c: &[C],
    sc: &Shape,
    out: &Shape,
    f: F,
) -> Result<Vec<U>>
where
    A: Copy + Sync,
    B: Copy + Sync,
    C: Copy + Sync,
    U: Element,
    F: Fn(A, B, C) -> U + Sync,
{
    fill_chunks(op, out.numel(), |start, chunk| {
        let mut wa = BroadcastWalker::new(sa, out, start);
        let mut wb = BroadcastWalker::new(sb, out, start);
        let mut wc = BroadcastWalker::new(sc, out, start);
        for o in chunk.iter_mut() {
            *o = f(a[wa.offset()], b[wb.offset()], c[wc.offset()]);
            wa.advance();
            wb.advance();
            wc.advance();
        }
    })
}

/// A vector of `n` values for `op`, each chunk filled by `fill(start,
/// chunk)`, in parallel when `n` is large.
pub fn fill_chunks<U, F>(op: &str, n: usize, fill: F) -> Result<Vec<U>>
where
    U: Element,
    F: Fn(usize, &mut [U]) + Sync,
{
    let mut out = memory::zeroed(op, n)?;
    if worth_parallel(n, 1) {
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| fill(i * CHUNK, chunk));
    } else if n > 0 {
        fill(0, &mut out);
    }
    Ok(out)
}
