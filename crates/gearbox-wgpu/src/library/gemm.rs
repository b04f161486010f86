//! Dense matrix products on the wgpu device: [`LibraryCall::Matmul`]
//! (`C = A B`), [`LibraryCall::Crossprod`] (`C = Aᵀ B`) and
//! [`LibraryCall::Tcrossprod`] (`C = A Bᵀ`) on column-major storage, as one
//! tiled GEMM kernel whose WGSL this module writes (`Kernel::source`) for
//! a tile configuration ([`Tile`]), an element type (f32, or f64 where the
//! device has SHADER_F64) and the operands' layouts. Accumulation is in the
//! element type (f32 for f32, as cuBLAS's SGEMM).
//!
//! # The tiling
//!
//! Each workgroup computes a `bm x bn` tile of C. It walks k in steps of
//! `bk`: every step stages a `bm x bk` tile of A and a `bk x bn` tile of B in
//! workgroup memory, and each invocation multiplies its `tm x tn` block of
//! C out of them, kept in registers (`tm / 4 * tn` `vec4` accumulators, one
//! `fma` per 4 products). A register block reaches `tm` rows and `tn`
//! columns from `tm + tn` staged values, so each value read from workgroup
//! memory feeds `tn` or `tm` products: with the large tile (128 x 128 by
//! 128 invocations of 8 x 16) each k costs an invocation 6 `vec4` reads
//! for 32 `fma`s (128 products), and each value loaded from global memory
//! serves 128 products.
//!
//! - **Software pipelining.** Workgroup memory holds two steps. While an
//!   invocation multiplies step `t` it has already issued the global loads
//!   of step `t + 1` into registers, and stores them to the other half after
//!   its multiplies: the loads' latency hides behind the arithmetic, and
//!   one barrier per step suffices (the barrier closing step `t` also
//!   guarantees that every invocation finished reading the half step `t + 1`
//!   overwrites).
//! - **Layouts.** Staged tiles are k-major (`[k][m]`, `[k][n]`), so the
//!   inner loop reads one `vec4` of A and of B per 4 rows or columns. An
//!   invocation's `tm` rows are `tm / 4` groups of 4 spaced `bm / (tm / 4)`
//!   apart (and its columns likewise): adjacent invocations read adjacent
//!   `vec4`s, and the invocations of one column share (broadcast) theirs.
//!   Rows of the staged tiles are padded by 4 values so that the transposing
//!   stores below write 32 distinct banks.
//! - **Transposes are loads.** Column-major A of `Matmul` runs along m, and
//!   A of `Crossprod` along k; B of `Matmul` and `Crossprod` runs along k, of
//!   `Tcrossprod` along n. A tile running along its outer dimension (m or n)
//!   is copied as it is; one running along k is read along k (coalesced) and
//!   stored transposed into the k-major tile. So all three calls cost the
//!   same, and no operand is ever transposed in memory.
//! - **Vector loads.** An operand whose rows (its leading dimension) are a
//!   multiple of 4 is bound as `array<vec4<T>>` and read 16 bytes at a time
//!   (every tile origin and leading dimension is then 16-byte aligned, and a
//!   `vec4` inside the bounds is wholly inside); otherwise as `array<T>`,
//!   read a value at a time, consecutive invocations reading consecutive
//!   addresses (`Pattern`). C is stored as `vec4`s when m is a multiple
//!   of 4.
//! - **Bounds.** Loads outside A or B read 0 (a guarded load of element 0,
//!   then a select), stores outside C are skipped: any m, n, k work, and
//!   the kernels, compiled without naga's bounds checks
//!   ([`crate::program`]), never touch memory outside their buffers.
//! - **Launch order.** Tiles are numbered so that `group_m` consecutive
//!   row-tiles share a column-tile before moving on (the order of Triton's
//!   GEMMs): workgroups resident together reuse each other's A and B tiles
//!   in L2. The tile number spans the grid's x and y, so no dimension
//!   exceeds the adapter's limit.
//!
//! # Choosing the tile
//!
//! [`Tile::pick`] takes the large tile when the product has enough of them
//! to fill a big GPU, a 64 x 64 tile (256 invocations of 4 x 4) for
//! mid-sized products, and a 32 x 32 tile (64 invocations of 4 x 4) for
//! small or thin ones; f64 has large and medium tiles of its own, with
//! half the values per invocation ([`Tile::built_in`]).
//! `GEARBOX_WGPU_GEMM_TILE=BMxBNxBK/TMxTN[/gG]` (e.g. `128x128x8/8x16/g8`,
//! the large tile) replaces the choice for every product, for tuning;
//! [`product`] takes one per call. A tile the adapter cannot run (workgroup
//! memory, invocations) falls back to the dtype's medium or small one.
//!
//! # Speed
//!
//! Through NVIDIA's Vulkan driver, 4096^3 in f32 ran at 39 TFLOP/s
//! (`matmul`, `tcrossprod`) and 35 to 36 (`crossprod`) on an H100 and an
//! H200, where cuBLAS's SGEMM (FP32, no TF32) ran at 51. On the H200:
//! 4095^3 (no `vec4` operand) at 34; 2048^3 at 32 to 38 (cuBLAS 50);
//! 1024^3 at 23 to 26 (cuBLAS 38). f64 on the H100: 4096^3 at 15
//! (cuBLAS's DGEMM, on tensor cores, 60). The bench is the ignored
//! `gemm_throughput` test of `tests/gpu_gemm.rs`.

use std::sync::OnceLock;

