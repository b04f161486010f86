//! How the GPU backends lay out a scan (`cumsum`, `cumprod`) library call:
//! the lanes around the scanned axis, how a lane is cut into pieces for
//! the three-phase chunked scan (fold pieces to totals, carry the totals
//! into prefixes, rescan each piece from its prefix), and the checks of
//! the input every backend makes, as plain data and messages: each
//! backend turns a refusal into its own error (the runtime then reruns
//! the scan on the CPU); and how running values are kept
//! ([`Accumulation`]).
//!
//! Storage is column-major, so an array is seen as `(inner, len, outer)`
//! around the scanned axis (the flattening is `(1, n, 1)`): `inner *
//! outer` lanes of `len` values, lane `(i, o)` reading `x[i + inner * (k +
//! len * o)]`.

use crate::dtype::DType;
use crate::shape::Shape;

/// How a device scan keeps its running values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accumulation {
    /// In double (needs 64-bit floats on the device), as on the CPU, rounded
    /// to the result dtype when written.
    Double,
    /// In float, sums with Kahan–Neumaier compensation (f32 data only).
    Compensated,
}

impl Accumulation {
    /// The accumulation of a device with (`f64`) or without 64-bit floats.
    pub fn of(f64: bool) -> Accumulation {
        if f64 {
            Accumulation::Double
        } else {
            Accumulation::Compensated
        }
    }

    /// Its name in program keys: `double` or `compensated`.
    pub fn name(self) -> &'static str {
        match self {
            Accumulation::Double => "double",
            Accumulation::Compensated => "compensated",
        }
    }
}

/// The fewest values a piece of the chunked scan holds.
pub const MIN_PIECE: usize = 64;

/// Lanes enough to fill a large GPU with one work-item each (an H200 keeps
/// about 270,000 threads resident): from this many on, lanes are never
/// cut, so the scan is one pass over the data (a piece per lane needs no
/// totals), where cutting them would read the data twice for parallelism
/// the device does not lack (along the rows of a 10^6 x 128 matrix).
pub const ONE_PASS_LANES: usize = 1 << 18;

/// Pieces per lane for `lanes` lanes of `len` values: one from
/// [`ONE_PASS_LANES`] lanes on; else enough for about 2^20 work-items (one
/// per piece), at least [`MIN_PIECE`] values each, at least one.
pub fn chunks_for(lanes: usize, len: usize) -> usize {
    if lanes >= ONE_PASS_LANES {
        return 1;
    }
    let want = (1usize << 20).div_ceil(lanes.max(1));
    want.min(len.div_ceil(MIN_PIECE)).max(1)
}

/// `(chunks, chunk_len)`: [`chunks_for`]'s cut of `lanes` lanes of `len`
/// values into pieces of equal length but the last, none empty.
pub fn pieces(lanes: usize, len: usize) -> (usize, usize) {
    let chunk_len = len.div_ceil(chunks_for(lanes, len));
    (len.div_ceil(chunk_len.max(1)), chunk_len)
}

/// `(inner, len, outer)` of `shape` around `axis` (the flattening for
/// `None`), or why `axis` is not one of the shape's.
pub fn lanes(shape: &Shape, axis: Option<usize>) -> Result<(usize, usize, usize), String> {
    match axis {
        None => Ok((1, shape.numel(), 1)),
        Some(a) if a < shape.ndim() => Ok(shape.split_at_axis(a)),
        Some(a) => Err(format!("axis {a} of a {shape} array")),
    }
}

/// Why a device scan cannot take `have` data into a `dtype` result (it
/// takes float data of the result dtype), if it cannot.
pub fn check_dtype(have: DType, dtype: DType) -> Result<(), String> {
    if !matches!(dtype, DType::F32 | DType::F64) || have != dtype {
        return Err(format!(
            "the device scan takes float data of the result dtype, not {have} -> {dtype}"
        ));
    }
    Ok(())
}

/// Why a buffer of `len` elements cannot hold a `shape` input scanned into
/// an `out` result (all three the same size), if it cannot.
pub fn check_len(len: usize, shape: &Shape, out: &Shape) -> Result<(), String> {
    let n = shape.numel();
    if len != n || out.numel() != n {
        return Err(format!(
            "a buffer of {len} elements for a {shape} input and a {out} result"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_long_lanes_in_parallel() {
        // One long lane: about 2^20 / 64 pieces of 64, or 2^20 of more.
        assert_eq!(chunks_for(1, 100_003), 1563);
        assert_eq!(chunks_for(1, 1 << 30), 1 << 20);
        // Many lanes: one piece each (a single pass), even where 2^20
        // work-items would want two.
        assert_eq!(chunks_for(1 << 20, 1000), 1);
        assert_eq!(chunks_for(1_000_000, 128), 1);
        assert_eq!(chunks_for(ONE_PASS_LANES - 1, 1000), 5);
        assert_eq!(chunks_for(5, 0), 1);
        assert_eq!(chunks_for(0, 10), 1);
        // Few values: never empty pieces.
        for (lanes, len) in [(1usize, 1usize), (3, 65), (1000, 257), (7, 100_003)] {
            let chunk_len = len.div_ceil(chunks_for(lanes, len));
            let chunks = len.div_ceil(chunk_len);
            assert!((chunks - 1) * chunk_len < len && chunks * chunk_len >= len);
            assert_eq!(pieces(lanes, len), (chunks, chunk_len));
        }
        assert_eq!(pieces(1, 100_003), (1563, 64));
    }

    #[test]
    fn lanes_and_checks_refuse_what_does_not_fit() {
        let s = Shape::new(vec![7, 9, 11]);
        assert_eq!(lanes(&s, None), Ok((1, 693, 1)));
        assert_eq!(lanes(&s, Some(1)), Ok((7, 9, 11)));
        assert!(lanes(&s, Some(3)).unwrap_err().contains("axis 3"));
        assert!(check_dtype(DType::F64, DType::F64).is_ok());
        let e = check_dtype(DType::I64, DType::I64).unwrap_err();
        assert!(
            e.contains("float data of the result dtype, not i64 -> i64"),
            "{e}"
        );
        assert!(check_dtype(DType::F32, DType::F64).is_err());
        assert!(check_len(693, &s, &Shape::new(vec![693])).is_ok());
        let e = check_len(692, &s, &s).unwrap_err();
        assert!(e.contains("a buffer of 692 elements"), "{e}");
    }
}
