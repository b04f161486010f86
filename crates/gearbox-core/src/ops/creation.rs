//! Array creation: constant fills, the identity, ranges and random arrays.
//!
//! Each creator is a [`Primitive`] with no inputs, so it is as lazy as any
//! other op: building it checks the arguments and computes nothing, and a
//! backend generates the values where they are needed. Arrays get the session default precision.
//!
//! - [`Array::zeros`], [`Array::ones`], [`Array::full`]: constants of any dtype;
//! - [`Array::eye`], [`Array::eye_dtype`]: the identity matrix;
//! - [`Array::arange`]: `start, start + step, ...` up to but excluding `stop`
//!   (half-open, as numpy's `arange`);
//! - [`Array::linspace`]: `n` evenly spaced points from `start` to `stop`
//!   inclusive;
//! - [`Array::rand`], [`Array::randn`]: uniform `[0, 1)` and standard normal
//!   f64 values; element `i` depends only on `(seed, i)`, as defined in
//!   [`crate::random`].

use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::ops::library::LibraryCall;
use crate::ops::loops;
use crate::random;
use crate::shape::Shape;

/// The output spec of a creation op: it takes no inputs, and `shape` of
/// `dtype` must obey the size rule ([`Shape::check_size`]: element count and
/// byte size must not overflow).
fn creation_spec(op: &'static str, inputs: &[&Spec], shape: Shape, dtype: DType) -> Result<Spec> {
    if !inputs.is_empty() {
        let why = "a creation op takes no inputs";
        return Err(invalid(op, "inputs", inputs.len(), why));
    }
    shape.check_size(op, dtype)?;
    Ok(Spec::new(shape, dtype))
}

/// An `InvalidArgument` error for `op`.
fn invalid(op: &'static str, name: &'static str, value: impl ToString, why: &str) -> Error {
    Error::InvalidArgument {
        op,
        name,
        value: value.to_string(),
        why: why.to_string(),
    }
}

/// A float as an error message shows it: the shortest form that reads back
/// (`1e300`, not 301 digits; `NaN`, `inf`).
fn shown(value: f64) -> String {
    format!("{value:?}")
}

/// Checks that `value` is finite.
fn check_finite(op: &'static str, name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(invalid(op, name, shown(value), "must be finite"))
    }
}

/// Checks that `value` is exactly representable in `dtype` (f32: rounding is
/// fine but overflow to infinity is not).
fn check_representable(op: &'static str, value: f64, dtype: DType) -> Result<()> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    let ok = match dtype {
        DType::F64 => true,
        DType::F32 => !value.is_finite() || value.abs() <= f64::from(f32::MAX),
        DType::I64 => {
            value.is_finite() && value.fract() == 0.0 && (-TWO_63..TWO_63).contains(&value)
        }
        DType::Bool => value == 0.0 || value == 1.0,
    };
    if ok {
        return Ok(());
    }
    let why = match dtype {
        DType::F32 => "overflows f32",
        DType::I64 => "an i64 value must be a finite integer in [-2^63, 2^63)",
        _ => "a bool value must be 0 or 1",
    };
    Err(invalid(op, "value", shown(value), why))
}

/// A constant array: `zeros`, `ones` and `full`.
#[derive(Debug, Clone)]
pub struct Fill {
    name: &'static str,
    shape: Shape,
    dtype: DType,
    value: f64,
}

impl Primitive for Fill {
    fn name(&self) -> &'static str {
        self.name
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        check_representable(self.name, self.value, self.dtype)?;
        creation_spec(self.name, inputs, self.shape.clone(), self.dtype)
    }
    fn eval_cpu(&self, _: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        Ok(Arc::new(HostBuffer::filled(
            self.name,
            out.dtype,
            out.shape.numel(),
            self.value,
        )?))
    }
}

/// The `n x n` identity matrix.
#[derive(Debug, Clone, Copy)]
pub struct Eye {
    n: usize,
    dtype: DType,
}

impl Primitive for Eye {
    fn name(&self) -> &'static str {
        "eye"
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        creation_spec("eye", inputs, Shape::new(vec![self.n, self.n]), self.dtype)
    }
    fn eval_cpu(&self, _: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let n = self.n;
        let mut buf = HostBuffer::filled("eye", out.dtype, out.shape.numel(), 0.0)?;
        crate::with_buffer!(&mut buf, v => {
            for j in 0..n {
                v[j * n + j] = crate::dtype::Element::from_f64(1.0);
            }
        });
        Ok(Arc::new(buf))
    }
}