use gearbox_core::runtime::backend::{DeviceBuffer, LibraryCall};
use gearbox_core::{DType, Result, Shape};

use crate::buffer::WgpuBuf;
use crate::device::{fault, has_64_bit, Device};
use crate::library::Modules;

/// The environment variable that replaces [`Tile::pick`] for every product.
pub const TILE_ENV: &str = "GEARBOX_WGPU_GEMM_TILE";

/// The entry point of every GEMM module.
const ENTRY: &str = "gemm";

/// Values of padding at the end of each k-row of a staged tile (one `vec4`):
/// the transposing stores of 16 neighbouring rows and 2 k-rows then hit 32
/// distinct banks (see the module docs).
const PAD: u32 = 4;

/// A workgroup's share of a product and how its invocations divide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tile {
    /// Rows of C a workgroup computes.
    pub bm: u32,
    /// Columns of C a workgroup computes.
    pub bn: u32,
    /// Depth of the operand tiles staged per step (a multiple of 8).
    pub bk: u32,
    /// Rows of C an invocation computes (4, 8, 12 or 16).
    pub tm: u32,
    /// Columns of C an invocation computes (4, 8, 12 or 16).
    pub tn: u32,
    /// Row-tiles that share a column-tile in the launch order (L2 reuse);
    /// 1 walks the tiles row by row.
    pub group_m: u32,
}

impl Tile {
    /// 128 x 128 by steps of 8, 128 invocations of 8 x 16: for large
    /// products (on an H100, 4096^3 at 36 to 39 TFLOP/s; 8 x 8 by 256
    /// invocations gave 34 to 36, deeper steps and 16 x 16 blocks less).
    pub const LARGE: Tile = Tile {
        bm: 128,
        bn: 128,
        bk: 8,
        tm: 8,
        tn: 16,
        group_m: 8,
    };

    /// 64 x 64 by steps of 16, 256 invocations of 4 x 4: for mid-sized
    /// ones (on an H200, 1024^3 at 24 to 26 TFLOP/s, where the large tile
    /// leaves most multiprocessors idle at 12 to 14).
    pub const MEDIUM: Tile = Tile {
        bm: 64,
        bn: 64,
        bk: 16,
        tm: 4,
        tn: 4,
        group_m: 8,
    };

    /// The large tile of f64: 128 x 128 by steps of 8, 256 invocations of
    /// 8 x 8 (on an H100, 4096^3 at 15 TFLOP/s).
    pub const LARGE_F64: Tile = Tile {
        bm: 128,
        bn: 128,
        bk: 8,
        tm: 8,
        tn: 8,
        group_m: 8,
    };

    /// The medium tile of f64: 64 x 64 by steps of 8, 128 invocations of
    /// 4 x 8 (on an H100, 1024^3 at 12 TFLOP/s).
    pub const MEDIUM_F64: Tile = Tile {
        bm: 64,
        bn: 64,
        bk: 8,
        tm: 4,
        tn: 8,
        group_m: 8,
    };

    /// 32 x 32 by steps of 8, 64 invocations of 4 x 4: for small or thin
    /// ones, in either dtype (and on any adapter: it fits WebGPU's default
    /// limits in f64 too).
    pub const SMALL: Tile = Tile {
        bm: 32,
        bn: 32,
        bk: 8,
        tm: 4,
        tn: 4,
        group_m: 8,
    };

    /// Workgroups of the large tile below which [`Tile::pick`] takes the
    /// medium one: fewer than about one per multiprocessor of a big GPU
    /// (an H100 has 132) leave it idle. Measured there: 2048^3 (256 tiles)
    /// runs faster with the large tile, 1024^3 (64) with the medium one.
    const LARGE_MIN_TILES: usize = 128;

    /// Invocations per workgroup.
    pub fn threads(&self) -> u32 {
        (self.bm / self.tm) * (self.bn / self.tn)
    }

    /// Why this configuration cannot be generated, if it cannot.
    pub fn check(&self) -> std::result::Result<(), String> {
        let per_thread = |t: u32| t.is_multiple_of(4) && (4..=16).contains(&t);
        if !per_thread(self.tm) || !per_thread(self.tn) {
            return Err(format!(
                "an invocation's block ({} x {}) must be 4, 8, 12 or 16 each way",
                self.tm, self.tn
            ));
        }
        // Multiples of 16: a `Pattern::Spread` slot's rows, a quarter-tile
        // apart, then share one lane of the staged vec4s.
        let side = |b: u32, t: u32| b.is_multiple_of(t) && b.is_multiple_of(16) && b <= 512;
        if !side(self.bm, self.tm) || !side(self.bn, self.tn) {
            return Err(format!(
                "the tile ({} x {}) must be a multiple of 16 and of the invocation's \
                 block ({} x {}) each way, and at most 512",
                self.bm, self.bn, self.tm, self.tn
            ));
        }
        if !self.bk.is_multiple_of(8) || !(8..=64).contains(&self.bk) {
            return Err(format!(
                "the step depth ({}) must be a multiple of 8 up to 64",
                self.bk
            ));
        }
        if self.threads() > 1024 || !(1..=64).contains(&self.group_m) {
            return Err(format!(
                "{} invocations (at most 1024) and a launch group of {} (1 to 64)",
                self.threads(),
                self.group_m
            ));
        }
        Ok(())
    }

    /// Bytes of workgroup memory with elements of `size` bytes: two steps
    /// of both operand tiles, padded rows.
    pub fn workgroup_bytes(&self, size: u32) -> u64 {
        2 * self.bk as u64 * (self.bm + PAD + self.bn + PAD) as u64 * size as u64
    }

