//! Integer semantics (`ops/integer.rs`): an i64 result never wraps or
//! saturates. An overflow is an error that names the op, the position and
//! the values, the same with fusion as op by op; integer reductions are
//! exact; a backend that does not detect overflow gets no i64 work that can
//! overflow. References are exact i128 arithmetic on random inputs.

mod common;

use std::sync::Mutex;

use common::{fused_then_op_by_op, TestRng};
use gearbox_core::fusion::cpu::TILE;
use gearbox_core::ops::loops::PAR_MIN;
use gearbox_core::runtime::backend::Capabilities;
use gearbox_core::runtime::registry::unregister_backend;
use gearbox_core::runtime::testing::SimulatedBackend;
use gearbox_core::runtime::{backend_plan, set_options, RuntimeOptions};
use gearbox_core::{Array, BinaryOp, DType, Error, HostBuffer, Precision, Result, UnaryOp};

/// The runtime options are process-wide: one test at a time changes them.
static LOCK: Mutex<()> = Mutex::new(());

/// `build()` evaluated with fusion on, then op by op (fresh graphs).
fn both(build: impl Fn() -> Result<Array>) -> [Result<HostBuffer>; 2] {
    fused_then_op_by_op(&LOCK, build, |a| a.buffer().map(|b| (*b).clone()))
}

/// `build()`'s value or error, asserted equal fused and op by op.
fn same(what: &str, build: impl Fn() -> Result<Array>) -> Result<HostBuffer> {
    let [fused, unfused] = both(build);
    assert_eq!(fused, unfused, "{what}: fused vs op by op");
    fused
}

/// The message of the error `build()` must end in.
fn error(what: &str, build: impl Fn() -> Result<Array>) -> String {
    match same(what, build) {
        Err(e @ Error::IntegerOverflow { .. }) => e.to_string(),
        other => panic!("{what}: expected an integer overflow, got {other:?}"),
    }
}

fn ints(shape: &[usize], v: Vec<i64>) -> Array {
    Array::from_vec(shape.to_vec(), v).unwrap()
}

fn floats(v: Vec<f64>) -> Array {
    Array::from_vec([v.len()], v).unwrap()
}

fn assert_starts(msg: &str, start: &str) {
    assert!(
        msg.starts_with(start),
        "{msg}\n  should start with\n{start}"
    );
    assert!(msg.contains("i64 holds -9223372036854775808 to 9223372036854775807"));
}

#[test]
fn the_cases_of_the_issue_are_errors() {
    const MAX: i64 = i64::MAX;
    const MIN: i64 = i64::MIN;
    let msg = error("sum", || ints(&[2], vec![MAX, 1]).sum());
    assert_starts(
        &msg,
        "sum: i64 overflow: the sum of 2 values is 9223372036854775808",
    );
    let msg = error("mul", || ints(&[1], vec![MAX]) * 2.0);
    assert_starts(
        &msg,
        "mul: i64 overflow: 9223372036854775807 * 2 at index 0 is 18446744073709551614",
    );
    let msg = error("neg", || ints(&[3], vec![1, 2, MIN]).neg());
    assert_starts(
        &msg,
        "neg: i64 overflow: -(-9223372036854775808) at index 2 is 9223372036854775808",
    );
    let msg = error("abs", || ints(&[2], vec![MIN, 5]).abs());
    assert_starts(
        &msg,
        "abs: i64 overflow: abs(-9223372036854775808) at index 0",
    );
    let msg = error("sub", || ints(&[2], vec![0, MIN]).sub(&ints(&[1], vec![1])));
    assert_starts(
        &msg,
        "sub: i64 overflow: (-9223372036854775808) - 1 at index 1 is -9223372036854775809",
    );
    let msg = error("cumsum", || ints(&[2, 2], vec![MAX - 2, 1, 1, 1]).cumsum());
    assert_starts(
        &msg,
        "cumsum: i64 overflow: the running sum at index 3 is 9223372036854775808",
    );
    // A 2 x 2 matrix: column 1 sums to MAX + 1.
    let msg = error("sum_axis", || ints(&[2, 2], vec![1, 2, MAX, 1]).sum_axis(0));
    assert_starts(
        &msg,
        "sum: i64 overflow: the sum along axis 0 at result index 1 (of 2 values) is 9223372036854775808",
    );
}

