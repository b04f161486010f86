//! Integer semantics: i64 arithmetic never wraps and conversion to i64 never
//! saturates. This module owns that rule, the checks every CPU path shares,
//! the error messages, and the exact integer reductions.
//!
//! # The rule
//!
//! An i64 result that i64 cannot hold is an error,
//! [`Error::IntegerOverflow`], that names the op, the position (the
//! column-major index in the op's result) and the operands, never a wrapped
//! or saturated value. R gives NA with a warning there; Gearbox has no NA
//! for i64, so it stops instead.
//!
//! | op on i64 | computed | an error when |
//! | --- | --- | --- |
//! | `add` `sub` `mul` | checked | the exact result is outside i64 |
//! | `neg` `abs` | checked | the operand is `i64::MIN` |
//! | `sum` | exactly, in i128 | the exact total is outside i64 (in any order: partial sums never overflow) |
//! | `cumsum` | exactly, in i128 | a running total is outside i64 |
//! | `astype(I64)` of f32/f64 | truncated toward zero | the value is NaN, infinite or outside `[-2^63, 2^63)` |
//!
//! Never an error: `mean` (the exact i128 total divided once in f64),
//! `min` `max` `argmin` `argmax` (exact in i64, not rounded through f64),
//! `sign` `floor` `ceil` `round`, `minimum` `maximum`, comparisons. `div`,
//! `pow`, `prod`, `cumprod`, `var`, `sd`, math functions and matrix
//! products compute integers in f64, as R does.
//!
//! Fused and op-by-op evaluation report the same error: the fused CPU
//! executor, on an overflow, reruns the kernel node by node over the whole
//! iteration space, which finds the first offending op and position as
//! op-by-op evaluation does. A backend that does not detect overflow in its
//! kernels (CUDA's do not) declares so in its capabilities; work whose i64
//! results can overflow, and i64 `mean` (exact only with an integer total),
//! ([`overflow_risk`]) then runs on the CPU, and `explain` says why.

use rayon::prelude::*;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::{Expr, KernelIr};
use crate::ops::binary::BinaryOp;
use crate::ops::reduce::ReduceOp;
use crate::ops::unary::UnaryOp;

/// `2^63`, the first f64 above i64's range (`-2^63` is the last in it).
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// Whether `x` truncated toward zero is an i64: false for NaN, infinities
/// and values outside `[-2^63, 2^63)`.
#[inline(always)]
pub(crate) fn fits_i64(x: f64) -> bool {
    (-TWO_63..TWO_63).contains(&x)
}

/// The first value of `x` that [`fits_i64`] rejects, with its position.
pub(crate) fn first_unfit<T: Copy + Into<f64> + Sync>(x: &[T]) -> Option<(usize, f64)> {
    let bad = |v: &T| !fits_i64((*v).into());
    let i = if super::loops::worth_parallel(x.len(), 1) {
        x.par_iter().position_first(bad)?
    } else {
        x.iter().position(bad)?
    };
    Some((i, x[i].into()))
}

/// `buf` converted to `dtype` by [`HostBuffer::cast`], after checking that
/// every float converted to i64 has an i64 value.
pub(crate) fn checked_cast(buf: &HostBuffer, dtype: DType) -> Result<HostBuffer> {
    if dtype == DType::I64 {
        let bad = match buf {
            HostBuffer::F64(v) => first_unfit(v),
            HostBuffer::F32(v) => first_unfit(v),
            _ => None,
        };
        if let Some((i, v)) = bad {
            return Err(cast_error(buf.dtype(), v, i));
        }
    }
    buf.cast(dtype)
}

/// A negative operand in parentheses, so `5 - (-3)` reads right.
fn operand(v: i64) -> String {
    if v < 0 {
        format!("({v})")
    } else {
        v.to_string()
    }
}

/// The error for `astype(I64)` of `value` (of dtype `from`) at `index`.
pub(crate) fn cast_error(from: DType, value: f64, index: usize) -> Error {
    let why = if value.is_finite() {
        "is outside that range"
    } else {
        "has no i64 value"
    };
    Error::IntegerOverflow {
        op: "astype",
        what: format!("{from} value {value:e} at index {index} {why}"),
    }
}

/// The error for `x op y` overflowing at `index`, with the exact result.
pub(crate) fn binary_error(op: BinaryOp, x: i64, y: i64, index: usize) -> Error {
    let (a, b) = (i128::from(x), i128::from(y));
    let (sym, exact) = match op {
        BinaryOp::Add => ("+", a + b),
        BinaryOp::Sub => ("-", a - b),
        _ => ("*", a * b),
    };
    Error::IntegerOverflow {
        op: op.name(),
        what: format!(
            "{} {sym} {} at index {index} is {exact}",
            operand(x),
            operand(y)
        ),
    }
}

