//! The OpenCL C of the scans: the accumulators (double sums, compensated
//! float sums, scaled running products), the kernels of the three paths
//! ([`super`] describes them) and the program text for one element type
//! and accumulation.

use gearbox_core::DType;

use super::{Accumulation, GROUP, LANE_TILE_BYTES, PER_ITEM};

/// The accumulator in double.
const ACC_DOUBLE: &str = "
typedef double gb_acc;
static inline gb_acc gb_identity(void) { return 0.0; }
static inline gb_acc gb_of(gb_elem x) { return (double)x; }
static inline gb_acc gb_join(gb_acc a, gb_acc b) { return a + b; }
static inline gb_elem gb_value(gb_acc a) { return (gb_elem)a; }
static inline gb_acc gb_step(gb_acc a, gb_elem x) { return a + (double)x; }
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
static inline gb_acc gb_step(gb_acc a, gb_elem x) { return gb_join(a, gb_of(x)); }
";

/// The running product `m · S^e` ([`gearbox_core::runtime::scan_product`]'s
/// rule) over `GB_REAL` mantissas and `GB_EXP` exponents with unit `GB_S`
/// (the source defines them first): the rescale step (zero, infinite and
/// NaN mantissas reset the exponent), the lift (two steps), the join, the
/// step and the value (rounded once). The rescale, the step and the value
/// test the common case first, with the rule's bits (the
/// `gpu_opencl_scan` test `the_cheap_product_steps_keep_the_rules_bits`
/// checks them against the rule as first written).
const ACC_PRODUCT: &str = "
typedef struct { GB_REAL m; GB_EXP e; } gb_acc;
// Whether m lies in [1/S, S], where the rescale leaves it as it is.
static inline bool gb_in_unit(GB_REAL m) { return fabs(m) >= GB_INV && fabs(m) <= GB_S; }
// The common case, nothing to do, is tested first (the same result: such
// an m is neither zero nor out of range).
static inline gb_acc gb_rescale(GB_REAL m, GB_EXP e) {
  gb_acc r;
  r.m = m;
  r.e = e;
  if (gb_in_unit(m)) return r;
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
// gb_join(a, gb_of(x)) bit for bit, cheaper: a value within [1/S, S] (with
// GB_ELEM_IN_UNIT, every value of the data: float data with the unit
// 2^400, zero, infinite and NaN included) lifts to (x, 0), so the join
// multiplies the mantissas and keeps a's exponent (a.e + 0 is a.e:
// exponents are whole numbers, never -0); other values lift.
static inline gb_acc gb_step(gb_acc a, gb_elem x) {
  GB_REAL v = (GB_REAL)x;
  if (GB_ELEM_IN_UNIT || gb_in_unit(v)) return gb_rescale(a.m * v, a.e);
  return gb_join(a, gb_of(x));
}
// Four units out overflow or underflow whatever m is; within three only
// the last multiplication can round (none when e is 0, the common case,
// tested first).
static inline gb_elem gb_value(gb_acc a) {
  if (a.e == 0) return (gb_elem)a.m;
  GB_REAL x = a.m;
  if (a.e > 3) return (gb_elem)(x * (GB_REAL)INFINITY);
  if (a.e < -3) return (gb_elem)(x * (GB_REAL)0);
  for (GB_EXP e = a.e; e > 0; e -= 1) x *= GB_S;
  for (GB_EXP e = a.e; e < 0; e += 1) x *= GB_INV;
  return (gb_elem)x;
}
";

/// The kernels of the three paths, over `gb_elem` data and `gb_acc` running
/// values (the accumulator's source defines them, and `GB_LANE_ITEMS`,
/// the one pass's values per work-item of a tile). Pieces are numbered
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
    for (long k = k0; k < k1; ++k, at += inner) acc = gb_step(acc, x[at]);
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
      acc = gb_step(acc, x[at]);
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
    for (long k = k0 + l; k < k1; k += GB_GROUP) acc = gb_step(acc, x[base + k]);
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

// The one pass's tiles: GB_LANE_ITEMS consecutive values a work-item (the
// host's LANE_TILE_BYTES of data: 4,096 values of 4 bytes or 2,048 of 8), kept in
// local memory with a value of padding every 32, so that work-items
// reading GB_LANE_ITEMS apart hit different banks.
#define GB_LANE_TILE (GB_GROUP * GB_LANE_ITEMS)
#define GB_PAD(k) ((k) + ((k) >> 5))

// Work-item l's values of a tile of n at src, positions l + GB_GROUP j,
// into v: every load issued before any is used.
static inline void gb_lane_load(gb_elem* v, __global const gb_elem* src, int n, int l) {
  if (n == GB_LANE_TILE) {
    for (int j = 0; j < GB_LANE_ITEMS; ++j) v[j] = src[l + j * GB_GROUP];
  } else {
    for (int j = 0; j < GB_LANE_ITEMS; ++j) {
      int k = l + j * GB_GROUP;
      if (k < n) v[j] = src[k];
    }
  }
}

// The one pass (inner == 1): a work-group per lane walks the lane's tiles
// in order, scanning each in local memory from the running value `carry`
// of the tiles before it, so the data is read once and written once. Each
// work-item folds its GB_LANE_ITEMS consecutive values, the folds are
// scanned in local memory (Hillis and Steele), and each rescans its values
// from the carry joined with the folds before its own. While a tile is
// scanned, the work-items' loads of the next one are in flight into their
// private values.
__kernel void gb_lane_scan(__global const gb_elem* restrict x, __global gb_elem* restrict y,
                           long len, long outer) {
  __local gb_elem tile[GB_PAD(GB_LANE_TILE)];
  __local gb_acc part[GB_GROUP];
  int l = get_local_id(0);
  int s0 = l * GB_LANE_ITEMS;
  gb_elem v[GB_LANE_ITEMS];
  for (long o = get_group_id(0); o < outer; o += get_num_groups(0)) {
    __global const gb_elem* src = x + o * len;
    __global gb_elem* dst = y + o * len;
    gb_lane_load(v, src, (int)min((long)GB_LANE_TILE, len), l);
    gb_acc carry = gb_identity();
    for (long k0 = 0; k0 < len; k0 += GB_LANE_TILE) {
      int n = (int)min((long)GB_LANE_TILE, len - k0);
      for (int j = 0; j < GB_LANE_ITEMS; ++j) {
        int k = l + j * GB_GROUP;
        if (k < n) tile[GB_PAD(k)] = v[j];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      long next = k0 + GB_LANE_TILE;
      if (next < len) gb_lane_load(v, src + next, (int)min((long)GB_LANE_TILE, len - next), l);
      gb_acc own = gb_identity();
      for (int j = 0; j < GB_LANE_ITEMS; ++j)
        if (s0 + j < n) own = gb_step(own, tile[GB_PAD(s0 + j)]);
      part[l] = own;
      gb_group_scan(part, l);
      gb_acc run = l > 0 ? gb_join(carry, part[l - 1]) : carry;
      for (int j = 0; j < GB_LANE_ITEMS; ++j)
        if (s0 + j < n) {
          run = gb_step(run, tile[GB_PAD(s0 + j)]);
          tile[GB_PAD(s0 + j)] = gb_value(run);
        }
      carry = gb_join(carry, part[GB_GROUP - 1]);
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int k = l; k < n; k += GB_GROUP) dst[k0 + k] = tile[GB_PAD(k)];
      // Every work-item has stored its values and read the folds before
      // the next tile overwrites them.
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}
";

/// The entry points of the scan program.
pub const ENTRIES: [&str; 7] = [
    "gb_scan_fold",
    "gb_scan_carry_lanes",
    "gb_scan_carry_groups",
    "gb_scan_apply",
    "gb_tile_fold",
    "gb_tile_apply",
    "gb_lane_scan",
];

// The kernels' group size and tile are the host's.
const _: () = assert!(GROUP == 256 && PER_ITEM == 4);

/// The OpenCL C program scanning `elem` data (f32 or f64) with `acc`:
/// running sums, or running products when `product`.
pub fn source(elem: DType, acc: Accumulation, product: bool) -> String {
    let items = format!("#define GB_LANE_ITEMS {}\n", lane_items(elem));
    let elem_name = if elem == DType::F64 {
        "double"
    } else {
        "float"
    };
    let pragma = match acc {
        Accumulation::Double => super::super::FP64_PRAGMA,
        Accumulation::Compensated => "",
    };
    let acc = match (product, acc) {
        (false, Accumulation::Double) => ACC_DOUBLE.to_string(),
        (false, Accumulation::Compensated) => ACC_COMPENSATED.to_string(),
        (true, acc) => product_defines(elem, acc) + ACC_PRODUCT,
    };
    format!("{pragma}typedef {elem_name} gb_elem;\n{items}{acc}{KERNELS}")
}

/// Values a work-item of the one pass scans per tile of `elem` data (f32:
/// 16, f64: 8): a tile is [`LANE_TILE_BYTES`] of data.
pub fn lane_items(elem: DType) -> usize {
    LANE_TILE_BYTES / (GROUP * elem.size_bytes())
}

/// The running product's types and constants for `acc`: a double mantissa
/// and exponent, or a float mantissa and an `int` exponent; the unit `S`,
/// `1/S` and the largest finite mantissa, as literals that parse to them
/// exactly; and `GB_ELEM_IN_UNIT`, 1 when every value of `elem` data lifts
/// to itself (f32 data with a double mantissa: every float lies within
/// `[2^-400, 2^400]`, or is zero, infinite or NaN).
fn product_defines(elem: DType, acc: Accumulation) -> String {
    let k = gearbox_core::runtime::scan_product::unit_log2(acc);
    let in_unit = elem == DType::F32 && acc == Accumulation::Double;
    let types = match acc {
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
    };
    format!("{types}#define GB_ELEM_IN_UNIT {}\n", in_unit as u8)
}