#[test]
fn the_first_op_that_overflows_is_named_fused_or_not() {
    // (x + 1) * z over several tiles: the add overflows only at the last
    // position, the mul at the first. Op by op, the add fails first; the
    // fused kernel meets the mul first in position order and must still
    // report the add.
    for n in [3 * TILE + 1, PAR_MIN + 5] {
        let mut xv = vec![5i64; n];
        xv[n - 1] = i64::MAX;
        let mut zv = vec![1i64; n];
        zv[0] = i64::MAX;
        let (x, z) = (ints(&[n], xv), ints(&[n], zv));
        let msg = error("chain", || (&x + 1.0)? * &z);
        assert_starts(
            &msg,
            &format!(
                "add: i64 overflow: 9223372036854775807 + 1 at index {} is",
                n - 1
            ),
        );
    }
}

#[test]
fn floats_that_i64_cannot_hold_are_errors() {
    let two63 = 9_223_372_036_854_775_808.0f64;
    let cases: [(f64, &str); 6] = [
        (f64::NAN, "NaN at index 1 has no i64 value"),
        (f64::INFINITY, "inf at index 1 has no i64 value"),
        (f64::NEG_INFINITY, "-inf at index 1 has no i64 value"),
        (1e300, "1e300 at index 1 is outside that range"),
        (
            two63,
            "9.223372036854776e18 at index 1 is outside that range",
        ),
        (
            -two63 - 2048.0,
            "-9.223372036854778e18 at index 1 is outside that range",
        ),
    ];
    for (bad, text) in cases {
        let msg = error("astype", || floats(vec![1.5, bad, 2.0]).astype(DType::I64));
        assert_starts(&msg, &format!("astype: i64 overflow: f64 value {text}"));
        // f32 values convert by the same rule (1e300 is an f32 infinity;
        // -2^63 - 2048 rounds to -2^63, which fits).
        let as_f32 = || {
            floats(vec![1.5, bad, 2.0])
                .astype(DType::F32)?
                .astype(DType::I64)
        };
        match same("astype f32", as_f32) {
            Ok(v) => assert_eq!(v, HostBuffer::I64(vec![1, i64::MIN, 2]), "{bad}"),
            Err(e) => assert!(
                e.to_string()
                    .starts_with("astype: i64 overflow: f32 value "),
                "{e}"
            ),
        }
    }
    // The ends of the range convert; fractions truncate toward zero.
    let edge = floats(vec![-two63, two63 - 1024.0, -2.9, 2.9]);
    let got = same("edges", || edge.astype(DType::I64)).unwrap();
    assert_eq!(got, HostBuffer::I64(vec![i64::MIN, i64::MAX - 1023, -2, 2]));
    // Through a fused chain: (x * 2).astype(i64) fails where x * 2 leaves the range.
    let x = floats(vec![1.0, 4e18, 5e18]);
    let msg = error("chain", || (&x * 2.0)?.astype(DType::I64));
    assert!(
        msg.contains("f64 value 1e19 at index 2 is outside that range"),
        "{msg}"
    );
}

#[test]
fn results_within_i64_are_exact() {
    let big = (1i64 << 53) + 1; // not an f64
    let x = ints(&[4], vec![big, i64::MAX, -big, 3]);
    let i = |v: Vec<i64>| Ok(HostBuffer::I64(v));
    assert_eq!(same("max", || x.max()), i(vec![i64::MAX]));
    assert_eq!(same("min", || x.min()), i(vec![-big]));
    assert_eq!(same("argmin", || x.argmin()), i(vec![2]));
    let y = ints(&[3], vec![big, big + 2, big + 1]);
    assert_eq!(same("max", || y.max()), i(vec![big + 2]));
    assert_eq!(same("argmax", || y.argmax()), i(vec![1]));
    // Partial sums that leave i64 do not matter when the total is inside.
    let z = ints(&[3], vec![i64::MAX, 1, -1]);
    assert_eq!(same("sum", || z.sum()), i(vec![i64::MAX]));
    assert_eq!(same("sum of odd", || y.sum()), i(vec![3 * big + 3]));
    // The mean is the exact total, rounded once, divided once.
    let m = ints(&[2], vec![i64::MAX, i64::MAX]);
    assert_eq!(
        same("mean", || m.mean()),
        Ok(HostBuffer::F64(vec![i64::MAX as f64]))
    );
    assert_eq!(
        same("abs", || ints(&[1], vec![i64::MIN + 1]).abs()),
        i(vec![i64::MAX])
    );
    assert_eq!(
        same("add", || ints(&[2], vec![i64::MIN, -1])
            + ints(&[2], vec![0, i64::MIN + 1])),
        i(vec![i64::MIN, i64::MIN])
    );
}

