//! The precision the comparison kernels (min, max, their positions, any,
//! all) work in: f32 data is compared as f32, everything else as f64.
//!
//! Comparing f32 values in f32 gives the same answers as comparing them
//! widened (widening is exact and keeps the order), and a vector holds twice
//! as many of them; only the selected value is widened, once.

use crate::dtype::Element;
use crate::ops::product::Factor;
use crate::ops::vmath;

use super::sums::{lane_exp_sum32, lane_sum};

/// A float the comparison kernels select with (f32 or f64).
pub(super) trait Float: Copy + PartialOrd + Send + Sync + 'static {
    /// `+0.0`.
    const ZERO: Self;
    /// The value in f64 (exact).
    fn wide(self) -> f64;
    /// Whether the sign bit is set (`-0.0`, negative values, some NaNs).
    fn negative(self) -> bool;
    /// `e^(v - m)` for a value `v` and a lane's maximum `m` (both of this
    /// precision, held as f64), to this precision: f32 in f32 arithmetic
    /// (`v - m` and its exp; `logsumexp`'s terms, summed in f64).
    fn shifted_exp(v: f64, m: f64) -> f64;
}

impl Float for f32 {
    const ZERO: f32 = 0.0;
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn negative(self) -> bool {
        self.is_sign_negative()
    }
    #[inline(always)]
    fn shifted_exp(v: f64, m: f64) -> f64 {
        // Both are f32 values: narrowing is exact.
        vmath::single::exp(v as f32 - m as f32) as f64
    }
}

impl Float for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
    #[inline(always)]
    fn negative(self) -> bool {
        self.is_sign_negative()
    }
    #[inline(always)]
    fn shifted_exp(v: f64, m: f64) -> f64 {
        vmath::exp(v - m)
    }
}

/// An element with the float it is compared as, and its truth value (and
/// its conversion to f64, the rule every CPU path shares, as a factor of a
/// product).
pub(super) trait Native: Element + Factor {
    /// The float the value is compared as.
    type N: Float;
    /// The value as that float (exact for f32 and f64).
    fn native(self) -> Self::N;
    /// Whether the value is nonzero (true, for a bool): what `any` and
    /// `all` test.
    fn truth(self) -> bool;
    /// `Σ e^(x - m)` over a contiguous lane whose maximum is `m` (finite),
    /// each term [`Float::shifted_exp`], in [`super::sums::lane_sum`]'s tree.
    fn exp_sum(xs: &[Self], m: f64) -> f64 {
        lane_sum(xs, &|v| [Self::N::shifted_exp(v, m)])[0]
    }
}

impl Native for f32 {
    type N = f32;
    #[inline(always)]
    fn native(self) -> f32 {
        self
    }
    #[inline(always)]
    fn truth(self) -> bool {
        self != 0.0
    }
    fn exp_sum(xs: &[f32], m: f64) -> f64 {
        lane_exp_sum32(xs, m as f32)
    }
}

impl Native for f64 {
    type N = f64;
    #[inline(always)]
    fn native(self) -> f64 {
        self
    }
    #[inline(always)]
    fn truth(self) -> bool {
        self != 0.0
    }
}

impl Native for i64 {
    type N = f64;
    #[inline(always)]
    fn native(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn truth(self) -> bool {
        self != 0
    }
}

impl Native for bool {
    type N = f64;
    #[inline(always)]
    fn native(self) -> f64 {
        self.to_f64()
    }
    #[inline(always)]
    fn truth(self) -> bool {
        self
    }
}