    /// Whether an adapter with `limits` runs this tile on elements of
    /// `size` bytes.
    fn fits(&self, limits: &wgpu::Limits, size: u32) -> bool {
        self.workgroup_bytes(size) <= limits.max_compute_workgroup_storage_size as u64
            && self.threads() <= limits.max_compute_invocations_per_workgroup
            && self.threads() <= limits.max_compute_workgroup_size_x
    }

    /// The built-in choice for an `m x n` result in `dtype`: the large
    /// tile when there are enough of them to fill a big GPU, else the
    /// medium one when both sides reach 64, else the small one (the f64
    /// tiles in f64).
    pub fn pick(dtype: DType, m: usize, n: usize) -> Tile {
        let [large, medium, small] = Tile::built_in(dtype);
        let count = |t: Tile| m.div_ceil(t.bm as usize) * n.div_ceil(t.bn as usize);
        if m >= 128 && n >= 128 && count(large) >= Tile::LARGE_MIN_TILES {
            large
        } else if m >= 64 && n >= 64 {
            medium
        } else {
            small
        }
    }

    /// The large, medium and small tiles of `dtype`. An invocation's block
    /// of C stays within 512 bytes of registers (8 x 16 in f32, 8 x 8 in
    /// f64): the f32 tiles' blocks in f64 spill (4096^3 in f64 on an H100
    /// ran at 3 TFLOP/s with 8 x 16 blocks, 15 with 8 x 8).
    pub fn built_in(dtype: DType) -> [Tile; 3] {
        match dtype {
            DType::F64 => [Tile::LARGE_F64, Tile::MEDIUM_F64, Tile::SMALL],
            _ => [Tile::LARGE, Tile::MEDIUM, Tile::SMALL],
        }
    }

    /// Parses `BMxBNxBK/TMxTN` with an optional `/gG` (launch group), as
    /// [`Tile`]'s `Display` writes it; the group defaults to 8.
    pub fn parse(text: &str) -> std::result::Result<Tile, String> {
        let bad = || format!("{text:?} is not BMxBNxBK/TMxTN[/gG], e.g. 128x128x8/8x16/g8");
        let numbers = |part: &str| -> std::result::Result<Vec<u32>, String> {
            part.split('x')
                .map(|v| v.trim().parse::<u32>().map_err(|_| bad()))
                .collect()
        };
        let parts: Vec<&str> = text.trim().split('/').collect();
        let (tile, block) = match parts.as_slice() {
            [t, b] | [t, b, _] => (numbers(t)?, numbers(b)?),
            _ => return Err(bad()),
        };
        let group_m = match parts.get(2) {
            Some(g) => g
                .trim()
                .trim_start_matches('g')
                .parse::<u32>()
                .map_err(|_| bad())?,
            None => 8,
        };
        let (&[bm, bn, bk], &[tm, tn]) = (tile.as_slice(), block.as_slice()) else {
            return Err(bad());
        };
        let parsed = Tile {
            bm,
            bn,
            bk,
            tm,
            tn,
            group_m,
        };
        parsed.check()?;
        Ok(parsed)
    }
}

impl std::fmt::Display for Tile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}x{}x{}/{}x{}/g{}",
            self.bm, self.bn, self.bk, self.tm, self.tn, self.group_m
        )
    }
}

/// The tile `GEARBOX_WGPU_GEMM_TILE` names, read once per process (an
/// unreadable value is reported and ignored).
pub fn env_tile() -> Option<Tile> {
    static TILE: OnceLock<Option<Tile>> = OnceLock::new();
    *TILE.get_or_init(|| {
        let text = std::env::var(TILE_ENV).ok()?;
        Tile::parse(&text)
            .map_err(|why| tracing::warn!("{TILE_ENV} ignored: {why}"))
            .ok()
    })
}

/// The tile a product of `m x n` runs with on `dev` in `dtype`: `wanted`
/// (else the environment's, else [`Tile::pick`]'s), or the first of the
/// dtype's medium and small tiles the adapter can run.
fn fit(dev: &Device, dtype: DType, wanted: Option<Tile>, m: usize, n: usize) -> Result<Tile> {
    let first = wanted
        .or_else(env_tile)
        .unwrap_or_else(|| Tile::pick(dtype, m, n));
    first.check().map_err(|why| fault("gemm", why))?;
    let size = element_size(dtype);
    let [_, medium, small] = Tile::built_in(dtype);
    let fallbacks = [medium, small].into_iter().filter(|&t| t != first);
    std::iter::once(first)
        .chain(fallbacks)
        .find(|t| t.fits(&dev.limits, size))
        .ok_or_else(|| {
            fault(
                "gemm",
                format!(
                    "the adapter runs no GEMM tile ({} bytes of workgroup memory, {} invocations)",
                    dev.limits.max_compute_workgroup_storage_size,
                    dev.limits.max_compute_invocations_per_workgroup
                ),
            )
        })
}

/// Bytes of one element of `dtype` in a product (f32 or f64).
fn element_size(dtype: DType) -> u32 {
    if dtype == DType::F64 {
        8
    } else {
        4
    }
}

/// Which axis of an operand's tile is contiguous in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Run {
    /// The outer axis (m for A, n for B): copied into the k-major tile as is.
    Outer,
    /// The depth axis k: read along k, stored transposed.
    Depth,
}

/// How a kernel reads one operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Side {
    /// The contiguous axis.
    run: Run,
    /// Read as `vec4`s (rows a multiple of 4).
    wide: bool,
}

