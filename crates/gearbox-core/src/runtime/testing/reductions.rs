//! The reduction check every GPU backend's device tests run: each
//! reduction of [`ReduceOp::ALL`], over all elements and along each axis,
//! of arrays that live only on the device, alone and fused with
//! elementwise work before and after it, must run there (no download, no
//! fallback) and agree with the CPU reference op by op: exactly for the
//! arg and logical reductions, within a few units of the dtype's rounding
//! for the others. The values include ties, NaNs, signed zeros and, for
//! `prod`, partial products far outside the float range, and for
//! `logsumexp` exponentials far outside it and infinities. A mean beside
//! a `var` or `sd` of the same values comes from the same pass (its
//! companion), which the check counts.
//!
//! Test support only; the helpers panic on a failed check.

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::ops::reduce::ReduceOp;
use crate::runtime::testing::gpu::{array, device_only, forced, on_cpu, values};
use crate::runtime::testing::trace;
use crate::runtime::{fallback_log, fallback_log_reset, metrics};
use crate::shape::Shape;
use crate::{Array, Result};

/// Shapes giving every lane mapping of the renderer: one long lane, lanes
/// of a thread, a warp and a block, a few long columns split among blocks,
/// strided lanes (packed or not), a middle axis of a 3-D array (short,
/// and with enough lanes to split them within blocks), few long rows
/// (split among threads), one element.
const SHAPES: [&[usize]; 10] = [
    &[100_003],
    &[6, 5],
    &[200, 3],
    &[4100, 2],
    &[20_000, 3],
    &[8, 9],
    &[7, 5, 300],
    &[8, 33, 4100],
    &[3, 4096],
    &[1, 1],
];

/// `n` values of `dtype` from `seed` with ties, NaNs and signed zeros mixed
/// in (floats): repeated extremes at every 97th and 89th position, a NaN at
/// every 1009th (so some lanes hold one and some do not), `-0.0` and
/// `+0.0` at others.
pub fn awkward_values(n: usize, dtype: DType, seed: u64) -> HostBuffer {
    let base = values(n, dtype, seed);
    if !dtype.is_float() {
        return base;
    }
    let mut v = base.to_f64_vec().expect("floats");
    for (k, x) in v.iter_mut().enumerate() {
        *x = match k {
            _ if k % 1009 == 11 => f64::NAN,
            _ if k % 97 == 5 => 2.5,
            _ if k % 89 == 7 => -2.5,
            _ if k % 53 == 3 => -0.0,
            _ if k % 59 == 4 => 0.0,
            _ => *x,
        };
    }
    match dtype {
        DType::F32 => HostBuffer::F32(v.iter().map(|&x| x as f32).collect()),
        _ => HostBuffer::F64(v),
    }
}

/// Whether `got` agrees with `want`: bit for bit in value (NaN with NaN,
/// `-0.0` with `+0.0`) for integers and bools, within `tol` relative to the
/// larger of the value and 1 for floats.
fn agrees(got: &HostBuffer, want: &HostBuffer, tol: f64) -> Option<String> {
    if got.dtype() != want.dtype() || got.len() != want.len() {
        return Some(format!(
            "{} {} values, reference {} {}",
            got.len(),
            got.dtype(),
            want.len(),
            want.dtype()
        ));
    }
    let (g, w) = (got.to_f64_vec().ok()?, want.to_f64_vec().ok()?);
    let tol = if got.dtype().is_float() { tol } else { 0.0 };
    // Judged against the result's largest magnitude too: a sum near zero
    // carries the rounding of its large terms.
    let scale = w
        .iter()
        .filter(|v| v.is_finite())
        .fold(1.0f64, |m, v| m.max(v.abs()));
    g.iter().zip(&w).enumerate().find_map(|(i, (&a, &b))| {
        let same = (a.is_nan() && b.is_nan())
            || a == b
            || (a.is_finite() && b.is_finite() && (a - b).abs() <= tol * b.abs().max(scale));
        (!same).then(|| format!("at {i}: {a:e}, reference {b:e}"))
    })
}