/// An arithmetic sequence of `len` f64 values: `start + k * step`.
///
/// `linspace` is the same op with its last point pinned to `stop` and its
/// second half computed backwards from `stop`.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    name: &'static str,
    start: f64,
    step: f64,
    len: usize,
    /// For `linspace`: the exact last point.
    stop: Option<f64>,
}

impl Range {
    /// Value `k` of the sequence.
    #[inline]
    fn at(&self, k: usize) -> f64 {
        match self.stop {
            None => self.start + k as f64 * self.step,
            Some(stop) => {
                // Symmetric: exact at both ends, each half from its own end.
                let back = self.len - 1 - k;
                if k <= back {
                    self.start + k as f64 * self.step
                } else {
                    stop - back as f64 * self.step
                }
            }
        }
    }
}

impl Primitive for Range {
    fn name(&self) -> &'static str {
        self.name
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        creation_spec(self.name, inputs, Shape::new(vec![self.len]), DType::F64)
    }
    fn eval_cpu(&self, _: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let v = loops::fill_chunks(self.name, out.shape.numel(), |start, chunk| {
            for (j, o) in chunk.iter_mut().enumerate() {
                *o = self.at(start + j);
            }
        })?;
        Ok(Arc::new(HostBuffer::F64(v)))
    }
}

/// Which distribution a [`Random`] array draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Uniform on `[0, 1)` ([`random::uniform_at`]).
    Uniform,
    /// Standard normal ([`random::normal_at`]).
    Normal,
}

/// A random f64 array: element `i` is element `i` of the chosen stream of `seed`.
#[derive(Debug, Clone)]
pub struct Random {
    shape: Shape,
    seed: u64,
    dist: Distribution,
}

impl Random {
    /// A random array of `shape` from the stream of `seed`.
    pub fn new(shape: Shape, seed: u64, dist: Distribution) -> Self {
        Random { shape, seed, dist }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The distribution.
    pub fn distribution(&self) -> Distribution {
        self.dist
    }
}

impl Primitive for Random {
    fn name(&self) -> &'static str {
        match self.dist {
            Distribution::Uniform => "rand",
            Distribution::Normal => "randn",
        }
    }
    fn library_call(&self) -> Option<LibraryCall> {
        Some(LibraryCall::Random {
            seed: self.seed,
            normal: self.dist == Distribution::Normal,
        })
    }
    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        creation_spec(self.name(), inputs, self.shape.clone(), DType::F64)
    }
    fn eval_cpu(&self, _: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let (seed, n, op) = (self.seed, out.shape.numel(), self.name());
        let v = match self.dist {
            Distribution::Uniform => loops::fill_chunks(op, n, |start, chunk| {
                random::fill_uniform(seed, start as u64, chunk)
            })?,
            Distribution::Normal => loops::fill_chunks(op, n, |start, chunk| {
                random::fill_normal(seed, start as u64, chunk)
            })?,
        };
        Ok(Arc::new(HostBuffer::F64(v)))
    }
}

/// The length of `arange(start, stop, step)`; the arguments are finite, `step`
/// is nonzero and points from `start` towards `stop` (or `start == stop`).
///
/// `r = (stop - start) / step` is the exact count when it is an integer, but
/// it carries rounding error (of the arithmetic, and of decimal inputs such
/// as 0.1). So, as R's `seq` does, a point within `1e-10` steps of `stop`
/// counts as `stop`: `len = ceil(r - 1e-10)`. Then, while the computed last
/// point `start + (len - 1) * step` is not strictly before `stop`, `len`
/// shrinks, so every point produced lies strictly before `stop`.
fn arange_len(start: f64, stop: f64, step: f64) -> Result<usize> {
    const FUZZ: f64 = 1e-10;
    let r = (stop - start) / step;
    let n = (r - FUZZ).ceil().max(0.0);
    // n is infinite when stop - start overflowed; that is an error too.
    if n >= (isize::MAX as usize / 8) as f64 {
        return Err(invalid(
            "arange",
            "step",
            shown(step),
            &format!("the range from {start:?} to {stop:?} would have {r:e} elements"),
        ));
    }
    let mut n = n as usize;
    let before_stop = |x: f64| if step > 0.0 { x < stop } else { x > stop };
    while n > 0 && !before_stop(start + (n - 1) as f64 * step) {
        n -= 1;
    }
    Ok(n)
}