/// A product to run: sizes, operand rows (the leading dimensions) and
/// layouts.
#[derive(Debug, Clone, Copy)]
struct Problem {
    m: usize,
    n: usize,
    k: usize,
    a_rows: usize,
    b_rows: usize,
    a_run: Run,
    b_run: Run,
}

/// Rows and columns of a product operand: a vector `[k]` is the column
/// `[k, 1]`, as the core op reads it.
fn matrix_dims(call: LibraryCall, which: &str, s: &Shape) -> Result<(usize, usize)> {
    match *s.dims() {
        [r] => Ok((r, 1)),
        [r, c] => Ok((r, c)),
        _ => Err(fault(
            call.name(),
            format!("the {which} operand must be a vector or a matrix, not {s:?}"),
        )),
    }
}

impl Problem {
    /// The product `call` computes on operands of shapes `sa` and `sb`, or
    /// why the shapes do not make one.
    fn of(call: LibraryCall, sa: &Shape, sb: &Shape) -> Result<Problem> {
        if !call.is_gemm() {
            return Err(fault(call.name(), "not a matrix product"));
        }
        let (ar, ac) = matrix_dims(call, "left", sa)?;
        let (br, bc) = matrix_dims(call, "right", sb)?;
        let (m, ka, a_run) = match call {
            LibraryCall::Crossprod => (ac, ar, Run::Depth),
            _ => (ar, ac, Run::Outer),
        };
        let (kb, n, b_run) = match call {
            LibraryCall::Tcrossprod => (bc, br, Run::Outer),
            _ => (br, bc, Run::Depth),
        };
        if ka != kb {
            return Err(fault(
                call.name(),
                format!(
                    "operands {sa:?} and {sb:?} make no {} (inner dimensions {ka} and {kb})",
                    call.name()
                ),
            ));
        }
        Ok(Problem {
            m,
            n,
            k: ka,
            a_rows: ar,
            b_rows: br,
            a_run,
            b_run,
        })
    }

    /// The kernel's uniform: m, n, k, the leading dimensions of A, B and C
    /// in the units their bindings read (values or `vec4`s), the row-tiles
    /// and all tiles. Indices are u32: every one a kernel reads or writes
    /// at is below its operand's element count, rows and columns reach a
    /// tile past the last, and the launch order counts tiles a group of
    /// rows at a time, so all those must fit (with room to spare: 31 bits).
    fn uniform(&self, kernel: &Kernel) -> Result<[u32; 8]> {
        let unit = |wide: bool| if wide { 4 } else { 1 };
        let tile = kernel.tile;
        let tiles_m = self.m.div_ceil(tile.bm as usize);
        let tiles_n = self.n.div_ceil(tile.bn as usize);
        let tiles = tiles_m * tiles_n;
        let counts = [
            self.m.saturating_mul(self.k),
            self.k.saturating_mul(self.n),
            self.m.saturating_mul(self.n),
            self.m + tile.bm as usize,
            self.n + tile.bn as usize,
            tiles,
            tile.group_m as usize * tiles_n,
        ];
        if counts.iter().any(|&c| c > i32::MAX as usize) {
            return Err(fault(
                "gemm",
                format!(
                    "{} x {} x {} exceeds the 32-bit indices of WGSL kernels",
                    self.m, self.k, self.n
                ),
            ));
        }
        let words = [
            self.m,
            self.n,
            self.k,
            self.a_rows / unit(kernel.a.wide),
            self.b_rows / unit(kernel.b.wide),
            self.m / unit(kernel.wide_c),
            tiles_m,
            tiles,
        ];
        Ok(words.map(|w| w as u32))
    }
}

/// The workgroups of a launch over `tiles` tiles: x up to the adapter's
/// limit, the rest in y (the kernel numbers tiles across both and skips
/// numbers past the last).
fn grid(dev: &Device, tiles: u32) -> Result<[u32; 3]> {
    let most = dev.limits.max_compute_workgroups_per_dimension.max(1);
    let x = tiles.clamp(1, most);
    let y = tiles.div_ceil(x);
    if y > most {
        return Err(fault(
            "gemm",
            format!("{tiles} tiles exceed the adapter's grid ({most} x {most})"),
        ));
    }
    Ok([x, y, 1])
}

/// One GEMM kernel: the tile, the element type and how each operand is
/// read and C written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Kernel {
    tile: Tile,
    dtype: DType,
    a: Side,
    b: Side,
    /// C stored as `vec4`s (m a multiple of 4).
    wide_c: bool,
}

/// What the generator needs of one operand.
struct Operand {
    /// Binding name (`a`, `b`); the staged tile is `s` + name.
    name: &'static str,
    side: Side,
    /// The tile's outer size (`bm` or `bn`).
    outer: u32,
    /// The tile's first row of C (`m0`) or column (`n0`).
    origin: &'static str,
    /// The operand's outer size (`d.m` or `d.n`).
    extent: &'static str,
    /// Its leading dimension in the uniform.
    ld: &'static str,
}

impl Operand {
    /// `vec4`s per k-row of the staged tile, padding included.
    fn stride(&self) -> u32 {
        (self.outer + PAD) / 4
    }

    /// Slots (4 values each) of one step's tile.
    fn slots(&self, bk: u32) -> u32 {
        self.outer * bk / 4
    }

    /// How its tiles are read.
    fn pattern(&self) -> Pattern {
        match (self.side.run, self.side.wide) {
            (Run::Outer, _) => Pattern::Rows,
            (Run::Depth, true) => Pattern::Pairs,
            (Run::Depth, false) => Pattern::Spread,
        }
    }
}

