//! The tiled path: a three-phase reduce-then-scan over contiguous lanes
//! (`inner == 1`), where every load and store of the data is coalesced.
//!
//! # Tiles, pieces, runs
//!
//! With `inner == 1` lane `o` is the contiguous range `[o len, (o + 1) len)`
//! of the data. A workgroup of 256 invocations works on a *tile* of
//! `T = 256 K` consecutive values ([`Tiling::items`] is `K`): invocation `t`
//! loads values `t, t + 256, ...` of the tile (adjacent invocations read
//! adjacent addresses) into workgroup memory, scans its own `K` consecutive
//! values there, and the tile is written back the same coalesced way.
//!
//! A workgroup takes a *piece*: a range of the data it walks tile by tile,
//! carrying the running value from one tile to the next. [`Plan::new`]
//! chooses the pieces, about [`Tiling::target_pieces`] of them:
//!
//! * few long lanes (fewer lanes than the target, each longer than a
//!   tile): each lane is cut into pieces of whole tiles, which then need
//!   each other's totals (the *runs* the pieces are counted in are the
//!   lanes, and the plan is `carried`);
//! * otherwise: a piece is a range of whole lanes (at least a tile's
//!   worth when lanes are short), so no piece needs another's total (one
//!   run, the whole array).
//!
//! Tiles may hold several lanes, or the end of one and the start of the
//! next: the scan is *segmented*, restarting at every multiple of `len`
//! (each invocation's values, then the invocations' folds, are combined
//! with the segmented operator: a stretch of values that contains a lane's
//! start ignores what came before it).
//!
//! # Phases
//!
//! 1. `gb_tile_fold` (carried plans only): each workgroup folds its piece
//!    (coalesced, in any order: a piece holds one lane's values) and
//!    reduces the invocations' totals in workgroup memory to the piece's
//!    total;
//! 2. the totals of each lane become exclusive prefixes with the chunked
//!    path's carry kernels (`chunks::carry`: the totals have its layout,
//!    `inner == 1`);
//! 3. `gb_tile_apply`: each workgroup rescans its piece from its prefix (the
//!    identity when not carried), tile by tile: every invocation folds its
//!    `K` values, a two-level scan of the 256 folds in workgroup memory (16
//!    invocations scan 16 folds each, then every invocation joins the
//!    group totals before its own) gives each its prefix, and each rescans
//!    its values from it, writing the results over them in the tile.
//!
//! Phases 1 and 3 combine the 256 invocations' folds in two levels of 16
//! rather than a tree or a Hillis–Steele scan: two barriers instead of
//! eight or sixteen, for a few more reads of workgroup memory.
//!
//! Numerics are the chunked path's ([`super::Accumulation`]): the running
//! values, including those in workgroup memory, are f64 or compensated f32
//! pairs, rounded to the data's dtype only when written. The order of
//! combination differs from the CPU's sequential one (a tree within each
//! tile), which stays within the same bounds.
//!
//! # Workgroup memory
//!
//! The tile takes `T + T / P` slots of the data's dtype (a slot skipped
//! after every `P` values, [`pad_every`], so the invocations reading `K`
//! consecutive values hit distinct banks), plus 256 running values (16
//! bytes: room for the largest, an f64 product) and 256 flags. [`items_for`] takes the largest `K` (a power of two up to
//! [`max_items`]) that fits the adapter's
//! `max_compute_workgroup_storage_size`; WebGPU's minimum (16 KiB) fits
//! `K = 8` for f32 and `K = 4` for f64.

use gearbox_core::{DType, Result, Shape};

use super::super::{declined, Modules, WORKGROUP};
use super::{acc_bytes, accumulator, chunks, Accumulation};
use crate::buffer::WgpuBuf;
use crate::device::Device;

/// Pieces the plan aims at: enough workgroups to keep a large GPU's memory
/// busy for several waves, few enough that one workgroup per lane carries
/// the totals (phase 2) quickly.
pub const TARGET_PIECES: usize = 4096;

/// Lanes cut into at most this many pieces carry their totals with one
/// invocation each (phase 2), more with a workgroup each: an invocation's
/// walk alternates reading and writing the totals, so its reads do not
/// overlap, which at this length costs about what a workgroup scan's
/// barriers do. (Lanes are cut into that few pieces only when there are
/// many lanes or they are short; a long lane alone gets the target's
/// pieces.)
pub const SERIAL_CARRY_MAX: usize = 16;

