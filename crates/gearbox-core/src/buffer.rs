//! Host storage: a typed, column-major buffer of one of the four dtypes.
//!
//! [`HostBuffer`] owns its values; arrays share it through `Arc`, so zero-copy
//! operations (reshape, squeeze) hand the same buffer on. Every method that
//! makes a buffer whose size the user chose allocates through
//! [`crate::memory`], so a buffer too large for the host is an
//! [`crate::Error::OutOfMemory`], not an abort.

use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::memory;

/// Column-major host storage of one dtype.
#[derive(Debug, Clone, PartialEq)]
pub enum HostBuffer {
    /// Logical values.
    Bool(Vec<bool>),
    /// 64-bit integers.
    I64(Vec<i64>),
    /// Single precision.
    F32(Vec<f32>),
    /// Double precision.
    F64(Vec<f64>),
}

/// Applies `$body` to the inner vector of a [`HostBuffer`], whatever its dtype.
#[macro_export]
#[doc(hidden)]
macro_rules! with_buffer {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            $crate::HostBuffer::Bool($v) => $body,
            $crate::HostBuffer::I64($v) => $body,
            $crate::HostBuffer::F32($v) => $body,
            $crate::HostBuffer::F64($v) => $body,
        }
    };
}

/// Like [`with_buffer!`], rebuilding a buffer of the same dtype from the result.
#[macro_export]
#[doc(hidden)]
macro_rules! map_buffer {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            $crate::HostBuffer::Bool($v) => $crate::HostBuffer::Bool($body),
            $crate::HostBuffer::I64($v) => $crate::HostBuffer::I64($body),
            $crate::HostBuffer::F32($v) => $crate::HostBuffer::F32($body),
            $crate::HostBuffer::F64($v) => $crate::HostBuffer::F64($body),
        }
    };
}

impl HostBuffer {
    /// The dtype of the values.
    pub fn dtype(&self) -> DType {
        match self {
            HostBuffer::Bool(_) => DType::Bool,
            HostBuffer::I64(_) => DType::I64,
            HostBuffer::F32(_) => DType::F32,
            HostBuffer::F64(_) => DType::F64,
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        with_buffer!(self, v => v.len())
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len() * self.dtype().size_bytes()
    }

    /// A buffer of `n` copies of `value`, converted to `dtype`, made for
    /// `op` (which an out-of-memory error names).
    pub fn filled(op: &str, dtype: DType, n: usize, value: f64) -> Result<HostBuffer> {
        Ok(match dtype {
            DType::Bool => HostBuffer::Bool(memory::filled(op, n, value != 0.0)?),
            DType::I64 => HostBuffer::I64(memory::filled(op, n, value as i64)?),
            DType::F32 => HostBuffer::F32(memory::filled(op, n, value as f32)?),
            DType::F64 => HostBuffer::F64(memory::filled(op, n, value)?),
        })
    }

    /// A zeroed buffer for scratch whose size the library bounds (a kernel
    /// tile), never a size the user chose: ordinary allocation.
    pub(crate) fn scratch(dtype: DType, n: usize) -> HostBuffer {
        match dtype {
            DType::Bool => HostBuffer::Bool(vec![false; n]),
            DType::I64 => HostBuffer::I64(vec![0; n]),
            DType::F32 => HostBuffer::F32(vec![0.0; n]),
            DType::F64 => HostBuffer::F64(vec![0.0; n]),
        }
    }

    /// A copy made for `op`, or [`crate::Error::OutOfMemory`] where `clone`
    /// would abort.
    pub fn try_clone(&self, op: &str) -> Result<HostBuffer> {
        Ok(map_buffer!(self, v => memory::copy_of(op, v)?))
    }

    /// Wraps a vector of any element type.
    pub fn from_vec<T: Element>(v: Vec<T>) -> HostBuffer {
        let any: Box<dyn std::any::Any> = Box::new(v);
        match T::DTYPE {
            DType::Bool => HostBuffer::Bool(*any.downcast().expect("dtype tag matches type")),
            DType::I64 => HostBuffer::I64(*any.downcast().expect("dtype tag matches type")),
            DType::F32 => HostBuffer::F32(*any.downcast().expect("dtype tag matches type")),
            DType::F64 => HostBuffer::F64(*any.downcast().expect("dtype tag matches type")),
        }
    }

    /// The values as a slice of `T`, if `T` is this buffer's element type.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        let any: &dyn std::any::Any = with_buffer!(self, v => v);
        any.downcast_ref::<Vec<T>>().map(|v| v.as_slice())
    }