/// How an operand's tile is read: which 4 values a slot holds, given the
/// layout. Consecutive invocations always read neighbouring memory. A
/// "row" here is a position along the outer axis (a row of C for A, a
/// column for B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    /// Along the outer axis (`vec4`s, or 4 single values when unaligned):
    /// a slot is 4 neighbouring rows of one k, stored as one `vec4`.
    Rows,
    /// Along k, aligned: a slot is one `vec4` of 4 neighbouring k of one
    /// row; invocation pairs read 8 k (a 32-byte sector), then move along
    /// the outer axis. The 4 values are stored transposed.
    Pairs,
    /// Along k, unaligned (single values): consecutive invocations read
    /// consecutive k of one row (`bk` of them), and each holds the values
    /// of 4 rows a quarter-tile apart. Reading 4 neighbouring k per
    /// invocation instead (as `Pairs` does) scatters each load across 16
    /// rows; on an H200 that made `crossprod` of 4095^3 run at a third of
    /// `matmul`'s speed.
    Spread,
}

impl Pattern {
    /// The global index offset from one step to the next, in the units the
    /// binding reads.
    fn step(self, op: &Operand, bk: u32) -> String {
        match self {
            Pattern::Rows => format!("{bk}u * {}", op.ld),
            Pattern::Pairs => format!("{}u", bk / 4),
            Pattern::Spread => format!("{bk}u"),
        }
    }

    /// The lines placing slot `s` (its index `{s}v`): its first value's
    /// row within the tile `{s}o` and k `{s}p`.
    fn place(self, s: &str, op: &Operand, bk: u32) -> [String; 2] {
        match self {
            Pattern::Rows => [
                format!("let {s}o = ({s}v % {}u) * 4u;", op.outer / 4),
                format!("let {s}p = {s}v / {}u;", op.outer / 4),
            ],
            Pattern::Pairs => [
                format!("let {s}o = ({s}v / 2u) % {}u;", op.outer),
                format!(
                    "let {s}p = ({s}v / {}u) * 8u + ({s}v % 2u) * 4u;",
                    2 * op.outer
                ),
            ],
            Pattern::Spread => [
                format!("let {s}o = {s}v / {bk}u;"),
                format!("let {s}p = {s}v % {bk}u;"),
            ],
        }
    }

    /// The global index of slot `s`'s first value at step 0, in the units
    /// `op`'s binding reads (its leading dimension is in those units too).
    fn base(self, s: &str, op: &Operand) -> String {
        let ld = op.ld;
        match (self, op.side.wide) {
            (Pattern::Rows, true) => format!("{s}e / 4u + {s}p * {ld}"),
            (Pattern::Rows, false) => format!("{s}e + {s}p * {ld}"),
            (Pattern::Pairs, _) => format!("{s}p / 4u + {s}e * {ld}"),
            (Pattern::Spread, _) => format!("{s}p + {s}e * {ld}"),
        }
    }

    /// Offsets along the outer axis of the values to check against its
    /// extent: one for a slot within one row or read as a `vec4`, else
    /// each value's.
    fn outer_offsets(self, op: &Operand) -> Vec<u32> {
        match (self, op.side.wide) {
            (Pattern::Rows, false) => vec![0, 1, 2, 3],
            (Pattern::Spread, _) => (0..4).map(|c| c * op.outer / 4).collect(),
            _ => vec![0],
        }
    }

    /// For transposing stores, each value's offset (in `vec4`s of the
    /// staged tile) from the slot's; `None` for a whole-`vec4` store.
    fn lane_offsets(self, op: &Operand) -> Option<[u32; 4]> {
        match self {
            Pattern::Rows => None,
            Pattern::Pairs => Some([0, 1, 2, 3].map(|c| c * op.stride())),
            Pattern::Spread => Some([0, 1, 2, 3].map(|c| c * op.outer / 16)),
        }
    }
}

/// WGSL being written, a line at a time.
#[derive(Default)]
struct Source(String);

impl Source {
    fn line(&mut self, text: impl AsRef<str>) {
        self.0.push_str(text.as_ref());
        self.0.push('\n');
    }
}

/// The components of a `vec4`, by position.
const LANES: [&str; 4] = ["x", "y", "z", "w"];

impl Kernel {
    /// The module key: everything the source depends on.
    fn key(&self) -> String {
        let side = |s: Side| format!("{:?}{}", s.run, if s.wide { "4" } else { "1" });
        format!(
            "gemm-{}-{}-a{}-b{}-c{}",
            self.dtype,
            self.tile,
            side(self.a),
            side(self.b),
            if self.wide_c { 4 } else { 1 }
        )
    }

