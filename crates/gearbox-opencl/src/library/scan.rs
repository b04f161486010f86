//! `cumsum` and `cumprod` on the OpenCL device, in f32 and f64, for any
//! axis layout: a three-phase scan (fold pieces to totals, carry the
//! totals into prefixes, rescan each piece from its prefix), the CUDA and
//! wgpu backends' design, over an accumulator each source defines (its
//! identity, the lift of one value, the join, the value written).
//!
//! # Layout and the two paths
//!
//! The array is seen as `(inner, len, outer)` around the scanned axis (the
//! flattening is `(1, n, 1)`), so it has `inner * outer` lanes of `len`
//! values, lane `(i, o)` reading `x[i + inner * (k + len * o)]`. Each lane
//! is cut into pieces of equal length (the last may be shorter):
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
//!   [`TILE`] values): one work-group per piece, pieces of whole tiles of
//!   [`TILE`] values. `gb_tile_fold` reduces a piece in local memory;
//!   `gb_tile_apply` walks its piece a tile at a time: the tile is loaded
//!   coalesced into local memory, each work-item scans its
//!   [`PER_ITEM`] consecutive values, the work-items' totals are scanned
//!   in local memory (Hillis and Steele), each rescans its values from its
//!   prefix, and the tile is stored coalesced. On a GPU every load and
//!   store of the data is then coalesced, where the chunked path's
//!   work-items read a piece apart. CPU devices (pocl) take the chunked
//!   path for every layout: a work-item's own contiguous piece is what a
//!   CPU's caches serve best, and barriers cost them far more.
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
//! piece has the CPU's bits (double accumulation); grouped pieces are
//! within `scan_product::tolerance` (products are not compensated: the
//! float accumulation rounds each one in f32).
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

/// Which kernels scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// The rule of the module docs.
    Auto,
    /// The chunked path, for any layout.
    Chunked,
    /// The tiled path (contiguous lanes only; declined otherwise).
    Tiled,
}

/// The accumulator in double.
const ACC_DOUBLE: &str = "
typedef double gb_acc;
static inline gb_acc gb_identity(void) { return 0.0; }
static inline gb_acc gb_of(gb_elem x) { return (double)x; }
static inline gb_acc gb_join(gb_acc a, gb_acc b) { return a + b; }
static inline gb_elem gb_value(gb_acc a) { return (gb_elem)a; }
";

/// The accumulator in float pairs `(sum, compensation)`, joined with an
/// exact two-sum (Neumaier).
const ACC_COMPENSATED: &str = "
typedef float2 gb_acc;
static inline gb_acc gb_identity(void) { return (float2)(0.0f, 0.0f); }
static inline gb_acc gb_of(gb_elem x) { return (float2)(x, 0.0f); }
static inline gb_acc gb_join(gb_acc a, gb_acc b) {
  float s = a.x + b.x;
  if (!isfinite(s)) return (float2)(s, 0.0f);
  float bb = s - a.x;
  float err = (a.x - (s - bb)) + (b.x - bb);
  return (float2)(s, (a.y + b.y) + err);
}
static inline gb_elem gb_value(gb_acc a) { return a.x + a.y; }
";

/// The running product `m · S^e` ([`gearbox_core::runtime::scan_product`]'s
/// rule) over `GB_REAL` mantissas and `GB_EXP` exponents with unit `GB_S`
/// (the source defines them first): the rescale step (zero, infinite and
/// NaN mantissas reset the exponent), the lift (two steps), the join and
/// the value (rounded once).
const ACC_PRODUCT: &str = "
typedef struct { GB_REAL m; GB_EXP e; } gb_acc;
static inline gb_acc gb_rescale(GB_REAL m, GB_EXP e) {
  gb_acc r;
  r.m = m;
  r.e = e;
  if (m == (GB_REAL)0 || !(fabs(m) <= GB_MAX)) r.e = 0;
  else if (fabs(m) > GB_S) { r.m = m * GB_INV; r.e = e + 1; }
  else if (fabs(m) < GB_INV) { r.m = m * GB_S; r.e = e - 1; }
  return r;
}
static inline gb_acc gb_identity(void) { gb_acc r; r.m = (GB_REAL)1; r.e = 0; return r; }
static inline gb_acc gb_of(gb_elem x) {
  gb_acc r = gb_rescale((GB_REAL)x, 0);
  return gb_rescale(r.m, r.e);
}
static inline gb_acc gb_join(gb_acc a, gb_acc b) { return gb_rescale(a.m * b.m, a.e + b.e); }
// Four units out overflow or underflow whatever m is; within three only
// the last multiplication can round.
static inline gb_elem gb_value(gb_acc a) {
  GB_REAL x = a.m;
  if (a.e > 3) return (gb_elem)(x * (GB_REAL)INFINITY);
  if (a.e < -3) return (gb_elem)(x * (GB_REAL)0);
  for (GB_EXP e = a.e; e > 0; e -= 1) x *= GB_S;
  for (GB_EXP e = a.e; e < 0; e += 1) x *= GB_INV;
  return (gb_elem)x;
}
";

