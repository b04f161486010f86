//! The copies a `slice`, `concat`, `take` or permute (transpose, flip)
//! makes, as plain data, for every backend to issue in the forms its API
//! has (one linear copy, a 2-D copy, a copy per row, a kernel).
//!
//! Storage is column-major, so around an axis an array is `(inner, len,
//! outer)`: `outer` contiguous blocks of `len * inner` values. A slice
//! `start..end` is one strided copy of `outer` rows of `(end - start) *
//! inner` values read at a pitch of `len * inner`; a concat is one such copy
//! per input, written at the input's offset inside each output block (an
//! input's dimensions past its last count as 1).

use crate::dtype::DType;
use crate::ops::permute::{AxisOrder, StridedCopy};
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
/// picks one): by bytes per moved word, with 64-bit index arithmetic and
/// with 32-bit (`gb_take32_*`, cheaper).
pub const TAKE_ENTRIES: [&str; 8] = [
    "gb_take_1",
    "gb_take_4",
    "gb_take_8",
    "gb_take_16",
    "gb_take32_1",
    "gb_take32_4",
    "gb_take32_8",
    "gb_take32_16",
];

/// The gather a CUDA or OpenCL take launches for `n` positions along
/// `axis` of a `shape` array of `dtype`: its entry point (`gb_take_<bytes
/// per word>`, or `gb_take32_<bytes>` with 32-bit index arithmetic where
/// the input and the result hold fewer than 2^31 values) and its
/// arguments (words per run, positions along the axis, positions taken,
/// words written).
///
/// A run of `inner` values (the values one position selects) moves in the
/// widest word of 16, 8 or 4 bytes that divides it, else value by value:
/// a take of whole columns moves 16 bytes a thread, not one value
/// (H200: 6000 columns of 6000 f32 values, 0.175 ms a value at a time,
/// half of copy bandwidth). Runs start at multiples of their length, so
/// the words are aligned.
pub fn take_launch(shape: &Shape, axis: usize, n: usize, dtype: DType) -> (String, [i64; 4]) {
    let (inner, len, outer) = shape.split_at_axis(axis);
    let values = outer * n * inner;
    let size = dtype.size_bytes();
    let run = inner * size;
    let word = [16, 8, 4]
        .into_iter()
        .find(|&w| w > size && run.is_multiple_of(w))
        .unwrap_or(size);
    let (inner, total) = (run / word, values * size / word);
    let width = if shape.numel().max(values) < 1 << 31 {
        "32"
    } else {
        ""
    };
    (
        format!("gb_take{width}_{word}"),
        [inner as i64, len as i64, n as i64, total as i64],
    )
}

/// Side of the square tiles a transposing permute moves through shared
/// (local, workgroup) memory, padded by one to avoid bank conflicts.
pub const PERMUTE_TILE: usize = 32;
/// Rows of threads per tile: a block of `PERMUTE_TILE x PERMUTE_TILE_ROWS`
/// threads (256), each moving `PERMUTE_TILE / PERMUTE_TILE_ROWS` elements
/// of a tile each way.
pub const PERMUTE_TILE_ROWS: usize = 8;
/// The most axes a device permute takes once merged ([`StridedCopy`]);
/// more (rare: only permutations that separate every neighbour of a
/// 9-D array) are declined and run on the CPU.
pub const PERMUTE_AXES: usize = 8;
/// Output axis 0 and the input's contiguous axis are moved in tiles when
/// both are at least this long; a shorter one makes most of a tile idle,
/// and the strided copy's reads then share cache lines anyway.
pub const PERMUTE_TILE_MIN: usize = 8;

