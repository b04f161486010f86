//! The cumulative-product checks every GPU backend's device tests run:
//! factors that make running products leave the float range and come back
//! (the overflow-on-the-way cases), with zeros, NaN, infinities, subnormals
//! and both signs among them; the rule a device's `cumprod` must keep
//! against the CPU's float64 path ([`cumprod_mismatch`]); and `cumprod`
//! of 1-D, 2-D and 3-D arrays along every axis, lengths around the blocks,
//! tiles and pieces of the backends' scans, through the runtime
//! ([`check_cumprod_through_the_runtime`]).
//!
//! Test support only; the helpers panic on a failed check.

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::runtime::scan_plan::{lanes, Accumulation};
use crate::runtime::scan_product::tolerance;
use crate::runtime::testing::gpu::{
    array, assert_ran_on, forced, scan_reference, work_on, ScanCase,
};
use crate::runtime::{fallback_log, fallback_log_reset};
use crate::shape::Shape;

/// The kinds of factors of the product checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factors {
    /// `±2^u (1 + v)`, `u` in `[-8, 8)`: long lanes wander out of the
    /// float range and back, a few short steps at a time.
    Wandering,
    /// Magnitudes across the whole range of the dtype (`2^±1000` for f64,
    /// `2^±120` for f32): nearly every prefix of a long lane is out of
    /// range, while its true product comes back.
    Extreme,
    /// [`Factors::Wandering`] with about one factor in 200 special: a zero
    /// of either sign, an infinity of either sign, NaN, the smallest
    /// subnormal.
    Special,
}

impl Factors {
    /// Every kind.
    pub const ALL: [Factors; 3] = [Factors::Wandering, Factors::Extreme, Factors::Special];
}

/// `n` reproducible factors of `kind` in `dtype` (f32 or f64) from `seed`.
pub fn factors(n: usize, dtype: DType, kind: Factors, seed: u64) -> HostBuffer {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let reach = if dtype == DType::F32 { 120.0 } else { 1000.0 };
    let tiny = if dtype == DType::F32 {
        f32::from_bits(1) as f64
    } else {
        f64::from_bits(1)
    };
    let v: Vec<f64> = (0..n)
        .map(|_| {
            let (u, v, w, t) = (next(), next(), next(), next());
            let sign = if w < 0.5 { -1.0 } else { 1.0 };
            let ordinary = sign * (16.0 * u - 8.0).exp2() * (1.0 + v);
            match kind {
                Factors::Wandering => ordinary,
                Factors::Extreme => sign * ((2.0 * u - 1.0) * reach).exp2() * (1.0 + v),
                Factors::Special => match (t * 1200.0) as u32 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => f64::INFINITY,
                    3 => f64::NEG_INFINITY,
                    4 => f64::NAN,
                    5 => tiny * sign,
                    _ => ordinary,
                },
            }
        })
        .collect();
    match dtype {
        DType::F32 => HostBuffer::F32(v.iter().map(|&x| x as f32).collect()),
        _ => HostBuffer::F64(v),
    }
}

/// The first position where a device's running products `got` of `x`
/// (laid out as `(inner, len, outer)`, kept with `acc`, results of dtype
/// `out`) break the rule against the CPU's float64 ones `want`, described;
/// `None` when every one keeps it. The rule: NaN where the CPU has NaN and
/// nowhere else; the CPU's sign everywhere (zeros and infinities
/// included); and within [`tolerance`] of the CPU's value after `k`
/// factors (relative, with `out`'s smallest normal as an absolute floor
/// for results in the subnormal range), where an infinity counts as the
/// largest finite value of `out` (a true product just at the edge of the
/// range may round to either).
pub fn cumprod_mismatch(
    x: &[f64],
    (inner, len, outer): (usize, usize, usize),
    got: &[f64],
    want: &[f64],
    acc: Accumulation,
    out: DType,
) -> Option<String> {
    let (max, floor) = match out {
        DType::F32 => (f32::MAX as f64, f32::MIN_POSITIVE as f64),
        _ => (f64::MAX, f64::MIN_POSITIVE),
    };
    let clamp = |v: f64| v.clamp(-max, max);
    for o in 0..outer {
        for i in 0..inner {
            for k in 0..len {
                let at = i + inner * (k + len * o);
                let (g, w) = (got[at], want[at]);
                // The reference in the result dtype (the CPU rounds its f64
                // value once more).
                let w = if out == DType::F32 {
                    w as f32 as f64
                } else {
                    w
                };
                let ok = if g.is_nan() || w.is_nan() {
                    g.is_nan() && w.is_nan()
                } else {
                    let bound = tolerance(k + 1, acc, out) * clamp(w).abs() + floor;
                    g.is_sign_negative() == w.is_sign_negative()
                        && (clamp(g) - clamp(w)).abs() <= bound
                };
                if !ok {
                    return Some(format!(
                        "lane ({i}, {o}) position {k} of {len} (index {at}): got {g:e}, want {w:e} (factor {:e})",
                        x[at]
                    ));
                }
            }
        }
    }
    None
}

