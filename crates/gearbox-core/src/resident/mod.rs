//! Resident handles: a mutable array that stays on one backend and is
//! changed in place, for iterative algorithms (IRLS, power iteration,
//! gradient descent, EM) that would otherwise make a new buffer per step.
//!
//! Arrays are immutable values; a [`ResidentHandle`] is the one exception,
//! with amatrix's aliasing rules:
//!
//! - built from an array already resident on the backend, the handle
//!   **shares that buffer**: the array sees every change made through the
//!   handle (its host copy, if it had one, is dropped at each change and
//!   read back when next needed);
//! - built from an array that is not resident there (host values, or
//!   another backend's), the handle uploads a buffer **it owns alone**.
//!
//! ```
//! use gearbox_core::{resident::resident_handle, Array, BinaryOp};
//! // On the CPU backend the source is never "resident": the handle owns a copy.
//! let x = Array::from_vec([3], vec![1.0, 2.0, 3.0])?;
//! let h = resident_handle(&x, "cpu")?;
//! h.ewise_inplace(BinaryOp::Mul, 10.0)?;
//! assert_eq!(h.snapshot()?.to_vec::<f64>()?, vec![10.0, 20.0, 30.0]);
//! assert_eq!(x.to_vec::<f64>()?, vec![1.0, 2.0, 3.0]); // unchanged
//! # Ok::<(), gearbox_core::Error>(())
//! ```
//!
//! Every operation runs at once (in order with device work queued before
//! it) and writes the handle's own buffer: an elementwise update is one
//! fused kernel whose output is the buffer it reads, so no new device
//! buffer is made. [`ResidentHandle::as_array`] is a view that shares the
//! buffer (lazy work built on it reads the values current when it is
//! evaluated); [`ResidentHandle::snapshot`] is an immutable copy. Handles
//! work on the CPU backend too (values in host memory, changed in place),
//! so the same code runs with no GPU.
//!
//! A handle takes one operation at a time: using it from a second thread
//! while an operation runs is an error, never a race. Shapes and dtypes
//! must match exactly (handles hold `f32` or `f64`); an operation whose
//! kernel a device refuses is computed by the CPU and written into the
//! buffer, with a fallback log entry.

mod ops;
mod storage;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::{Array, Spec};
use crate::precision::Precision;
use crate::shape::Shape;

pub use ops::Rhs;
use storage::Storage;

/// A mutable array resident on one backend; see the [module docs](self).
pub struct ResidentHandle {
    spec: Spec,
    precision: Precision,
    storage: Storage,
    shares_source: bool,
    busy: AtomicBool,
    /// Scalar operands already made (and, after first use, resident), so
    /// a loop's repeated constants are not uploaded again each step.
    scalars: Mutex<Vec<(u64, Array)>>,
}

impl std::fmt::Debug for ResidentHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentHandle")
            .field("shape", &self.spec.shape)
            .field("dtype", &self.spec.dtype)
            .field("backend", &self.backend())
            .field("shares_source", &self.shares_source)
            .finish()
    }
}

/// A handle on `backend` ("cpu", or a registered GPU backend's name) with
/// `array`'s values (evaluated first), under amatrix's aliasing rules
/// ([module docs](self)).
pub fn resident_handle(array: &Array, backend: &str) -> Result<ResidentHandle> {
    ResidentHandle::new(array, backend)
}

/// Free-function form of [`ResidentHandle::ewise_inplace`] (amatrix's
/// `am_ewise_inplace(h, other, op)`).
pub fn ewise_inplace<'a>(
    h: &ResidentHandle,
    other: impl Into<Rhs<'a>>,
    op: crate::BinaryOp,
) -> Result<()> {
    h.ewise_inplace(op, other)
}

/// Free-function form of [`ResidentHandle::sweep_inplace`] (amatrix's
/// `am_sweep_inplace(h, stats, margin, op)`).
pub fn sweep_inplace(
    h: &ResidentHandle,
    stats: &Array,
    axis: usize,
    op: crate::BinaryOp,
) -> Result<()> {
    h.sweep_inplace(stats, axis, op)
}

impl ResidentHandle {
    /// See [`resident_handle`].
    pub fn new(array: &Array, backend: &str) -> Result<ResidentHandle> {
        let dtype = array.dtype();
        if !matches!(dtype, DType::F32 | DType::F64) {
            return Err(Error::InvalidArgument {
                op: "resident_handle",
                name: "array",
                value: format!("a {} {dtype} array", array.shape()),
                why: "resident handles hold f32 or f64 values; convert with astype first".into(),
            });
        }
        array.eval()?;
        let (storage, shares_source) = Storage::for_array(array, backend)?;
        Ok(ResidentHandle {
            spec: array.spec().clone(),
            precision: array.precision(),
            storage,
            shares_source,
            busy: AtomicBool::new(false),
            scalars: Mutex::new(Vec::new()),
        })
    }