/// The most values an invocation takes in one tile: 64 bytes (16 f32 or 8
/// f64 values), enough independent loads in flight per invocation, with
/// tiles small enough for several workgroups per multiprocessor.
pub fn max_items(dtype: DType) -> usize {
    if dtype == DType::F64 {
        8
    } else {
        16
    }
}

/// The tile in workgroup memory skips a slot after every this many values
/// of `dtype`: 32 four-byte or 16 eight-byte values, one row of 32 banks,
/// so that invocations reading `K` consecutive values each (`K` a power of
/// two) read distinct banks at every step.
pub fn pad_every(dtype: DType) -> usize {
    if dtype == DType::F64 {
        16
    } else {
        32
    }
}

/// Bytes of workgroup memory the tile kernels for `dtype` data take with
/// `items` values per invocation: the padded tile, 256 running values (16
/// bytes: the largest, an f64 product's mantissa and exponent, so that one
/// tiling serves sums and products) and 256 flags.
pub fn workgroup_bytes(dtype: DType, items: usize) -> usize {
    let tile = WORKGROUP as usize * items;
    let slots = tile + tile / pad_every(dtype);
    slots * dtype.size_bytes() + WORKGROUP as usize * (16 + 4)
}

/// The most values per invocation for `dtype` data whose tile kernels fit
/// `limit` bytes of workgroup memory: a power of two up to [`max_items`];
/// `None` when not even one does.
pub fn items_for(dtype: DType, limit: u32) -> Option<usize> {
    let mut items = max_items(dtype);
    while items >= 1 {
        if workgroup_bytes(dtype, items) <= limit as usize {
            return Some(items);
        }
        items /= 2;
    }
    None
}

/// How the tiled path cuts its work: `items` values per invocation (`K`, a
/// power of two; tiles of `256 K` values) and about `target_pieces` pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    /// Values each invocation takes in a tile (`K`).
    pub items: usize,
    /// The number of pieces (workgroups' shares) the plan aims at.
    pub target_pieces: usize,
}

impl Tiling {
    /// The tiling for `dtype` data on `dev`: the most values per invocation
    /// its workgroup memory fits ([`items_for`]) and [`TARGET_PIECES`];
    /// `None` when no tile fits.
    pub fn of(dev: &Device, dtype: DType) -> Option<Tiling> {
        let limit = dev.limits.max_compute_workgroup_storage_size;
        Some(Tiling {
            items: items_for(dtype, limit)?,
            target_pieces: TARGET_PIECES,
        })
    }

    /// Values per tile (`256 K`).
    pub fn tile(self) -> usize {
        WORKGROUP as usize * self.items
    }
}

/// The pieces of a tiled scan of `outer` contiguous lanes of `len` values:
/// `runs` runs of `run_len` values, each cut into `pieces` pieces of
/// `piece_len` values (the last of a run shorter), piece `c` of run `r`
/// starting at `r run_len + c piece_len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Values per run (a lane when `carried`, else the whole array).
    pub run_len: usize,
    /// Runs (the lanes when `carried`, else one).
    pub runs: usize,
    /// Pieces per run.
    pub pieces: usize,
    /// Values per piece (whole tiles when `carried`, else whole lanes).
    pub piece_len: usize,
    /// Whether pieces start from the totals of the pieces before them in
    /// their lane (phases 1 and 2 run).
    pub carried: bool,
}

impl Plan {
    /// The plan for `outer` lanes of `len` values cut as `tiling` says:
    /// lanes are cut into pieces of whole tiles when there are fewer of
    /// them than `target_pieces` and they are longer than a tile (about
    /// `target_pieces` pieces in all, never an empty one); otherwise a
    /// piece is as many whole lanes as make `n / target_pieces` values, and
    /// at least a tile.
    pub fn new(len: usize, outer: usize, tiling: Tiling) -> Plan {
        let tile = tiling.tile().max(1);
        let target = tiling.target_pieces.max(1);
        let tiles = len.div_ceil(tile);
        let cut = target.div_ceil(outer.max(1)).min(tiles);
        if cut > 1 {
            let piece_len = tiles.div_ceil(cut) * tile;
            let pieces = len.div_ceil(piece_len);
            return Plan {
                run_len: len,
                runs: outer,
                pieces,
                piece_len,
                carried: pieces > 1,
            };
        }
        let n = len * outer;
        let want = tile.max(n.div_ceil(target));
        let piece_len = (want / len.max(1)).max(1) * len.max(1);
        Plan {
            run_len: n,
            runs: 1,
            pieces: n.div_ceil(piece_len),
            piece_len,
            carried: false,
        }
    }