/// The entry points of the CUDA and OpenCL permutes ([`permute_launch`]
/// picks one): the strided copy (`gb_permute`) and the tiled transpose
/// (`gb_transpose`), by bytes per element, with 64-bit index arithmetic
/// and with 32-bit (`..32_`, cheaper).
pub const PERMUTE_ENTRIES: [&str; 12] = [
    "gb_permute_1",
    "gb_permute_4",
    "gb_permute_8",
    "gb_permute32_1",
    "gb_permute32_4",
    "gb_permute32_8",
    "gb_transpose_1",
    "gb_transpose_4",
    "gb_transpose_8",
    "gb_transpose32_1",
    "gb_transpose32_4",
    "gb_transpose32_8",
];

/// How a device carries out a [`LibraryCall::Permute`](crate::ops::library::LibraryCall::Permute),
/// the same on every backend. Output element `o` (column-major over
/// `dims[..rank]`, in the order given here) reads input element `base +
/// sum_k o_k * istrides[k]` and is written at `sum_k o_k * ostrides[k]`.
///
/// - Strided (`tiled` false): the axes in output order, so output element
///   `o` is written at `o`; one thread per element (a grid-stride loop).
///   Used when output axis 0 reads the input's contiguous axis (flips,
///   permutations that keep axis 0 first), so reads and writes are both
///   coalesced, or when a tile would be mostly idle.
/// - Tiled (`tiled` true): axis 0 is output axis 0 (written contiguously,
///   `ostrides[0] == 1`), axis 1 the output axis that reads the input's
///   contiguous axis (`istrides[1] == ±1`), axes 2.. the batch. Each
///   block moves [`PERMUTE_TILE`]² tiles, `tiles` of them in all
///   (`ceil(dims[0] / 32) * ceil(dims[1] / 32) * batch`, tile `t` at
///   `(t % ta, (t / ta) % tb, t / (ta tb))`), reading rows along axis 1
///   and writing columns along axis 0 through a padded tile in shared
///   memory: coalesced both ways.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermuteLaunch {
    /// The entry point ([`PERMUTE_ENTRIES`]): `gb_permute` or
    /// `gb_transpose`, `32` for 32-bit index arithmetic (every index below
    /// 2^30), and the bytes per element.
    pub entry: String,
    /// Whether this is the tiled transpose.
    pub tiled: bool,
    /// Elements written.
    pub total: i64,
    /// The input element output element 0 reads.
    pub base: i64,
    /// Axes in use in the arrays below.
    pub rank: i64,
    /// Tiles to move (tiled), or 0.
    pub tiles: i64,
    /// Axis lengths (1 past `rank`).
    pub dims: [i64; PERMUTE_AXES],
    /// Input strides, negative where reversed (0 past `rank`).
    pub istrides: [i64; PERMUTE_AXES],
    /// Output strides (0 past `rank`).
    pub ostrides: [i64; PERMUTE_AXES],
}

impl PermuteLaunch {
    /// The kernels' parameter block: `total, base, rank, tiles`, then
    /// `dims`, `istrides` and `ostrides` (a C struct of 28 `long long`).
    pub fn params(&self) -> [i64; 4 + 3 * PERMUTE_AXES] {
        let mut p = [0; 4 + 3 * PERMUTE_AXES];
        p[..4].copy_from_slice(&[self.total, self.base, self.rank, self.tiles]);
        p[4..4 + PERMUTE_AXES].copy_from_slice(&self.dims);
        p[4 + PERMUTE_AXES..4 + 2 * PERMUTE_AXES].copy_from_slice(&self.istrides);
        p[4 + 2 * PERMUTE_AXES..].copy_from_slice(&self.ostrides);
        p
    }

    /// Blocks of 256 threads a launch needs before any grid-stride loop:
    /// one per tile, or one per 256 elements.
    pub fn blocks(&self) -> usize {
        if self.tiled {
            self.tiles as usize
        } else {
            (self.total as usize).div_ceil(PERMUTE_TILE * PERMUTE_TILE_ROWS)
        }
    }

