//! The design's scaling, rank check and QR for large or device-resident
//! designs, as array work the dispatcher places: a GPU factors a design it
//! holds (cuSOLVER) and `Q` never visits the host; on the CPU the same
//! factorization runs on every core. Only `p`-sized results come back (the
//! column scales; `R` after Householder QR, for the rank test and `R⁻¹`; a
//! Cholesky QR keeps `R⁻¹` where it is).
//!
//! The numbers are those of the host path (`rank::checked_qr`): the same unit-norm
//! columns `X D⁻¹` and the same tolerance on `|R_jj|`. Every error path
//! (a non-finite value, a zero column, a rank deficiency) hands the design
//! to the host check, so the messages are the host path's word for word.

use gearbox_core::{Array, DType, Precision, Result};

use super::cholesky::cholesky_qr_arrays;
use super::rank::{too_small_to_scale, DesignQr, QFactor, UnitInverse};
use super::RANK_TOLERANCE;

/// Designs with at least this many QR flops (`n p²`) are factored as array
/// work; smaller ones on the calling thread, where they take less than a
/// device round trip would.
pub const LARGE_DESIGN_FLOPS: usize = 1 << 27;

/// Whether `many_lm` factors an `n x p` design held where `x` is as array
/// work: a design that lives on a device stays there, and a large one is
/// worth the dispatcher's choice.
pub(super) fn factor_as_arrays(x: &Array, n: usize, p: usize) -> bool {
    x.device() != "cpu" || n.saturating_mul(p).saturating_mul(p) >= LARGE_DESIGN_FLOPS
}

/// The checked QR of the design `[1 x]` (with `intercept`) or `x`, as
/// array work. Where a check fails, `on_host` (the host path, given `x`)
/// gives its own error.
pub(super) fn checked_qr_arrays(
    x: &Array,
    intercept: bool,
    names: &[String],
    on_host: impl Fn(&Array) -> Result<DesignQr>,
) -> Result<DesignQr> {
    let n = x.dims()[0];
    // No less than Strict: a device takes float64 work only where it runs
    // float64 at full rate.
    let precision = Precision::Strict.max(x.precision());
    // The small host arrays go where the design lives first, so that every
    // step reads only device values and stays there (a design with a host
    // copy too would otherwise be cut and scaled on the host, and uploaded).
    let device = x.device();
    let beside_x = |a: Array| -> Result<Array> {
        let a = a.with_precision(precision)?;
        if device == "cpu" {
            Ok(a)
        } else {
            a.to_device(&device)
        }
    };
    let design = if intercept {
        let ones = beside_x(Array::ones([n, 1], DType::F64)?)?;
        Array::cbind(&[&ones, x])?
    } else {
        x.clone()
    };
    // Largest magnitude per column (also the finiteness check, since max
    // propagates NaN and |±Inf| is Inf), then s_j = ‖x_j / m_j‖ (the
    // squares summed lie in [1, n]) and 1 / d_j = 1 / m_j / s_j, all where
    // the design lives and read back together: a column that is zero or not
    // finite turns its scale into NaN or infinity, and the check below
    // sends the design to the host path.
    let p = names.len();
    let largest = design.abs()?.max_axis(0)?;
    let unit = design.div(&largest)?;
    let norms = unit.mul(&unit)?.sum_axis(0)?.sqrt()?;
    let scale = Array::scalar(1.0)
        .with_precision(precision)?
        .div(&largest)?
        .div(&norms)?;
    let both = Array::concat(&[&largest, &scale], 1)?.to_vec::<f64>()?;
    let (largest_values, inv_scale) = (&both[..p], both[p..].to_vec());
    if largest_values.iter().any(|m| !m.is_finite() || *m == 0.0) {
        return on_host(x);
    }
    if let Some(j) = inv_scale.iter().position(|v| !v.is_finite()) {
        return Err(too_small_to_scale(names, j, largest_values[j]));
    }
    let unit = design.mul(&scale)?;
    // The Cholesky QR where the design is conditioned well enough for it
    // to give Householder's fit (super::cholesky), else Householder QR.
    if let Some((q, r_unit_inverse)) = cholesky_qr_arrays(&unit, n, p)? {
        return Ok(DesignQr {
            q: QFactor::Array(q),
            r_unit_inverse,
            inv_scale,
        });
    }
    let (q, r) = unit.qr()?;
    let r_unit = r.to_vec::<f64>()?;
    if (0..p).any(|j| r_unit[j + j * p].abs() <= RANK_TOLERANCE) {
        // The host check names the dependent terms (or finds none, as it
        // would after its own factorization: then the fit goes on).
        on_host(x)?;
    }
    Ok(DesignQr {
        q: QFactor::Array(q),
        r_unit_inverse: UnitInverse::Host(super::upper_triangular_inverse(&r_unit, p)),
        inv_scale,
    })
}