    /// The kernels' uniform (`struct Tiles`): the plan, the lane length,
    /// the operation, and the opaque zero.
    fn uniform(&self, len: usize, product: bool) -> Vec<u8> {
        let words = [
            self.run_len,
            self.runs,
            self.pieces,
            self.piece_len,
            len,
            product as usize,
            self.carried as usize,
            0,
        ];
        // Every word is below 2^31: the scan's checks bound the element
        // count, which bounds every length and count of a plan.
        words
            .iter()
            .flat_map(|&w| (w as u32).to_le_bytes())
            .collect()
    }
}

/// Phases 1 and 3 over `Elem` data and `Acc` running values, for tiles of
/// `TILE_K` values per invocation padded every `PAD` values (constants the
/// module's source defines first). Bindings from 0 and 8, each entry
/// point's uniform right after its buffers.
const TILES: &str = "
const TILE: u32 = 256u * TILE_K;

struct Tiles {
  // run_len, runs, pieces (per run), piece_len
  geo: vec4<u32>,
  // lane length (segments start at its multiples), product, carried,
  // 0 (the opaque zero)
  more: vec4<u32>,
}

// A zero the compiler cannot see, set from the uniform by each entry point
// (the compensated accumulator's guard against algebraic rewriting).
var<private> gb_opaque: u32;

// The tile, padded: value i of the tile lives at gb_slot(i).
var<workgroup> gb_tile: array<Elem, TILE + TILE / PAD>;
// Running values of the invocations, and (scans) whether each contains
// the start of a lane.
var<workgroup> gb_part: array<Acc, 256>;
var<workgroup> gb_head: array<u32, 256>;

fn gb_slot(i: u32) -> u32 { return i + i / PAD; }

// The offset from position p of the first lane start (multiple of seg) at
// or after it, when below count; TILE_K (none) otherwise.
fn gb_first_start(p: u32, count: u32, seg: u32) -> u32 {
  let r = p % seg;
  let off = select(seg - r, 0u, r == 0u);
  return select(TILE_K, off, off < count);
}

// The lane start after the one at offset at, when below count; TILE_K
// (none) otherwise.
fn gb_next_start(at: u32, count: u32, seg: u32) -> u32 {
  // at < TILE_K and seg < 2^31: no overflow.
  let off = at + seg;
  return select(TILE_K, off, off < count);
}

// Piece w: its range [start, end) of the data.
fn gb_piece_range(p: Tiles, w: u32) -> vec2<u32> {
  let run0 = (w / p.geo.z) * p.geo.x;
  let off = (w % p.geo.z) * p.geo.w;
  return vec2<u32>(run0 + off, run0 + min(p.geo.x, off + p.geo.w));
}

@group(0) @binding(0) var<storage, read> gb_x1: array<Elem>;
@group(0) @binding(1) var<storage, read_write> gb_t1: array<Acc>;
@group(0) @binding(2) var<uniform> gb_p1: Tiles;

// Phase 1: the total of each piece (of one lane: no segments), a workgroup
// per piece.
@compute @workgroup_size(256)
fn gb_tile_fold(@builtin(local_invocation_index) t: u32,
                @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = gb_p1;
  gb_opaque = p.more.w;
  let product = p.more.y != 0u;
  let items = p.geo.y * p.geo.z;
  for (var w = wid.x; w < items; w += nwg.x) {
    let span = gb_piece_range(p, w);
    var acc = gb_acc_identity(product);
    for (var b = span.x; b < span.y; b += TILE) {
      if (span.y - b >= TILE) {
        for (var j = 0u; j < TILE_K; j++) {
          acc = gb_acc_join(acc, gb_acc_of(gb_x1[b + t + 256u * j]), product);
        }
      } else {
        for (var i = t; i < span.y - b; i += 256u) {
          acc = gb_acc_join(acc, gb_acc_of(gb_x1[b + i]), product);
        }
      }
    }
    // The 256 folds reduced in two levels, with two barriers: 16
    // invocations fold 16 each, then one folds their 16.
    gb_part[t] = acc;
    workgroupBarrier();
    if (t < 16u) {
      var v = gb_part[16u * t];
      for (var j = 1u; j < 16u; j++) {
        v = gb_acc_join(v, gb_part[16u * t + j], product);
      }
      gb_part[16u * t] = v;
    }
    workgroupBarrier();
    if (t == 0u) {
      var v = gb_part[0];
      for (var q = 1u; q < 16u; q++) {
        v = gb_acc_join(v, gb_part[16u * q], product);
      }
      gb_t1[w] = v;
    }
    // The folds are read before the next piece's overwrite them.
    workgroupBarrier();
  }
}

