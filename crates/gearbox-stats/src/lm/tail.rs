//! The last steps of a fit on the host when its `p x k` results are small
//! (at most [`HOST_TAIL_VALUES`]): the effects `E = QᵀY` and the responses'
//! sums of squares are computed where `Y` lives and read back, and the
//! coefficients, standard errors, t values, sigma and R² follow in plain
//! loops. As array work those are some twenty small regions, each a launch
//! or a dispatch decision, and two synchronizing reads, for microseconds of
//! arithmetic. The formulas are the array path's (see [`super`]); the
//! p-values stay lazy.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use gearbox_core::{Array, HostBuffer, Precision, Result};

use super::rank::{DesignQr, QFactor, UnitInverse};
use super::rss::{certified, residual_sum_of_squares, sums_of_squares};
use super::{inverse_factors, two_sided_p, LazyFit};

/// The most results (`p x k`) a fit computes on the host from its effects.
pub const HOST_TAIL_VALUES: usize = 1 << 13;

/// Whether a fit's last steps run on the host: its `R⁻¹` was computed there
/// and its `p x k` results are at most [`HOST_TAIL_VALUES`].
pub(super) fn applies(qr: &DesignQr, p: usize, k: usize) -> bool {
    matches!(qr.r_unit_inverse, UnitInverse::Host(_)) && p.saturating_mul(k) <= HOST_TAIL_VALUES
}

/// The fit from its factored design (for which [`applies`] holds): the
/// effects and sums of squares where `y` (`n x k`) lives, the rest on the
/// host, the results host arrays at `precision`.
pub(super) fn host_fit(
    qr: DesignQr,
    y: Array,
    term_names: Vec<String>,
    intercept: bool,
    precision: Precision,
) -> Result<LazyFit> {
    let (n, k, p) = (y.dims()[0], y.dims()[1], term_names.len());
    let UnitInverse::Host(r_unit_inverse) = &qr.r_unit_inverse else {
        unreachable!("host_fit is called where `applies` holds");
    };
    let (r_inverse, unscaled_sd) = inverse_factors(r_unit_inverse, &qr.inv_scale);
    let q_factor = match qr.q {
        QFactor::Host(q) => Array::from_vec([n, p], q)?.with_precision(precision)?,
        QFactor::Array(q) => q.with_precision(precision)?,
    };
    // With Q and Y on the host alone, the effects and sums of squares take
    // one pass over Y; else they run as array work where Y lives and come
    // back together.
    let host_alone = |a: &Array| a.host_value().filter(|_| a.resident().is_none());
    let (e, totals) = match (host_alone(&q_factor), host_alone(&y)) {
        (Some(q), Some(y_values)) => {
            fn f64s(b: &HostBuffer) -> &[f64] {
                b.as_slice::<f64>().expect("many_lm's values are f64")
            }
            effects_on_host(f64s(&q), f64s(&y_values), n, p)
        }
        _ => {
            let device = y.device();
            if device != "cpu" {
                q_factor.to_device(&device)?;
            }
            let effects = q_factor.crossprod(&y)?;
            let totals = sums_of_squares(&y, precision)?;
            Array::eval_all(&[&effects, &totals])?;
            (effects.to_vec::<f64>()?, totals.to_vec::<f64>()?)
        }
    };
    let explained = |j: usize, first: usize| -> f64 {
        e[j * p + first..(j + 1) * p].iter().map(|v| v * v).sum()
    };
    let difference: Vec<f64> = (0..k).map(|j| totals[j] - explained(j, 0)).collect();
    let rss = if (0..k).all(|j| certified(totals[j], difference[j])) {
        difference
    } else {
        let effects = Array::from_vec([p, k], e.clone())?.with_precision(precision)?;
        residual_sum_of_squares(&y, &q_factor, &effects, precision)?.to_vec::<f64>()?
    };
    let df = (n - p) as f64;
    let mut coefficients = vec![0.0; p * k];
    matmul(
        MatMut::from_column_major_slice_mut(&mut coefficients, p, k),
        Accum::Replace,
        MatRef::from_column_major_slice(&r_inverse, p, p),
        MatRef::from_column_major_slice(&e, p, k),
        1.0,
        Par::Seq,
    );
    let sigma: Vec<f64> = rss.iter().map(|r| (r / df).sqrt()).collect();
    // With an intercept, the centred model sum of squares: the effects
    // after the intercept's.
    let first = usize::from(intercept);
    let r_squared: Vec<f64> = (0..k)
        .map(|j| {
            let mss = explained(j, first);
            mss / (mss + rss[j])
        })
        .collect();
    let std_errors: Vec<f64> = (0..p * k)
        .map(|at| unscaled_sd[at % p] * sigma[at / p])
        .collect();
    let t_values: Vec<f64> = coefficients
        .iter()
        .zip(&std_errors)
        .map(|(b, se)| b / se)
        .collect();
    // Finite exactly when every RSS, estimate and standard error is (the
    // array path's `health`).
    let zeros: f64 = coefficients
        .iter()
        .chain(&std_errors)
        .map(|v| 0.0 * v)
        .sum();
    let health = rss.iter().sum::<f64>() + zeros;
    let matrix = |values: Vec<f64>| Array::from_vec([p, k], values)?.with_precision(precision);
    let vector = |values: Vec<f64>| Array::from_vec([k], values)?.with_precision(precision);
    let t_values = matrix(t_values)?;
    Ok(LazyFit {
        p_values: two_sided_p(&t_values, df)?,
        t_values,
        coefficients: matrix(coefficients)?,
        std_errors: matrix(std_errors)?,
        sigma: vector(sigma)?,
        r_squared: vector(r_squared)?,
        rss: vector(rss)?,
        health: Array::scalar(health).with_precision(precision)?,
        term_names,
        y,
        k,
        df_residual: n - p,
    })
}