    /// WGSL's name of the element type.
    fn scalar(&self) -> &'static str {
        if self.dtype == DType::F64 {
            "f64"
        } else {
            "f32"
        }
    }

    /// The two operands as the generator sees them.
    fn operands(&self) -> [Operand; 2] {
        [
            Operand {
                name: "a",
                side: self.a,
                outer: self.tile.bm,
                origin: "m0",
                extent: "d.m",
                ld: "d.lda",
            },
            Operand {
                name: "b",
                side: self.b,
                outer: self.tile.bn,
                origin: "n0",
                extent: "d.n",
                ld: "d.ldb",
            },
        ]
    }

    /// The kernel's WGSL: one entry point, [`ENTRY`].
    fn source(&self) -> String {
        let mut w = Source::default();
        self.declarations(&mut w);
        w.line(format!(
            "@compute @workgroup_size({})\nfn {ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, \
             @builtin(num_workgroups) groups: vec3<u32>, \
             @builtin(local_invocation_index) lid: u32) {{",
            self.tile.threads()
        ));
        self.placement(&mut w);
        for op in self.operands() {
            self.loader(&mut w, &op);
        }
        self.accumulators(&mut w);
        self.main_loop(&mut w);
        self.store(&mut w);
        w.line("}");
        w.0
    }

    /// The uniform, the bindings and the staged tiles (two steps each).
    fn declarations(&self, w: &mut Source) {
        let t = self.scalar();
        let unit = |wide: bool| if wide { format!("vec4<{t}>") } else { t.into() };
        w.line("struct Dims { m: u32, n: u32, k: u32, lda: u32, ldb: u32, ldc: u32, tiles_m: u32, tiles: u32 }");
        w.line(format!(
            "@group(0) @binding(0) var<storage, read> a: array<{}>;",
            unit(self.a.wide)
        ));
        w.line(format!(
            "@group(0) @binding(1) var<storage, read> b: array<{}>;",
            unit(self.b.wide)
        ));
        w.line(format!(
            "@group(0) @binding(2) var<storage, read_write> c: array<{}>;",
            unit(self.wide_c)
        ));
        w.line("@group(0) @binding(3) var<uniform> d: Dims;");
        for op in self.operands() {
            w.line(format!(
                "var<workgroup> s{}: array<vec4<{t}>, {}>;",
                op.name,
                2 * self.tile.bk * op.stride()
            ));
        }
    }

    /// The workgroup's tile of C (in the grouped launch order) and the
    /// invocation's place in it. Workgroups past the last tile leave at
    /// once (the whole workgroup: the barriers stay in uniform control flow).
    fn placement(&self, w: &mut Source) {
        let tile = self.tile;
        let g = tile.group_m;
        w.line("let wid = wg.x + wg.y * groups.x;");
        w.line("if (wid >= d.tiles) { return; }");
        w.line("let tiles_n = d.tiles / d.tiles_m;");
        w.line(format!("let span = {g}u * tiles_n;"));
        w.line(format!("let first = (wid / span) * {g}u;"));
        w.line(format!("let rows = min(d.tiles_m - first, {g}u);"));
        w.line("let place = wid % span;");
        w.line(format!("let m0 = (first + place % rows) * {}u;", tile.bm));
        w.line(format!("let n0 = (place / rows) * {}u;", tile.bn));
        w.line(format!("let tx = lid % {}u;", tile.bm / tile.tm));
        w.line(format!("let ty = lid / {}u;", tile.bm / tile.tm));
    }

    /// An operand's per-invocation loading plan, fixed for the whole loop:
    /// for each of its slots in a step's tile (4 values), where it lands in
    /// the staged tile, where it starts in global memory at step 0, and
    /// whether it lies inside the operand's outer extent; and the register
    /// that carries it from the load to the store.
    fn loader(&self, w: &mut Source, op: &Operand) {
        let threads = self.tile.threads();
        let slots = op.slots(self.tile.bk);
        let x = op.name;
        let pattern = op.pattern();
        w.line(format!("let {x}step = {};", pattern.step(op, self.tile.bk)));
        if pattern == Pattern::Spread {
            w.line(format!("let {x}q = {}u * {};", op.outer / 4, op.ld));
        }
        for i in 0..slots.div_ceil(threads) {
            let s = format!("{x}{i}");
            w.line(format!("let {s}v = lid + {}u;", i * threads));
            let live = if (i + 1) * threads > slots {
                w.line(format!("let {s}live = {s}v < {slots}u;"));
                format!("{s}live && ")
            } else {
                String::new()
            };
            for line in pattern.place(&s, op, self.tile.bk) {
                w.line(line);
            }
            w.line(format!("let {s}s = {s}p * {}u + {s}o / 4u;", op.stride()));
            w.line(format!("let {s}l = {s}o % 4u;"));
            w.line(format!("let {s}e = {} + {s}o;", op.origin));
            w.line(format!("let {s}g = {};", pattern.base(&s, op)));
            for (c, offset) in pattern.outer_offsets(op).into_iter().enumerate() {
                w.line(format!(
                    "let {s}in{c} = {live}{s}e + {offset}u < {};",
                    op.extent
                ));
            }
            w.line(format!("var {s}r: vec4<{}>;", self.scalar()));
        }
    }

    /// The invocation's block of C: `tn` columns of `tm / 4` `vec4`s.
    fn accumulators(&self, w: &mut Source) {
        for j in 0..self.tile.tn {
            for g in 0..self.tile.tm / 4 {
                w.line(format!("var acc{j}_{g}: vec4<{}>;", self.scalar()));
            }
        }
    }

    /// The k loop: step 0 staged first, then each step loads the next
    /// one's values into registers, multiplies the staged step, and stages
    /// the registers in the other half. `steps` and `t` are uniform, so the
    /// barriers are in uniform control flow.
    fn main_loop(&self, w: &mut Source) {
        let bk = self.tile.bk;
        w.line(format!("let steps = (d.k + {}u) / {bk}u;", bk - 1));
        w.line("if (steps > 0u) {");
        self.load(w, "0u");
        self.stage(w, "0u");
        w.line("}");
        w.line("workgroupBarrier();");
        w.line("for (var t = 0u; t < steps; t = t + 1u) {");
        w.line("let more = t + 1u < steps;");
        w.line("if (more) {");
        self.load(w, "t + 1u");
        w.line("}");
        self.multiply(w, "t & 1u");
        w.line("if (more) {");
        self.stage(w, "(t + 1u) & 1u");
        w.line("}");
        w.line("workgroupBarrier();");
        w.line("}");
    }

    /// Loads step `step`'s slots of both operands into their registers,
    /// zeros outside the operands (a load of element 0 in their place keeps
    /// every access inside the buffer).
    fn load(&self, w: &mut Source, step: &str) {
        w.line("{");
        w.line(format!("let kt = ({step}) * {}u;", self.tile.bk));
        for op in self.operands() {
            let x = op.name;
            w.line(format!("let {x}shift = ({step}) * {x}step;"));
            for i in 0..op.slots(self.tile.bk).div_ceil(self.tile.threads()) {
                w.line("{");
                self.load_slot(w, &op, &format!("{x}{i}"));
                w.line("}");
            }
        }
        w.line("}");
    }

    /// Loads slot `s` of `op` (see [`Pattern`]): one guarded `vec4` read,
    /// or four guarded reads of single values (all of one k).
    fn load_slot(&self, w: &mut Source, op: &Operand, s: &str) {
        let (x, t) = (op.name, self.scalar());
        let read = |ok: &str, at: &str, zero: &str| {
            format!("select({zero}, {x}[select(0u, {at}, {ok})], {ok})")
        };
        w.line(format!("let at = {s}g + {x}shift;"));
        if op.side.wide {
            // Rows or pairs of an aligned operand: a vec4 inside or outside
            // as a whole (the extents along it are multiples of 4).
            w.line(format!("let ok = {s}in0 && kt + {s}p < d.k;"));
            let value = read("ok", "at", &format!("vec4<{t}>()"));
            w.line(format!("{s}r = {value};"));
            return;
        }
        for (c, lane) in LANES.iter().enumerate() {
            let at = match op.pattern() {
                Pattern::Spread => format!("at + {c}u * {x}q"),
                _ => format!("at + {c}u"),
            };
            w.line(format!("let ok{c} = {s}in{c} && kt + {s}p < d.k;"));
            let value = read(&format!("ok{c}"), &at, &format!("{t}()"));
            w.line(format!("{s}r.{lane} = {value};"));
        }
    }

    /// Stores the registers into half `half` of the staged tiles: whole
    /// `vec4`s for operands running along their outer axis, single values
    /// (transposed) for those running along k.
    fn stage(&self, w: &mut Source, half: &str) {
        let threads = self.tile.threads();
        w.line("{");
        for op in self.operands() {
            let x = op.name;
            w.line(format!(
                "let {x}half = ({half}) * {}u;",
                self.tile.bk * op.stride()
            ));
            let slots = op.slots(self.tile.bk);
            for i in 0..slots.div_ceil(threads) {
                let s = format!("{x}{i}");
                let partial = (i + 1) * threads > slots;
                if partial {
                    w.line(format!("if ({s}live) {{"));
                }
                match op.pattern().lane_offsets(&op) {
                    None => w.line(format!("s{x}[{x}half + {s}s] = {s}r;")),
                    Some(offsets) => {
                        for (lane, offset) in LANES.iter().zip(offsets) {
                            w.line(format!(
                                "s{x}[{x}half + {s}s + {offset}u][{s}l] = {s}r.{lane};"
                            ));
                        }
                    }
                }
                if partial {
                    w.line("}");
                }
            }
        }
        w.line("}");
    }

    /// Multiplies half `half` of the staged tiles into the accumulators:
    /// per k, `tm / 4` `vec4`s of A and `tn / 4` of B, then `tm * tn / 4`
    /// `fma`s, written out (WGSL has no unroll hint).
    fn multiply(&self, w: &mut Source, half: &str) {
        let tile = self.tile;
        let [a, b] = self.operands();
        let (nx, ny) = (tile.bm / tile.tm, tile.bn / tile.tn);
        w.line("{");
        w.line(format!(
            "let ab = ({half}) * {}u + tx;",
            tile.bk * a.stride()
        ));
        w.line(format!(
            "let bb = ({half}) * {}u + ty;",
            tile.bk * b.stride()
        ));
        for kk in 0..tile.bk {
            w.line("{");
            for g in 0..tile.tm / 4 {
                w.line(format!(
                    "let a{g} = sa[ab + {}u];",
                    kk * a.stride() + g * nx
                ));
            }
            for h in 0..tile.tn / 4 {
                w.line(format!(
                    "let b{h} = sb[bb + {}u];",
                    kk * b.stride() + h * ny
                ));
            }
            for j in 0..tile.tn {
                let splat = format!(
                    "vec4<{}>(b{}.{})",
                    self.scalar(),
                    j / 4,
                    LANES[j as usize % 4]
                );
                for g in 0..tile.tm / 4 {
                    w.line(format!("acc{j}_{g} = fma(a{g}, {splat}, acc{j}_{g});"));
                }
            }
            w.line("}");
        }
        w.line("}");
    }

    /// Writes the accumulators to C, skipping what lies outside it. Rows
    /// of group `g` start at `g * bm / (tm / 4) + 4 tx`, columns of group
    /// `h` at `h * bn / (tn / 4) + 4 ty`.
    fn store(&self, w: &mut Source) {
        let tile = self.tile;
        let (nx, ny) = (tile.bm / tile.tm, tile.bn / tile.tn);
        for g in 0..tile.tm / 4 {
            w.line(format!("let row{g} = m0 + {}u + tx * 4u;", g * nx * 4));
        }
        for j in 0..tile.tn {
            let offset = (j / 4) * ny * 4 + j % 4;
            w.line(format!("let col{j} = n0 + {offset}u + ty * 4u;"));
            w.line(format!("let cin{j} = col{j} < d.n;"));
        }
        for j in 0..tile.tn {
            for g in 0..tile.tm / 4 {
                if self.wide_c {
                    w.line(format!(
                        "if (cin{j} && row{g} < d.m) {{ c[row{g} / 4u + col{j} * d.ldc] = acc{j}_{g}; }}"
                    ));
                } else {
                    for (q, lane) in LANES.iter().enumerate() {
                        w.line(format!(
                            "if (cin{j} && row{g} + {q}u < d.m) {{ c[row{g} + {q}u + col{j} * d.ldc] = acc{j}_{g}.{lane}; }}"
                        ));
                    }
                }
            }
        }
    }
}