    /// A handle of `shape` and `dtype` (f32 or f64) on `backend` with every
    /// element `value`, made on the device (no host buffer of its size is
    /// made or sent): the way to start the buffers of an iterative
    /// algorithm.
    pub fn full(
        shape: impl Into<Shape>,
        dtype: DType,
        value: f64,
        backend: &str,
    ) -> Result<ResidentHandle> {
        let shape = shape.into();
        if !matches!(dtype, DType::F32 | DType::F64) {
            return Err(Error::InvalidArgument {
                op: "ResidentHandle::full",
                name: "dtype",
                value: dtype.to_string(),
                why: "resident handles hold f32 or f64 values".into(),
            });
        }
        shape.check_size("ResidentHandle::full", dtype)?;
        let storage = Storage::new_buffer(backend, shape.numel(), dtype)?;
        let h = ResidentHandle {
            spec: Spec::new(shape, dtype),
            precision: crate::precision::default_precision(),
            storage,
            shares_source: false,
            busy: AtomicBool::new(false),
            scalars: Mutex::new(Vec::new()),
        };
        h.fill(value)?;
        Ok(h)
    }

    /// [`ResidentHandle::full`] of zeros.
    pub fn zeros(shape: impl Into<Shape>, dtype: DType, backend: &str) -> Result<ResidentHandle> {
        Self::full(shape, dtype, 0.0, backend)
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.spec.shape
    }

    /// The element type (f32 or f64).
    pub fn dtype(&self) -> DType {
        self.spec.dtype
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.spec.shape.numel()
    }

    /// The backend holding the buffer ("cpu" for host memory).
    pub fn backend(&self) -> &'static str {
        self.storage.backend_name()
    }

    /// Whether the handle shares its source array's buffer (built from an
    /// array resident on the same backend) rather than owning a copy.
    pub fn shares_source(&self) -> bool {
        self.shares_source
    }

    /// A view of the handle's buffer as an array. It **aliases** the
    /// handle: work built on it reads the values current when that work
    /// is evaluated, and a host copy taken from it is dropped at the
    /// handle's next change. Take [`ResidentHandle::snapshot`] to keep the
    /// values of now.
    pub fn as_array(&self) -> Array {
        Array::from_device_copy(self.spec.clone(), self.precision, self.storage.as_copy())
    }

    /// An immutable copy of the values now (it stays on the handle's
    /// device).
    pub fn snapshot(&self) -> Result<Array> {
        let _busy = self.enter("snapshot")?;
        let copy = self.as_array().mul_scalar(1.0)?;
        copy.eval()?;
        Ok(copy)
    }

    /// Marks the handle busy for one operation; an error if another
    /// thread's operation holds it.
    fn enter(&self, op: &'static str) -> Result<Busy<'_>> {
        if self.busy.swap(true, Ordering::Acquire) {
            return Err(Error::InvalidArgument {
                op,
                name: "handle",
                value: format!(
                    "a {} {} handle on {}",
                    self.shape(),
                    self.dtype(),
                    self.backend()
                ),
                why: "another thread is using this handle; a handle takes one operation at a time"
                    .into(),
            });
        }
        Ok(Busy(&self.busy))
    }

    /// Holds the handle busy until the guard drops (tests show what a
    /// second thread then gets).
    #[doc(hidden)]
    pub fn hold(&self) -> Result<impl Drop + '_> {
        self.enter("hold")
    }

    /// A 0-d array of `value` in the handle's dtype, made once per value
    /// and kept (with its device copy after first use).
    fn scalar(&self, value: f64) -> Array {
        const KEPT: usize = 32;
        let mut kept = self.scalars.lock().unwrap_or_else(|e| e.into_inner());
        let bits = value.to_bits();
        if let Some((_, a)) = kept.iter().find(|(b, _)| *b == bits) {
            return a.clone();
        }
        let a = match self.dtype() {
            DType::F32 => Array::scalar(value as f32),
            _ => Array::scalar(value),
        };
        let a = a.with_precision(self.precision).unwrap_or(a);
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push((bits, a.clone()));
        a
    }

    /// Checks that `value` has the handle's shape and dtype.
    fn check_same(&self, op: &'static str, name: &'static str, value: &Array) -> Result<()> {
        if value.shape() != self.shape() || value.dtype() != self.dtype() {
            return Err(Error::InvalidArgument {
                op,
                name,
                value: format!("a {} {} array", value.shape(), value.dtype()),
                why: format!(
                    "the handle holds {} {}; in-place operations keep its shape and dtype",
                    self.shape(),
                    self.dtype()
                ),
            });
        }
        Ok(())
    }
}

/// The busy mark of one operation on a handle.
struct Busy<'a>(&'a AtomicBool);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Whether two shared buffers are the same allocation.
fn same_allocation<T: ?Sized, U: ?Sized>(a: &Arc<T>, b: &Arc<U>) -> bool {
    Arc::as_ptr(a) as *const () == Arc::as_ptr(b) as *const ()
}