/// Shapes and axes of the runtime check: vectors of lengths around 64 (a
/// piece of the chunked scans), 256 (a CUDA block), 1024 (an OpenCL tile,
/// the smallest wgpu one) and 4096 (a CUDA tile, the largest wgpu one),
/// long ones cut into many pieces; matrices and 3-D arrays along every
/// axis (contiguous and interleaved lanes, one piece and many per lane).
pub const CUMPROD_SCANS: [ScanCase; 26] = [
    (&[1], None),
    (&[63], None),
    (&[65], None),
    (&[255], None),
    (&[257], None),
    (&[1023], None),
    (&[1025], None),
    (&[4095], None),
    (&[4097], None),
    (&[100_003], None),
    (&[300, 7], Some(0)),
    (&[300, 7], Some(1)),
    (&[300, 7], None),
    (&[5, 4097], Some(0)),
    (&[5, 4097], Some(1)),
    (&[20_000, 3], Some(0)),
    (&[3, 20_000], Some(1)),
    (&[7, 9, 11], Some(0)),
    (&[7, 9, 11], Some(1)),
    (&[7, 9, 11], Some(2)),
    (&[65, 70, 3], Some(0)),
    (&[65, 70, 3], Some(1)),
    (&[65, 70, 3], Some(2)),
    (&[3, 1025, 2], Some(1)),
    (&[0, 5], Some(0)),
    (&[5, 0], Some(1)),
];

/// The overflow-on-the-way examples of the CPU's docs, as `(factors,
/// running products)` in f64: products that leave the range and come
/// back, zeros after an overflow, `Inf · 0`, signs of zeros and
/// infinities.
pub fn cumprod_examples() -> Vec<(Vec<f64>, Vec<f64>)> {
    let inf = f64::INFINITY;
    vec![
        (vec![1e300, 1e300, 1e-300], vec![1e300, inf, 1e300]),
        (vec![1e300, 1e300, 0.0], vec![1e300, inf, 0.0]),
        (vec![1e300, -1e300, 0.0], vec![1e300, -inf, -0.0]),
        (vec![inf, 0.0, 2.0], vec![inf, f64::NAN, f64::NAN]),
        (vec![-1e-300, 1e-300, 1e300], vec![-1e-300, -0.0, -1e-300]),
        (
            vec![1e-300, 1e-300, 1e-300, 1e-300, -inf],
            vec![1e-300, 0.0, 0.0, 0.0, -inf],
        ),
    ]
}