@group(0) @binding(8) var<storage, read> gb_x3: array<Elem>;
@group(0) @binding(9) var<storage, read> gb_t3: array<Acc>;
@group(0) @binding(10) var<storage, read_write> gb_y3: array<Elem>;
@group(0) @binding(11) var<uniform> gb_p3: Tiles;

// Phase 3: each piece scanned tile by tile from its prefix (the identity
// when not carried), restarting at every lane's start, a workgroup per
// piece.
@compute @workgroup_size(256)
fn gb_tile_apply(@builtin(local_invocation_index) t: u32,
                 @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = gb_p3;
  gb_opaque = p.more.w;
  let seg = p.more.x;
  let product = p.more.y != 0u;
  let items = p.geo.y * p.geo.z;
  let one = select(Elem(0.0), Elem(1.0), product);
  let i0 = t * TILE_K;
  for (var w = wid.x; w < items; w += nwg.x) {
    let span = gb_piece_range(p, w);
    // The running value entering the tile.
    var carry = gb_acc_identity(product);
    if (p.more.z != 0u) {
      carry = gb_t3[w];
    }
    for (var b = span.x; b < span.y; b += TILE) {
      let m = min(TILE, span.y - b);
      // Coalesced loads; the identity past the piece's end.
      for (var j = 0u; j < TILE_K; j++) {
        let i = t + 256u * j;
        var v = one;
        if (i < m) {
          v = gb_x3[b + i];
        }
        gb_tile[gb_slot(i)] = v;
      }
      workgroupBarrier();
      // This invocation's values i0.. and its fold of them since the last
      // lane start among them. Lane starts are the multiples of seg; only
      // values before m count (the rest are the identity). first: the
      // offset of the first start among them, TILE_K if none.
      let count = min(TILE_K, m - min(m, i0));
      let first = gb_first_start(b + i0, count, seg);
      let head = select(0u, 1u, first < TILE_K);
      var own = gb_acc_identity(product);
      var next = first;
      for (var j = 0u; j < TILE_K; j++) {
        let a = gb_acc_of(gb_tile[gb_slot(i0 + j)]);
        if (j == next) {
          own = a;
          next = gb_next_start(next, count, seg);
        } else {
          own = gb_acc_join(own, a, product);
        }
      }
      // The folds scanned with the segmented operator (a stretch holding a
      // lane's start ignores what came before it) in two levels, with two
      // barriers: 16 invocations scan 16 folds each in place, then every
      // invocation joins the tile's carry, the totals of the groups before
      // its own, and the folds before it in its group.
      gb_part[t] = own;
      gb_head[t] = head;
      workgroupBarrier();
      if (t < 16u) {
        var v = gb_part[16u * t];
        var h = gb_head[16u * t];
        for (var j = 1u; j < 16u; j++) {
          let k = 16u * t + j;
          if (gb_head[k] != 0u) {
            v = gb_part[k];
            h = 1u;
          } else {
            v = gb_acc_join(v, gb_part[k], product);
          }
          gb_part[k] = v;
          gb_head[k] = h;
        }
      }
      workgroupBarrier();
      let g = t / 16u;
      var acc = carry;
      for (var q = 0u; q < 16u; q++) {
        if (q == g) {
          acc = carry;
        }
        let k = 16u * q + 15u;
        if (gb_head[k] != 0u) {
          carry = gb_part[k];
        } else {
          carry = gb_acc_join(carry, gb_part[k], product);
        }
      }
      // (carry is now the next tile's: through all 256 folds.)
      if (t % 16u != 0u) {
        if (gb_head[t - 1u] != 0u) {
          acc = gb_part[t - 1u];
        } else {
          acc = gb_acc_join(acc, gb_part[t - 1u], product);
        }
      }
      // The values rescanned from there, the results written over them.
      next = first;
      for (var j = 0u; j < TILE_K; j++) {
        let s = gb_slot(i0 + j);
        let a = gb_acc_of(gb_tile[s]);
        if (j == next) {
          acc = a;
          next = gb_next_start(next, count, seg);
        } else {
          acc = gb_acc_join(acc, a, product);
        }
        gb_tile[s] = gb_acc_value(acc);
      }
      workgroupBarrier();
      // Coalesced stores.
      for (var j = 0u; j < TILE_K; j++) {
        let i = t + 256u * j;
        if (i < m) {
          gb_y3[b + i] = gb_tile[gb_slot(i)];
        }
      }
      // The tile and the folds are read before the next tile overwrites
      // them.
      workgroupBarrier();
    }
  }
}
";

