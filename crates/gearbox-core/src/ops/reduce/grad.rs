//! The derivative rules of the reductions and cumulative scans
//! ([`super::Reduce`]'s and [`super::Cumulative`]'s `vjp` call them).

use super::ReduceOp;
use crate::error::Result;
use crate::graph::Array;

/// The vector-Jacobian product of reduction `op` over `axis` (everything
/// when `None`) of `x` with result `y` and cotangent `g` (`y`'s shape: the
/// reduced axis kept with length 1, or a scalar); the rules are
/// documented at [`super::Reduce`]'s `vjp`.
pub(super) fn reduce_vjp(
    op: ReduceOp,
    axis: Option<usize>,
    x: &Array,
    y: &Array,
    g: &Array,
) -> Result<Vec<Option<Array>>> {
    use ReduceOp::*;
    if !x.dtype().is_float() {
        return Ok(vec![None]);
    }
    let n = match axis {
        None => x.numel(),
        Some(a) => x.dims()[a],
    } as f64;
    let mean = || x.reduce(Mean, axis);
    let d = match op {
        Sum => g.broadcast_to(x.shape().clone()),
        Mean => (g / n)?.broadcast_to(x.shape().clone()),
        Var => (x - &mean()?)? * &(g * (2.0 / (n - 1.0)))?,
        Sd => (x - &mean()?)? * &(g / &(y * (n - 1.0))?)?,
        Prod => prod_vjp(axis, x, g),
        Min => first_extreme(ArgMin, axis, x, g),
        Max => first_extreme(ArgMax, axis, x, g),
        LogSumExp => (x - y)?.exp()? * g,
        ArgMin | ArgMax | Any | All => return Ok(vec![None]),
    }?;
    Ok(vec![Some(d)])
}

/// `prod`'s vector-Jacobian product, safe at zeros (see [`super::Reduce`]'s `vjp`).
pub(super) fn prod_vjp(axis: Option<usize>, x: &Array, g: &Array) -> Result<Array> {
    let zero = x.eq_scalar(0.0)?;
    let zeros = zero.reduce(ReduceOp::Sum, axis)?;
    let (one, nothing) = (x.scalar_like(1.0), x.scalar_like(0.0));
    let safe = Array::where_(&zero, &one, x)?;
    let p = safe.reduce(ReduceOp::Prod, axis)?;
    let lone_zero = zero.and(&zeros.eq_scalar(1.0)?)?;
    let d = Array::where_(
        &zeros.eq_scalar(0.0)?,
        &(&p / &safe)?,
        &Array::where_(&lone_zero, &p, &nothing)?,
    )?;
    &d * g
}

/// `min`'s or `max`'s vector-Jacobian product: `g` at the position `arg`
/// (`argmin` or `argmax`) names along the lane, zero elsewhere.
pub(super) fn first_extreme(
    arg: ReduceOp,
    axis: Option<usize>,
    x: &Array,
    g: &Array,
) -> Result<Array> {
    let at = x.reduce(arg, axis)?;
    let positions = match axis {
        None => Array::arange(0.0, x.numel() as f64, 1.0)?.reshape(x.dims().to_vec())?,
        Some(a) => {
            let mut dims = vec![1; a + 1];
            dims[a] = x.dims()[a];
            Array::arange(0.0, dims[a] as f64, 1.0)?.reshape(dims)?
        }
    };
    Array::where_(&positions.eq(&at)?, g, &g.scalar_like(0.0))
}

/// `cumsum`'s or `cumprod`'s vector-Jacobian product along `axis` of `x`
/// (its flattening for `axis: None`), with result `y` and cotangent `g`;
/// the rules are documented at [`super::Cumulative`]'s `vjp`.
pub(super) fn cumulative_vjp(
    product: bool,
    axis: Option<usize>,
    x: &Array,
    y: &Array,
    g: &Array,
) -> Result<Array> {
    let (ax, xv) = match axis {
        None => (0, x.reshape([x.numel()])?),
        Some(a) => (a, x.clone()),
    };
    let rev = |v: &Array| v.flip(ax)?.cumsum_axis(ax)?.flip(ax);
    let d = if product {
        let zero = xv.eq_scalar(0.0)?;
        let zeros_so_far = zero.cumsum_axis(ax)?;
        let first_zero = zero.and(&zeros_so_far.eq_scalar(1.0)?)?;
        let (one, nothing) = (xv.scalar_like(1.0), xv.scalar_like(0.0));
        let before = (rev(&(g * y)?)? / &Array::where_(&zero, &one, &xv)?)?;
        let others = Array::where_(&first_zero, &one, &xv)?.cumprod_axis(ax)?;
        let at_zero = rev(&(g * &others)?)?;
        Array::where_(
            &zeros_so_far.eq_scalar(0.0)?,
            &before,
            &Array::where_(&first_zero, &at_zero, &nothing)?,
        )?
    } else {
        rev(g)?
    };
    if d.shape() == x.shape() {
        Ok(d)
    } else {
        d.reshape(x.dims().to_vec())
    }
}
