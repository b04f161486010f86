//! The checks every backend's permutes pass the same way (transposes,
//! `t`, flips and their combinations, [`LibraryCall::Permute`]): through
//! the runtime on device-resident arrays, with no download and the CPU's
//! values bit for bit ([`check_permutes_of_resident_arrays`]), and as
//! direct library calls with permutations and reversals combined
//! ([`check_permute_calls`]). Shapes straddle the 32 x 32 tiles (1, 31,
//! 32, 33, 127, 129), are tall and wide, 3-D (all six permutations) and
//! 4-D, and empty.
//!
//! Test support only; the helpers panic on a failed check.

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::permute::{AxisOrder, StridedCopy};
use crate::runtime::backend::{Backend, LibraryCall};
use crate::runtime::{fallback_log, fallback_log_reset, metrics};
use crate::shape::Shape;
use crate::Array;

use super::gpu::{array, device_only, on_cpu, run, values};

/// `n` reproducible values of `dtype` from `seed`, never zero and, but for
/// bools, all different (so a value in the wrong place shows): floats in
/// `[-2, 2)`, integers spread over 60 bits.
pub fn distinct_values(n: usize, dtype: DType, seed: u64) -> HostBuffer {
    match values(n, dtype, seed) {
        HostBuffer::I64(_) => {
            let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            HostBuffer::I64(
                (0..n as i64)
                    .map(|i| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        // High bits random, low bits the position: distinct.
                        (((state >> 34) as i64) << 30 | (i + 1))
                            * if state & 1 == 1 { -1 } else { 1 }
                    })
                    .collect(),
            )
        }
        other => other,
    }
}

/// Checks that `got` holds `want`'s values exactly (same dtype and
/// length); else names `what` and the first position that differs.
pub fn assert_same(got: &HostBuffer, want: &HostBuffer, what: &str) {
    assert_eq!(
        (got.dtype(), got.len()),
        (want.dtype(), want.len()),
        "{what}"
    );
    if got != want {
        let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
        let at = g
            .iter()
            .zip(&w)
            .position(|(a, b)| a.to_bits() != b.to_bits());
        panic!(
            "{what}: differs first at {at:?} of {} ({:?} vs {:?})",
            w.len(),
            at.map(|i| g[i]),
            at.map(|i| w[i])
        );
    }
}

/// Every permutation of `0..n`.
pub fn all_perms(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in all_perms(n - 1) {
        for at in 0..n {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

/// An op on an array.
pub type ArrayOp = Box<dyn Fn(&Array) -> Result<Array>>;

/// A permute of an array, as the runtime checks run it.
pub struct Case {
    /// What it is, in messages.
    pub what: String,
    /// The op.
    pub op: ArrayOp,
}

/// The permutes the runtime checks run on an array of `dims`: `t()` of
/// a matrix, every permutation of up to 3 axes (a few of 4), and a flip
/// along every axis.
pub fn cases(dims: &[usize]) -> Vec<Case> {
    let n = dims.len();
    let mut out: Vec<Case> = Vec::new();
    if n == 2 {
        out.push(Case {
            what: "t()".into(),
            op: Box::new(|x| x.t()),
        });
    }
    let perms = if n <= 3 {
        all_perms(n)
    } else {
        vec![
            vec![3, 2, 1, 0],
            vec![1, 0, 2, 3],
            vec![0, 3, 1, 2],
            vec![2, 3, 0, 1],
            vec![1, 2, 3, 0],
        ]
    };
    for perm in perms.into_iter().filter(|p| p.len() != 2) {
        out.push(Case {
            what: format!("transpose {perm:?}"),
            op: Box::new(move |x| x.transpose(&perm)),
        });
    }
    for axis in 0..n {
        out.push(Case {
            what: format!("flip({axis})"),
            op: Box::new(move |x| x.flip(axis)),
        });
    }
    out
}

/// The shapes the checks permute: square matrices that straddle the tile
/// side, tall and wide ones, 3-D and 4-D arrays, and empty ones.
pub const SHAPES: [&[usize]; 14] = [
    &[1, 1],
    &[31, 31],
    &[32, 32],
    &[33, 33],
    &[127, 129],
    &[129, 127],
    &[1000, 3],
    &[3, 1000],
    &[0, 5],
    &[5, 33, 40],
    &[7, 0, 3],
    &[3, 4, 33, 9],
    &[2, 1, 65, 3],
    &[100_003],
];

/// Checks that transposes, `t()` and flips ([`cases`] of each of
/// [`SHAPES`]) of arrays resident on `backend`, in each dtype of
/// `dtypes`, run there with no download, stay there, and give the CPU's
/// values exactly; and that nothing fell back.
pub fn check_permutes_of_resident_arrays(backend: &str, dtypes: &[DType]) {
    fallback_log_reset();
    for (s, dims) in SHAPES.iter().enumerate() {
        let shape = Shape::new(dims.to_vec());
        for &dtype in dtypes {
            let host = distinct_values(shape.numel(), dtype, 40 + s as u64);
            let x = array(&shape, &host);
            let resident = device_only(backend, &x, dtype);
            for case in cases(dims) {
                let what = format!("{} of {dims:?} {dtype}", case.what);
                let downloads = metrics().of(backend).downloads.count;
                let got = (case.op)(&resident).unwrap();
                got.eval().unwrap();
                assert_eq!(got.device(), backend, "{what}");
                assert_eq!(
                    metrics().of(backend).downloads.count,
                    downloads,
                    "{what}: no download"
                );
                let want = on_cpu(|| (case.op)(&x)?.buffer()).unwrap();
                assert_eq!(got.dims(), (case.op)(&x).unwrap().dims(), "{what}");
                assert_same(&got.buffer().unwrap(), &want, &what);
            }
        }
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

/// Checks [`LibraryCall::Permute`] run on `b` directly, with permutations
/// and reversals together (what no single `Array` method makes), against
/// the host copy, exactly, in each dtype of `dtypes`.
pub fn check_permute_calls(b: &dyn Backend, dtypes: &[DType]) {
    let shapes: [&[usize]; 5] = [&[33, 65], &[1000, 3], &[40, 9, 35], &[17, 33, 3, 12], &[]];
    for (s, dims) in shapes.iter().enumerate() {
        let shape = Shape::new(dims.to_vec());
        let n = dims.len();
        for &dtype in dtypes {
            let x = distinct_values(shape.numel(), dtype, 60 + s as u64);
            let perms = all_perms(n);
            for (k, perm) in perms.iter().enumerate().take(8) {
                for flips in [0u32, (1 << n) - 1, 1 + k as u32 % (1 << n).max(1)] {
                    let flipped: Vec<bool> = (0..n).map(|i| flips >> i & 1 == 1).collect();
                    let order = AxisOrder::new(perm, &flipped).unwrap();
                    let out = Shape::new(perm.iter().map(|&p| dims[p]).collect());
                    let copy = StridedCopy::of_order(&shape, order);
                    let want = crate::map_buffer!(&x, v => copy.apply("permute", v).unwrap());
                    let got = run(
                        b,
                        LibraryCall::Permute { order },
                        &[(&x, &shape)],
                        (&out, dtype),
                    )
                    .unwrap_or_else(|e| panic!("{dims:?} {perm:?} {flipped:?} {dtype}: {e}"));
                    assert_same(
                        &got,
                        &want,
                        &format!("{dims:?} {perm:?} {flipped:?} {dtype}"),
                    );
                }
            }
        }
    }
}
