//! Reverse- and forward-mode automatic differentiation over the lazy graph
//! (Rmlx's `mlx_grad` / `mlx_value_grad`, MLX's `vjp` and `jvp`).
//!
//! A transformation calls the function on *traced* copies of its arguments
//! (identity nodes standing for them), then walks the graph the function
//! built back from its result ([`backward`]), asking each op for its
//! vector-Jacobian product ([`crate::Primitive::vjp`], written beside the
//! op). Gradients are ordinary lazy arrays: they fuse with the rest of the
//! work, run on whichever backend the dispatcher picks, and can be
//! differentiated again (`grad` of `grad`). `jvp` is the transpose of
//! `vjp`: the vjp is linear in its cotangent, so differentiating it once
//! more gives the Jacobian-vector product.
//!
//! Rules of the traced function:
//! - keep the computation in arrays: reading values (`to_vec`, `item`,
//!   `eval`) of anything that depends on the arguments leaves the graph
//!   and is an error ([`trace`]), as in Rmlx ("keep computations in MLX");
//! - its result must depend on the arguments (else an error says so);
//! - comparisons, rounding (`floor`, `ceil`, `round`, `sign`) and the like
//!   have zero derivatives where they have one at all; integer and bool
//!   values carry no gradient.
//!
//! Each rule's conventions are written beside it: ties of `min`/`max` (all
//! to the first extreme, as `argmin`) at [`crate::ops::reduce::Reduce`],
//! zeros of `prod` there and of `cumprod` at
//! [`crate::ops::reduce::Cumulative`], ties of `minimum`/`maximum` and so
//! `clamp`'s boundaries at [`crate::ops::binary::Binary`] and
//! [`Array::clamp`], `where_` at [`crate::ops::select::Where`]. Cotangents
//! spread over reduced axes with [`Array::broadcast_to`], an elementwise op,
//! so a backward chain stays one fused kernel.

mod backward;
pub mod trace;

use crate::error::{Error, Result};
use crate::graph::Array;
use crate::shape::Shape;

pub use backward::backward;

/// The traced copies of `args`: identity nodes, one per argument, that
/// the backward walk stops at.
fn traced(args: &[Array]) -> Result<Vec<Array>> {
    args.iter()
        .map(|a| Array::from_op(crate::ops::shape_ops::Identity::PASS, vec![a.clone()]))
        .collect()
}

/// Checks that `a` can carry a gradient (a float array).
fn check_float(op: &'static str, what: &str, a: &Array) -> Result<()> {
    if a.dtype().is_float() {
        Ok(())
    } else {
        Err(Error::Autodiff {
            op,
            why: format!(
                "{what} has dtype {}; only f32 and f64 arrays carry gradients (convert with astype)",
                a.dtype()
            ),
        })
    }
}

/// The vector-Jacobian product of `f` at `primals`: `f`'s outputs and, for
/// each primal, the sum over outputs of cotangent times the output's
/// derivative (one cotangent per output, of its shape).
pub fn vjp(
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    cotangents: &[Array],
) -> Result<(Vec<Array>, Vec<Array>)> {
    vjp_with(f, primals, cotangents, false)
}

/// [`vjp`]; with `independent_ok`, outputs that do not depend on the
/// primals give zero cotangents rather than an error.
fn vjp_with(
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    cotangents: &[Array],
    independent_ok: bool,
) -> Result<(Vec<Array>, Vec<Array>)> {
    for (i, p) in primals.iter().enumerate() {
        check_float("vjp", &format!("argument {i}"), p)?;
    }
    let xs = traced(primals)?;
    let outputs = trace::run(&xs, || f(&xs))?;
    if outputs.len() != cotangents.len() {
        return Err(Error::Autodiff {
            op: "vjp",
            why: format!(
                "{} cotangents given for {} outputs",
                cotangents.len(),
                outputs.len()
            ),
        });
    }
    for (o, c) in outputs.iter().zip(cotangents) {
        if o.shape() != c.shape() {
            return Err(Error::Autodiff {
                op: "vjp",
                why: format!(
                    "a cotangent of shape {} for an output of shape {}",
                    c.shape(),
                    o.shape()
                ),
            });
        }
    }
    let grads = backward::backward_with(&outputs, cotangents, &xs, independent_ok)?;
    Ok((outputs, grads))
}

/// The value of the scalar-valued `f` at `args` and its gradient with
/// respect to every argument (Rmlx's `mlx_value_grad`).
pub fn value_and_grad(
    f: impl FnOnce(&[Array]) -> Result<Array>,
    args: &[Array],
) -> Result<(Array, Vec<Array>)> {
    for (i, a) in args.iter().enumerate() {
        check_float("grad", &format!("argument {i}"), a)?;
    }
    let xs = traced(args)?;
    let y = trace::run(&xs, || f(&xs))?;
    if y.numel() != 1 {
        return Err(Error::Autodiff {
            op: "grad",
            why: format!(
                "the function must return a scalar (one element), not shape {}; use vjp for other shapes",
                y.shape()
            ),
        });
    }
    check_float("grad", "the function's result", &y)?;
    // A computed 1 rather than a fill op: the backward graph then starts
    // from a value, not from a region of its own.
    let one = Array::from_buffer(
        y.shape().clone(),
        crate::buffer::HostBuffer::filled("grad", y.dtype(), 1, 1.0)?,
    )?
    .with_precision(y.precision())?;
    let grads = backward(std::slice::from_ref(&y), &[one], &xs)?;
    Ok((y, grads))
}

