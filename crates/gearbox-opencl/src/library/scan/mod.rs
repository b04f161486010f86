//! `cumsum` and `cumprod` on the OpenCL device, in f32 and f64, for any
//! axis layout: a three-phase scan (fold pieces to totals, carry the
//! totals into prefixes, rescan each piece from its prefix), the CUDA and
//! wgpu backends' design, or for many contiguous lanes a single pass, a
//! work-group per lane, over an accumulator each source defines (its
//! identity, the lift of one value, the join, the step (the join of a
//! running value with the lift of the next value), the value written).
//!
//! # Layout and the three paths
//!
//! The array is seen as `(inner, len, outer)` around the scanned axis (the
//! flattening is `(1, n, 1)`), so it has `inner * outer` lanes of `len`
//! values, lane `(i, o)` reading `x[i + inner * (k + len * o)]`. [`path`]
//! picks the way (tests may force one with [`scan_with`]):
//!
//! * **one pass** (contiguous lanes, `inner == 1`, on a GPU, lanes of at
//!   least [`GROUP`] values, at least [`LANE_GROUPS_PER_CU`] lanes per
//!   compute unit, e.g. 6,000 lanes of 6,000 on a GPU of 132): a
//!   work-group per lane (`gb_lane_scan`) walks its tiles of
//!   [`LANE_TILE_BYTES`] of data in order, each loaded coalesced into
//!   local memory, scanned there (each work-item folds its
//!   [`lane_items`] consecutive values, the folds are scanned in local
//!   memory, and each work-item rescans its values from the lane's running
//!   value joined with the folds before its own) and stored coalesced, the
//!   next tile's loads in flight meanwhile: the data is read once and
//!   written once, where the tiled path reads it twice once lanes are cut.
//!   Fewer lanes would leave compute units idle, so they take the other
//!   paths. Forced, the one pass takes contiguous lanes of any length.
//!
//! Otherwise each lane is cut into pieces of equal length (the last may be
//! shorter):
//!
//! * **chunked** (any layout): one work-item per piece, adjacent work-items
//!   taking adjacent lanes (so with `inner > 1` they read adjacent values
//!   at every step: along the rows of a tall matrix, work-items across
//!   the rows each walk their row's columns, every step a coalesced
//!   row). Enough pieces for about 2^20 work-items, at least 64
//!   values each ([`scan_plan::pieces`], shared with the other backends). `gb_scan_fold` folds each piece to its
//!   total, the carry (below) makes the totals exclusive prefixes, and
//!   `gb_scan_apply` rescans each piece from its prefix, writing the
//!   results; with one piece per lane only the last phase runs.
//! * **tiled** (contiguous lanes, `inner == 1`, on a GPU, lanes of at least
//!   [`TILE`] values, fewer than the one pass takes): one work-group per
//!   piece, pieces of whole tiles of [`TILE`] values. `gb_tile_fold` reduces a piece in local memory;
//!   `gb_tile_apply` walks its piece a tile at a time: the tile is loaded
//!   coalesced into local memory, each work-item scans its
//!   [`PER_ITEM`] consecutive values, the work-items' totals are scanned
//!   in local memory (Hillis and Steele), each rescans its values from its
//!   prefix, and the tile is stored coalesced. On a GPU every load and
//!   store of the data is then coalesced, where the chunked path's
//!   work-items read a piece apart. CPU devices (pocl) take the chunked
//!   path for every layout, never the tiled path or the one pass unless
//!   forced: a work-item's own contiguous piece is what a CPU's caches
//!   serve best, and barriers cost them far more.
//!
//! The carry turns each lane's piece totals into exclusive prefixes in
//! place: one work-item walks a lane's totals (`gb_scan_carry_lanes`, at
//! most [`SERIAL_CARRY_MAX`] pieces a lane), or a work-group scans them
//! in local memory (`gb_scan_carry_groups`).
//!
//! # Accumulation
//!
//! [`Accumulation::Double`] (devices with `cl_khr_fp64`): running values in
//! double, as on the CPU and in CUDA, rounded to the result dtype when
//! written, so f32 results match the sequential CPU scan to rounding.
//! [`Accumulation::Compensated`] (devices without float64, f32 data only):
//! sums carry a Kahan–Neumaier pair (sum, compensation) through all three
//! phases (partials are pairs combined with an exact two-sum; OpenCL C
//! compilers do not rewrite float arithmetic algebraically unless asked
//! to). A pair stops compensating once its sum is not finite. Both paths
//! combine values in another order than the CPU's sequential one (pieces,
//! and trees within tiles), within the same rounding bounds.
//!
//! Products keep the scaled running product of
//! [`gearbox_core::runtime::scan_product`]: a mantissa and an exponent in
//! units of `2^400` (double accumulation) or `2^60` (float: an `int`
//! exponent), so no prefix overflows or underflows on the way, zeros,
//! infinities and NaN behave as in a plain product, and a lane of one
//! piece has the CPU's bits (double accumulation); grouped pieces and the
//! tiles of the tiled path and the one pass (scanned as trees of
//! work-items' folds) are within `scan_product::tolerance` (products are
//! not compensated: the float accumulation rounds each one in f32). The
//! loops take a value at a time (`gb_step`) with the common case first
//! (a value within `[1/S, S]`: one multiplication and a range test), which
//! keeps the bits of the rule's lift and join.
//!
//! # Rules
//!
//! Float data of the result dtype only (the CPU scans i64 exactly with an
//! overflow check, which the device kernels would not have; `cumprod` of
//! i64 and bool data is cast to f64 in the graph first), f64 only with
//! `cl_khr_fp64`, an input whose buffer matches its shape, an axis of the
//! shape. Anything else is declined (an error of kind `Compile`: the
//! runtime reruns the scan on the CPU), never a panic. Indices are `long`:
//! no size limit beyond the device's memory.

