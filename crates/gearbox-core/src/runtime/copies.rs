//! The copies a `slice` or `concat` makes, as plain data, for every
//! backend to issue in the forms its API has (one linear copy, a 2-D copy,
//! a copy per row, a kernel).
//!
//! Storage is column-major, so around an axis an array is `(inner, len,
//! outer)`: `outer` contiguous blocks of `len * inner` values. A slice
//! `start..end` is one strided copy of `outer` rows of `(end - start) *
//! inner` values read at a pitch of `len * inner`; a concat is one such copy
//! per input, written at the input's offset inside each output block (an
//! input's dimensions past its last count as 1).

use crate::dtype::DType;
use crate::runtime::backend::DeviceBuffer;
use crate::shape::Shape;

/// One strided copy, in bytes: `rows` rows of `width` bytes, row `k` read at
/// `src + k * src_pitch` and written at `dst + k * dst_pitch` (offsets from
/// the start of the source and destination buffers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockCopy {
    /// Offset of the first row in the source.
    pub src: usize,
    /// Distance between rows in the source.
    pub src_pitch: usize,
    /// Offset of the first row in the destination.
    pub dst: usize,
    /// Distance between rows in the destination.
    pub dst_pitch: usize,
    /// Bytes per row.
    pub width: usize,
    /// Number of rows.
    pub rows: usize,
}

impl BlockCopy {
    /// Whether the copy moves nothing (no rows or empty rows).
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.rows == 0
    }

    /// Whether the rows lie back to back on both sides (or there is one),
    /// so that the copy is one run of `width * rows` bytes.
    pub fn is_linear(&self) -> bool {
        self.rows == 1 || (self.src_pitch == self.width && self.dst_pitch == self.width)
    }

    /// Carries out the copy on host bytes, row by row: the reference every
    /// backend's way of issuing it must agree with.
    pub fn apply(&self, src: &[u8], dst: &mut [u8]) {
        for k in 0..self.rows {
            let (s, d) = (self.src + k * self.src_pitch, self.dst + k * self.dst_pitch);
            dst[d..d + self.width].copy_from_slice(&src[s..s + self.width]);
        }
    }

    /// One past the last byte read (0 when nothing is).
    pub fn src_end(&self) -> usize {
        match self.rows {
            0 => 0,
            r => self.src + (r - 1) * self.src_pitch + self.width,
        }
    }

    /// One past the last byte written (0 when nothing is).
    pub fn dst_end(&self) -> usize {
        match self.rows {
            0 => 0,
            r => self.dst + (r - 1) * self.dst_pitch + self.width,
        }
    }
}

/// The copy that takes `start..end` along `axis` of an array of `shape`
/// whose elements are `elem` bytes (`axis < shape.ndim()`, `start <= end
/// <= shape.dim(axis)`).
pub fn slice_copies(
    shape: &Shape,
    axis: usize,
    start: usize,
    end: usize,
    elem: usize,
) -> BlockCopy {
    let (inner, len, outer) = shape.split_at_axis(axis);
    let width = (end - start) * inner * elem;
    BlockCopy {
        src: start * inner * elem,
        src_pitch: len * inner * elem,
        dst: 0,
        dst_pitch: width,
        width,
        rows: outer,
    }
}

/// The copies that join inputs of shapes `parts` along `axis` into an
/// array of shape `out` (elements of `elem` bytes, `axis < out.ndim()`),
/// one per input in order. An input's dimensions past its last count as 1.
pub fn concat_copies(out: &Shape, axis: usize, parts: &[&Shape], elem: usize) -> Vec<BlockCopy> {
    let (inner, total, outer) = out.split_at_axis(axis);
    let dst_pitch = total * inner * elem;
    let mut offset = 0;
    parts
        .iter()
        .map(|s| {
            let width = s.dim(axis) * inner * elem;
            let c = BlockCopy {
                src: 0,
                src_pitch: width,
                dst: offset,
                dst_pitch,
                width,
                rows: outer,
            };
            offset += width;
            c
        })
        .collect()
}

