//! Parallel elementwise loops over broadcast operands.
//!
//! These are the CPU building blocks the elementwise primitives share: they
//! split the output into chunks that rayon runs on all cores, take fast paths
//! for equal shapes and scalars, and otherwise walk each input with a
//! [`BroadcastWalker`]. They know nothing about particular operations.

use rayon::prelude::*;

use crate::shape::{BroadcastWalker, Shape};

/// Outputs at least this long are split across threads.
pub const PAR_MIN: usize = 1 << 15;
/// Chunk length for parallel loops.
const CHUNK: usize = 1 << 14;

/// `f` applied to every element of `x`.
pub fn map<T, U, F>(x: &[T], f: F) -> Vec<U>
where
    T: Copy + Sync,
    U: Send,
    F: Fn(T) -> U + Sync,
{
    if x.len() >= PAR_MIN {
        x.par_iter().with_min_len(CHUNK).map(|&v| f(v)).collect()
    } else {
        x.iter().map(|&v| f(v)).collect()
    }
}

/// `f(a, b)` over the broadcast of `a` (shape `sa`) and `b` (shape `sb`) to `out`.
pub fn zip<A, B, U, F>(a: &[A], sa: &Shape, b: &[B], sb: &Shape, out: &Shape, f: F) -> Vec<U>
where
    A: Copy + Sync,
    B: Copy + Sync,
    U: Copy + Default + Send + Sync,
    F: Fn(A, B) -> U + Sync,
{
    let n = out.numel();
    if a.len() == n && b.len() == n {
        if n >= PAR_MIN {
            return a
                .par_iter()
                .zip(b.par_iter())
                .with_min_len(CHUNK)
                .map(|(&x, &y)| f(x, y))
                .collect();
        }
        return a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect();
    }
    if b.len() == 1 && a.len() == n {
        let y = b[0];
        return map(a, |x| f(x, y));
    }
    if a.len() == 1 && b.len() == n {
        let x = a[0];
        return map(b, |y| f(x, y));
    }
    fill_chunks(n, |start, chunk| {
        let mut wa = BroadcastWalker::new(sa, out, start);
        let mut wb = BroadcastWalker::new(sb, out, start);
        for o in chunk.iter_mut() {
            *o = f(a[wa.offset()], b[wb.offset()]);
            wa.advance();
            wb.advance();
        }
    })
}

/// `f(a, b, c)` over the broadcast of three operands to `out`.
#[allow(clippy::too_many_arguments)]
pub fn zip3<A, B, C, U, F>(
    a: &[A],
    sa: &Shape,
    b: &[B],
    sb: &Shape,
    c: &[C],
    sc: &Shape,
    out: &Shape,
    f: F,
) -> Vec<U>
where
    A: Copy + Sync,
    B: Copy + Sync,
    C: Copy + Sync,
    U: Copy + Default + Send + Sync,
    F: Fn(A, B, C) -> U + Sync,
{
    fill_chunks(out.numel(), |start, chunk| {
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

/// A vector of `n` values, each chunk filled by `fill(start, chunk)`, in parallel
/// when `n` is large.
pub fn fill_chunks<U, F>(n: usize, fill: F) -> Vec<U>
where
    U: Copy + Default + Send,
    F: Fn(usize, &mut [U]) + Sync,
{
    let mut out = vec![U::default(); n];
    if n >= PAR_MIN {
        out.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, chunk)| fill(i * CHUNK, chunk));
    } else if n > 0 {
        fill(0, &mut out);
    }
    out
}
