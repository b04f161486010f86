//! Binary elementwise operations with broadcasting, each defined once in
//! [`BinaryOp`]: name, result dtype and value.
//!
//! Operands are promoted to a common dtype (`bool < i64 < f32 < f64`).
//! `div`, `pow` and `atan2` always give a float (as R does). Integer `add`,
//! `sub` and `mul` never wrap: a result outside i64 is an error (see
//! [`crate::ops::integer`]). `minimum` and `maximum` propagate NaN (as
//! R's `pmin`/`pmax`). Comparisons give bool and are false for NaN operands
//! (except `ne`, which is true). `and` and `or` take bool operands.
//! Broadcasting is MATLAB's implicit expansion; see [`crate::Shape`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::KernelOp;
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::ops::unary::Real;
use crate::ops::{integer, loops};
use crate::shape::Shape;

/// Every binary elementwise operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[allow(missing_docs)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Minimum,
    Maximum,
    Atan2,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// Calls macro `$m` with its arguments followed by the list of every
/// [`BinaryOp`] variant, so code that must name each op (the CPU
/// interpreter's dispatch, [`BinaryOp::ALL`]) takes the list from here.
#[macro_export]
#[doc(hidden)]
macro_rules! with_binary_ops {
    ($m:ident ! ( $($args:tt)* )) => {
        $m!($($args)* [
            Add Sub Mul Div Pow Minimum Maximum Atan2 Eq Ne Lt Le Gt Ge And Or
        ])
    };
}

macro_rules! binary_list {
    ([$($v:ident)*]) => {
        [$(BinaryOp::$v),*]
    };
}

impl BinaryOp {
    /// Every binary op (tests and conformance suites iterate it, so a new
    /// op is covered as soon as it is defined).
    pub const ALL: &'static [BinaryOp] = &with_binary_ops!(binary_list!());

    /// Work per element in units of a plain arithmetic operation, for
    /// sizing parallel tasks: `pow` and `atan2` 16, the rest 1.
    pub fn cost(self) -> usize {
        use BinaryOp::*;
        match self {
            Pow | Atan2 => 16,
            Add | Sub | Mul | Div | Minimum | Maximum | Eq | Ne | Lt | Le | Gt | Ge | And | Or => 1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Result in the promoted dtype (bool promotes to i64).
    Arith,
    /// Result in the float of the promoted dtype.
    FloatArith,
    /// bool result, compared in the promoted dtype.
    Compare,
    /// bool operands and result.
    Logical,
}

impl BinaryOp {
    /// The op's name, as the `Array` method is called.
    pub fn name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "sub",
            Mul => "mul",
            Div => "div",
            Pow => "pow",
            Minimum => "minimum",
            Maximum => "maximum",
            Atan2 => "atan2",
            Eq => "eq",
            Ne => "ne",
            Lt => "lt",
            Le => "le",
            Gt => "gt",
            Ge => "ge",
            And => "and",
            Or => "or",
        }
    }

    fn kind(self) -> Kind {
        use BinaryOp::*;
        match self {
            Add | Sub | Mul | Minimum | Maximum => Kind::Arith,
            Div | Pow | Atan2 => Kind::FloatArith,
            Eq | Ne | Lt | Le | Gt | Ge => Kind::Compare,
            And | Or => Kind::Logical,
        }
    }

    /// The dtype both operands are converted to before the op runs.
    pub fn compute_dtype(self, a: DType, b: DType) -> Result<DType> {
        let p = DType::promote(a, b);
        Ok(match self.kind() {
            Kind::Arith => p.max(DType::I64),
            Kind::FloatArith => p.float_of(),
            Kind::Compare => p,
            Kind::Logical => {
                let bad = if a != DType::Bool { a } else { b };
                if bad != DType::Bool {
                    return Err(Error::DType {
                        op: self.name(),
                        got: bad,
                        expected: "bool",
                    });
                }
                DType::Bool
            }
        })
    }

    /// The result dtype for operand dtypes `a` and `b`.
    pub fn result_dtype(self, a: DType, b: DType) -> Result<DType> {
        let c = self.compute_dtype(a, b)?;
        Ok(match self.kind() {
            Kind::Compare | Kind::Logical => DType::Bool,
            _ => c,
        })
    }