/// A buffer as the copy checks see it: its length, dtype and the shape it
/// is said to hold.
pub type Described<'a> = (usize, DType, &'a Shape);

/// A device buffer and the shape it is said to hold, as the checks see
/// them (here and in [`super::gemm_shapes`]).
pub fn described<'a, B: DeviceBuffer + ?Sized>((buf, shape): (&B, &'a Shape)) -> Described<'a> {
    (buf.len(), buf.dtype(), shape)
}

/// Why `x` cannot be sliced to `start..end` along `axis` into a result of
/// shape and dtype `out` (the dtype kept, the buffer holding its shape, the
/// range inside the axis, the result's size matching), if it cannot.
pub fn check_slice(
    x: Described<'_>,
    (axis, start, end): (usize, usize, usize),
    (out_shape, dtype): (&Shape, DType),
) -> std::result::Result<(), String> {
    check_part(x, dtype)?;
    let shape = x.2;
    let fits = axis < shape.ndim() && start <= end && end <= shape.dim(axis) && {
        let (inner, _, outer) = shape.split_at_axis(axis);
        out_shape.numel() == inner * (end - start) * outer
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "{start}..{end} on axis {axis} of a {shape} array into a {out_shape} result"
        ))
    }
}

/// Why `parts` cannot be joined along `axis` into a result of shape and
/// dtype `out`, if they cannot.
pub fn check_concat(
    parts: &[Described<'_>],
    axis: usize,
    (out_shape, dtype): (&Shape, DType),
) -> std::result::Result<(), String> {
    if axis >= out_shape.ndim() {
        return Err(format!("axis {axis} of a {out_shape} result"));
    }
    let (inner, total, outer) = out_shape.split_at_axis(axis);
    let mut along = 0;
    for &part in parts {
        check_part(part, dtype)?;
        let s = part.2;
        if s.numel() != inner * s.dim(axis) * outer {
            return Err(format!(
                "a {s} part does not fit a {out_shape} result along axis {axis}"
            ));
        }
        along += s.dim(axis);
    }
    if along != total {
        return Err(format!(
            "{} parts of {along} positions along axis {axis} cannot fill a {out_shape} result",
            parts.len()
        ));
    }
    Ok(())
}

/// Why `x` cannot be gathered at the `n` positions of an `idx` buffer
/// (`len` and dtype) along `axis` into a result of shape and dtype `out`
/// (the dtype kept, the buffer holding its shape, `i64` positions, the
/// result's shape `x`'s with `n` along the axis), if it cannot.
pub fn check_take(
    x: Described<'_>,
    idx: (usize, DType),
    axis: usize,
    (out_shape, dtype): (&Shape, DType),
) -> std::result::Result<(), String> {
    check_part(x, dtype)?;
    let (shape, (n, idx_dtype)) = (x.2, idx);
    if idx_dtype != DType::I64 {
        return Err(format!("positions are i64, not {idx_dtype}"));
    }
    if axis >= shape.ndim() || *out_shape != shape.with_dim(axis, n) {
        return Err(format!(
            "{n} positions along axis {axis} of a {shape} array into a {out_shape} result"
        ));
    }
    Ok(())
}

/// The entry points of the CUDA and OpenCL gathers ([`take_launch`]
/// picks one): by bytes per element, with 64-bit index arithmetic and
/// with 32-bit (`gb_take32_*`, cheaper).
pub const TAKE_ENTRIES: [&str; 6] = [
    "gb_take_1",
    "gb_take_4",
    "gb_take_8",
    "gb_take32_1",
    "gb_take32_4",
    "gb_take32_8",
];

/// The gather a CUDA or OpenCL take launches for `n` positions along
/// `axis` of a `shape` array of `dtype`: its entry point (`gb_take_<bytes
/// per element>`, or `gb_take32_<bytes>` with 32-bit index arithmetic
/// where the input and the result hold fewer than 2^31 values) and its
/// arguments (values per run, positions along the axis, positions taken,
/// values written).
pub fn take_launch(shape: &Shape, axis: usize, n: usize, dtype: DType) -> (String, [i64; 4]) {
    let (inner, len, outer) = shape.split_at_axis(axis);
    let total = outer * n * inner;
    let width = if shape.numel().max(total) < 1 << 31 {
        "32"
    } else {
        ""
    };
    (
        format!("gb_take{width}_{}", dtype.size_bytes()),
        [inner as i64, len as i64, n as i64, total as i64],
    )
}

/// Why a buffer of `len` elements of `have` cannot stand for its shape in
/// a copy to `dtype`, if it cannot.
fn check_part((len, have, shape): Described<'_>, dtype: DType) -> std::result::Result<(), String> {
    if have != dtype {
        return Err(format!(
            "copies keep the dtype: a {have} input for a {dtype} result"
        ));
    }
    if len != shape.numel() {
        return Err(format!("a buffer of {len} elements for a {shape} input"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_are_checked_and_launched_by_size() {
        let m = Shape::new(vec![1000, 30]);
        let out = Shape::new(vec![7, 30]);
        let x: Described<'_> = (30_000, DType::F32, &m);
        assert_eq!(
            check_take(x, (7, DType::I64), 0, (&out, DType::F32)),
            Ok(())
        );
        assert!(check_take(x, (7, DType::F64), 0, (&out, DType::F32)).is_err());
        assert!(check_take(x, (8, DType::I64), 0, (&out, DType::F32)).is_err());
        assert!(check_take(x, (7, DType::I64), 2, (&out, DType::F32)).is_err());
        assert!(check_take(x, (7, DType::I64), 0, (&out, DType::F64)).is_err());
        assert_eq!(
            take_launch(&m, 0, 7, DType::F64),
            ("gb_take32_8".to_string(), [1, 1000, 7, 210])
        );
        assert_eq!(
            take_launch(&m, 1, 2, DType::Bool),
            ("gb_take32_1".to_string(), [1000, 30, 2, 2000])
        );
        let long = Shape::new(vec![1 << 31]);
        assert_eq!(take_launch(&long, 0, 3, DType::F32).0, "gb_take_4");
    }
    use crate::Array;

    fn counting(dims: &[usize], from: i64) -> (Array, Vec<u8>) {
        let n: usize = dims.iter().product();
        let v: Vec<i64> = (from..from + n as i64).collect();
        let bytes = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        (Array::from_vec(dims.to_vec(), v).unwrap(), bytes)
    }

    fn values(bytes: &[u8]) -> Vec<i64> {
        bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn slices_and_joins_match_the_cpu() {
        for dims in [&[7][..], &[5, 6], &[3, 4, 5], &[4, 0, 2]] {
            let (x, bytes) = counting(dims, 0);
            for axis in 0..dims.len() {
                let len = dims[axis];
                for (a, b) in [(0, len), (0, 0), (len / 2, len)] {
                    let want = x.slice(axis, a..b).unwrap().to_vec::<i64>().unwrap();
                    let c = slice_copies(x.shape(), axis, a, b, 8);
                    assert!(c.src_end() <= bytes.len());
                    let mut out = vec![0u8; want.len() * 8];
                    c.apply(&bytes, &mut out);
                    assert_eq!(values(&out), want, "{dims:?} axis {axis} {a}..{b}");
                }
            }
        }
        let (m, mb) = counting(&[3, 2], 0);
        let (v, vb) = counting(&[3], 100);
        let joined = Array::cbind(&[&m, &v]).unwrap();
        let copies = concat_copies(joined.shape(), 1, &[m.shape(), v.shape()], 8);
        let mut out = vec![0u8; 9 * 8];
        copies[0].apply(&mb, &mut out);
        copies[1].apply(&vb, &mut out);
        assert!(copies[1].dst_end() <= out.len());
        assert_eq!(values(&out), joined.to_vec::<i64>().unwrap());
    }
}