/// `E = QᵀY` (`p x k`) and `colSums(Y²)` on the host in one pass over `Y`
/// (`n x k`, column-major): each column of `Y` is read from memory once
/// and stays in cache for its `p + 1` dot products. Columns are shared
/// among the cores when there is work enough.
fn effects_on_host(q: &[f64], y: &[f64], n: usize, p: usize) -> (Vec<f64>, Vec<f64>) {
    use rayon::prelude::*;
    let k = y.len() / n.max(1);
    let mut e = vec![0.0; p * k];
    let mut totals = vec![0.0; k];
    let column = |(j, (ej, t)): (usize, (&mut [f64], &mut f64))| {
        *t = column_dots(q, &y[j * n..(j + 1) * n], ej);
    };
    let width = p.max(1);
    if n.saturating_mul(p + 1).saturating_mul(k) >= PARALLEL_DOTS {
        e.par_chunks_mut(width)
            .zip(totals.par_iter_mut())
            .enumerate()
            .for_each(column);
    } else {
        e.chunks_mut(width)
            .zip(totals.iter_mut())
            .enumerate()
            .for_each(column);
    }
    (e, totals)
}

/// Multiply-adds from which [`effects_on_host`] shares the columns among
/// the cores.
const PARALLEL_DOTS: usize = 1 << 20;

/// For one column `yj` of `Y`: `e[i] = qᵢ · yj` for each column `qᵢ` of
/// `Q`, and `yj · yj` returned; in 512-bit vectors, else AVX2 with FMA,
/// where the CPU has them (chosen at run time).
fn column_dots(q: &[f64], yj: &[f64], e: &mut [f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the CPU has the features each form was compiled for.
        if gearbox_core::cpu::has_avx512() {
            return unsafe { column_dots_avx512(q, yj, e) };
        }
        if gearbox_core::cpu::has_avx2_fma() {
            return unsafe { column_dots_fma(q, yj, e) };
        }
    }
    column_dots_body::<false>(q, yj, e)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn column_dots_fma(q: &[f64], yj: &[f64], e: &mut [f64]) -> f64 {
    column_dots_body::<true>(q, yj, e)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq")]
unsafe fn column_dots_avx512(q: &[f64], yj: &[f64], e: &mut [f64]) -> f64 {
    column_dots_body::<true>(q, yj, e)
}

/// [`column_dots`], with fused multiply-adds where `FMA`.
#[inline(always)]
fn column_dots_body<const FMA: bool>(q: &[f64], yj: &[f64], e: &mut [f64]) -> f64 {
    let n = yj.len();
    for (i, e) in e.iter_mut().enumerate() {
        *e = dot::<FMA>(&q[i * n..(i + 1) * n], yj);
    }
    dot::<FMA>(yj, yj)
}

/// `sum_i x_i y_i` in eight partial sums (so the loop runs in vector
/// lanes), added at the end; fused multiply-adds where `FMA`.
#[inline(always)]
fn dot<const FMA: bool>(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = [0.0; 8];
    let (xc, yc) = (x.chunks_exact(8), y.chunks_exact(8));
    let tail: f64 = xc
        .remainder()
        .iter()
        .zip(yc.remainder())
        .map(|(a, b)| a * b)
        .sum();
    for (xs, ys) in xc.zip(yc) {
        for l in 0..8 {
            acc[l] = if FMA {
                xs[l].mul_add(ys[l], acc[l])
            } else {
                acc[l] + xs[l] * ys[l]
            };
        }
    }
    acc.iter().sum::<f64>() + tail
}