/// i64 values of every size: small, around 2^31, 2^53 and 2^62, and the
/// extremes, so some sums, differences and products overflow and most do not.
fn mixed_ints(rng: &mut TestRng, n: usize, risky: bool) -> Vec<i64> {
    (0..n)
        .map(|_| {
            let class = if risky {
                rng.next_u64() % 6
            } else {
                rng.next_u64() % 3
            };
            let mag: i64 = match class {
                0 => (rng.next_u64() % 1000) as i64,
                1 => (rng.next_u64() % (1 << 31)) as i64,
                2 => (rng.next_u64() % (1 << 40)) as i64,
                3 => (rng.next_u64() % (1 << 53)) as i64,
                4 => (rng.next_u64() >> 2) as i64,
                _ => i64::MAX - (rng.next_u64() % 4) as i64,
            };
            if rng.next_u64().is_multiple_of(2) {
                mag
            } else {
                -mag - (class == 5) as i64
            }
        })
        .collect()
}

/// `x op y` over broadcast operands in exact arithmetic: the values, or the
/// first position whose result leaves i64 (as the error names it).
fn exact(op: BinaryOp, x: &[i64], y: &[i64], rows: usize, cols: usize) -> Result<Vec<i64>> {
    // x is rows x cols; y is 1 x cols (broadcast down the rows).
    let mut out = Vec::with_capacity(rows * cols);
    for p in 0..rows * cols {
        let (a, b) = (i128::from(x[p]), i128::from(y[p / rows]));
        let r = match op {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            _ => a * b,
        };
        match i64::try_from(r) {
            Ok(v) => out.push(v),
            Err(_) => {
                let sym = ["+", "-", "*"][[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul]
                    .iter()
                    .position(|&o| o == op)
                    .unwrap()];
                return Err(Error::IntegerOverflow {
                    op: op.name(),
                    what: format!(
                        "{} {sym} {} at index {p} is {r}",
                        paren(x[p]),
                        paren(y[p / rows])
                    ),
                });
            }
        }
    }
    Ok(out)
}

fn paren(v: i64) -> String {
    if v < 0 {
        format!("({v})")
    } else {
        v.to_string()
    }
}

#[test]
fn random_arithmetic_matches_exact_integers() {
    let mut overflowed = 0;
    let mut cases = 0;
    for (seed, rows) in [(1u64, 1usize), (2, 7), (3, TILE + 3), (4, PAR_MIN / 8 + 5)] {
        for risky in [false, true] {
            let cols = 8;
            let mut rng = TestRng::new(seed * 2 + risky as u64);
            let (xv, yv) = (
                mixed_ints(&mut rng, rows * cols, risky),
                mixed_ints(&mut rng, cols, risky),
            );
            let x = ints(&[rows, cols], xv.clone());
            let y = ints(&[1, cols], yv.clone());
            for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul] {
                let want = exact(op, &xv, &yv, rows, cols).map(HostBuffer::I64);
                overflowed += want.is_err() as usize;
                cases += 1;
                assert_eq!(
                    same(op.name(), || x.binary(op, &y)),
                    want,
                    "{op:?} rows {rows}"
                );
            }
            // A chain: (x + y) * y, then neg. The first op that overflows
            // anywhere is the error, at its first position, fused or not.
            let sum = exact(BinaryOp::Add, &xv, &yv, rows, cols);
            let want = sum.and_then(|s| exact(BinaryOp::Mul, &s, &yv, rows, cols));
            let got = same("chain", || (x.add(&y)?.mul(&y))?.unary(UnaryOp::Neg));
            match want {
                Err(e) => assert_eq!(got, Err(e), "chain rows {rows}"),
                Ok(p) => {
                    let neg: Result<Vec<i64>> = p
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| {
                            v.checked_neg().ok_or_else(|| Error::IntegerOverflow {
                                op: "neg",
                                what: format!("-({v}) at index {i} is {}", -i128::from(v)),
                            })
                        })
                        .collect();
                    assert_eq!(got, neg.map(HostBuffer::I64), "chain rows {rows}");
                }
            }
        }
    }
    assert!(
        overflowed > 2 && overflowed < cases,
        "{overflowed} of {cases} overflowed"
    );
}