/// Checks `cumprod` on the forced `backend` through the runtime against
/// the CPU's float64 path ([`cumprod_mismatch`]), for every dtype of
/// `dtypes` it computes (f32 results kept with `f32_acc`, f64 ones in
/// double): the [`cumprod_examples`] (in f32 with `1e30` for `1e300`),
/// every case of [`CUMPROD_SCANS`] with each kind of [`Factors`], and, for
/// i64 and bool data, the product of their f64 values. Every one must run
/// on `backend`, with no fallback.
pub fn check_cumprod_through_the_runtime(backend: &str, dtypes: &[DType], f32_acc: Accumulation) {
    fallback_log_reset();
    let acc_of = |dtype| match dtype {
        DType::F32 => f32_acc,
        _ => Accumulation::Double,
    };
    let run = |shape: &Shape, axis: Option<usize>, host: &HostBuffer, what: &str| {
        let x = array(shape, host);
        let before = work_on(backend);
        let got = forced(backend, || {
            let y = match axis {
                None => x.cumprod(),
                Some(a) => x.cumprod_axis(a),
            }?;
            y.to_f64_vec()
        })
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        if shape.numel() > 0 {
            assert_ran_on(backend, before, what);
        }
        got
    };
    let mut cases = 0;
    for &dtype in dtypes {
        let check = |shape: &Shape, axis, host: &HostBuffer, what: &str| {
            let x = host.to_f64_vec().unwrap();
            let got = run(shape, axis, host, what);
            let want = scan_reference(shape, axis, true, &x);
            let out = if dtype == DType::F32 {
                DType::F32
            } else {
                DType::F64
            };
            let layout = lanes(shape, axis).unwrap();
            if let Some(bad) = cumprod_mismatch(&x, layout, &got, &want, acc_of(dtype), out) {
                panic!("{backend} cumprod {what}: {bad}");
            }
        };
        match dtype {
            DType::F32 | DType::F64 => {
                for (k, (xs, _)) in cumprod_examples().into_iter().enumerate() {
                    let xs: Vec<f64> = match dtype {
                        // 1e300 -> 1e30: still out of f32's range squared.
                        DType::F32 => xs
                            .iter()
                            .map(|&v| {
                                if v.abs() == 1e300 {
                                    v / 1e270
                                } else if v.abs() == 1e-300 {
                                    v * 1e270
                                } else {
                                    v
                                }
                            })
                            .collect(),
                        _ => xs,
                    };
                    let host = HostBuffer::F64(xs.clone()).cast(dtype).unwrap();
                    let shape = Shape::new(vec![xs.len()]);
                    check(&shape, None, &host, &format!("example {k} {dtype}"));
                    cases += 1;
                }
                for (c, (dims, axis)) in CUMPROD_SCANS.iter().enumerate() {
                    let shape = Shape::new(dims.to_vec());
                    for kind in Factors::ALL {
                        let host = factors(shape.numel(), dtype, kind, 11 + c as u64);
                        let what = format!("{dims:?} axis {axis:?} {kind:?} {dtype}");
                        check(&shape, *axis, &host, &what);
                        cases += 1;
                    }
                }
            }
            DType::I64 | DType::Bool => {
                // Integer factors run as their f64 values (a fused cast
                // before the scan): i64 ones of magnitude 1 to 7, whose
                // products overflow along the flattening; bools, whose
                // products drop to 0 at the first false.
                for (dims, axis) in [
                    (&[300, 7][..], Some(0)),
                    (&[300, 7], Some(1)),
                    (&[4097], None),
                ] {
                    let shape = Shape::new(dims.to_vec());
                    let n = shape.numel();
                    let host = match dtype {
                        DType::I64 => HostBuffer::I64(
                            (0..n as i64)
                                .map(|i| ((i * 7919) % 7 + 1) * if i % 3 == 0 { -1 } else { 1 })
                                .collect(),
                        ),
                        _ => HostBuffer::Bool((0..n).map(|i| i % 97 != 0).collect()),
                    };
                    check(
                        &shape,
                        axis,
                        &host,
                        &format!("{dims:?} axis {axis:?} {dtype}"),
                    );
                    cases += 1;
                }
            }
        }
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
    println!("cumprod on {backend}: {cases} cases within the bound");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_holds_for_the_cpu_itself_and_catches_what_it_should() {
        for (xs, want) in cumprod_examples() {
            let shape = Shape::new(vec![xs.len()]);
            let cpu = scan_reference(&shape, None, true, &xs);
            let layout = (1, xs.len(), 1);
            assert_eq!(
                cumprod_mismatch(&xs, layout, &cpu, &want, Accumulation::Double, DType::F64),
                None,
                "{xs:?}: {cpu:?}"
            );
        }
        let xs = [2.0, 3.0];
        let m = |got: &[f64], want: &[f64]| {
            cumprod_mismatch(&xs, (1, 2, 1), got, want, Accumulation::Double, DType::F64)
        };
        assert!(m(&[2.0, 6.0], &[2.0, 6.0]).is_none());
        assert!(m(&[2.0, 6.0 * (1.0 + 1e-14)], &[2.0, 6.0]).is_some());
        assert!(m(&[2.0, f64::NAN], &[2.0, 6.0]).is_some());
        assert!(m(&[2.0, -0.0], &[2.0, 0.0]).is_some());
        assert!(m(&[2.0, f64::INFINITY], &[2.0, f64::MAX]).is_none());
        assert!(m(&[2.0, f64::INFINITY], &[2.0, 6.0]).is_some());
        // Every kind of factors has its specials where asked.
        let s = factors(20_000, DType::F64, Factors::Special, 3)
            .to_f64_vec()
            .unwrap();
        assert!(s.iter().any(|v| v.is_nan()) && s.iter().any(|v| v.is_infinite()));
        assert!(s.iter().any(|&v| v == 0.0 && v.is_sign_negative()));
        let e = factors(1000, DType::F32, Factors::Extreme, 3)
            .to_f64_vec()
            .unwrap();
        assert!(e.iter().all(|v| v.is_finite() && *v != 0.0));
        assert!(e.iter().any(|v| v.abs() > 1e30));
    }
}