    /// Carries out the launch on host values, element by element through
    /// the multi-index: the reference the kernels' plan must agree with.
    pub fn apply<T: Copy + Default>(&self, x: &[T]) -> Vec<T> {
        let mut y = vec![T::default(); self.total as usize];
        let r = self.rank as usize;
        let (dims, is, os) = (&self.dims[..r], &self.istrides[..r], &self.ostrides[..r]);
        let mut idx = vec![0i64; r];
        for _ in 0..self.total {
            let src = self.base + idx.iter().zip(is).map(|(c, s)| c * s).sum::<i64>();
            let dst: i64 = idx.iter().zip(os).map(|(c, s)| c * s).sum();
            y[dst as usize] = x[src as usize];
            for (c, &d) in idx.iter_mut().zip(dims) {
                *c += 1;
                if *c < d {
                    break;
                }
                *c = 0;
            }
        }
        y
    }
}

/// The launch that permutes an input of `shape` and `dtype` by `order`
/// (see [`PermuteLaunch`]), or `None` when its merged axes are more than
/// [`PERMUTE_AXES`] (or its order has another rank than `shape`).
pub fn permute_launch(shape: &Shape, order: AxisOrder, dtype: DType) -> Option<PermuteLaunch> {
    if order.ndim() != shape.ndim() {
        return None;
    }
    let copy = StridedCopy::of_order(shape, order);
    let rank = copy.dims.len();
    if rank > PERMUTE_AXES {
        return None;
    }
    // Output strides: the output is contiguous in the merged axes' order.
    let mut ostrides = Vec::with_capacity(rank);
    let mut acc = 1usize;
    for &d in &copy.dims {
        ostrides.push(acc);
        acc *= d;
    }
    let mut axes: Vec<usize> = (0..rank).collect();
    let unit = copy
        .unit_axis()
        .filter(|&j| j > 0 && copy.dims[0] >= PERMUTE_TILE_MIN && copy.dims[j] >= PERMUTE_TILE_MIN);
    if let Some(j) = unit {
        axes.remove(j);
        axes.insert(1, j);
    }
    let mut launch = PermuteLaunch {
        entry: String::new(),
        tiled: unit.is_some(),
        total: copy.numel as i64,
        base: copy.base as i64,
        rank: rank as i64,
        tiles: 0,
        dims: [1; PERMUTE_AXES],
        istrides: [0; PERMUTE_AXES],
        ostrides: [0; PERMUTE_AXES],
    };
    for (k, &a) in axes.iter().enumerate() {
        launch.dims[k] = copy.dims[a] as i64;
        launch.istrides[k] = copy.strides[a] as i64;
        launch.ostrides[k] = ostrides[a] as i64;
    }
    if launch.tiled {
        let t = PERMUTE_TILE as i64;
        let batch: i64 = launch.dims[2..].iter().product();
        launch.tiles = (launch.dims[0] + t - 1) / t * ((launch.dims[1] + t - 1) / t) * batch;
    }
    let width = if copy.numel <= 1 << 30 { "32" } else { "" };
    let kind = if launch.tiled { "transpose" } else { "permute" };
    launch.entry = format!("gb_{kind}{width}_{}", dtype.size_bytes());
    Some(launch)
}