    /// Value `i` converted to f64.
    pub fn get_f64(&self, i: usize) -> f64 {
        with_buffer!(self, v => v[i].to_f64())
    }

    /// The values converted to f64.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        match self {
            HostBuffer::F64(v) => memory::copy_of("to_f64_vec", v),
            _ => {
                with_buffer!(self, v => memory::collect("to_f64_vec", v.iter().map(|x| x.to_f64())))
            }
        }
    }

    /// The values converted to `T` (with [`HostBuffer::cast`]'s rules).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if let Some(s) = self.as_slice::<T>() {
            return memory::copy_of("to_vec", s);
        }
        let converted = self.cast(T::DTYPE)?;
        let any: Box<dyn std::any::Any> = with_buffer!(converted, v => Box::new(v));
        Ok(*any
            .downcast::<Vec<T>>()
            .expect("the conversion produced the requested type"))
    }

    /// The buffer converted to `dtype`; a copy when it already has it.
    ///
    /// Float to integer conversion truncates toward zero and saturates; NaN
    /// becomes 0. Anything to bool is `value != 0` (NaN is true). The fused CPU
    /// kernels convert with the same per-element rules. `Array::astype`
    /// refuses floats that i64 cannot hold instead (see
    /// [`crate::ops::integer`]); this low-level conversion does not check.
    /// The only error is [`crate::Error::OutOfMemory`] (named `astype`).
    pub fn cast(&self, dtype: DType) -> Result<HostBuffer> {
        use rayon::prelude::*;
        fn convert<S: CastTo<D> + Sync, D: Send>(v: &[S]) -> Result<Vec<D>> {
            if crate::ops::loops::worth_parallel(v.len(), 1) {
                memory::par_collect("astype", v.par_iter().map(|&x| x.cast_to()))
            } else {
                memory::collect("astype", v.iter().map(|&x| x.cast_to()))
            }
        }
        if self.dtype() == dtype {
            return self.try_clone("astype");
        }
        Ok(match dtype {
            DType::F64 => HostBuffer::F64(with_buffer!(self, v => convert(v)?)),
            DType::F32 => HostBuffer::F32(with_buffer!(self, v => convert(v)?)),
            DType::I64 => HostBuffer::I64(with_buffer!(self, v => convert(v)?)),
            DType::Bool => HostBuffer::Bool(with_buffer!(self, v => convert(v)?)),
        })
    }
}

/// Conversion of one element to another element type: the rule behind
/// [`HostBuffer::cast`], shared by every CPU path so they cannot drift apart.
pub(crate) trait CastTo<D>: Copy {
    /// `self` as a `D`.
    fn cast_to(self) -> D;
}

macro_rules! cast_rules {
    ($($src:ty => $dst:ty, |$x:ident| $e:expr;)*) => {
        $(
            impl CastTo<$dst> for $src {
                #[inline(always)]
                fn cast_to(self) -> $dst {
                    let $x = self;
                    $e
                }
            }
        )*
    };
}

cast_rules! {
    f64 => f64, |x| x;
    f32 => f64, |x| x as f64;
    i64 => f64, |x| x as f64;
    bool => f64, |x| x.to_f64();
    f64 => f32, |x| x as f32;
    f32 => f32, |x| x;
    i64 => f32, |x| x as f32;
    bool => f32, |x| x.to_f64() as f32;
    f64 => i64, |x| x as i64;
    f32 => i64, |x| x as i64;
    i64 => i64, |x| x;
    bool => i64, |x| x.to_f64() as i64;
    f64 => bool, |x| x != 0.0;
    f32 => bool, |x| x != 0.0;
    i64 => bool, |x| x != 0;
    bool => bool, |x| x;
}