use gearbox_core::runtime::backend::{DeviceBuffer, LibraryCall};
use gearbox_core::runtime::scan_plan;
pub use gearbox_core::runtime::scan_plan::Accumulation;
use gearbox_core::{DType, Result, Shape};

use super::{declined, global_size, Lib, GROUP};
use crate::buffer::ClBuf;
use crate::launch::Arg;
use crate::program::Program;

/// Lanes with at most this many pieces carry their prefixes with one
/// work-item each; longer ones with a work-group each.
pub const SERIAL_CARRY_MAX: usize = 256;

/// Values a work-item of the tiled path scans per tile.
pub const PER_ITEM: usize = 4;

/// Values of a tile of the tiled path: [`PER_ITEM`] per work-item.
pub const TILE: usize = GROUP * PER_ITEM;

/// Work-groups (pieces) the tiled path aims at: several waves on a large
/// GPU, few enough for one work-group per lane to carry the totals quickly.
pub const TILE_PIECES: usize = 2048;

/// Bytes of data in a tile of the one pass (4,096 f32 values, 2,048 f64):
/// with its padding and the work-items' folds (at most 4 KiB), a tile fits
/// in the 32 KiB of local memory every OpenCL device has.
pub const LANE_TILE_BYTES: usize = 16 * 1024;

/// Lanes per compute unit from which the rule takes the one pass, a
/// work-group per lane: with fewer, some compute units would sit idle or
/// hold a single work-group (whose every tile waits on the one before),
/// while the tiled path's pieces keep them all busy (the CUDA backend's
/// `LANE_BLOCKS_PER_SM`).
pub const LANE_GROUPS_PER_CU: usize = 2;

/// Which kernels scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// The rule of the module docs ([`path`]).
    Auto,
    /// The chunked path, for any layout.
    Chunked,
    /// The tiled path (contiguous lanes only; declined otherwise).
    Tiled,
    /// The one pass, a work-group per lane (contiguous lanes only;
    /// declined otherwise).
    OnePass,
}