    /// [`BinaryOp::apply`] wherever [`BinaryOp::lane_covers`] holds, a
    /// value to redo elsewhere: for loops that vectorize.
    #[inline(always)]
    pub fn apply_lane<T: Real>(self, x: T, y: T) -> T {
        match self {
            BinaryOp::Pow => T::pow_lane(x, y),
            _ => self.apply(x, y),
        }
    }

    /// Whether [`BinaryOp::apply_lane`] gives [`BinaryOp::apply`] at
    /// `(x, y)`.
    #[inline(always)]
    pub fn lane_covers<T: Real>(self, x: T, y: T) -> bool {
        self != BinaryOp::Pow || T::pow_lane_covers(x, y)
    }

    /// Whether [`BinaryOp::lane_covers`] fails at some pairs.
    pub fn has_uncovered_pairs(self) -> bool {
        self == BinaryOp::Pow
    }

    /// The op on two float values (comparisons give 1 or 0).
    #[inline(always)]
    pub fn apply<T: Real>(self, x: T, y: T) -> T {
        use BinaryOp::*;
        let b = |v: bool| if v { T::one() } else { T::zero() };
        match self {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div => x / y,
            Pow => T::pow(x, y),
            // IEEE 754-2019 minimum and maximum: NaN if either is NaN, and
            // -0.0 below +0.0 (as the min/max reductions order them).
            Minimum => {
                if x.is_nan() || y.is_nan() {
                    T::nan()
                } else if y < x || (y == x && y.is_sign_negative()) {
                    y
                } else {
                    x
                }
            }
            Maximum => {
                if x.is_nan() || y.is_nan() {
                    T::nan()
                } else if y > x || (y == x && y.is_sign_positive()) {
                    y
                } else {
                    x
                }
            }
            Atan2 => Real::atan2(x, y),
            Eq => b(x == y),
            Ne => b(x != y),
            Lt => b(x < y),
            Le => b(x <= y),
            Gt => b(x > y),
            Ge => b(x >= y),
            And => b(x != T::zero() && y != T::zero()),
            Or => b(x != T::zero() || y != T::zero()),
        }
    }

    /// The op on two integers (only for `add sub mul minimum maximum`), and
    /// whether it overflowed (the value is then meaningless and must become
    /// an error, never a result).
    #[inline(always)]
    pub(crate) fn apply_i64(self, x: i64, y: i64) -> (i64, bool) {
        match self {
            BinaryOp::Add => x.overflowing_add(y),
            BinaryOp::Sub => x.overflowing_sub(y),
            BinaryOp::Mul => x.overflowing_mul(y),
            BinaryOp::Minimum => (x.min(y), false),
            _ => (x.max(y), false), // Maximum; the only other Arith op
        }
    }

    /// [`loops::zip`] of an integer op; an error for the first position
    /// whose result overflows.
    fn zip_i64(
        self,
        x: &[i64],
        sx: &Shape,
        y: &[i64],
        sy: &Shape,
        out: &Shape,
    ) -> Result<Vec<i64>> {
        let overflow = AtomicBool::new(false);
        let v = loops::zip(self.name(), x, sx, y, sy, out, |p, q| {
            let (r, o) = self.apply_i64(p, q);
            if o {
                overflow.store(true, Ordering::Relaxed);
            }
            r
        })?;
        if overflow.into_inner() {
            // The error path only: find the first overflow in output order
            // and the two operands that gave it.
            let op = self.name();
            let flags = loops::zip(op, x, sx, y, sy, out, |p, q| self.apply_i64(p, q).1)?;
            if let Some(i) = flags.iter().position(|&o| o) {
                let lhs = loops::zip(op, x, sx, y, sy, out, |p, _| p)?;
                let rhs = loops::zip(op, x, sx, y, sy, out, |_, q| q)?;
                return Err(integer::binary_error(self, lhs[i], rhs[i], i));
            }
        }
        Ok(v)
    }

    /// A comparison op on two values of one type.
    #[inline]
    pub(crate) fn compare<T: PartialOrd>(self, x: T, y: T) -> bool {
        match self {
            BinaryOp::Eq => x == y,
            BinaryOp::Ne => x != y,
            BinaryOp::Lt => x < y,
            BinaryOp::Le => x <= y,
            BinaryOp::Gt => x > y,
            _ => x >= y, // Ge
        }
    }