/// The kernels of both paths, over `gb_elem` data and `gb_acc` running
/// values (the accumulator's source defines them). Pieces are numbered
/// `i + inner * (c + chunks * o)` (lane position, piece, outer position),
/// which is also where their totals are kept.
const KERNELS: &str = "
#define GB_GROUP 256
#define GB_PER_ITEM 4
#define GB_TILE (GB_GROUP * GB_PER_ITEM)

// The chunked path's pieces, one a work-item (a grid-stride loop), and
// piece w's range [k0, k1) of its lane and where its first value is.
#define GB_PIECES(w) \
  for (long w = get_global_id(0); w < inner * chunks * outer; w += get_global_size(0))
#define GB_PIECE(w) \
  long k0 = (w / inner) % chunks * chunk_len, k1 = min(len, k0 + chunk_len); \
  long at = w % inner + inner * (k0 + len * (w / (inner * chunks)))

// The tiled path's pieces (inner == 1), one a work-group, and piece w's
// range [k0, k1) of the lane starting at base.
#define GB_TILE_PIECES(w) \
  for (long w = get_group_id(0); w < chunks * outer; w += get_num_groups(0))
#define GB_TILE_PIECE(w) \
  long base = len * (w / chunks), k0 = w % chunks * chunk_len; \
  long k1 = min(len, k0 + chunk_len)

