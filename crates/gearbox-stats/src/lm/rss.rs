//! The residual sums of squares `colSums((Y - Q QᵀY)²)` of a fit as array
//! work: `‖y‖² - ‖Qᵀy‖²` per column where that difference is certified
//! accurate, else the residuals themselves, summed in one fused pass over
//! `Y` (or, past [`FUSED_RESIDUAL_MAX_TERMS`] terms, through a second GEMM).

use gearbox_core::{Array, Precision, Result};

/// Above this many terms the residual sum of squares takes the GEMM route
/// `colSums((Y - Q (QᵀY))²)`; up to it, the fitted values are a broadcast sum
/// of `p` outer products inside the one fused pass over `Y`.
///
/// The fused pass does `p` multiply-subtracts per element of `Y` and reads
/// one element of `Y` (8 bytes): on an H100 (3.35 TB/s, 34 TFLOP/s float64
/// without tensor cores) it stays bound by memory up to about 32 terms,
/// past which the tensor-core GEMM and its extra `n x k` write and read win.
pub const FUSED_RESIDUAL_MAX_TERMS: usize = 32;

/// The middle and half width of `[1, CERTIFIED_RATIO]`: a ratio is in the
/// interval when its distance from the middle is at most the half width.
const CERTIFIED_MIDDLE: f64 = (CERTIFIED_RATIO + 1.0) / 2.0;
const CERTIFIED_HALF_WIDTH: f64 = (CERTIFIED_RATIO - 1.0) / 2.0;

/// Whether `‖y‖² - ‖Qᵀy‖²` is kept for a column with `‖y‖²` of `total` and
/// that difference (see [`CERTIFIED_RATIO`]; NaN fails).
pub(super) fn certified(total: f64, difference: f64) -> bool {
    (total / difference - CERTIFIED_MIDDLE).abs() <= CERTIFIED_HALF_WIDTH
}

/// `colSums(Y²)`, at the fit's precision whatever `Y`'s own tag says (a
/// Strict one in the pass).
pub(super) fn sums_of_squares(y: &Array, precision: Precision) -> Result<Array> {
    let y = y.mul(&Array::scalar(1.0).with_precision(precision)?)?;
    y.mul(&y)?.col_sums()
}

/// `colSums((Y - Q E)²)` for the effects `E = QᵀY`, from the residuals
/// themselves: the fused pass up to [`FUSED_RESIDUAL_MAX_TERMS`] terms,
/// else the fitted values by a GEMM.
pub(super) fn residual_sum_of_squares(
    y: &Array,
    q_factor: &Array,
    effects: &Array,
    precision: Precision,
) -> Result<Array> {
    let p = q_factor.dims()[1];
    if p <= FUSED_RESIDUAL_MAX_TERMS {
        let q_columns: Vec<Array> = (0..p)
            .map(|i| q_factor.slice(1, i..i + 1))
            .collect::<Result<_>>()?;
        return fused_residual_sum_of_squares(y, &q_columns, effects, precision);
    }
    let residuals = y.sub(&q_factor.matmul(effects)?)?;
    residuals.mul(&residuals)?.col_sums()
}

/// Largest `‖y‖² / RSS` of any column for which `many_lm`
/// keeps `‖y‖² - ‖Qᵀy‖²`: the difference then loses at most 9 bits, so
/// with both sums accurate to about `12u` (tiled sums over at most a few
/// thousand rows) it is within about `2 · 12u · 512 ≈ 1.4e-12` relative.
pub const CERTIFIED_RATIO: f64 = 512.0;

/// The residual sums of squares as `‖y‖² - ‖Qᵀy‖²` per column (Pythagoras:
/// `Q` has orthonormal columns), one plain pass over `Y` for the column sums
/// of squares, evaluated now; `None` when any column's `‖y‖² / RSS` is
/// outside `[1, CERTIFIED_RATIO]` (a fit with R² near 1, a zero or
/// non-finite column), for which the residuals themselves are summed
/// ([`fused_residual_sum_of_squares`]). Random or noisy responses (R² below
/// about 0.998) take this path: the pass costs what summing a matrix costs,
/// well under the residual pass (docs/perf/stats.md).
pub(super) fn certified_difference(
    y: &Array,
    effects: &Array,
    precision: Precision,
) -> Result<Option<Array>> {
    let total = sums_of_squares(y, precision)?;
    let difference = total.sub(&effects.mul(effects)?.col_sums()?)?;
    let ratio = total.div(&difference)?;
    // Every ratio in [1, CERTIFIED_RATIO] exactly when the largest distance
    // from the interval's middle is at most its half width (to within an
    // ulp at the ends, where nothing changes): one value to download. NaN
    // (a zero or non-finite column) propagates and fails the comparison.
    let distance = ratio.sub_scalar(CERTIFIED_MIDDLE)?.abs()?.max()?;
    Array::eval_all(&[&difference, &distance])?;
    let certified = distance.item()? <= CERTIFIED_HALF_WIDTH;
    Ok(certified.then_some(difference))
}

/// `colSums((Y - Q E)²)` for the columns of the `n x p` `Q` (`q_columns`,
/// each `n x 1`) and the `p x k` effects `E = QᵀY`, as one fused pass over `Y`: the residuals
/// are `Y - q₁ e₁ - q₂ e₂ - ...`, each term an `n x 1` column of `Q` times a
/// `1 x k` row of `E` by broadcasting, so no `n x k` temporary (neither the
/// fitted values nor the residuals) is ever stored. The terms are taken off
/// in column order, the intercept's first, as a GEMM accumulates them.
fn fused_residual_sum_of_squares(
    y: &Array,
    q_columns: &[Array],
    effects: &Array,
    precision: Precision,
) -> Result<Array> {
    let mut residuals = if q_columns.is_empty() {
        // No term to take off: multiply by a Strict one, so that the pass
        // still runs at the fit's precision (it fuses, costing nothing).
        y.mul(&Array::scalar(1.0).with_precision(precision)?)?
    } else {
        y.clone()
    };
    for (i, q_column) in q_columns.iter().enumerate() {
        let effect_row = effects.slice(0, i..i + 1)?;
        residuals = residuals.sub(&q_column.mul(&effect_row)?)?;
    }
    residuals.mul(&residuals)?.col_sums()
}