/// Checks that `buf` holds `shape`'s elements of `dtype`.
fn check_operand(
    call: LibraryCall,
    which: &str,
    buf: &WgpuBuf,
    shape: &Shape,
    dtype: DType,
) -> Result<()> {
    if buf.dtype() != dtype {
        return Err(fault(
            call.name(),
            format!(
                "the {which} operand is {}, the product {dtype}",
                buf.dtype()
            ),
        ));
    }
    if buf.len() != shape.numel() {
        return Err(fault(
            call.name(),
            format!(
                "the {which} operand holds {} values, its shape {shape:?} {}",
                buf.len(),
                shape.numel()
            ),
        ));
    }
    Ok(())
}

/// Checks that the device multiplies `dtype`: f32 anywhere, f64 where it
/// has SHADER_F64.
fn check_dtype(dev: &Device, call: LibraryCall, dtype: DType) -> Result<()> {
    match dtype {
        DType::F32 => Ok(()),
        DType::F64 if has_64_bit(dev.features) => Ok(()),
        DType::F64 => Err(fault(
            call.name(),
            "f64 products need an adapter with SHADER_F64, which this one lacks",
        )),
        other => Err(fault(
            call.name(),
            format!("products are f32 or f64, not {other}"),
        )),
    }
}

/// `call` (`Matmul`, `Crossprod` or `Tcrossprod`) of `a` and `b` (buffer
/// and shape, column-major, a 1-D operand read as a column; both of one
/// dtype, f32 or f64) into a new `m x n` buffer, with `tile` (else
/// `GEARBOX_WGPU_GEMM_TILE`'s, else [`Tile::pick`]'s; a smaller built-in
/// one where the adapter cannot run it). The work is recorded, not waited
/// for: the bench times it with [`Device::wait`].
pub fn product(
    dev: &Device,
    modules: &Modules,
    call: LibraryCall,
    a: (&WgpuBuf, &Shape),
    b: (&WgpuBuf, &Shape),
    tile: Option<Tile>,
) -> Result<WgpuBuf> {
    let problem = Problem::of(call, a.1, b.1)?;
    let dtype = a.0.dtype();
    check_dtype(dev, call, dtype)?;
    check_operand(call, "left", a.0, a.1, dtype)?;
    check_operand(call, "right", b.0, b.1, dtype)?;
    run(dev, modules, &problem, dtype, [a.0, b.0], tile)
}