impl Array {
    /// An array of zeros of the given shape and dtype.
    ///
    /// ```
    /// use gearbox_core::{Array, DType};
    /// let z = Array::zeros([2, 3], DType::F64)?;
    /// assert_eq!(z.dims(), &[2, 3]);
    /// assert_eq!(z.to_vec::<f64>()?, vec![0.0; 6]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn zeros(shape: impl Into<Shape>, dtype: DType) -> Result<Array> {
        Self::fill_named("zeros", shape.into(), 0.0, dtype)
    }

    /// An array of ones of the given shape and dtype (`true` for bool).
    ///
    /// ```
    /// use gearbox_core::{Array, DType};
    /// let o = Array::ones([3], DType::I64)?;
    /// assert_eq!(o.to_vec::<i64>()?, vec![1, 1, 1]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn ones(shape: impl Into<Shape>, dtype: DType) -> Result<Array> {
        Self::fill_named("ones", shape.into(), 1.0, dtype)
    }

    /// An array with every element `value`, converted to `dtype`.
    ///
    /// `value` must be representable: any value for f64; for f32 anything
    /// that does not overflow (it is rounded to nearest; NaN and ±Inf are
    /// kept); for i64 a finite integer in `[-2^63, 2^63)`; for bool 0 or 1.
    /// Otherwise the result is [`Error::InvalidArgument`] naming `value`.
    ///
    /// ```
    /// use gearbox_core::{Array, DType};
    /// let x = Array::full([2, 2], 7.0, DType::I64)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![7; 4]);
    /// assert!(Array::full([2], 2.5, DType::I64).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn full(shape: impl Into<Shape>, value: f64, dtype: DType) -> Result<Array> {
        Self::fill_named("full", shape.into(), value, dtype)
    }

    fn fill_named(name: &'static str, shape: Shape, value: f64, dtype: DType) -> Result<Array> {
        Array::from_op(
            Fill {
                name,
                shape,
                dtype,
                value,
            },
            vec![],
        )
    }

    /// The `n x n` f64 identity matrix.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let i = Array::eye(2)?;
    /// assert_eq!(i.to_vec::<f64>()?, vec![1.0, 0.0, 0.0, 1.0]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn eye(n: usize) -> Result<Array> {
        Self::eye_dtype(n, DType::F64)
    }

    /// The `n x n` identity matrix of any dtype (`true` on the diagonal for bool).
    ///
    /// ```
    /// use gearbox_core::{Array, DType};
    /// let i = Array::eye_dtype(2, DType::I64)?;
    /// assert_eq!(i.to_vec::<i64>()?, vec![1, 0, 0, 1]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn eye_dtype(n: usize, dtype: DType) -> Result<Array> {
        Array::from_op(Eye { n, dtype }, vec![])
    }

    /// The f64 vector `start, start + step, start + 2 step, ...` of the points
    /// strictly before `stop` (half-open, as numpy's `arange`).
    ///
    /// Point `k` is computed as `start + k * step` (no accumulated error). The
    /// length is `ceil((stop - start) / step - 1e-10)`: a point within `1e-10`
    /// steps of `stop` counts as `stop` and is left out, as R's `seq` allows
    /// for rounding, so `arange(1.0, 1.3, 0.1)` has 3 points. Then the length
    /// shrinks while the computed last point is not strictly before `stop`,
    /// so every point lies before `stop`. `start == stop` gives an empty
    /// vector.
    ///
    /// Errors ([`Error::InvalidArgument`]): a non-finite argument, `step == 0`,
    /// a `step` whose sign points away from `stop`, or more points than fit
    /// in memory.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// assert_eq!(Array::arange(0.0, 5.0, 1.0)?.to_vec::<f64>()?, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    /// assert_eq!(Array::arange(5.0, 0.0, -2.0)?.to_vec::<f64>()?, vec![5.0, 3.0, 1.0]);
    /// assert_eq!(Array::arange(1.0, 1.3, 0.1)?.numel(), 3);
    /// assert!(Array::arange(0.0, 1.0, 0.0).is_err());
    /// assert!(Array::arange(0.0, 1.0, -0.5).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn arange(start: f64, stop: f64, step: f64) -> Result<Array> {
        check_finite("arange", "start", start)?;
        check_finite("arange", "stop", stop)?;
        check_finite("arange", "step", step)?;
        if step == 0.0 {
            return Err(invalid("arange", "step", shown(step), "must be nonzero"));
        }
        if (stop - start) * step < 0.0 {
            let why = format!(
                "must be {} to go from start = {start:?} to stop = {stop:?}",
                if stop > start { "positive" } else { "negative" }
            );
            return Err(invalid("arange", "step", shown(step), &why));
        }
        let len = arange_len(start, stop, step)?;
        Array::from_op(
            Range {
                name: "arange",
                start,
                step,
                len,
                stop: None,
            },
            vec![],
        )
    }

    /// `n` evenly spaced f64 points from `start` to `stop`, both included.
    ///
    /// The first point is exactly `start` and the last exactly `stop`; with
    /// `d = (stop - start) / (n - 1)`, point `k` is `start + k d` in the first
    /// half and `stop - (n - 1 - k) d` in the second. `n = 0` gives an empty
    /// vector and `n = 1` gives `[start]`. `start` and `stop` must be finite
    /// ([`Error::InvalidArgument`] otherwise).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let x = Array::linspace(0.0, 1.0, 5)?;
    /// assert_eq!(x.to_vec::<f64>()?, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// assert_eq!(Array::linspace(3.0, 9.0, 1)?.to_vec::<f64>()?, vec![3.0]);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn linspace(start: f64, stop: f64, n: usize) -> Result<Array> {
        check_finite("linspace", "start", start)?;
        check_finite("linspace", "stop", stop)?;
        let intervals = n.saturating_sub(1).max(1) as f64;
        let mut step = (stop - start) / intervals;
        if !step.is_finite() {
            // stop - start overflowed; scale first.
            step = stop / intervals - start / intervals;
        }
        Array::from_op(
            Range {
                name: "linspace",
                start,
                step,
                len: n,
                stop: if n > 1 { Some(stop) } else { None },
            },
            vec![],
        )
    }

    /// An f64 array of uniform values in `[0, 1)` from `seed`.
    ///
    /// Element `i` (column-major) is [`random::uniform_at`]`(seed, i)`:
    /// Philox4x32-10 with counter `[lo32(i), hi32(i), 0, 0]` and key
    /// `[lo32(seed), hi32(seed)]`, 53 bits of its first two words times
    /// `2^-53`. The values depend only on `(seed, i)`: not on the shape, the
    /// number of threads or the backend.
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let u = Array::rand([2, 3], 42)?;
    /// let v = u.to_vec::<f64>()?;
    /// assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
    /// assert_eq!(v, Array::rand([6], 42)?.to_vec::<f64>()?);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn rand(shape: impl Into<Shape>, seed: u64) -> Result<Array> {
        Self::random(shape.into(), seed, Distribution::Uniform)
    }

    /// An f64 array of standard normal values from `seed`.
    ///
    /// Element `i` (column-major) is [`random::normal_at`]`(seed, i)`:
    /// Box–Muller on the two uniforms of one Philox4x32-10 block with counter
    /// `[lo32(i), hi32(i), 1, 0]` (see [`crate::random`] for the formulas).
    ///
    /// ```
    /// use gearbox_core::Array;
    /// let z = Array::randn([1000], 7)?;
    /// assert!(z.mean()?.item()?.abs() < 0.2);
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn randn(shape: impl Into<Shape>, seed: u64) -> Result<Array> {
        Self::random(shape.into(), seed, Distribution::Normal)
    }

    fn random(shape: Shape, seed: u64, dist: Distribution) -> Result<Array> {
        Array::from_op(Random { shape, seed, dist }, vec![])
    }
}

/// Zeros of `a`'s shape and dtype.
pub fn zeros_like(a: &crate::graph::Array) -> Result<crate::graph::Array> {
    crate::graph::Array::zeros(a.shape().clone(), a.dtype())
}