#[test]
fn random_sums_are_exact() {
    for (seed, rows, cols) in [
        (5u64, 3usize, 4usize),
        (6, TILE + 1, 3),
        (7, 2, PAR_MIN + 9),
    ] {
        let mut rng = TestRng::new(seed);
        let v = mixed_ints(&mut rng, rows * cols, true);
        let x = ints(&[rows, cols], v.clone());
        let total: i128 = v.iter().map(|&a| i128::from(a)).sum();
        let want = i64::try_from(total).map(|t| HostBuffer::I64(vec![t]));
        let got = same("sum", || x.sum());
        match want {
            Ok(w) => assert_eq!(got, Ok(w)),
            Err(_) => assert_eq!(
                got.unwrap_err().to_string().split(" (").next().unwrap(),
                format!(
                    "sum: i64 overflow: the sum of {} values is {total}",
                    rows * cols
                )
            ),
        }
        let mean = same("mean", || x.mean()).unwrap();
        assert_eq!(
            mean,
            HostBuffer::F64(vec![total as f64 / (rows * cols) as f64])
        );
        // Column sums: exact where they fit, else the first column that does not.
        let cols_exact: Vec<i128> = (0..cols)
            .map(|c| {
                v[c * rows..(c + 1) * rows]
                    .iter()
                    .map(|&a| i128::from(a))
                    .sum()
            })
            .collect();
        let got = same("col sums", || x.sum_axis(0));
        match cols_exact.iter().position(|&t| i64::try_from(t).is_err()) {
            None => assert_eq!(
                got,
                Ok(HostBuffer::I64(
                    cols_exact.iter().map(|&t| t as i64).collect()
                ))
            ),
            Some(c) => assert!(
                got.as_ref().unwrap_err().to_string().contains(&format!(
                    "the sum along axis 0 at result index {c} (of {rows} values) is {}",
                    cols_exact[c]
                )),
                "{got:?}"
            ),
        }
        // Small values: cumsum equals the running i128 totals.
        let small: Vec<i64> = v.iter().map(|a| a % 1000).collect();
        let s = ints(&[rows, cols], small.clone());
        let mut acc = 0i64;
        let run: Vec<i64> = small
            .iter()
            .map(|a| {
                acc += a;
                acc
            })
            .collect();
        assert_eq!(same("cumsum", || s.cumsum()), Ok(HostBuffer::I64(run)));
    }
}

/// Registers a simulated GPU that does not detect integer overflow; drops it
/// (and restores the options) at the end.
struct NoChecks {
    _guard: std::sync::MutexGuard<'static, ()>,
    saved: RuntimeOptions,
}

impl Drop for NoChecks {
    fn drop(&mut self) {
        unregister_backend("simint");
        set_options(self.saved.clone());
    }
}

#[test]
fn a_backend_that_does_not_detect_overflow_gets_no_risky_i64_work() {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let saved = set_options(RuntimeOptions {
        quiet: true,
        ..RuntimeOptions::default()
    });
    let _fx = NoChecks {
        _guard: guard,
        saved,
    };
    SimulatedBackend::new("simint")
        .with_capabilities(Capabilities {
            integer_overflow_checks: false,
            ..Capabilities::everything()
        })
        .register();
    let mut rng = TestRng::new(9);
    let xi = ints(&[300, 200], mixed_ints(&mut rng, 60_000, false));
    let xf = Array::from_vec([300, 200], rng.vec(60_000, -2.0, 2.0))
        .and_then(|a| a.with_precision(Precision::Fast))
        .unwrap();
    let plan = |a: Result<Array>| backend_plan(&a.unwrap()).unwrap();
    for (what, a, risk) in [
        ("add", xi.add(&xi), "i64 add"),
        ("mul", &xi * 3.0, "i64 mul"),
        ("neg", xi.neg(), "i64 neg"),
        ("sum", xi.sum(), "i64 sum"),
        ("cumsum", xi.cumsum(), "i64 cumsum"),
        ("astype", xf.astype(DType::I64), "astype from f64 to i64"),
    ] {
        let p = plan(a);
        assert_eq!(p.chosen, "cpu", "{what}");
        let why = p.suggestions.join(" ");
        assert!(
            why.contains(&format!(
                "{risk} can overflow, which is an error; simint neither"
            )) && why.contains("neither detects i64 overflow nor totals i64 exactly"),
            "{what}: {why}"
        );
    }
    // An i64 mean divides the exact total: a float64 accumulator would lose
    // it past 2^53 (the mean of [2^60 + 1, -2^60] is 0.5, not 0).
    for (what, a) in [("mean", xi.mean()), ("col mean", xi.mean_axis(0))] {
        let p = plan(a);
        assert_eq!(p.chosen, "cpu", "{what}");
        let why = p.suggestions.join(" ");
        assert!(
            why.contains("i64 mean divides the exact integer total, which float64 rounds past 2^53; simint neither"),
            "{what}: {why}"
        );
    }
    let big = ints(&[2], vec![(1 << 60) + 1, -(1 << 60)]);
    assert_eq!(big.mean().unwrap().item().unwrap(), 0.5);
    // i64 work that cannot overflow, and float work, still go to the device.
    for (what, a) in [
        ("minimum", xi.minimum(&xi)),
        ("max", xi.max()),
        ("f64 mean", xf.mean()),
        ("compare", xi.gt_scalar(0.0)),
        ("bool sum", xi.gt_scalar(0.0).and_then(|b| b.sum())),
        ("f64 add", xf.add(&xf)),
    ] {
        assert_eq!(plan(a).chosen, "simint", "{what}");
    }
}
