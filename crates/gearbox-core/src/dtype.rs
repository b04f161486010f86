//! Element types: the [`DType`] tag, the [`Element`] trait that ties Rust types
//! to it, and the promotion rule for mixed operands.

use std::fmt;

/// The element type of an array.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum DType {
    /// Logical values.
    Bool,
    /// 64-bit signed integers.
    I64,
    /// IEEE 754 single precision.
    F32,
    /// IEEE 754 double precision.
    F64,
}

impl DType {
    /// The name used in printouts and errors (`f32`, `f64`, `bool`, `i64`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I64 => "i64",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// Size of one element in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// The common type of two operands: `bool < i64 < f32 < f64`.
    ///
    /// ```
    /// use gearbox_core::DType;
    /// assert_eq!(DType::promote(DType::F32, DType::F64), DType::F64);
    /// assert_eq!(DType::promote(DType::I64, DType::F32), DType::F32);
    /// assert_eq!(DType::promote(DType::Bool, DType::I64), DType::I64);
    /// ```
    pub fn promote(a: DType, b: DType) -> DType {
        a.max(b)
    }

    /// The floating type that math on this type produces: f32 stays f32,
    /// everything else computes in f64 (as R does for integers).
    pub fn float_of(self) -> DType {
        match self {
            DType::F32 => DType::F32,
            _ => DType::F64,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i64 {}
    impl Sealed for bool {}
}

/// A Rust type that can be stored in an array.
pub trait Element: sealed::Sealed + Copy + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// The dtype tag of this type.
    const DTYPE: DType;
    /// Conversion from f64 (saturating for integers, `!= 0` for bool).
    fn from_f64(v: f64) -> Self;
    /// Conversion to f64.
    fn to_f64(self) -> f64;
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Element for i64 {
    const DTYPE: DType = DType::I64;
    fn from_f64(v: f64) -> Self {
        v as i64
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn to_f64(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
}