/// The path [`Path::Auto`] takes for `outer` lanes of `len` values,
/// `inner` apart, on a device of `compute_units` compute units (a CPU
/// device when `cpu`): on a GPU, contiguous lanes (`inner == 1`) of at
/// least a work-group's [`GROUP`] values take the one pass when there are
/// at least [`LANE_GROUPS_PER_CU`] lanes per compute unit (a work-group
/// per lane fills the device), else the tiled path when they have at least
/// a [`TILE`] of values; anything else, and every layout on a CPU device,
/// is chunked. Never [`Path::Auto`].
pub fn path(inner: usize, len: usize, outer: usize, compute_units: u32, cpu: bool) -> Path {
    let many = outer >= LANE_GROUPS_PER_CU * compute_units.max(1) as usize;
    if inner != 1 || cpu {
        Path::Chunked
    } else if len >= GROUP && many {
        Path::OnePass
    } else if len >= TILE {
        Path::Tiled
    } else {
        Path::Chunked
    }
}

mod source;

pub use source::{lane_items, source, ENTRIES};

/// The call's name, for errors.
fn name(product: bool) -> &'static str {
    LibraryCall::Scan {
        product,
        axis: None,
    }
    .name()
}

/// Checks what a scan of `x` (shape `shape`) into `out` with `acc` needs,
/// and gives the lanes' `(inner, len, outer)`.
fn check(
    lib: &Lib<'_>,
    (x, shape): (&ClBuf, &Shape),
    (product, axis): (bool, Option<usize>),
    (out_shape, dtype): (&Shape, DType),
    acc: Accumulation,
) -> Result<(usize, usize, usize)> {
    let name = name(product);
    let no = |why| declined(name, why);
    scan_plan::check_dtype(x.dtype(), dtype).map_err(no)?;
    if dtype == DType::F64 && acc != Accumulation::Double {
        return Err(declined(name, "f64 data accumulate in double only"));
    }
    if acc == Accumulation::Double && !lib.dev.fp64 {
        return Err(declined(
            name,
            "the device has no cl_khr_fp64 to accumulate in",
        ));
    }
    scan_plan::check_len(x.len(), shape, out_shape).map_err(no)?;
    scan_plan::lanes(shape, axis).map_err(no)
}

/// The cumulative sum of `x` (shape `shape`) along `axis` (all elements
/// when `None`) into a new buffer of `out` shape and dtype (the input's),
/// accumulated as the device allows ([`Accumulation::of`]), on the path
/// the module docs' rule picks; the cumulative product when `product`.
pub fn scan(
    lib: &Lib<'_>,
    x: (&ClBuf, &Shape),
    how: (bool, Option<usize>),
    out: (&Shape, DType),
) -> Result<ClBuf> {
    scan_with(lib, x, how, out, Accumulation::of(lib.dev.fp64), Path::Auto)
}

/// [`scan`] with the accumulation and the path given (tests use it to run
/// every combination on one device).
pub fn scan_with(
    lib: &Lib<'_>,
    x: (&ClBuf, &Shape),
    how: (bool, Option<usize>),
    out: (&Shape, DType),
    acc: Accumulation,
    path: Path,
) -> Result<ClBuf> {
    let (inner, len, outer) = check(lib, x, how, out, acc)?;
    let dtype = out.1;
    let path = match path {
        Path::Auto => self::path(inner, len, outer, lib.dev.compute_units, lib.dev.cpu),
        Path::Tiled | Path::OnePass if inner != 1 => {
            return Err(declined(
                name(how.0),
                format!("the {path:?} scan takes contiguous lanes, not {inner} interleaved ones"),
            ))
        }
        path => path,
    };
    let y = lib.dev.alloc(x.1.numel(), dtype)?;
    if inner * outer == 0 || len == 0 {
        return Ok(y);
    }
    let product = how.0;
    let op = if product { "prod" } else { "sum" };
    let key = format!("scan-{op}-{dtype}-{}", acc.name());
    let program = lib.program(&key, || source(dtype, acc, product), &ENTRIES)?;
    let run = Run {
        lib,
        program: &program,
        x: x.0,
        y: &y,
        lanes: (inner, len, outer),
        // A double product is a mantissa and an exponent, 16 bytes.
        acc_words: if product && acc == Accumulation::Double {
            2
        } else {
            1
        },
    };
    match path {
        Path::OnePass => run.one_pass()?,
        Path::Tiled => run.tiled()?,
        _ => run.chunked()?,
    }
    Ok(y)
}

