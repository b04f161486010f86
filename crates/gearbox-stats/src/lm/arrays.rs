//! The last steps of a fit as array work (where `Y` lives, a device
//! included), for fits whose results are not small enough for the host
//! ([`super::tail`]): the effects GEMM, the residual sums of squares
//! ([`super::rss`]), and the coefficients, standard errors, t values,
//! sigma and R² as one graph that fuses behind the pass over `Y`.

use gearbox_core::{Array, Precision, Result};

use super::rank::{DesignQr, QFactor, UnitInverse};
use super::rss::{certified_difference, residual_sum_of_squares};
use super::{inverse_factors, two_sided_p, LazyFit};

/// The fit from its factored design as a graph of arrays where `y`
/// (`n x k`) lives; on the side of `Y` only the effects GEMM is queued
/// (and run) before the graph is built.
pub(super) fn array_fit(
    qr: DesignQr,
    y: Array,
    term_names: Vec<String>,
    intercept: bool,
    precision: Precision,
) -> Result<LazyFit> {
    let (n, k, p) = (y.dims()[0], y.dims()[1], term_names.len());
    // Explained sum of squares: the effects after the intercept's. The
    // intercept's row is masked rather than sliced off, so the pass stays on
    // whichever device holds the effects.
    let mut parts: Vec<(Vec<f64>, [usize; 2])> = Vec::new();
    let q_array = match qr.q {
        QFactor::Host(q) => {
            parts.push((q, [n, p]));
            None
        }
        QFactor::Array(q) => Some(q),
    };
    // A host R_unit⁻¹ gives R⁻¹ and the standard errors' factors here; one
    // computed as array work stays where it is, and only the scales go.
    let array_inverse = match qr.r_unit_inverse {
        UnitInverse::Host(r_unit_inverse) => {
            let (r_inverse, unscaled_sd) = inverse_factors(&r_unit_inverse, &qr.inv_scale);
            parts.push((r_inverse, [p, p]));
            parts.push((unscaled_sd, [p, 1]));
            None
        }
        UnitInverse::Array(r_unit_inverse) => {
            parts.push((qr.inv_scale.clone(), [p, 1]));
            Some(r_unit_inverse)
        }
    };
    if intercept {
        let mask: Vec<f64> = (0..p).map(|i| f64::from(u8::from(i > 0))).collect();
        parts.push((mask, [p, 1]));
    }
    let mut placed = place_parts(parts, &y.device(), precision)?.into_iter();
    let mut next = || placed.next().expect("one array per part");
    let q_factor = match q_array {
        Some(q) => q.with_precision(precision)?,
        None => next(),
    };
    // X = Q R_unit D, so R⁻¹ = D⁻¹ R_unit⁻¹: row i of R_unit⁻¹ (entries of
    // a well-scaled factor) divided by d_i, so that no step overflows for
    // columns of any scale.
    let (r_inverse, unscaled_sd) = match array_inverse {
        None => (next(), next()),
        Some(r_unit_inverse) => {
            let inv_scale = next();
            let norms = r_unit_inverse
                .mul(&r_unit_inverse)?
                .sum_axis(1)?
                .sqrt()?
                .reshape([p, 1])?;
            (r_unit_inverse.mul(&inv_scale)?, norms.mul(&inv_scale)?)
        }
    };
    let mask = intercept.then(&mut next);
    // The one large GEMM, queued now: the rest of the graph is built and
    // planned while it runs.
    let effects = q_factor.crossprod(&y)?;
    effects.eval()?;
    let coefficients = r_inverse.matmul(&effects)?;
    let rss = match certified_difference(&y, &effects, precision)? {
        Some(rss) => rss,
        None => residual_sum_of_squares(&y, &q_factor, &effects, precision)?,
    };
    let explained = match &mask {
        Some(mask) => effects.mul(mask)?,
        None => effects.clone(),
    };
    let mss = explained.mul(&explained)?.col_sums()?;
    let df = (n - p) as f64;
    let sigma = rss.div_scalar(df)?.sqrt()?;
    let r_squared = mss.div(&mss.add(&rss)?)?;
    // sqrt(diag((X'X)^-1)) (p x 1) times sigma (1 x k), by broadcasting: an
    // elementwise pass that fuses and runs where sigma is.
    let std_errors = unscaled_sd.mul(&sigma.reshape([1, k])?)?;
    let t_values = coefficients.div(&std_errors)?;
    let p_values = two_sided_p(&t_values, df)?;
    let health = rss.sum()?.add(
        &coefficients
            .mul_scalar(0.0)?
            .add(&std_errors.mul_scalar(0.0)?)?
            .sum()?,
    )?;
    Ok(LazyFit {
        term_names,
        y,
        k,
        df_residual: n - p,
        coefficients,
        std_errors,
        t_values,
        p_values,
        sigma,
        r_squared,
        rss,
        health,
    })
}

/// The small host arrays of a fit (`Q`, `R⁻¹`, the standard errors'
/// factors, the R² mask), each of the shape given, as arrays where `device`
/// is: on the host each its own array (no copy); on a device one upload of
/// them all, before any of the fit's work is queued there, cut apart there
/// (each copy from pageable host memory holds the host until it is done,
/// and one queued after the GEMM would wait for it).
fn place_parts(
    parts: Vec<(Vec<f64>, [usize; 2])>,
    device: &str,
    precision: Precision,
) -> Result<Vec<Array>> {
    if device == "cpu" {
        return parts
            .into_iter()
            .map(|(values, shape)| Array::from_vec(shape, values)?.with_precision(precision))
            .collect();
    }
    let shapes: Vec<[usize; 2]> = parts.iter().map(|(_, shape)| *shape).collect();
    let packed: Vec<f64> = parts.into_iter().flat_map(|(values, _)| values).collect();
    let packed = Array::from_vec([packed.len()], packed)?.with_precision(precision)?;
    packed.to_device(device)?;
    let mut offset = 0;
    shapes
        .into_iter()
        .map(|[rows, cols]| {
            let part = packed
                .slice(0, offset..offset + rows * cols)?
                .reshape([rows, cols]);
            offset += rows * cols;
            part
        })
        .collect()
}