/// The error for `op(x)` overflowing at `index` (`neg` or `abs` of
/// `i64::MIN`).
pub(crate) fn unary_error(op: UnaryOp, x: i64, index: usize) -> Error {
    let exact = -i128::from(x);
    let expr = match op {
        UnaryOp::Neg => format!("-{}", operand(x)),
        _ => format!("abs({x})"),
    };
    Error::IntegerOverflow {
        op: op.name(),
        what: format!("{expr} at index {index} is {exact}"),
    }
}

/// The error for a sum of `count` values that is `total`: over all
/// elements, or lane `lane` (the index in the result) along `axis`.
pub(crate) fn sum_error(axis: Option<usize>, lane: usize, count: usize, total: i128) -> Error {
    let what = match axis {
        None => format!("the sum of {count} values is {total}"),
        Some(a) => {
            format!("the sum along axis {a} at result index {lane} (of {count} values) is {total}")
        }
    };
    Error::IntegerOverflow { op: "sum", what }
}

/// Exact totals as i64, or the error for the first that is outside i64.
pub(crate) fn narrow_sums(totals: &[i128], axis: Option<usize>, count: usize) -> Result<Vec<i64>> {
    totals
        .iter()
        .enumerate()
        .map(|(lane, &t)| i64::try_from(t).map_err(|_| sum_error(axis, lane, count, t)))
        .collect()
}

/// Running totals (of a cumulative sum) as i64, or the error for the first
/// position whose total is outside i64.
pub(crate) fn narrow_running_sums(totals: &[i128]) -> Result<Vec<i64>> {
    totals
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            i64::try_from(t).map_err(|_| Error::IntegerOverflow {
                op: "cumsum",
                what: format!("the running sum at index {i} is {t}"),
            })
        })
        .collect()
}

/// What in `kernel` needs the CPU's integer semantics, as a clause that
/// says why: an i64 result that can overflow (`"i64 add can overflow,
/// which is an error"`, `"astype from f64 to i64 can overflow, ..."`), or
/// an i64 `mean`, whose exact integer total a float64 accumulator rounds
/// once values pass 2^53, or an i64 `argmin`/`argmax`, whose comparisons
/// a float64 accumulator rounds alike. The first such node, else the
/// reduction; `None` when nothing needs them.
pub fn overflow_risk(kernel: &KernelIr) -> Option<String> {
    let overflows = |what: String| Some(format!("{what} can overflow, which is an error"));
    let nodes = kernel.nodes();
    for node in nodes {
        if node.dtype != DType::I64 {
            continue;
        }
        match node.expr {
            Expr::Binary(op @ (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul), _, _) => {
                return overflows(format!("i64 {}", op.name()))
            }
            Expr::Unary(op @ (UnaryOp::Neg | UnaryOp::Abs), _) => {
                return overflows(format!("i64 {}", op.name()))
            }
            Expr::Cast(a) if nodes[a].dtype.is_float() => {
                return overflows(format!("astype from {} to i64", nodes[a].dtype))
            }
            _ => {}
        }
    }
    let r = kernel.reduce()?;
    if nodes[r.node].dtype != DType::I64 {
        return None;
    }
    match r.op {
        ReduceOp::Sum if r.dtype == DType::I64 => overflows("i64 sum".into()),
        ReduceOp::Mean => {
            Some("i64 mean divides the exact integer total, which float64 rounds past 2^53".into())
        }
        ReduceOp::ArgMin | ReduceOp::ArgMax => Some(format!(
            "i64 {} compares exact integers, which float64 rounds past 2^53",
            r.op.name()
        )),
        _ => None,
    }
}

/// Lanes longer than this are summed in parallel chunks.
const PAR_LANE: usize = 1 << 16;

