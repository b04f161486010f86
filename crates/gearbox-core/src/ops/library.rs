//! The calls an op may make to a backend library instead of a fused
//! kernel (dense linear algebra, scans, random generation, data movement):
//! part of an op's definition ([`crate::graph::Primitive::library_call`]),
//! which backends declare they offer ([`crate::runtime::Capabilities`]).

use serde::{Deserialize, Serialize};

use crate::shape::Shape;

/// The calls a backend may offer besides fused kernels: dense linear
/// algebra, scans, random generation and data movement (slices and joins,
/// which run where their inputs live).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LibraryCall {
    /// `A B`.
    Matmul,
    /// `Aᵀ B`.
    Crossprod,
    /// `A Bᵀ`.
    Tcrossprod,
    /// `A X = B` for X.
    Solve,
    /// Upper Cholesky factor.
    Cholesky,
    /// Inverse.
    Inv,
    /// Inverse of an upper triangular matrix.
    InvUpper,
    /// Thin QR, packed: Q (`m x p`) then R (`p x n`), `p = min(m, n)`.
    Qr,
    /// Cumulative sum (or product, when `product`) along `axis`, or over the
    /// column-major flattening when `axis` is `None`.
    Scan {
        /// Products rather than sums.
        product: bool,
        /// The axis, or `None` for the flattening.
        axis: Option<usize>,
    },
    /// A random array of the Philox stream of `seed` ([`crate::random`]):
    /// standard normal when `normal`, else uniform on `[0, 1)`.
    Random {
        /// The seed.
        seed: u64,
        /// Normal (`randn`) rather than uniform (`rand`).
        normal: bool,
    },
    /// Positions `start..end` along `axis` of the one input (data movement).
    /// Storage is column-major, so with `(inner, len, outer)` the input's
    /// split around `axis`, the result is `outer` contiguous blocks of
    /// `(end - start) * inner` values read at a stride of `len * inner`.
    Slice {
        /// The axis sliced.
        axis: usize,
        /// First position kept.
        start: usize,
        /// One past the last position kept.
        end: usize,
    },
    /// The inputs joined along `axis` (data movement): each input, of the
    /// result dtype, contributes `outer` blocks of `len_i * inner` values,
    /// where `(inner, _, outer)` is the result's split around `axis` and an
    /// input's dimensions past its last count as 1.
    Concat {
        /// The axis joined along.
        axis: usize,
    },
    /// Positions along `axis` of the first input picked by the second, an
    /// `i64` vector of positions checked to lie inside the axis (data
    /// movement): with `(inner, len, outer)` the first input's split around
    /// `axis` and `n` positions, the result is `outer` blocks of `n * inner`
    /// values, block `k`'s `j`-th run of `inner` values read at
    /// `(k * len + idx[j]) * inner`.
    Take {
        /// The axis gathered along.
        axis: usize,
    },
    /// The one input's axes permuted, some reversed (data movement: a
    /// transpose, `t` or a flip): output axis `i` is input axis
    /// `order.axis(i)`, its positions reversed where `order.flipped(i)`;
    /// see [`crate::ops::permute::StridedCopy`] for the copy as strides.
    Permute {
        /// The permutation and the reversed output axes.
        order: crate::ops::permute::AxisOrder,
    },
    /// Penalized per-point sums of a linear-predictor model over a grid
    /// ([`crate::ops::linear_grid`]): a `(1 + l2) x m` result.
    LinearGrid {
        /// The interned term functions.
        spec: crate::ops::linear_grid::LinearGridId,
        /// How the points are given.
        points: crate::ops::linear_grid::GridPoints,
    },
}

impl LibraryCall {
    /// Whether this is a GEMM variant (`matmul`, `crossprod`, `tcrossprod`),
    /// which the planner batches.
    pub fn is_gemm(self) -> bool {
        matches!(
            self,
            LibraryCall::Matmul | LibraryCall::Crossprod | LibraryCall::Tcrossprod
        )
    }

    /// Whether this call only moves data (slice, concat, take, permute): it copies values
    /// exactly, so it runs where its inputs are resident rather than where a
    /// threshold says computing pays.
    pub fn is_data_movement(self) -> bool {
        matches!(
            self,
            LibraryCall::Slice { .. }
                | LibraryCall::Concat { .. }
                | LibraryCall::Take { .. }
                | LibraryCall::Permute { .. }
        )
    }

    /// How many of a data-movement call's `inputs` (leading ones) decide
    /// where it runs: all, except that a take's positions go where its
    /// array is whatever they cost (the host path would send back the
    /// result they pick, as large or larger).
    pub fn placed_by(self, inputs: usize) -> usize {
        match self {
            LibraryCall::Take { .. } => inputs.min(1),
            _ => inputs,
        }
    }

