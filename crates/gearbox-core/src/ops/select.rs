//! Selection: `where_` (elementwise choice by a bool mask) and `clamp`.

use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::KernelOp;
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::ops::binary::cast_if_needed;
use crate::ops::loops;
use crate::shape::Shape;

/// `mask ? a : b` elementwise, with broadcasting of all three.
#[derive(Debug, Clone, Copy)]
pub struct Where;

impl Primitive for Where {
    fn name(&self) -> &'static str {
        "where"
    }
    fn kernel_op(&self) -> Option<KernelOp> {
        Some(KernelOp::Select)
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let (m, a, b) = (inputs[0], inputs[1], inputs[2]);
        if m.dtype != DType::Bool {
            return Err(Error::DType {
                op: "where",
                got: m.dtype,
                expected: "bool (the mask)",
            });
        }
        let ab = Shape::broadcast_for("where", &a.shape, &b.shape)?;
        let shape = Shape::broadcast_for("where", &m.shape, &ab)?;
        Ok(Spec::new(shape, DType::promote(a.dtype, b.dtype)))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        use HostBuffer as B;
        let (m, a, b) = (&inputs[0], &inputs[1], &inputs[2]);
        let B::Bool(mask) = m.buf.as_ref() else {
            return Err(Error::DType {
                op: "where",
                got: m.buf.dtype(),
                expected: "bool (the mask)",
            });
        };
        let (ca, cb) = (
            cast_if_needed(a.buf, out.dtype)?,
            cast_if_needed(b.buf, out.dtype)?,
        );
        let (av, bv) = (ca.as_ref().unwrap_or(a.buf), cb.as_ref().unwrap_or(b.buf));
        let (sm, sa, sb, so) = (&m.spec.shape, &a.spec.shape, &b.spec.shape, &out.shape);
        let op = "where";
        Ok(Arc::new(match (av, bv) {
            (B::F64(x), B::F64(y)) => B::F64(loops::zip3(op, mask, sm, x, sa, y, sb, so, pick)?),
            (B::F32(x), B::F32(y)) => B::F32(loops::zip3(op, mask, sm, x, sa, y, sb, so, pick)?),
            (B::I64(x), B::I64(y)) => B::I64(loops::zip3(op, mask, sm, x, sa, y, sb, so, pick)?),
            (B::Bool(x), B::Bool(y)) => B::Bool(loops::zip3(op, mask, sm, x, sa, y, sb, so, pick)?),
            _ => unreachable!("both branches were cast to the result dtype"),
        }))
    }
    /// The cotangent goes to the branch each element was chosen from
    /// (`where(mask, g, 0)` to `a`, `where(mask, 0, g)` to `b`), summed
    /// back over the axes that branch was broadcast along
    /// ([`crate::autodiff::sum_to`]); the mask, and integer or bool
    /// branches, get no gradient.
    fn vjp(&self, inputs: &[Array], _: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        let (mask, a, b) = (&inputs[0], &inputs[1], &inputs[2]);
        let zero = g.scalar_like(0.0);
        let branch = |x: &Array, chosen: bool| -> Result<Option<Array>> {
            if !x.dtype().is_float() {
                return Ok(None);
            }
            let d = if chosen {
                Array::where_(mask, g, &zero)?
            } else {
                Array::where_(mask, &zero, g)?
            };
            Ok(Some(crate::autodiff::sum_to(&d, x.shape())?))
        };
        Ok(vec![None, branch(a, true)?, branch(b, false)?])
    }
}

fn pick<T: Pick>(take_first: bool, x: T, y: T) -> T {
    T::pick(take_first, x, y)
}

/// A value `where_` chooses without a branch: a mask read from data (`x >
/// 0` of random values) mispredicts half of a branch's outcomes, which ran
/// at a third of numpy's speed; a choice by masking bits vectorizes and
/// keeps every value's bits (NaN payloads, signed zeros).
pub(crate) trait Pick: Copy {
    /// `x` if `c`, else `y`.
    fn pick(c: bool, x: Self, y: Self) -> Self;
}

impl Pick for f64 {
    #[inline(always)]
    fn pick(c: bool, x: f64, y: f64) -> f64 {
        let m = (c as u64).wrapping_neg();
        f64::from_bits((x.to_bits() & m) | (y.to_bits() & !m))
    }
}

impl Pick for f32 {
    #[inline(always)]
    fn pick(c: bool, x: f32, y: f32) -> f32 {
        let m = (c as u32).wrapping_neg();
        f32::from_bits((x.to_bits() & m) | (y.to_bits() & !m))
    }
}

impl Pick for i64 {
    #[inline(always)]
    fn pick(c: bool, x: i64, y: i64) -> i64 {
        let m = -(c as i64);
        (x & m) | (y & !m)
    }
}

impl Pick for bool {
    #[inline(always)]
    fn pick(c: bool, x: bool, y: bool) -> bool {
        (c & x) | (!c & y)
    }
}

impl Array {
    /// Elementwise choice: `a` where `mask` is true, else `b` (all broadcast).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let x = Array::from_vec([4], vec![-2.0, -1.0, 1.0, 2.0])?;
    /// let y = Array::where_(&x.gt_scalar(0.0)?, &x, &x.neg()?)?;
    /// assert_eq!(y.to_vec::<f64>()?, vec![2.0, 1.0, 1.0, 2.0]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn where_(mask: &Array, a: &Array, b: &Array) -> Result<Array> {
        Array::from_op(Where, vec![mask.clone(), a.clone(), b.clone()])
    }

    /// Limits every element to `[lo, hi]`; NaN stays NaN.
    ///
    /// It is `maximum(x, lo)` then `minimum(·, hi)`, and differentiates as
    /// they do (a tie's gradient goes to the first operand, `x`): the
    /// gradient passes where `lo <= x <= hi`, boundaries included, and is
    /// zero outside.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let x = Array::from_vec([3], vec![-5.0, 0.5, 5.0])?;
    /// assert_eq!(x.clamp(0.0, 1.0)?.to_vec::<f64>()?, vec![0.0, 0.5, 1.0]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn clamp(&self, lo: f64, hi: f64) -> Result<Array> {
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Err(Error::InvalidArgument {
                op: "clamp",
                name: "lo, hi",
                value: format!("{lo}, {hi}"),
                why: "need lo <= hi, neither NaN".into(),
            });
        }
        self.maximum_scalar(lo)?.minimum_scalar(hi)
    }
}
