//! The derivative rules of the factorizations that need more than a line
//! ([`super::Factor`]'s `vjp` calls them): cholesky's and qr's, and the
//! constant triangle masks they are built from.

use crate::error::Result;
use crate::graph::Array;

/// Which triangle [`triangle`] keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Triangle {
    /// On and above the diagonal.
    Upper,
    /// On and below the diagonal.
    Lower,
    /// Strictly below the diagonal.
    StrictlyLower,
}

/// The `n x n` mask (`n` the order of the square `like`, in its dtype) of
/// one triangle: 1 there, `diagonal` on the diagonal (where the triangle
/// has it), 0 elsewhere; a constant, so multiplying by it is
/// differentiable.
pub(super) fn triangle(like: &Array, which: Triangle, diagonal: f64) -> Result<Array> {
    let n = like.dims()[0];
    let mut v = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            v[i + j * n] = match (which, i.cmp(&j)) {
                (Triangle::StrictlyLower, std::cmp::Ordering::Equal) => 0.0,
                (_, std::cmp::Ordering::Equal) => diagonal,
                (Triangle::Upper, std::cmp::Ordering::Less)
                | (Triangle::Lower | Triangle::StrictlyLower, std::cmp::Ordering::Greater) => 1.0,
                _ => 0.0,
            };
        }
    }
    let mask = Array::from_vec([n, n], v)?.with_precision(like.precision())?;
    if like.dtype() == mask.dtype() {
        Ok(mask)
    } else {
        mask.astype(like.dtype())
    }
}

/// The cholesky rule (see [`super::Factor`]'s `vjp`): `r` the upper factor,
/// `g` its cotangent.
pub(super) fn cholesky_vjp(r: &Array, g: &Array) -> Result<Array> {
    let r_inv = r.inv_upper()?;
    let phi = (r.tcrossprod(g)? * &triangle(r, Triangle::Lower, 0.5)?)?;
    let a = r_inv.matmul(&phi)?.tcrossprod(&r_inv)?;
    (&a + &a.t()?)? * 0.5
}

/// `tril(m) + tril(m, -1)ᵀ`: the symmetric matrix with `m`'s lower
/// triangle.
pub(super) fn copy_lower_to_upper(m: &Array) -> Result<Array> {
    let lower = (m * &triangle(m, Triangle::Lower, 1.0)?)?;
    let strict = (m * &triangle(m, Triangle::StrictlyLower, 1.0)?)?;
    lower + strict.t()?
}

/// The qr rule for a matrix of full rank whose first `p = min(m, n)`
/// columns are independent (see [`super::Factor`]'s `vjp`): `a` the `m x n`
/// matrix, `packed` the op's output (Q then R), `g` its cotangent.
pub(super) fn qr_vjp(a: &Array, packed: &Array, g: &Array) -> Result<Array> {
    let (m, n) = (a.dims()[0], a.dims()[1]);
    let p = m.min(n);
    let split = |v: &Array| -> Result<(Array, Array)> {
        Ok((
            v.slice(0, 0..m * p)?.reshape([m, p])?,
            v.slice(0, m * p..p * (m + n))?.reshape([p, n])?,
        ))
    };
    let (q, r) = split(packed)?;
    let (gq, gr) = split(g)?;
    // The square part: A's first p columns, R's first p columns (all of
    // them when m >= n).
    let (u, gu, gq, rest) = if m >= n {
        (r, gr, gq, None)
    } else {
        let (gu, gv) = (gr.slice(1, 0..p)?, gr.slice(1, p..n)?);
        let gq = (&gq + &a.slice(1, p..n)?.tcrossprod(&gv)?)?;
        (r.slice(1, 0..p)?, gu, gq, Some(q.matmul(&gv)?))
    };
    let mm = (u.tcrossprod(&gu)? - &gq.crossprod(&q)?)?;
    let gx = (&gq + &q.matmul(&copy_lower_to_upper(&mm)?)?)?.tcrossprod(&u.inv_upper()?)?;
    match rest {
        None => Ok(gx),
        Some(gy) => Array::concat(&[&gx, &gy], 1),
    }
}
