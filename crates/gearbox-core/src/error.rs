//! The one error type of `gearbox-core`.
//!
//! Every fallible public function returns [`Result`]. Each variant names what
//! was wrong: the operation, the shapes or dtypes involved, and what would be
//! accepted instead. Nothing in the library panics on user input.

use crate::dtype::DType;
use crate::shape::Shape;

/// Result alias used throughout Gearbox.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in Gearbox.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two operands' shapes do not fit the operation.
    #[error("{op}: shapes {lhs} and {rhs} are not compatible ({why})")]
    ShapeMismatch {
        /// The operation that was asked for.
        op: &'static str,
        /// Shape of the left (first) operand.
        lhs: Shape,
        /// Shape of the right (second) operand.
        rhs: Shape,
        /// What rule was broken.
        why: String,
    },
    /// A single operand's shape is not accepted by the operation.
    #[error("{op}: shape {shape} is not accepted ({why})")]
    BadShape {
        /// The operation that was asked for.
        op: &'static str,
        /// The offending shape.
        shape: Shape,
        /// What is expected instead.
        why: String,
    },
    /// The operand's dtype is not accepted by the operation.
    #[error("{op}: dtype {got} is not accepted (expected {expected})")]
    DType {
        /// The operation that was asked for.
        op: &'static str,
        /// The dtype that was given.
        got: DType,
        /// The dtypes that would be accepted.
        expected: &'static str,
    },
    /// The data given does not match the shape given.
    #[error("{op}: {len} values given for shape {shape}, which holds {expected}")]
    DataLength {
        /// The operation that was asked for.
        op: &'static str,
        /// Number of values given.
        len: usize,
        /// The shape asked for.
        shape: Shape,
        /// Number of values that shape holds.
        expected: usize,
    },
    /// An axis outside `0..ndim`.
    #[error(
        "{op}: axis {axis} is out of range for an array of {ndim} dimension(s) (shape {shape})"
    )]
    AxisOutOfRange {
        /// The operation that was asked for.
        op: &'static str,
        /// The axis given.
        axis: usize,
        /// Number of dimensions of the array.
        ndim: usize,
        /// The array's shape.
        shape: Shape,
    },
    /// An index or range outside the array.
    #[error("{op}: index {index} is out of bounds for shape {shape}")]
    IndexOutOfBounds {
        /// The operation that was asked for.
        op: &'static str,
        /// The index as given, formatted.
        index: String,
        /// The array's shape.
        shape: Shape,
    },
    /// An operation that needs at least one element got none.
    #[error("{op}: the input is empty (shape {shape}); {why}")]
    Empty {
        /// The operation that was asked for.
        op: &'static str,
        /// The empty shape.
        shape: Shape,
        /// Why an empty input has no answer here.
        why: &'static str,
    },
    /// A matrix is singular (or numerically so) where an inverse is needed.
    #[error("{op}: matrix of shape {shape} is singular ({detail})")]
    Singular {
        /// The operation that was asked for.
        op: &'static str,
        /// Shape of the matrix.
        shape: Shape,
        /// Which pivot or estimate showed it.
        detail: String,
    },
    /// A matrix that must be symmetric positive definite is not.
    #[error("{op}: matrix of shape {shape} is not positive definite ({detail})")]
    NotPositiveDefinite {
        /// The operation that was asked for.
        op: &'static str,
        /// Shape of the matrix.
        shape: Shape,
        /// Where the factorization broke down.
        detail: String,
    },
    /// A matrix holds NaN or an infinity where the operation needs finite
    /// values: the factorizations (`solve`, `inv`, `det`, `cholesky`, `qr`),
    /// whose results would otherwise be NaN or, worse, finite numbers that
    /// mean nothing. Names the first such entry in column-major order.
    #[error(
        "{op}: {operand}[{}] is {}; {op} needs finite values (indices count from 0)",
        join_index(index),
        r_value(*value)
    )]
    NonFinite {
        /// The operation that was asked for.
        op: &'static str,
        /// Which operand: `A`, or `B` (the right-hand side of `solve`).
        operand: &'static str,
        /// Where the value is: `[row, column]` of a matrix, `[i]` of a vector.
        index: Vec<usize>,
        /// The value found there (NaN, Inf or -Inf).
        value: f64,
    },
    /// An argument value (not a shape or dtype) is invalid.
    #[error("{op}: invalid argument {name} = {value} ({why})")]
    InvalidArgument {
        /// The operation that was asked for.
        op: &'static str,
        /// The argument's name.
        name: &'static str,
        /// The value given, formatted.
        value: String,
        /// What is accepted instead.
        why: String,
    },
    /// An i64 result that i64 cannot hold: arithmetic that overflows, or a
    /// float that is NaN, infinite or outside `[-2^63, 2^63)` converted to
    /// i64. Integers never wrap or saturate (R gives NA with a warning);
    /// see [`crate::ops::integer`] for the rule.
    #[error("{op}: i64 overflow: {what} (i64 holds -9223372036854775808 to 9223372036854775807; integers never wrap or saturate: convert to f64 with astype first to go beyond)")]
    IntegerOverflow {
        /// The operation that overflowed.
        op: &'static str,
        /// The offending value or values, where they are, and the exact
        /// result where there is one.
        what: String,
    },
    /// A backend failed to run work (the runtime reruns it on the CPU).
    #[error("{backend} backend failed in {op}: {reason}")]
    Device {
        /// The backend that failed.
        backend: String,
        /// The operation or step (upload, download, kernel, library call).
        op: String,
        /// What went wrong, with the driver's words where there are any.
        reason: String,
        /// The kind of failure, which decides whether the backend stays healthy.
        kind: DeviceErrorKind,
    },
    /// A configuration value (for example a `GEARBOX_*` variable) could not be read.
    #[error("configuration {name}={value:?} is invalid: {why}")]
    Config {
        /// The variable or option name.
        name: String,
        /// The value found.
        value: String,
        /// What is accepted instead.
        why: String,
    },
    /// The host could not allocate the memory a result needs. `bytes` is the
    /// request; `available` is what the system reported free at that moment
    /// (`MemAvailable` on Linux), `None` where that cannot be read.
    #[error(
        "{op}: out of host memory: {bytes} bytes ({}) were asked for, {} available",
        crate::memory::human_bytes(*bytes as u64),
        crate::memory::describe_available(*available)
    )]
    OutOfMemory {
        /// What needed the memory (the op, or the step such as a download).
        op: String,
        /// The size of the request, in bytes.
        bytes: usize,
        /// Bytes the system reported available, when known.
        available: Option<u64>,
    },
    /// Automatic differentiation could not go on: an op without a
    /// derivative rule, a traced function that read values (left the
    /// graph), or a function whose result does not depend on its arguments.
    #[error("{op}: {why}")]
    Autodiff {
        /// The transformation or op concerned (`grad`, `matmul`).
        op: &'static str,
        /// What went wrong and what to do instead.
        why: String,
    },
    /// A data file could not be read or written, or a value in it is not
    /// what was expected. Line and column are 1-based, as an editor shows them.
    #[error("{path}{}: {why}", file_location(*.line, *.column))]
    Io {
        /// The file (or the name given for a stream).
        path: String,
        /// The line of the file, when the problem is in one line.
        line: Option<u64>,
        /// The column (field) of that line, when the problem is in one cell.
        column: Option<usize>,
        /// What was wrong, with the offending text where there is any.
        why: String,
    },
}

/// ", line L, column C" for an [`Error::Io`], or the parts of it that are known.
fn file_location(line: Option<u64>, column: Option<usize>) -> String {
    let mut out = String::new();
    if let Some(line) = line {
        out.push_str(&format!(", line {line}"));
    }
    if let Some(column) = column {
        out.push_str(&format!(", column {column}"));
    }
    out
}

/// An index as "i, j".
fn join_index(index: &[usize]) -> String {
    let parts: Vec<String> = index.iter().map(usize::to_string).collect();
    parts.join(", ")
}

/// A float as R prints the special values: `NaN`, `Inf`, `-Inf`.
fn r_value(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "Inf" } else { "-Inf" }.into()
    } else {
        value.to_string()
    }
}

/// Kinds of backend failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DeviceErrorKind {
    /// The device ran out of memory; the backend stays healthy.
    OutOfMemory,
    /// A kernel failed to compile; the backend stays healthy for other work.
    Compile,
    /// A launch, transfer or library call failed; the backend is marked unhealthy.
    Fault,
}