/// The gradient of the scalar-valued `f` at `args`, with respect to every
/// argument (Rmlx's `mlx_grad`).
///
/// ```
/// use gearbox_core::{autodiff, Array};
/// let x = Array::from_vec([3], vec![1.0, 2.0, 3.0])?;
/// // d/dx sum(x^2) = 2x
/// let g = autodiff::grad(|a| (&a[0] * &a[0])?.sum(), &[x])?;
/// assert_eq!(g[0].to_vec::<f64>()?, vec![2.0, 4.0, 6.0]);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
pub fn grad(f: impl FnOnce(&[Array]) -> Result<Array>, args: &[Array]) -> Result<Vec<Array>> {
    Ok(value_and_grad(f, args)?.1)
}

/// The gradient of the scalar-valued `f` with respect to the arguments at
/// positions `wrt` only (the others are held constant).
pub fn grad_wrt(
    f: impl FnOnce(&[Array]) -> Result<Array>,
    args: &[Array],
    wrt: &[usize],
) -> Result<Vec<Array>> {
    if let Some(&bad) = wrt.iter().find(|&&i| i >= args.len()) {
        return Err(Error::Autodiff {
            op: "grad",
            why: format!("argument {bad} asked for, of {}", args.len()),
        });
    }
    let chosen: Vec<Array> = wrt.iter().map(|&i| args[i].clone()).collect();
    let all = args.to_vec();
    grad(
        |xs| {
            let mut full = all.clone();
            for (&i, x) in wrt.iter().zip(xs) {
                full[i] = x.clone();
            }
            f(&full)
        },
        &chosen,
    )
}

/// The Jacobian-vector product of `f` at `primals` along `tangents` (one
/// per primal, of its shape): `f`'s outputs and their directional
/// derivatives. Computed as the transpose of [`vjp`] (differentiating the
/// vjp, which is linear in its cotangent, with the tangents as cotangent).
/// Integer and bool outputs, and outputs whose derivative is structurally
/// zero (through `sign`, a comparison), get zero tangents.
pub fn jvp(
    f: impl Fn(&[Array]) -> Result<Vec<Array>>,
    primals: &[Array],
    tangents: &[Array],
) -> Result<(Vec<Array>, Vec<Array>)> {
    if primals.len() != tangents.len() {
        return Err(Error::Autodiff {
            op: "jvp",
            why: format!(
                "{} tangents given for {} arguments",
                tangents.len(),
                primals.len()
            ),
        });
    }
    for (p, t) in primals.iter().zip(tangents) {
        if p.shape() != t.shape() {
            return Err(Error::Autodiff {
                op: "jvp",
                why: format!(
                    "a tangent of shape {} for an argument of shape {}",
                    t.shape(),
                    p.shape()
                ),
            });
        }
    }
    let outputs = f(primals)?;
    let zeros: Vec<Array> = outputs
        .iter()
        .map(crate::ops::creation::zeros_like)
        .collect::<Result<_>>()?;
    // u -> vjp(f, primals)(u) is linear; its vjp at any u, with the
    // tangents as cotangents, is the jvp. Only float outputs have a u.
    let float: Vec<usize> = (0..outputs.len())
        .filter(|&i| outputs[i].dtype().is_float())
        .collect();
    let us: Vec<Array> = float.iter().map(|&i| zeros[i].clone()).collect();
    let (_, jv) = vjp_with(
        |u| {
            let mut cts = zeros.clone();
            for (&i, u) in float.iter().zip(u) {
                cts[i] = u.clone();
            }
            let (_, g) = vjp(|x| f(x), primals, &cts)?;
            Ok(g)
        },
        &us,
        tangents,
        true,
    )?;
    let mut out_tangents = zeros;
    for (&i, t) in float.iter().zip(jv) {
        out_tangents[i] = t;
    }
    Ok((outputs, out_tangents))
}

/// `ct` summed down to `shape`: undoes the broadcasting that took an
/// operand of `shape` to `ct`'s shape (axes where `shape` has length 1, or
/// that `shape` lacks past its last, are summed), then reshaped to `shape`.
pub fn sum_to(ct: &Array, shape: &Shape) -> Result<Array> {
    if ct.shape() == shape {
        return Ok(ct.clone());
    }
    let mut acc = ct.clone();
    for axis in 0..ct.ndim() {
        if shape.dim(axis) == 1 && ct.dims()[axis] != 1 {
            acc = acc.reduce(crate::ops::reduce::ReduceOp::Sum, Some(axis))?;
        }
    }
    if acc.shape() == shape {
        Ok(acc)
    } else {
        acc.reshape(shape.dims().to_vec())
    }
}