/// The entry points of the tiled module.
pub const ENTRIES: [&str; 2] = ["gb_tile_fold", "gb_tile_apply"];

/// The WGSL module scanning `elem` data (f32 or f64) with `acc` (products
/// when `product`), `items` values per invocation.
pub fn source(elem: DType, (acc, product): (Accumulation, bool), items: usize) -> String {
    let pad = pad_every(elem);
    let widen = super::widen_source(elem, acc, product);
    let elem = if elem == DType::F64 { "f64" } else { "f32" };
    let acc = accumulator(acc, product);
    format!(
        "alias Elem = {elem};\nconst TILE_K: u32 = {items}u;\nconst PAD: u32 = {pad}u;\n{widen}{acc}{TILES}"
    )
}

/// The cumulative sum (or product, when `product`) of `x` (shape `shape`)
/// along `axis` (or the flattening) on the tiled path cut as `tiling`
/// says, accumulated as `acc` says, into a new buffer of `out` shape and
/// dtype (the input's). [`super::scan`] takes this path where it applies;
/// called directly (tests), it declines a layout with `inner > 1` and a
/// tiling whose `items` is not a power of two up to [`max_items`] or does
/// not fit the adapter's workgroup memory.
pub fn scan(
    dev: &Device,
    modules: &Modules,
    (x, shape): (&WgpuBuf, &Shape),
    (product, axis): (bool, Option<usize>),
    out: (&Shape, DType),
    acc: Accumulation,
    tiling: Tiling,
) -> Result<WgpuBuf> {
    let name = super::name(product);
    let (inner, len, outer) = super::check(dev, (x, shape), axis, out, (acc, name))?;
    let dtype = out.1;
    if inner != 1 {
        return Err(declined(
            name,
            format!("the tiled scan takes contiguous lanes, not {inner} interleaved"),
        ));
    }
    let items = tiling.items;
    let limit = dev.limits.max_compute_workgroup_storage_size as usize;
    if !items.is_power_of_two()
        || items > max_items(dtype)
        || workgroup_bytes(dtype, items) > limit
        || tiling.target_pieces == 0
    {
        return Err(declined(
            name,
            format!(
                "{items} {dtype} values per invocation and {} pieces: not a tiling of this adapter",
                tiling.target_pieces
            ),
        ));
    }
    let y = dev.alloc(shape.numel(), dtype)?;
    if len > 0 && outer > 0 {
        run(
            dev,
            modules,
            (x, &y),
            (len, outer),
            (product, dtype, acc),
            tiling,
        )?;
    }
    Ok(y)
}

/// The tiled scan of `outer` contiguous lanes of `len` values (at least
/// one) of `x` into `y`.
pub(super) fn run(
    dev: &Device,
    modules: &Modules,
    (x, y): (&WgpuBuf, &WgpuBuf),
    (len, outer): (usize, usize),
    (product, dtype, acc): (bool, DType, Accumulation),
    tiling: Tiling,
) -> Result<()> {
    let plan = Plan::new(len, outer, tiling);
    let uniform = plan.uniform(len, product);
    let op = if product { "prod" } else { "sum" };
    let key = format!("scan-tiles-{op}-{dtype}-{}-k{}", acc.name(), tiling.items);
    let program = modules.get(
        dev,
        &key,
        || source(dtype, (acc, product), tiling.items),
        &ENTRIES,
    )?;
    let pieces = plan.runs * plan.pieces;
    // A workgroup per piece (the kernels loop past the adapter's limit).
    let most = dev.limits.max_compute_workgroups_per_dimension.max(1) as usize;
    let groups = [pieces.clamp(1, most) as u32, 1, 1];
    // The pieces' totals, then prefixes (8 or 16 bytes each, `acc_bytes`);
    // one unused value when not carried.
    let values = if plan.carried { pieces } else { 1 };
    let totals = dev.alloc(values * acc_bytes(acc, product) / 8, DType::F64)?;
    if plan.carried {
        let fold = program.pipeline("gb_tile_fold")?;
        dev.dispatch(fold, 0, &[x, &totals], &uniform, groups)?;
        // The carry kernels see the totals as the chunked path's: one
        // lane per run, `pieces` chunks each.
        let chunked = chunks::program(dev, modules, (dtype, acc, product))?;
        let carry_uniform =
            chunks::uniform((1, len, outer), (plan.pieces, plan.piece_len), product);
        let lanes = (outer, plan.pieces);
        chunks::carry(
            dev,
            &chunked,
            &totals,
            &carry_uniform,
            lanes,
            SERIAL_CARRY_MAX,
        )?;
    }
    let apply = program.pipeline("gb_tile_apply")?;
    dev.dispatch(apply, 8, &[x, &totals, y], &uniform, groups)
}