/// Runs `problem` on `operands` into a new buffer.
fn run(
    dev: &Device,
    modules: &Modules,
    problem: &Problem,
    dtype: DType,
    operands: [&WgpuBuf; 2],
    tile: Option<Tile>,
) -> Result<WgpuBuf> {
    let c = dev.alloc(problem.m * problem.n, dtype)?;
    if problem.m == 0 || problem.n == 0 {
        return Ok(c);
    }
    let kernel = Kernel {
        tile: fit(dev, dtype, tile, problem.m, problem.n)?,
        dtype,
        a: Side {
            run: problem.a_run,
            wide: problem.a_rows.is_multiple_of(4),
        },
        b: Side {
            run: problem.b_run,
            wide: problem.b_rows.is_multiple_of(4),
        },
        wide_c: problem.m.is_multiple_of(4),
    };
    let words = problem.uniform(&kernel)?;
    let uniform: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let program = modules.get(dev, &kernel.key(), || kernel.source(), &[ENTRY])?;
    let [a, b] = operands;
    dev.dispatch(
        program.pipeline(ENTRY)?,
        0,
        &[a, b, &c],
        &uniform,
        // The uniform's last word: all tiles.
        grid(dev, words[7])?,
    )?;
    Ok(c)
}

/// The library call `call` on `inputs` (two operands), producing `out`:
/// checks that `out` is the product's shape (`m x n`, or `m` for a vector
/// on the right) and dtype, then runs [`product`] with the default tile.
pub fn call(
    dev: &Device,
    modules: &Modules,
    call: LibraryCall,
    inputs: &[(&WgpuBuf, &Shape)],
    out: (&Shape, DType),
) -> Result<WgpuBuf> {
    let &[a, b] = inputs else {
        return Err(fault(
            call.name(),
            format!("takes 2 operands, not {}", inputs.len()),
        ));
    };
    let problem = Problem::of(call, a.1, b.1)?;
    let (shape, dtype) = out;
    if shape.ndim() > 2 || shape.numel() != problem.m * problem.n || dtype != a.0.dtype() {
        return Err(fault(
            call.name(),
            format!(
                "the result is {} x {} of {}, not {shape:?} of {dtype}",
                problem.m,
                problem.n,
                a.0.dtype()
            ),
        ));
    }
    product(dev, modules, call, a, b, None)
}