/// Why `x` cannot be permuted by `order` into a result of shape and dtype
/// `out` (the dtype kept, the buffer holding its shape, the order of its
/// rank, the result's shape the permuted one), if it cannot.
pub fn check_permute(
    x: Described<'_>,
    order: AxisOrder,
    (out_shape, dtype): (&Shape, DType),
) -> std::result::Result<(), String> {
    check_part(x, dtype)?;
    let shape = x.2;
    let fits = order.ndim() == shape.ndim()
        && out_shape.dims().len() == shape.ndim()
        && (0..shape.ndim()).all(|i| out_shape.dim(i) == shape.dim(order.axis(i)));
    if fits {
        Ok(())
    } else {
        Err(format!(
            "axes {:?} of a {shape} array into a {out_shape} result",
            order.perm()
        ))
    }
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
        // Runs of 1000 bools move in 8-byte words, of 6000 f32 in 16-byte
        // ones; runs of 1001 f32 value by value.
        assert_eq!(
            take_launch(&m, 1, 2, DType::Bool),
            ("gb_take32_8".to_string(), [125, 30, 2, 250])
        );
        let square = Shape::new(vec![6000, 6000]);
        assert_eq!(
            take_launch(&square, 1, 5, DType::F32),
            ("gb_take32_16".to_string(), [1500, 6000, 5, 7500])
        );
        let odd = Shape::new(vec![1001, 30]);
        assert_eq!(
            take_launch(&odd, 1, 5, DType::F32),
            ("gb_take32_4".to_string(), [1001, 30, 5, 5005])
        );
        let long = Shape::new(vec![1 << 31]);
        assert_eq!(take_launch(&long, 0, 3, DType::F32).0, "gb_take_4");
    }
    #[test]
    fn permute_launches_agree_with_the_copy_and_tile_transposes() {
        let shapes: [&[usize]; 6] = [
            &[33, 31],
            &[1000, 3],
            &[9, 1, 40],
            &[5, 6, 7],
            &[],
            &[2, 3, 4, 5],
        ];
        for dims in shapes {
            let shape = Shape::new(dims.to_vec());
            let x: Vec<i64> = (0..shape.numel() as i64).collect();
            let n = dims.len();
            let perms: Vec<Vec<usize>> = match n {
                0 => vec![vec![]],
                2 => vec![vec![0, 1], vec![1, 0]],
                3 => vec![
                    vec![0, 1, 2],
                    vec![1, 0, 2],
                    vec![2, 1, 0],
                    vec![1, 2, 0],
                    vec![2, 0, 1],
                ],
                _ => vec![vec![3, 1, 0, 2], vec![0, 2, 3, 1]],
            };
            for perm in perms {
                for flips in [0u32, 1, (1 << n) - 1, 2] {
                    let flipped: Vec<bool> = (0..n).map(|i| flips >> i & 1 == 1).collect();
                    let order = AxisOrder::new(&perm, &flipped).unwrap();
                    let launch = permute_launch(&shape, order, DType::F32).unwrap();
                    let want = StridedCopy::of_order(&shape, order).apply("t", &x).unwrap();
                    assert_eq!(launch.apply(&x), want, "{dims:?} {perm:?} {flipped:?}");
                    assert!(PERMUTE_ENTRIES.contains(&launch.entry.as_str()));
                    if launch.tiled {
                        assert_eq!((launch.ostrides[0], launch.istrides[1].abs()), (1, 1));
                    }
                }
            }
        }
        let t = |dims: Vec<usize>, perm: &[usize]| {
            let order = AxisOrder::new(perm, &vec![false; perm.len()]).unwrap();
            permute_launch(&Shape::new(dims), order, DType::F64).unwrap()
        };
        let square = t(vec![33, 33], &[1, 0]);
        assert_eq!(
            (square.entry.as_str(), square.tiles),
            ("gb_transpose32_8", 4)
        );
        assert!(
            !t(vec![1000, 3], &[1, 0]).tiled,
            "a 3-wide tile is mostly idle"
        );
        assert!(!t(vec![33, 33], &[0, 1]).tiled);
        let batched = t(vec![40, 50, 3], &[1, 0, 2]);
        assert_eq!(
            (batched.tiled, batched.tiles, batched.rank),
            (true, 2 * 2 * 3, 3)
        );
        assert_eq!(t(vec![1 << 31], &[0]).entry, "gb_permute_8");
        let x: Described<'_> = (6, DType::F32, &Shape::new(vec![2, 3]));
        let order = AxisOrder::new(&[1, 0], &[false, true]).unwrap();
        assert_eq!(
            check_permute(x, order, (&Shape::new(vec![3, 2]), DType::F32)),
            Ok(())
        );
        assert!(check_permute(x, order, (&Shape::new(vec![2, 3]), DType::F32)).is_err());
        assert!(check_permute(x, order, (&Shape::new(vec![3, 2]), DType::F64)).is_err());
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