// The kernels' `@workgroup_size(256)` and 256-wide strides.
const _: () = assert!(WORKGROUP == 256);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_valid_wgsl() {
        for (elem, acc) in [
            (DType::F32, Accumulation::Double),
            (DType::F64, Accumulation::Double),
            (DType::F32, Accumulation::Compensated),
        ] {
            let mut items = max_items(elem);
            while items >= 1 {
                for product in [false, true] {
                    let src = source(elem, (acc, product), items);
                    if let Err(e) = super::super::super::validate_wgsl(&src) {
                        panic!("{elem} {acc:?} product {product} K={items}: {e}");
                    }
                }
                items /= 2;
            }
        }
    }

    #[test]
    fn items_fit_the_workgroup_memory() {
        // WebGPU's minimum, and a GPU's 48 KiB.
        assert_eq!(items_for(DType::F32, 16 << 10), Some(8));
        assert_eq!(items_for(DType::F64, 16 << 10), Some(4));
        assert_eq!(items_for(DType::F32, 48 << 10), Some(16));
        assert_eq!(items_for(DType::F64, 48 << 10), Some(8));
        assert_eq!(items_for(DType::F32, 1024), None);
        for dtype in [DType::F32, DType::F64] {
            let k = items_for(dtype, 16 << 10).unwrap();
            assert!(workgroup_bytes(dtype, k) <= 16 << 10);
            assert!(workgroup_bytes(dtype, 2 * k) > 16 << 10);
        }
    }

    /// Pieces cover every value once, none empty; carried pieces stay in
    /// their lane and are whole tiles but the last; uncarried ones are
    /// whole lanes.
    fn covers(plan: Plan, len: usize, outer: usize, tile: usize) {
        let n = len * outer;
        assert_eq!(plan.runs * plan.run_len, n, "{plan:?}");
        assert!(plan.pieces >= 1 && plan.piece_len >= 1, "{plan:?}");
        assert!(
            (plan.pieces - 1) * plan.piece_len < plan.run_len,
            "{plan:?}"
        );
        assert!(plan.pieces * plan.piece_len >= plan.run_len, "{plan:?}");
        if plan.carried {
            assert_eq!((plan.runs, plan.run_len), (outer, len));
            assert_eq!(plan.piece_len % tile, 0, "{plan:?}");
        } else {
            assert_eq!(plan.runs, 1);
            assert_eq!(plan.piece_len % len, 0, "{plan:?}");
        }
    }

    #[test]
    fn plans_cut_few_long_lanes_and_group_short_ones() {
        let tiling = Tiling {
            items: 16,
            target_pieces: TARGET_PIECES,
        };
        let tile = tiling.tile();
        // One long lane: about the target's pieces of whole tiles.
        let plan = Plan::new(1 << 28, 1, tiling);
        assert_eq!((plan.pieces, plan.piece_len), (4096, 16 * tile));
        assert!(plan.carried);
        let plan = Plan::new(1 << 22, 1, tiling);
        assert_eq!((plan.pieces, plan.piece_len), (1024, tile));
        // Many lanes: whole lanes per piece, at least a tile's worth.
        let plan = Plan::new(1000, 5000, tiling);
        assert_eq!((plan.piece_len, plan.carried), (4000, false));
        let plan = Plan::new(3, 5000, tiling);
        assert_eq!((plan.piece_len, plan.pieces), (4095, 4));
        for (len, outer) in [
            (1usize, 1usize),
            (1, 1000),
            (255, 1),
            (4095, 1),
            (4096, 1),
            (4097, 1),
            (100_003, 2),
            (1_000_003, 1),
            (1000, 7),
            (7, 1000),
            (3, 5000),
            (5000, 3),
            (100_000, 5000),
            ((1 << 31) - 1, 1),
        ] {
            covers(Plan::new(len, outer, tiling), len, outer, tile);
            let small = Tiling {
                items: 4,
                target_pieces: 5,
            };
            covers(Plan::new(len, outer, small), len, outer, small.tile());
        }
    }
}