/// A reduction of i64 values computed exactly in integers: the `inner *
/// outer` lanes of the `(inner, len, outer)` layout, lane `i + inner * o`
/// reading `x[i + inner * (k + len * o)]`. `sum` and `mean` total each lane
/// in i128; `min`, `max`, `argmin`, `argmax` compare i64 values. `None` for
/// the reductions whose result is a float computed in f64 (`prod`, `var`,
/// `sd`) and for `any`/`all`.
pub(crate) fn reduce_i64(
    op: ReduceOp,
    x: &[i64],
    layout: (usize, usize, usize),
    axis: Option<usize>,
) -> Result<Option<HostBuffer>> {
    let (inner, len, outer) = layout;
    let lanes = inner * outer;
    let at = |l: usize, k: usize| x[l % inner + (l / inner) * inner * len + k * inner];
    let per_lane = |f: &(dyn Fn(usize) -> i128 + Sync)| -> Vec<i128> {
        if lanes > 1 && super::loops::worth_parallel(lanes * len, 1) {
            (0..lanes).into_par_iter().map(f).collect()
        } else {
            (0..lanes).map(f).collect()
        }
    };
    let total = |l: usize| -> i128 {
        if lanes == 1 && len >= PAR_LANE {
            x.par_chunks(PAR_LANE)
                .map(|c| c.iter().map(|&v| i128::from(v)).sum::<i128>())
                .sum()
        } else {
            (0..len).map(|k| i128::from(at(l, k))).sum()
        }
    };
    Ok(Some(match op {
        ReduceOp::Sum => HostBuffer::I64(narrow_sums(&per_lane(&total), axis, len)?),
        ReduceOp::Mean => HostBuffer::F64(
            per_lane(&total)
                .into_iter()
                .map(|t| t as f64 / len as f64)
                .collect(),
        ),
        ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMin | ReduceOp::ArgMax => {
            let best = |l: usize| -> i128 {
                let mut arg = 0;
                for k in 1..len {
                    let (v, b) = (at(l, k), at(l, arg));
                    if matches!(op, ReduceOp::Min | ReduceOp::ArgMin) && v < b
                        || matches!(op, ReduceOp::Max | ReduceOp::ArgMax) && v > b
                    {
                        arg = k;
                    }
                }
                match op {
                    ReduceOp::Min | ReduceOp::Max => i128::from(at(l, arg)),
                    _ => arg as i128,
                }
            };
            // Every value is an i64 or a position: the narrowing is exact.
            HostBuffer::I64(per_lane(&best).into_iter().map(|v| v as i64).collect())
        }
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_i64_range_in_floats() {
        assert!(fits_i64(-TWO_63));
        assert!(fits_i64(TWO_63 - 1024.0)); // the largest f64 below 2^63
        assert!(fits_i64(-0.9) && fits_i64(0.9));
        for bad in [
            TWO_63,
            -TWO_63 - 2048.0,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            1e300,
        ] {
            assert!(!fits_i64(bad), "{bad}");
        }
        assert_eq!(
            first_unfit(&[1.0f32, 2.0, f32::NAN, 1e30]).map(|p| p.0),
            Some(2)
        );
        assert_eq!(first_unfit(&[1.0f64, -3.5]), None);
    }

    #[test]
    fn messages_give_the_exact_result() {
        let e = binary_error(BinaryOp::Sub, i64::MIN, 1, 4).to_string();
        assert!(
            e.starts_with(
                "sub: i64 overflow: (-9223372036854775808) - 1 at index 4 is -9223372036854775809"
            ),
            "{e}"
        );
        let e = unary_error(UnaryOp::Abs, i64::MIN, 0).to_string();
        assert!(
            e.contains("abs(-9223372036854775808) at index 0 is 9223372036854775808"),
            "{e}"
        );
        let e = cast_error(DType::F64, f64::NAN, 3).to_string();
        assert!(
            e.starts_with("astype: i64 overflow: f64 value NaN at index 3 has no i64 value"),
            "{e}"
        );
    }

    #[test]
    fn integer_reductions_are_exact() {
        // 2^53 + 1 is not an f64: min, max and sums must not round through f64.
        let big = (1i64 << 53) + 1;
        let x = [big, big + 2, i64::MAX, -1];
        let r = |op| reduce_i64(op, &x, (1, 4, 1), None).unwrap().unwrap();
        assert_eq!(r(ReduceOp::Min), HostBuffer::I64(vec![-1]));
        assert_eq!(r(ReduceOp::ArgMax), HostBuffer::I64(vec![2]));
        let e = reduce_i64(ReduceOp::Sum, &x, (1, 4, 1), None).unwrap_err();
        assert!(matches!(e, Error::IntegerOverflow { op: "sum", .. }), "{e}");
        // A 2 x 2 matrix summed along axis 0: [big + (big + 2), MAX + (-1)].
        let s = reduce_i64(ReduceOp::Sum, &x, (1, 2, 2), Some(0))
            .unwrap()
            .unwrap();
        assert_eq!(s, HostBuffer::I64(vec![2 * big + 2, i64::MAX - 1]));
        assert_eq!(
            reduce_i64(ReduceOp::Prod, &x, (1, 4, 1), None).unwrap(),
            None
        );
    }
}
