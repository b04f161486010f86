//! Unary elementwise operations, each defined once in [`UnaryOp`]: its name,
//! its result dtype and its value on f32, f64 and i64.
//!
//! Math functions (`exp`, `sin`, ...) are the straight-line functions of
//! [`crate::ops::vmath`] (f32 in f32 where it has them, else through f64),
//! integers in f64 as R does. `neg abs sign floor ceil round` keep integer
//! dtypes (bool becomes i64); `neg` and `abs` of `i64::MIN` are an error
//! (see [`crate::ops::integer`]). `isnan isfinite` give bool. `not` takes bool.
//! NaN propagates through every float function; `sign(0) = 0`, `sign(NaN) = NaN`
//! and `round` rounds half to even, as R and IEC 60559 do.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use num_traits::Float;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::KernelOp;
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::memory;
use crate::ops::{integer, loops, vmath};

/// Every unary elementwise operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[allow(missing_docs)]
pub enum UnaryOp {
    Neg,
    Abs,
    Sign,
    Floor,
    Ceil,
    Round,
    Sqrt,
    Exp,
    Expm1,
    Log,
    Log1p,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sigmoid,
    Softplus,
    IsNan,
    IsFinite,
    Not,
}

/// Calls macro `$m` with its arguments followed by the list of every
/// [`UnaryOp`] variant, so code that must name each op (the CPU
/// interpreter's dispatch, [`UnaryOp::ALL`]) takes the list from here.
#[macro_export]
#[doc(hidden)]
macro_rules! with_unary_ops {
    ($m:ident ! ( $($args:tt)* )) => {
        $m!($($args)* [
            Neg Abs Sign Floor Ceil Round Sqrt Exp Expm1 Log Log1p Sin Cos Tan Tanh
            Sigmoid Softplus IsNan IsFinite Not
        ])
    };
}

macro_rules! unary_list {
    ([$($v:ident)*]) => {
        [$(UnaryOp::$v),*]
    };
}

impl UnaryOp {
    /// Every unary op (tests and conformance suites iterate it, so a new op
    /// is covered as soon as it is defined).
    pub const ALL: &'static [UnaryOp] = &with_unary_ops!(unary_list!());

    /// Work per element in units of a plain arithmetic operation, for
    /// sizing parallel tasks: the transcendental functions 16, the rest 1.
    pub fn cost(self) -> usize {
        use UnaryOp::*;
        match self {
            Exp | Expm1 | Log | Log1p | Sin | Cos | Tan | Tanh | Sigmoid | Softplus => 16,
            Neg | Abs | Sign | Floor | Ceil | Round | Sqrt | IsNan | IsFinite | Not => 1,
        }
    }
}

/// How a unary op chooses its result dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DTypeRule {
    /// Keeps floats and integers; bool becomes i64.
    Same,
    /// f32 stays f32, everything else becomes f64.
    Float,
    /// Always bool.
    Predicate,
    /// Takes and gives bool.
    Logical,
}

/// The float functions the unary ops need, beyond [`Float`].
pub trait Real: Float + Send + Sync + Default + 'static {
    /// Rounds half to even.
    fn round_even(self) -> Self;
    /// The value as an f64 (exact).
    fn widen(self) -> f64;
    /// An f64 rounded to this type.
    fn narrow(v: f64) -> Self;
    /// A math function in straight-line arithmetic ([`vmath::Math`]);
    /// `sin`, `cos` and `tan` valid up to [`Real::TRIG_LANE_LIMIT`].
    fn math(f: vmath::Math, x: Self) -> Self;
    /// `|x|` up to which [`Real::math`]'s trigonometric functions are
    /// valid (beyond, [`UnaryOp::apply`] takes the f64 functions).
    const TRIG_LANE_LIMIT: f64;
    /// `self^y` in straight-line arithmetic (loops vectorize it):
    /// [`vmath::pow`] and [`vmath::pow32`], within 1 ulp of libm's `pow`
    /// at every pair of operands, special values included.
    fn pow(self, y: Self) -> Self;
    /// [`Real::pow`] where [`Real::pow_lane_covers`] holds, a value to redo
    /// elsewhere ([`vmath::pow_lane`], [`vmath::pow32_lane`]).
    fn pow_lane(self, y: Self) -> Self;
    /// Whether [`Real::pow_lane`] gives [`Real::pow`] at `(self, y)`.
    fn pow_lane_covers(self, y: Self) -> bool;
    /// The angle of the point `(x, self)` in straight-line arithmetic:
    /// [`vmath::atan2`] (within 2 ulps of libm's) and, for f32,
    /// [`vmath::single::atan2`] (within 1 ulp of libm's rounded value);
    /// special values as libm's.
    fn atan2(self, x: Self) -> Self;
}