    /// `and` or `or` of two bools.
    #[inline]
    pub(crate) fn logical(self, p: bool, q: bool) -> bool {
        if self == BinaryOp::And {
            p && q
        } else {
            p || q
        }
    }

    fn eval(
        self,
        a: &HostBuffer,
        sa: &Shape,
        b: &HostBuffer,
        sb: &Shape,
        out: &Shape,
    ) -> Result<HostBuffer> {
        use HostBuffer as B;
        let compute = self.compute_dtype(a.dtype(), b.dtype())?;
        let (ca, cb) = (cast_if_needed(a, compute)?, cast_if_needed(b, compute)?);
        let (a, b) = (ca.as_ref().unwrap_or(a), cb.as_ref().unwrap_or(b));
        let op = self.name();
        Ok(match (self.kind(), a, b) {
            (Kind::Logical, B::Bool(x), B::Bool(y)) => {
                B::Bool(loops::zip(op, x, sa, y, sb, out, |p, q| {
                    self.logical(p, q)
                })?)
            }
            (Kind::Compare, B::F64(x), B::F64(y)) => B::Bool(self.zip_compare(x, sa, y, sb, out)?),
            (Kind::Compare, B::F32(x), B::F32(y)) => B::Bool(self.zip_compare(x, sa, y, sb, out)?),
            (Kind::Compare, B::I64(x), B::I64(y)) => B::Bool(self.zip_compare(x, sa, y, sb, out)?),
            (Kind::Compare, B::Bool(x), B::Bool(y)) => {
                B::Bool(self.zip_compare(x, sa, y, sb, out)?)
            }
            (_, B::F64(x), B::F64(y)) => {
                B::F64(loops::zip(op, x, sa, y, sb, out, |p, q| self.apply(p, q))?)
            }
            (_, B::F32(x), B::F32(y)) => {
                B::F32(loops::zip(op, x, sa, y, sb, out, |p, q| self.apply(p, q))?)
            }
            (_, B::I64(x), B::I64(y)) => B::I64(self.zip_i64(x, sa, y, sb, out)?),
            _ => unreachable!("operands were cast to one dtype"),
        })
    }

    fn zip_compare<T: Copy + PartialOrd + Sync>(
        self,
        x: &[T],
        sx: &Shape,
        y: &[T],
        sy: &Shape,
        out: &Shape,
    ) -> Result<Vec<bool>> {
        loops::zip(self.name(), x, sx, y, sy, out, |p, q| self.compare(p, q))
    }
}

/// `buf` converted to `dtype`, or `None` when it already has it.
pub(crate) fn cast_if_needed(buf: &HostBuffer, dtype: DType) -> Result<Option<HostBuffer>> {
    (buf.dtype() != dtype).then(|| buf.cast(dtype)).transpose()
}

/// The primitive for one binary op.
#[derive(Debug, Clone, Copy)]
pub struct Binary(pub BinaryOp);

impl Primitive for Binary {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn kernel_op(&self) -> Option<KernelOp> {
        Some(KernelOp::Binary(self.0))
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let (a, b) = (inputs[0], inputs[1]);
        let shape = Shape::broadcast_for(self.0.name(), &a.shape, &b.shape)?;
        Ok(Spec::new(shape, self.0.result_dtype(a.dtype, b.dtype)?))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let (a, b) = (&inputs[0], &inputs[1]);
        Ok(Arc::new(self.0.eval(
            a.buf,
            &a.spec.shape,
            b.buf,
            &b.spec.shape,
            &out.shape,
        )?))
    }
    /// The partial derivatives times the cotangent, summed back over the
    /// broadcast axes ([`crate::autodiff::sum_to`]). `minimum` and
    /// `maximum` send a tie's gradient to the first operand; comparisons
    /// and logic give no gradient. `pow(a, b)`'s derivative in `b` is
    /// `a^b ln a`: NaN for a negative base (only asked for when `b` is
    /// differentiated).
    fn vjp(&self, inputs: &[Array], y: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        use BinaryOp::*;
        let (a, b) = (&inputs[0], &inputs[1]);
        let mask = |m: Result<Array>| -> Result<Array> { g * &m?.astype(g.dtype())? };
        let (da, db) = match self.0 {
            Add => (g.clone(), g.clone()),
            Sub => (g.clone(), (-g)?),
            Mul => ((g * b)?, (g * a)?),
            Div => ((g / b)?, (g * y)?.neg()?.div(b)?),
            Pow => {
                let da = (g * b)? * &a.pow(&(b - 1.0)?)?;
                (da?, ((g * y)? * &a.log()?)?)
            }
            Minimum => (mask(a.le(b))?, mask(a.gt(b))?),
            Maximum => (mask(a.ge(b))?, mask(a.lt(b))?),
            Atan2 => {
                let r2 = ((a * a)? + &(b * b)?)?;
                ((g * b)?.div(&r2)?, (g * a)?.neg()?.div(&r2)?)
            }
            Eq | Ne | Lt | Le | Gt | Ge | And | Or => return Ok(vec![None, None]),
        };
        Ok(vec![
            Some(crate::autodiff::sum_to(&da, a.shape())?),
            Some(crate::autodiff::sum_to(&db, b.shape())?),
        ])
    }
}

