//! `where_` chooses without branching (`ops::select::Pick`): the chosen
//! value's bits are kept (NaN, signed zeros, infinities, integer extremes),
//! fused and op by op, with the mask and either branch full-size or
//! broadcast, at sizes that end mid-tile and span several tiles.

mod common;

use std::sync::Mutex;

use common::{fused_then_op_by_op, TestRng};
use gearbox_core::fusion::cpu::TILE;
use gearbox_core::{Array, BinaryOp, DType, Result, UnaryOp};

/// The runtime options are process-wide: one test at a time changes them.
static LOCK: Mutex<()> = Mutex::new(());

/// `build()`'s elements as f64 bits (with fusion on, then op by op).
fn both(build: impl Fn() -> Result<Array>) -> [Vec<u64>; 2] {
    fused_then_op_by_op(&LOCK, build, |a| a.to_f64_vec())
        .map(|r| r.unwrap().iter().map(|v| v.to_bits()).collect())
}

/// Random values with NaN, both zeros and both infinities sprinkled in.
fn values(rng: &mut TestRng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| match rng.next_u64() % 16 {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => f64::INFINITY,
            4 => f64::NEG_INFINITY,
            _ => rng.uniform(-1e6, 1e6),
        })
        .collect()
}

#[test]
fn where_keeps_the_chosen_bits_in_every_dtype() {
    let mut rng = TestRng::new(11);
    for (rows, cols) in [(1, 1), (7, 3), (TILE + 5, 3), (3 * TILE + 1, 2)] {
        let n = rows * cols;
        let (a, b) = (values(&mut rng, n), values(&mut rng, n));
        let mask: Vec<bool> = (0..n).map(|_| rng.next_u64().is_multiple_of(2)).collect();
        let col: Vec<bool> = (0..rows)
            .map(|_| rng.next_u64().is_multiple_of(2))
            .collect();
        let xa = Array::from_vec([rows, cols], a.clone()).unwrap();
        let xb = Array::from_vec([rows, cols], b.clone()).unwrap();
        let m = Array::from_vec([rows, cols], mask.clone()).unwrap();
        let mc = Array::from_vec([rows, 1], col.clone()).unwrap();
        for dtype in ["f64", "f32", "i64", "bool"] {
            // The reference: each value as the dtype holds it, chosen in
            // f64 (every conversion here is exact both ways).
            let conv = |v: f64| -> f64 {
                match dtype {
                    "f32" => v as f32 as f64,
                    "i64" if v.is_finite() => v as i64 as f64,
                    "i64" => 0.0,
                    "bool" => (v != 0.0) as u8 as f64,
                    _ => v,
                }
            };
            let cast = |x: &Array| -> Result<Array> {
                match dtype {
                    "f32" => x.astype(DType::F32),
                    "i64" => Array::where_(&x.unary(UnaryOp::IsFinite)?, x, &x.scalar_like(0.0))?
                        .astype(DType::I64),
                    "bool" => x.binary_scalar(BinaryOp::Ne, 0.0),
                    _ => Ok(x.clone()),
                }
            };
            let what = format!("{dtype} {rows} x {cols}");
            let bits = |v: Vec<f64>| -> Vec<u64> { v.into_iter().map(f64::to_bits).collect() };
            // Full-size mask and branches.
            let want = bits(
                (0..n)
                    .map(|i| conv(if mask[i] { a[i] } else { b[i] }))
                    .collect(),
            );
            for got in both(|| Array::where_(&m, &cast(&xa)?, &cast(&xb)?)) {
                assert_eq!(got, want, "{what}: full");
            }
            // A column mask, and a scalar second branch (7 in every dtype
            // but bool, where it is true).
            let seven = if dtype == "bool" { 1.0 } else { 7.0 };
            let want = bits(
                (0..n)
                    .map(|i| if col[i % rows] { conv(a[i]) } else { seven })
                    .collect(),
            );
            for got in both(|| {
                let x = cast(&xa)?;
                let s = if dtype == "bool" {
                    Array::scalar(true)
                } else {
                    x.scalar_like(7.0)
                };
                Array::where_(&mc, &x, &s)
            }) {
                assert_eq!(got, want, "{what}: column mask, scalar branch");
            }
        }
    }
}