impl Real for f32 {
    #[inline(always)]
    fn round_even(self) -> Self {
        self.round_ties_even()
    }
    #[inline(always)]
    fn widen(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn narrow(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn math(f: vmath::Math, x: Self) -> Self {
        f.of_f32(x)
    }
    const TRIG_LANE_LIMIT: f64 = vmath::single::TRIG_LIMIT as f64;
    #[inline(always)]
    fn pow(self, y: Self) -> Self {
        vmath::pow32(self, y)
    }
    #[inline(always)]
    fn pow_lane(self, y: Self) -> Self {
        vmath::pow32_lane(self, y)
    }
    #[inline(always)]
    fn pow_lane_covers(self, y: Self) -> bool {
        vmath::pow32_lane_covers(self, y)
    }
    #[inline(always)]
    fn atan2(self, x: Self) -> Self {
        vmath::single::atan2(self, x)
    }
}

impl Real for f64 {
    #[inline(always)]
    fn round_even(self) -> Self {
        self.round_ties_even()
    }
    #[inline(always)]
    fn widen(self) -> f64 {
        self
    }
    #[inline(always)]
    fn narrow(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn math(f: vmath::Math, x: Self) -> Self {
        f.of_f64(x)
    }
    const TRIG_LANE_LIMIT: f64 = vmath::TRIG_LIMIT;
    #[inline(always)]
    fn pow(self, y: Self) -> Self {
        vmath::pow(self, y)
    }
    #[inline(always)]
    fn pow_lane(self, y: Self) -> Self {
        vmath::pow_lane(self, y)
    }
    #[inline(always)]
    fn pow_lane_covers(self, y: Self) -> bool {
        vmath::pow_lane_covers(self, y)
    }
    #[inline(always)]
    fn atan2(self, x: Self) -> Self {
        vmath::atan2(self, x)
    }
}

impl UnaryOp {
    /// The op's name, as the `Array` method is called.
    pub fn name(self) -> &'static str {
        use UnaryOp::*;
        match self {
            Neg => "neg",
            Abs => "abs",
            Sign => "sign",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Sqrt => "sqrt",
            Exp => "exp",
            Expm1 => "expm1",
            Log => "log",
            Log1p => "log1p",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Tanh => "tanh",
            Sigmoid => "sigmoid",
            Softplus => "softplus",
            IsNan => "isnan",
            IsFinite => "isfinite",
            Not => "not",
        }
    }

    fn rule(self) -> DTypeRule {
        use UnaryOp::*;
        match self {
            Neg | Abs | Sign | Floor | Ceil | Round => DTypeRule::Same,
            IsNan | IsFinite => DTypeRule::Predicate,
            Not => DTypeRule::Logical,
            _ => DTypeRule::Float,
        }
    }

    /// Whether the op tests its operand (any dtype) and gives bool.
    pub fn is_predicate(self) -> bool {
        self.rule() == DTypeRule::Predicate
    }

    /// The op on a float value.
    #[inline(always)]
    pub fn apply<T: Real>(self, x: T) -> T {
        if self.lane_covers(x) {
            return self.apply_lane(x);
        }
        let w = x.widen();
        match self {
            UnaryOp::Sin => T::narrow(vmath::sin(w)),
            UnaryOp::Cos => T::narrow(vmath::cos(w)),
            UnaryOp::Tan => T::narrow(vmath::tan(w)),
            _ => self.apply_lane(x),
        }
    }

    /// Whether [`UnaryOp::apply_lane`] gives [`UnaryOp::apply`]'s value at
    /// `x`: everywhere but `sin`, `cos` and `tan` beyond
    /// [`Real::TRIG_LANE_LIMIT`], where the reduction by π/2 is not exact.
    #[inline(always)]
    pub fn lane_covers<T: Real>(self, x: T) -> bool {
        // NaN is covered: the lane form gives NaN, as libm does.
        let a = x.widen().abs();
        !self.has_wide_arguments() || a <= T::TRIG_LANE_LIMIT || a.is_nan()
    }

    /// Whether some arguments are not covered by [`UnaryOp::apply_lane`].
    pub fn has_wide_arguments(self) -> bool {
        matches!(self, UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan)
    }

    /// After a loop of [`UnaryOp::apply_lane`] over `x` into `out`: redoes
    /// with [`UnaryOp::apply`] the values it does not cover.
    pub fn redo_uncovered<T: Real>(self, x: &[T], out: &mut [T]) {
        if self.has_wide_arguments() {
            for (o, &v) in out.iter_mut().zip(x) {
                if !self.lane_covers(v) {
                    *o = self.apply(v);
                }
            }
        }
    }

    /// The op on a float value in straight-line arithmetic, for loops that
    /// vectorize: [`UnaryOp::apply`] wherever [`UnaryOp::lane_covers`]
    /// holds, a value to redo elsewhere ([`UnaryOp::redo_uncovered`]).
    #[inline(always)]
    pub fn apply_lane<T: Real>(self, x: T) -> T {
        use UnaryOp::*;
        let zero = T::zero();
        let one = T::one();
        match self {
            Neg => -x,
            Abs => x.abs(),
            Sign => {
                if x > zero {
                    one
                } else if x < zero {
                    -one
                } else {
                    x // 0, -0 and NaN map to themselves
                }
            }
            Floor => x.floor(),
            Ceil => x.ceil(),
            Round => x.round_even(),
            Sqrt => x.sqrt(),
            Exp => T::math(vmath::Math::Exp, x),
            Expm1 => T::math(vmath::Math::Expm1, x),
            Log => T::math(vmath::Math::Ln, x),
            Log1p => T::math(vmath::Math::Ln1p, x),
            Sin => T::math(vmath::Math::Sin, x),
            Cos => T::math(vmath::Math::Cos, x),
            Tan => T::math(vmath::Math::Tan, x),
            Tanh => T::math(vmath::Math::Tanh, x),
            Sigmoid => T::math(vmath::Math::Sigmoid, x),
            Softplus => T::math(vmath::Math::Softplus, x),
            // Predicates in the float domain give 1 for true and 0 for false.
            IsNan => T::from(x.is_nan() as u8).unwrap_or(zero),
            IsFinite => T::from(x.is_finite() as u8).unwrap_or(zero),
            Not => T::from((x == zero) as u8).unwrap_or(zero),
        }
    }

    /// The op on an integer (only for the `Same` ops), and whether it
    /// overflowed (the value is then meaningless and must become an error).
    #[inline(always)]
    pub(crate) fn apply_i64(self, x: i64) -> (i64, bool) {
        match self {
            UnaryOp::Neg => x.overflowing_neg(),
            UnaryOp::Abs => x.overflowing_abs(),
            UnaryOp::Sign => (x.signum(), false),
            _ => (x, false), // floor, ceil, round of an integer
        }
    }

    /// The op over integers; an error for the first value that overflows.
    fn map_i64(self, v: &[i64]) -> Result<Vec<i64>> {
        let overflow = AtomicBool::new(false);
        let out = loops::map(self.name(), v, |a| {
            let (r, o) = self.apply_i64(a);
            if o {
                overflow.store(true, Ordering::Relaxed);
            }
            r
        })?;
        if overflow.into_inner() {
            if let Some(i) = v.iter().position(|&a| self.apply_i64(a).1) {
                return Err(integer::unary_error(self, v[i], i));
            }
        }
        Ok(out)
    }

    /// The result dtype for an input dtype, or an error naming the dtype.
    pub fn result_dtype(self, input: DType) -> Result<DType> {
        Ok(match self.rule() {
            DTypeRule::Same => match input {
                DType::Bool => DType::I64,
                d => d,
            },
            DTypeRule::Float => input.float_of(),
            DTypeRule::Predicate => DType::Bool,
            DTypeRule::Logical => {
                if input != DType::Bool {
                    return Err(Error::DType {
                        op: self.name(),
                        got: input,
                        expected: "bool",
                    });
                }
                DType::Bool
            }
        })
    }

    fn eval(self, x: &HostBuffer, out: DType) -> Result<HostBuffer> {
        use HostBuffer as B;
        let op = self.name();
        Ok(match (self.rule(), x) {
            (DTypeRule::Logical, B::Bool(v)) => B::Bool(loops::map(op, v, |b| !b)?),
            (DTypeRule::Predicate, B::F64(v)) => B::Bool(loops::map(op, v, |a| self.predicate(a))?),
            (DTypeRule::Predicate, B::F32(v)) => B::Bool(loops::map(op, v, |a| self.predicate(a))?),
            (DTypeRule::Predicate, _) => {
                B::Bool(memory::filled(op, x.len(), self == UnaryOp::IsFinite)?)
            }
            (_, B::F64(v)) => B::F64(loops::map(op, v, |a| self.apply(a))?),
            (_, B::F32(v)) => B::F32(loops::map(op, v, |a| self.apply(a))?),
            (DTypeRule::Same, B::I64(v)) => B::I64(self.map_i64(v)?),
            // 0 and 1: nothing overflows.
            (DTypeRule::Same, B::Bool(v)) => {
                B::I64(loops::map(op, v, |a| self.apply_i64(a as i64).0)?)
            }
            // Float math on integers and bools computes in f64.
            _ => return self.eval(&x.cast(out)?, out),
        })
    }

    /// `isnan` or `isfinite` of a float value.
    #[inline]
    pub(crate) fn predicate<T: Real>(self, x: T) -> bool {
        match self {
            UnaryOp::IsNan => x.is_nan(),
            _ => x.is_finite(),
        }
    }
}

/// The primitive for one unary op.
#[derive(Debug, Clone, Copy)]
pub struct Unary(pub UnaryOp);

impl Primitive for Unary {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn kernel_op(&self) -> Option<KernelOp> {
        Some(KernelOp::Unary(self.0))
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        Ok(Spec::new(
            inputs[0].shape.clone(),
            self.0.result_dtype(inputs[0].dtype)?,
        ))
    }
    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        Ok(Arc::new(self.0.eval(inputs[0].buf, out.dtype)?))
    }
    /// Each op's derivative times the cotangent; `sign`, `floor`, `ceil`
    /// and `round` have derivative zero (wherever they have one); the
    /// tests (`isnan`, `isfinite`, `not`) give no gradient. `abs` has
    /// derivative `sign(x)`, so 0 at 0 (a subgradient); `sqrt`'s is
    /// infinite at 0 and `log`'s at 0, as the functions' slopes are.
    fn vjp(&self, inputs: &[Array], y: &Array, g: &Array) -> Result<Vec<Option<Array>>> {
        use UnaryOp::*;
        let x = &inputs[0];
        let one = || x.scalar_like(1.0);
        let d = match self.0 {
            Neg => -g,
            Abs => g * &x.sign()?,
            Sign | Floor | Ceil | Round => crate::ops::creation::zeros_like(x),
            Sqrt => (g * 0.5) / y,
            Exp => g * y,
            Expm1 => g * &(y + 1.0)?,
            Log => g / x,
            Log1p => g / &(x + 1.0)?,
            Sin => g * &x.cos()?,
            Cos => (g * &x.sin()?)?.neg(),
            Tan => g * &((y * y)? + 1.0)?,
            Tanh => g * &(one() - &(y * y)?)?,
            Sigmoid => g * &(y * &(one() - y)?)?,
            Softplus => g * &x.sigmoid()?,
            IsNan | IsFinite | Not => return Ok(vec![None]),
        }?;
        Ok(vec![Some(d)])
    }
}

impl Array {
    /// Applies any unary op (the named methods below are shorthands).
    pub fn unary(&self, op: UnaryOp) -> Result<Array> {
        Array::from_op(Unary(op), vec![self.clone()])
    }
}

macro_rules! unary_methods {
    ($($method:ident => $op:ident, $doc:literal;)*) => {
        impl Array {
            $(
                #[doc = $doc]
                pub fn $method(&self) -> Result<Array> {
                    self.unary(UnaryOp::$op)
                }
            )*
        }
    };
}

unary_methods! {
    neg => Neg, "Elementwise negation.";
    abs => Abs, "Elementwise absolute value.";
    sign => Sign, "Elementwise sign: -1, 0 or 1 (NaN stays NaN).";
    floor => Floor, "Elementwise floor.";
    ceil => Ceil, "Elementwise ceiling.";
    round => Round, "Elementwise rounding, half to even (as R's `round`).";
    sqrt => Sqrt, "Elementwise square root (NaN below zero).";
    exp => Exp, "Elementwise `e^x`.";
    expm1 => Expm1, "Elementwise `e^x - 1`, accurate near zero.";
    log => Log, "Elementwise natural logarithm (-Inf at 0, NaN below).";
    log1p => Log1p, "Elementwise `ln(1 + x)`, accurate near zero.";
    sin => Sin, "Elementwise sine.";
    cos => Cos, "Elementwise cosine.";
    tan => Tan, "Elementwise tangent.";
    tanh => Tanh, "Elementwise hyperbolic tangent.";
    sigmoid => Sigmoid, "Elementwise logistic function `1 / (1 + e^-x)`, stable for large |x|.";
    softplus => Softplus, "Elementwise `ln(1 + e^x)`, stable for large |x|.";
    isnan => IsNan, "Elementwise NaN test (bool).";
    isfinite => IsFinite, "Elementwise finiteness test (bool).";
    not => Not, "Elementwise logical not of a bool array.";
}