/// The tolerance of a reduction's result of `dtype`: f32 results may
/// accumulate in f32 (dialects without f64), f64 sums and moments of 10^5
/// values accumulate in other orders than the CPU's.
fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 3e-5,
        _ => 1e-10,
    }
}

/// The reductions of `op` a test makes of `x` along `axis`: alone, after an
/// elementwise chain (fused before it), and followed by elementwise work.
fn forms(x: &Array, op: ReduceOp, axis: Option<usize>) -> Vec<(&'static str, Result<Array>)> {
    let before = || -> Result<Array> {
        if x.dtype().is_float() {
            (x * 1.5)? + 0.25
        } else {
            Ok(x.clone())
        }
    };
    let after = |r: Array| -> Result<Array> {
        if r.dtype().is_float() {
            r * 2.0
        } else {
            Ok(r)
        }
    };
    vec![
        ("alone", x.reduce(op, axis)),
        ("after a chain", before().and_then(|y| y.reduce(op, axis))),
        ("then elementwise", x.reduce(op, axis).and_then(after)),
    ]
}

/// The `op:dtype` entries of `backend`'s unsupported list
/// ([`crate::runtime::Capabilities::unsupported_ops`]): reductions it
/// declares it leaves to the CPU (a driver fault, say).
fn declined_by(backend: &str) -> Vec<String> {
    crate::runtime::registry::candidates(false)
        .into_iter()
        .filter(|c| c.status.backend == backend)
        .filter_map(|c| c.backend)
        .flat_map(|b| b.capabilities().unsupported_ops)
        .filter(|u| u.contains(':'))
        .collect()
}