impl Array {
    /// `self op other` with broadcasting.
    pub fn binary(&self, op: BinaryOp, other: &Array) -> Result<Array> {
        Array::from_op(Binary(op), vec![self.clone(), other.clone()])
    }

    /// A 0-d array holding `value` in the dtype that pairs with this array:
    /// its own dtype when it is a float (so `x_f32 * 2.0` stays f32), i64 for
    /// an integral value next to integers, f64 otherwise.
    pub fn scalar_like(&self, value: f64) -> Array {
        let integral = value.fract() == 0.0 && value.abs() < 9.0e15;
        let scalar = match self.dtype() {
            DType::F32 => Array::scalar(value as f32),
            DType::I64 | DType::Bool if integral => Array::scalar(value as i64),
            _ => Array::scalar(value),
        };
        scalar.with_precision(self.precision()).unwrap_or(scalar)
    }

    /// `self op value`, with the scalar typed by [`Array::scalar_like`].
    pub fn binary_scalar(&self, op: BinaryOp, value: f64) -> Result<Array> {
        self.binary(op, &self.scalar_like(value))
    }
}

macro_rules! binary_methods {
    ($($method:ident, $scalar:ident => $op:ident, $doc:literal;)*) => {
        impl Array {
            $(
                #[doc = $doc]
                pub fn $method(&self, other: &Array) -> Result<Array> {
                    self.binary(BinaryOp::$op, other)
                }
                #[doc = $doc]
                #[doc = "\n\nScalar form: the other operand is `value`."]
                pub fn $scalar(&self, value: f64) -> Result<Array> {
                    self.binary_scalar(BinaryOp::$op, value)
                }
            )*
        }
    };
}

binary_methods! {
    add, add_scalar => Add, "Elementwise sum, with broadcasting.";
    sub, sub_scalar => Sub, "Elementwise difference, with broadcasting.";
    mul, mul_scalar => Mul, "Elementwise product, with broadcasting.";
    div, div_scalar => Div, "Elementwise quotient (always a float), with broadcasting.";
    pow, pow_scalar => Pow, "Elementwise power (always a float), with broadcasting.";
    minimum, minimum_scalar => Minimum, "Elementwise minimum; NaN if either is NaN.";
    maximum, maximum_scalar => Maximum, "Elementwise maximum; NaN if either is NaN.";
    atan2, atan2_scalar => Atan2, "Elementwise `atan2(self, other)`.";
    eq, eq_scalar => Eq, "Elementwise `==` (bool).";
    ne, ne_scalar => Ne, "Elementwise `!=` (bool).";
    lt, lt_scalar => Lt, "Elementwise `<` (bool).";
    le, le_scalar => Le, "Elementwise `<=` (bool).";
    gt, gt_scalar => Gt, "Elementwise `>` (bool).";
    ge, ge_scalar => Ge, "Elementwise `>=` (bool).";
}

impl Array {
    /// Elementwise logical and of two bool arrays.
    pub fn and(&self, other: &Array) -> Result<Array> {
        self.binary(BinaryOp::And, other)
    }

    /// Elementwise logical or of two bool arrays.
    pub fn or(&self, other: &Array) -> Result<Array> {
        self.binary(BinaryOp::Or, other)
    }
}