/// One scan's launches.
struct Run<'a> {
    lib: &'a Lib<'a>,
    program: &'a Program,
    x: &'a ClBuf,
    y: &'a ClBuf,
    lanes: (usize, usize, usize),
    /// 8-byte words per running value.
    acc_words: usize,
}

impl Run<'_> {
    /// Enqueues `entry` with `args` over `items` work-items (a grid-stride
    /// loop) or, when `groups`, over that many work-groups.
    fn launch(&self, entry: &str, args: &[Arg<'_>], items: usize, groups: bool) -> Result<()> {
        let global = if groups {
            items.clamp(1, 65_536) * GROUP
        } else {
            global_size(items)
        };
        let kernel = self.program.kernel(entry)?;
        self.lib.dev.enqueue(&kernel, args, [global, 1], [GROUP, 1])
    }

    /// The running values of `pieces` pieces (8 bytes each: a double, a
    /// float pair or a float product; 16 for a double product); one unused
    /// value when the lanes are not cut.
    fn totals(&self, pieces: usize, carried: bool) -> Result<ClBuf> {
        let values = if carried { pieces } else { 1 };
        self.lib.dev.alloc(values * self.acc_words, DType::F64)
    }

    /// The chunked path: pieces for about 2^20 work-items
    /// ([`scan_plan::pieces`]).
    fn chunked(&self) -> Result<()> {
        let (inner, len, outer) = self.lanes;
        self.phases(scan_plan::pieces(inner * outer, len).1, false)
    }

    /// The tiled path (`inner == 1`): pieces of whole tiles, about
    /// [`TILE_PIECES`] of them (one per lane when there are that many lanes).
    fn tiled(&self) -> Result<()> {
        let (_, len, outer) = self.lanes;
        let tiles = len.div_ceil(TILE);
        let want = TILE_PIECES.div_ceil(outer).clamp(1, tiles);
        self.phases(tiles.div_ceil(want) * TILE, true)
    }

    /// The one pass (`inner == 1`): a work-group per lane (a grid-stride
    /// loop past 65,536 lanes) walks its tiles in order.
    fn one_pass(&self) -> Result<()> {
        let (_, len, outer) = self.lanes;
        let long = |v: usize| Arg::Long(v as i64);
        let args = [Arg::Buf(self.x), Arg::Buf(self.y), long(len), long(outer)];
        self.launch("gb_lane_scan", &args, outer, true)
    }

    /// The three phases over pieces of `chunk_len` values (the last of a
    /// lane shorter, none empty), on the tiled path's kernels (a work-group
    /// a piece) or the chunked path's (a work-item a piece).
    fn phases(&self, chunk_len: usize, tiled: bool) -> Result<()> {
        let (inner, len, outer) = self.lanes;
        let chunks = len.div_ceil(chunk_len);
        let pieces = inner * outer * chunks;
        let carried = chunks > 1;
        let totals = self.totals(pieces, carried)?;
        let shape = || {
            let v = [inner, len, outer, chunks, chunk_len];
            v.map(|v| Arg::Long(v as i64))
        };
        let (fold, apply) = match tiled {
            true => ("gb_tile_fold", "gb_tile_apply"),
            false => ("gb_scan_fold", "gb_scan_apply"),
        };
        if carried {
            let mut args = vec![Arg::Buf(self.x), Arg::Buf(&totals)];
            args.extend(shape());
            self.launch(fold, &args, pieces, tiled)?;
            self.carry(&totals, (inner, outer, chunks))?;
        }
        let mut args = vec![Arg::Buf(self.x), Arg::Buf(&totals), Arg::Buf(self.y)];
        args.extend(shape());
        args.push(Arg::Int(carried as i32));
        self.launch(apply, &args, pieces, tiled)
    }

    /// The carry: the totals of `inner * outer` lanes of `chunks` pieces
    /// become exclusive prefixes, with a work-item per lane when there are
    /// at most [`SERIAL_CARRY_MAX`] pieces a lane, else a work-group.
    fn carry(&self, totals: &ClBuf, (inner, outer, chunks): (usize, usize, usize)) -> Result<()> {
        let long = |v: usize| Arg::Long(v as i64);
        let args = [Arg::Buf(totals), long(inner), long(outer), long(chunks)];
        if chunks <= SERIAL_CARRY_MAX {
            self.launch("gb_scan_carry_lanes", &args, inner * outer, false)
        } else {
            self.launch("gb_scan_carry_groups", &args, inner * outer, true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_double_pragma_leads_and_float_sources_have_no_double() {
        for product in [false, true] {
            let s = source(DType::F32, Accumulation::Double, product);
            assert!(s.starts_with("#pragma OPENCL EXTENSION cl_khr_fp64"), "{s}");
            assert!(s.contains("typedef float gb_elem;"));
            let s = source(DType::F32, Accumulation::Compensated, product);
            assert!(!s.contains("double") && !s.contains("#pragma"), "{s}");
        }
    }

    #[test]
    fn many_contiguous_lanes_take_one_pass_on_a_gpu() {
        // 132 compute units (an H200): a work-group per lane from 264
        // lanes on.
        assert_eq!(path(1, 6000, 6000, 132, false), Path::OnePass);
        assert_eq!(path(1, 256, 264, 132, false), Path::OnePass);
        assert_eq!(path(1, 9000, 264, 132, false), Path::OnePass);
        // Fewer lanes: tiled from a tile's values on, chunked below.
        assert_eq!(path(1, 256, 263, 132, false), Path::Chunked);
        assert_eq!(path(1, 1024, 263, 132, false), Path::Tiled);
        assert_eq!(path(1, 1_000_000, 64, 132, false), Path::Tiled);
        // Lanes shorter than a work-group, or interleaved, are chunked
        // however many there are.
        assert_eq!(path(1, 255, 100_000, 132, false), Path::Chunked);
        assert_eq!(path(6000, 6000, 1, 132, false), Path::Chunked);
        assert_eq!(path(2, 5000, 10_000, 132, false), Path::Chunked);
        // CPU devices keep the chunked path for every layout.
        assert_eq!(path(1, 6000, 6000, 2, true), Path::Chunked);
        assert_eq!(path(1, 1_000_000, 1, 2, true), Path::Chunked);
        // No compute units read: as one.
        assert_eq!(path(1, 300, 2, 0, false), Path::OnePass);
        assert_eq!(path(1, 1024, 1, 0, false), Path::Tiled);
    }

    #[test]
    fn lane_tiles_and_their_folds_fit_in_32_kib() {
        for (elem, items) in [(DType::F32, 16), (DType::F64, 8)] {
            assert_eq!(lane_items(elem), items);
            let values = GROUP * items;
            let padded = (values + values / 32) * elem.size_bytes();
            // The folds: at most a double product (16 bytes) a work-item.
            assert!(padded + GROUP * 16 <= 32 * 1024);
            let s = source(elem, Accumulation::Double, false);
            assert!(s.contains(&format!("#define GB_LANE_ITEMS {items}\n")));
        }
        let in_unit = |elem, acc| source(elem, acc, true).contains("#define GB_ELEM_IN_UNIT 1\n");
        assert!(in_unit(DType::F32, Accumulation::Double));
        assert!(!in_unit(DType::F64, Accumulation::Double));
        assert!(!in_unit(DType::F32, Accumulation::Compensated));
    }

    #[test]
    fn product_units_are_scan_products() {
        let s = source(DType::F64, Accumulation::Double, true);
        assert!(s.contains("#define GB_S 2.5822498780869086e120\n"), "{s}");
        assert!(
            s.contains("#define GB_INV 3.8725919148493183e-121\n"),
            "{s}"
        );
        let s = source(DType::F32, Accumulation::Compensated, true);
        assert!(s.contains("#define GB_S 1.1529215e18f\n"), "{s}");
        assert!(s.contains("#define GB_INV 8.6736174e-19f\n"), "{s}");
        assert_eq!("1.1529215e18".parse::<f32>().unwrap(), 2f32.powi(60));
        assert_eq!("8.6736174e-19".parse::<f32>().unwrap(), 2f32.powi(-60));
    }
}