/// Runs the check on `backend` (forced) for arrays of `dtypes`, i64 left
/// out: the GPUs decline most i64 reductions (overflow and exactness, named
/// by their gates; [`super::host_trips`] checks those declines), as they
/// do the `op:dtype` pairs their capabilities list as unsupported.
pub fn check_reductions_of_resident_arrays(backend: &str, dtypes: &[DType]) {
    let declined = declined_by(backend);
    fallback_log_reset();
    let dtypes: Vec<DType> = dtypes
        .iter()
        .copied()
        .filter(|&d| d != DType::I64)
        .collect();
    let mut cases = 0;
    for (s, dims) in SHAPES.iter().enumerate() {
        let shape = Shape::new(dims.to_vec());
        for &dtype in &dtypes {
            let host = awkward_values(shape.numel(), dtype, 300 + s as u64);
            let x = array(&shape, &host);
            trace(&format!("upload of {dims:?} {dtype}"));
            let resident = device_only(backend, &x, dtype);
            for &op in ReduceOp::ALL {
                if op.result_dtype(dtype).is_err() {
                    continue;
                }
                if declined.contains(&format!("{}:{}", op.name(), dtype.name())) {
                    println!(
                        "{} of {dtype} on {backend}: declined (its capabilities)",
                        op.name()
                    );
                    continue;
                }
                let axes = std::iter::once(None).chain((0..dims.len()).map(Some));
                for axis in axes {
                    let made = forced(backend, || Ok(forms(&resident, op, axis))).unwrap();
                    let want = on_cpu(|| forms(&x, op, axis));
                    for ((form, got), (_, want)) in made.into_iter().zip(want) {
                        let what =
                            format!("{} {form} of {dims:?} {dtype} axis {axis:?}", op.name());
                        trace(&what);
                        let (got, want) = (got.unwrap(), want.unwrap());
                        let downloads = metrics().of(backend).downloads.count;
                        forced(backend, || got.eval()).unwrap();
                        assert_eq!(got.device(), backend, "{what}");
                        assert_eq!(
                            metrics().of(backend).downloads.count,
                            downloads,
                            "{what}: ran on the host"
                        );
                        let want = on_cpu(|| want.buffer()).unwrap();
                        let got = got.buffer().unwrap();
                        if let Some(diff) = agrees(&got, &want, tolerance(got.dtype())) {
                            panic!("{what} on {backend}: {diff}");
                        }
                        cases += 1;
                    }
                }
            }
        }
    }
    cases += check_moments_with_their_mean(backend, &dtypes);
    cases += check_many_short_lanes(backend, &dtypes);
    check_products_far_outside_the_range(backend);
    check_log_sum_exps_of_extreme_values(backend);
    println!("reductions on {backend}: {cases} cases on the device, all agree with the CPU");
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

/// Reductions along the columns of a matrix of many short columns (100
/// values, 33000 columns): the shape that renderers without shuffles give
/// a thread per lane (more lanes than [`SHAPES`] has). Returns the number
/// of results checked.
fn check_many_short_lanes(backend: &str, dtypes: &[DType]) -> usize {
    let shape = Shape::new(vec![100, 33_000]);
    let mut cases = 0;
    for &dtype in dtypes.iter().filter(|d| d.is_float()) {
        let host = awkward_values(shape.numel(), dtype, 900);
        let x = array(&shape, &host);
        let resident = device_only(backend, &x, dtype);
        for op in [
            ReduceOp::Sum,
            ReduceOp::Max,
            ReduceOp::Var,
            ReduceOp::ArgMax,
            ReduceOp::LogSumExp,
        ] {
            let what = format!("{} of 33000 columns of 100 {dtype}", op.name());
            trace(&what);
            let got = forced(backend, || {
                let r = resident.reduce(op, Some(0))?;
                r.eval()?;
                Ok(r)
            })
            .unwrap();
            assert_eq!(got.device(), backend, "{what}");
            let want = on_cpu(|| x.reduce(op, Some(0))?.buffer()).unwrap();
            if let Some(diff) = agrees(&got.buffer().unwrap(), &want, tolerance(dtype)) {
                panic!("{what} on {backend}: {diff}");
            }
            cases += 1;
        }
    }
    cases
}

/// Means evaluated with a `var` or `sd` of the same values along the same
/// axis: the standardization `(x - mean) / sd` (two passes: the moments
/// with the mean as their companion, then the elementwise pass) and the
/// mean and variance of an elementwise chain (one pass), on every shape
/// of [`SHAPES`], over everything and along each axis. Each result must
/// agree with the CPU's; returns the number of results checked.
fn check_moments_with_their_mean(backend: &str, dtypes: &[DType]) -> usize {
    type Form = fn(&Array, Option<usize>) -> Result<Vec<Array>>;
    let standardized: Form = |x, axis| {
        let (m, s) = (
            x.reduce(ReduceOp::Mean, axis)?,
            x.reduce(ReduceOp::Sd, axis)?,
        );
        Ok(vec![((x - &m)? / &s)?, m, s])
    };
    let chain_moments: Form = |x, axis| {
        let y = ((x * 1.5)? + 0.25)?;
        Ok(vec![
            y.reduce(ReduceOp::Var, axis)?,
            y.reduce(ReduceOp::Mean, axis)?,
        ])
    };
    // Passes over everything, and along an axis (where the division
    // reads its lane's results in the same kernel: an epilogue).
    let forms: [(&str, Form, [u64; 2]); 2] = [
        ("standardized", standardized, [2, 1]),
        ("mean and var of a chain", chain_moments, [1, 1]),
    ];
    let mut cases = 0;
    for (s, dims) in SHAPES.iter().enumerate() {
        let shape = Shape::new(dims.to_vec());
        for &dtype in dtypes.iter().filter(|d| d.is_float()) {
            let host = awkward_values(shape.numel(), dtype, 700 + s as u64);
            let x = array(&shape, &host);
            let resident = device_only(backend, &x, dtype);
            let axes = std::iter::once(None).chain((0..dims.len()).map(Some));
            for axis in axes {
                for (form, make, passes) in forms {
                    let what = format!("{form} of {dims:?} {dtype} axis {axis:?}");
                    trace(&what);
                    let computes = metrics().of(backend).compute.count;
                    let got = forced(backend, || {
                        let got = make(&resident, axis)?;
                        Array::eval_all(&got.iter().collect::<Vec<_>>())?;
                        Ok(got)
                    })
                    .unwrap();
                    assert_eq!(
                        metrics().of(backend).compute.count - computes,
                        passes[usize::from(axis.is_some())],
                        "{what}: the mean should share the moments' pass"
                    );
                    let want = on_cpu(|| make(&x, axis)).unwrap();
                    for (got, want) in got.iter().zip(&want) {
                        assert_eq!(got.device(), backend, "{what}");
                        let want = on_cpu(|| want.buffer()).unwrap();
                        if let Some(diff) = agrees(&got.buffer().unwrap(), &want, tolerance(dtype))
                        {
                            panic!("{what} on {backend}: {diff}");
                        }
                        cases += 1;
                    }
                }
            }
        }
    }
    cases
}

/// `logsumexp` of values whose exponentials overflow or underflow (the
/// maximum is shifted out, so none does), of infinities (`-Inf` with no
/// larger value, `+Inf` with one) and with a NaN, which wins over `+Inf`.
fn check_log_sum_exps_of_extreme_values(backend: &str) {
    let e1 = (-1f64).exp();
    let cases: [(&[f64], f64); 7] = [
        (&[1000.0, 999.0, 1000.0], 1000.0 + (2.0 + e1).ln()),
        (&[-1000.0, -1001.0], -1000.0 + (1.0 + e1).ln()),
        (&[f64::NEG_INFINITY, f64::NEG_INFINITY], f64::NEG_INFINITY),
        (&[f64::NEG_INFINITY, 2.0], 2.0),
        (&[f64::INFINITY, 1.0, 2.0], f64::INFINITY),
        (&[f64::NEG_INFINITY, f64::INFINITY], f64::INFINITY),
        (&[1.0, f64::NAN, f64::INFINITY], f64::NAN),
    ];
    check_full_reductions(backend, "logsumexp", &cases, Array::logsumexp, 1e-6);
}

/// `prod` whose partial products overflow and underflow f64 on the way but
/// whose result does not (R: `prod(c(1e300, 1e300, 1e-300, 1e-300, 5))` is
/// 5), one that overflows (`Inf`), one with a zero after an overflow (0),
/// and `Inf · 0` (NaN).
fn check_products_far_outside_the_range(backend: &str) {
    let cases: [(&[f64], f64); 4] = [
        (&[1e300, 1e300, 1e-300, 1e-300, 5.0], 5.0),
        (&[1e300, 1e300, 3.0], f64::INFINITY),
        (&[1e300, 1e300, 0.0], 0.0),
        (&[f64::INFINITY, 1.0, 0.0], f64::NAN),
    ];
    check_full_reductions(backend, "prod", &cases, Array::prod, 1e-12);
}

/// `reduce` of each case's values, computed from a resident copy on the
/// forced `backend`, must stay there and give the case's value (NaN for
/// NaN, else within `rel` of it).
fn check_full_reductions(
    backend: &str,
    name: &str,
    cases: &[(&[f64], f64)],
    reduce: fn(&Array) -> Result<Array>,
    rel: f64,
) {
    for &(v, want) in cases {
        let x = Array::from_vec([v.len()], v.to_vec()).unwrap();
        let got = forced(backend, || {
            let d = (&x * 1.0)?;
            d.eval()?;
            let r = reduce(&d)?;
            r.eval()?;
            Ok(r)
        })
        .unwrap();
        assert_eq!(got.device(), backend, "{name} of {v:?}");
        let got = got.item().unwrap();
        assert!(
            got == want || (got.is_nan() && want.is_nan()) || (got - want).abs() < rel * want.abs(),
            "{name} of {v:?} on {backend}: {got:e}, want {want:e}"
        );
    }
}