// Inclusive scan of part[0 .. GB_GROUP) in place (Hillis and Steele);
// every work-item of the group calls it, part written before a barrier.
static void gb_group_scan(__local gb_acc* part, int l) {
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int d = 1; d < GB_GROUP; d <<= 1) {
    gb_acc v = part[l];
    if (l >= d) v = gb_join(part[l - d], v);
    barrier(CLK_LOCAL_MEM_FENCE);
    part[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// Where the totals of lane `lane` start (they lie `inner` apart).
#define GB_LANE_TOTALS(lane) (lane % inner + inner * chunks * (lane / inner))

// One step of the carry: total t[at] replaced by the running `carry`
// before it, which it then joins.
static inline gb_acc gb_carry(__global gb_acc* t, long at, gb_acc carry) {
  gb_acc total = t[at];
  t[at] = carry;
  return gb_join(carry, total);
}

// Chunked phase 1: the total of each piece.
__kernel void gb_scan_fold(__global const gb_elem* restrict x, __global gb_acc* restrict t,
                           long inner, long len, long outer, long chunks, long chunk_len) {
  GB_PIECES(w) {
    GB_PIECE(w);
    gb_acc acc = gb_identity();
    for (long k = k0; k < k1; ++k, at += inner) acc = gb_join(acc, gb_of(x[at]));
    t[w] = acc;
  }
}

// The carry, short lanes: one work-item walks a lane's totals, leaving
// exclusive prefixes.
__kernel void gb_scan_carry_lanes(__global gb_acc* t, long inner, long outer, long chunks) {
  long lanes = inner * outer;
  for (long lane = get_global_id(0); lane < lanes; lane += get_global_size(0)) {
    long at = GB_LANE_TOTALS(lane);
    gb_acc carry = gb_identity();
    for (long c = 0; c < chunks; ++c, at += inner) carry = gb_carry(t, at, carry);
  }
}

// The carry, long lanes: a work-group per lane; each work-item folds a run
// of the lane's totals, the runs are scanned in local memory, and each
// work-item rewrites its run from its run's prefix.
__kernel void gb_scan_carry_groups(__global gb_acc* t, long inner, long outer, long chunks) {
  __local gb_acc part[GB_GROUP];
  int l = get_local_id(0);
  long lanes = inner * outer;
  long per = (chunks + GB_GROUP - 1) / GB_GROUP;
  long c0 = min(chunks, l * per), c1 = min(chunks, c0 + per);
  for (long lane = get_group_id(0); lane < lanes; lane += get_num_groups(0)) {
    long base = GB_LANE_TOTALS(lane);
    gb_acc run = gb_identity();
    for (long c = c0; c < c1; ++c) run = gb_join(run, t[base + inner * c]);
    part[l] = run;
    gb_group_scan(part, l);
    gb_acc carry = l > 0 ? part[l - 1] : gb_identity();
    // Every work-item has read its prefix before the next lane's runs
    // overwrite the local memory.
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long c = c0; c < c1; ++c) carry = gb_carry(t, base + inner * c, carry);
  }
}

// Chunked phase 3: each piece rescanned from its prefix (from the identity
// when the lanes are not cut: then the whole scan is this one pass, e.g. a
// work-item per row of a tall matrix walking its columns, adjacent
// work-items reading adjacent rows). x and y never alias (restrict), so
// later steps' loads may be issued ahead of this step's store.
__kernel void gb_scan_apply(__global const gb_elem* restrict x, __global const gb_acc* restrict t,
                            __global gb_elem* restrict y, long inner, long len, long outer,
                            long chunks, long chunk_len, int carried) {
  GB_PIECES(w) {
    GB_PIECE(w);
    gb_acc acc = carried ? t[w] : gb_identity();
    for (long k = k0; k < k1; ++k, at += inner) {
      acc = gb_join(acc, gb_of(x[at]));
      y[at] = gb_value(acc);
    }
  }
}

// Tiled phase 1 (inner == 1, as the arguments of the chunked kernels):
// a work-group reduces each piece.
__kernel void gb_tile_fold(__global const gb_elem* x, __global gb_acc* t,
                           long inner, long len, long outer, long chunks, long chunk_len) {
  __local gb_acc part[GB_GROUP];
  int l = get_local_id(0);
  GB_TILE_PIECES(w) {
    GB_TILE_PIECE(w);
    gb_acc acc = gb_identity();
    for (long k = k0 + l; k < k1; k += GB_GROUP) acc = gb_join(acc, gb_of(x[base + k]));
    part[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = GB_GROUP / 2; s > 0; s >>= 1) {
      if (l < s) part[l] = gb_join(part[l], part[l + s]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) t[w] = part[0];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// Tiled phase 3: a work-group rescans each piece from its prefix, a tile
// at a time, loading and storing the tile coalesced.
__kernel void gb_tile_apply(__global const gb_elem* x, __global const gb_acc* t,
                            __global gb_elem* y, long inner, long len, long outer,
                            long chunks, long chunk_len, int carried) {
  __local gb_acc tile[GB_TILE];
  __local gb_acc part[GB_GROUP];
  int l = get_local_id(0);
  GB_TILE_PIECES(w) {
    GB_TILE_PIECE(w);
    gb_acc carry = carried ? t[w] : gb_identity();
    for (long k = k0; k < k1; k += GB_TILE) {
      int n = (int)min((long)GB_TILE, k1 - k);
      for (int j = l; j < GB_TILE; j += GB_GROUP) tile[j] = j < n ? gb_of(x[base + k + j]) : gb_identity();
      barrier(CLK_LOCAL_MEM_FENCE);
      gb_acc run = gb_identity();
      for (int q = 0; q < GB_PER_ITEM; ++q) run = gb_join(run, tile[l * GB_PER_ITEM + q]);
      part[l] = run;
      gb_group_scan(part, l);
      gb_acc acc = l > 0 ? gb_join(carry, part[l - 1]) : carry;
      for (int q = 0; q < GB_PER_ITEM; ++q) {
        acc = gb_join(acc, tile[l * GB_PER_ITEM + q]);
        tile[l * GB_PER_ITEM + q] = acc;
      }
      carry = gb_join(carry, part[GB_GROUP - 1]);
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int j = l; j < n; j += GB_GROUP) y[base + k + j] = gb_value(tile[j]);
      // The tile and the partials are read before the next tile's loads.
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
";

/// The entry points of the scan program.
pub const ENTRIES: [&str; 6] = [
    "gb_scan_fold",
    "gb_scan_carry_lanes",
    "gb_scan_carry_groups",
    "gb_scan_apply",
    "gb_tile_fold",
    "gb_tile_apply",
];

// The kernels' group size and tile are the host's.
const _: () = assert!(GROUP == 256 && PER_ITEM == 4);

/// The OpenCL C program scanning `elem` data (f32 or f64) with `acc`:
/// running sums, or running products when `product`.
pub fn source(elem: DType, acc: Accumulation, product: bool) -> String {
    let elem = if elem == DType::F64 {
        "double"
    } else {
        "float"
    };
    let pragma = match acc {
        Accumulation::Double => super::FP64_PRAGMA,
        Accumulation::Compensated => "",
    };
    let acc = match (product, acc) {
        (false, Accumulation::Double) => ACC_DOUBLE.to_string(),
        (false, Accumulation::Compensated) => ACC_COMPENSATED.to_string(),
        (true, acc) => product_defines(acc) + ACC_PRODUCT,
    };
    format!("{pragma}typedef {elem} gb_elem;\n{acc}{KERNELS}")
}

/// The running product's types and constants for `acc`: a double mantissa
/// and exponent, or a float mantissa and an `int` exponent; the unit `S`,
/// `1/S` and the largest finite mantissa, as literals that parse to them
/// exactly.
fn product_defines(acc: Accumulation) -> String {
    let k = gearbox_core::runtime::scan_product::unit_log2(acc);
    match acc {
        Accumulation::Double => format!(
            "#define GB_REAL double\n#define GB_EXP double\n#define GB_S {:e}\n#define GB_INV {:e}\n#define GB_MAX DBL_MAX\n",
            2f64.powi(k),
            2f64.powi(-k)
        ),
        Accumulation::Compensated => format!(
            "#define GB_REAL float\n#define GB_EXP int\n#define GB_S {:e}f\n#define GB_INV {:e}f\n#define GB_MAX FLT_MAX\n",
            2f32.powi(k),
            2f32.powi(-k)
        ),
    }
}

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
    let tiled = match path {
        Path::Auto => inner == 1 && len >= TILE && !lib.dev.cpu,
        Path::Chunked => false,
        Path::Tiled if inner == 1 => true,
        Path::Tiled => {
            return Err(declined(
                name(how.0),
                format!("the tiled scan takes contiguous lanes, not {inner} interleaved ones"),
            ))
        }
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
    if tiled {
        run.tiled()?;
    } else {
        run.chunked()?;
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