    /// Every kind of call (parameters are placeholders: capabilities list
    /// calls by kind, see [`LibraryCall::same_kind`]).
    pub const ALL: [LibraryCall; 15] = [
        LibraryCall::Matmul,
        LibraryCall::Crossprod,
        LibraryCall::Tcrossprod,
        LibraryCall::Solve,
        LibraryCall::Cholesky,
        LibraryCall::Inv,
        LibraryCall::InvUpper,
        LibraryCall::Qr,
        LibraryCall::Scan {
            product: false,
            axis: None,
        },
        LibraryCall::Random {
            seed: 0,
            normal: false,
        },
        LibraryCall::Slice {
            axis: 0,
            start: 0,
            end: 0,
        },
        LibraryCall::Concat { axis: 0 },
        LibraryCall::Take { axis: 0 },
        LibraryCall::Permute {
            order: crate::ops::permute::AxisOrder::EMPTY,
        },
        LibraryCall::LinearGrid {
            spec: crate::ops::linear_grid::LinearGridId(0),
            points: crate::ops::linear_grid::GridPoints::Dense,
        },
    ];

    /// Name as the `Array` method is called.
    pub fn name(self) -> &'static str {
        match self {
            LibraryCall::Matmul => "matmul",
            LibraryCall::Crossprod => "crossprod",
            LibraryCall::Tcrossprod => "tcrossprod",
            LibraryCall::Solve => "solve",
            LibraryCall::Cholesky => "cholesky",
            LibraryCall::Inv => "inv",
            LibraryCall::InvUpper => "inv_upper",
            LibraryCall::Qr => "qr",
            LibraryCall::Scan { product: false, .. } => "cumsum",
            LibraryCall::Scan { product: true, .. } => "cumprod",
            LibraryCall::Random { normal: false, .. } => "rand",
            LibraryCall::Random { normal: true, .. } => "randn",
            LibraryCall::Slice { .. } => "slice",
            LibraryCall::Concat { .. } => "concat",
            LibraryCall::Take { .. } => "take",
            LibraryCall::Permute { order } => order.op_name(),
            LibraryCall::LinearGrid { .. } => "linear_grid",
        }
    }

    /// Whether `self` and `other` are the same call, parameters aside
    /// (capabilities list calls by kind).
    pub fn same_kind(self, other: LibraryCall) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }

    /// Whether thresholds and metrics size this call in elements of its
    /// result (scans, random arrays, data movement) rather than in flops.
    pub fn sized_in_elements(self) -> bool {
        matches!(
            self,
            LibraryCall::Random { .. }
                | LibraryCall::Scan { .. }
                | LibraryCall::Slice { .. }
                | LibraryCall::Concat { .. }
                | LibraryCall::Take { .. }
                | LibraryCall::Permute { .. }
        )
    }

    /// Floating-point operations for inputs of these shapes (for thresholds and metrics).
    pub fn flops(self, shapes: &[&Shape]) -> f64 {
        let d = |i: usize, a: usize| shapes.get(i).map_or(1, |s| s.dim(a)) as f64;
        match self {
            LibraryCall::Matmul => 2.0 * d(0, 0) * d(0, 1) * d(1, 1),
            LibraryCall::Crossprod => 2.0 * d(0, 1) * d(0, 0) * d(1, 1),
            LibraryCall::Tcrossprod => 2.0 * d(0, 0) * d(0, 1) * d(1, 0),
            LibraryCall::Solve => (2.0 / 3.0) * d(0, 0).powi(3) + 2.0 * d(0, 0).powi(2) * d(1, 1),
            LibraryCall::Cholesky => d(0, 0).powi(3) / 3.0,
            LibraryCall::Inv => 2.0 * d(0, 0).powi(3),
            LibraryCall::InvUpper => d(0, 0).powi(3) / 3.0,
            LibraryCall::Qr => 4.0 * d(0, 0) * d(0, 1) * d(0, 0).min(d(0, 1)),
            // Two products with X per point (eta and the gradient) and the
            // penalty's P c; the term functions are not counted.
            LibraryCall::LinearGrid { points, .. } => {
                let m = match points {
                    crate::ops::linear_grid::GridPoints::Dense => d(1, 1),
                    crate::ops::linear_grid::GridPoints::Product { count, .. } => count as f64,
                };
                (4.0 * d(0, 0) * d(0, 1) + 2.0 * d(0, 1) * d(0, 1)) * m
            }
            LibraryCall::Random { .. }
            | LibraryCall::Scan { .. }
            | LibraryCall::Slice { .. }
            | LibraryCall::Concat { .. }
            | LibraryCall::Take { .. }
            | LibraryCall::Permute { .. } => 0.0,
        }
    }
}
