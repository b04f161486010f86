//! Dense matrix products on the wgpu device: [`LibraryCall::Matmul`]
//! (`C = A B`), [`LibraryCall::Crossprod`] (`C = Aᵀ B`) and
//! [`LibraryCall::Tcrossprod`] (`C = A Bᵀ`) on column-major storage, as one
//! tiled GEMM kernel whose WGSL this module writes for a tile
//! configuration ([`Tile`]), an element type (f32, or f64 where the device
//! has SHADER_F64) and the operands' layouts. Accumulation is in the
//! element type (f32 for f32, as cuBLAS's SGEMM).
//!
//! - `mod.rs` (here): the entry points ([`call`], [`product`]), the
//!   checks of shapes and dtypes (core's
//!   [`gearbox_core::runtime::gemm_shapes`], shared with the other
//!   backends), the operands' layouts, the kernel's uniform and the launch.
//! - `tile.rs`: the tile configurations ([`Tile`]), the built-in ones, the
//!   choice among them, `GEARBOX_WGPU_GEMM_TILE`, and the fallback to a tile
//!   the adapter can run.
//! - `source.rs`: a kernel's WGSL, written for its tile, element type and
//!   layouts.
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
//! Measured speed and the bench command: `docs/perf/wgpu.md`, "Tiled GEMM (WGSL)".

mod source;
mod tile;

use gearbox_core::runtime::backend::{DeviceBuffer, LibraryCall};
use gearbox_core::runtime::copies::described;
use gearbox_core::runtime::gemm_shapes::{check_call, check_product, GemmShape};
use gearbox_core::{DType, Result, Shape};

use crate::buffer::WgpuBuf;
use crate::device::{has_64_bit, Device};
use crate::library::{declined, Modules};

use source::{Kernel, Run, Side};
use tile::fit;
pub use tile::{env_tile, Tile, TILE_ENV};

/// The entry point of every GEMM module.
const ENTRY: &str = "gemm";

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

impl Problem {
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
            return Err(declined(
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

impl From<GemmShape> for Problem {
    /// The layouts of `g`'s operands: A runs along m unless transposed
    /// (then along k), B along k unless transposed (then along n).
    fn from(g: GemmShape) -> Problem {
        let run = |outer: bool| if outer { Run::Outer } else { Run::Depth };
        Problem {
            m: g.m,
            n: g.n,
            k: g.k,
            a_rows: g.a_rows,
            b_rows: g.b_rows,
            a_run: run(!g.a_transposed),
            b_run: run(g.b_transposed),
        }
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
        return Err(declined(
            "gemm",
            format!("{tiles} tiles exceed the adapter's grid ({most} x {most})"),
        ));
    }
    Ok([x, y, 1])
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
    let no_f64 = "f64 products need an adapter with SHADER_F64, which this one lacks";
    let f64_ok = has_64_bit(dev.features);
    let g = check_product(call, described(a), described(b), (f64_ok, no_f64))
        .map_err(|why| declined(call.name(), why))?;
    run(
        dev,
        modules,
        &Problem::from(g),
        a.0.dtype(),
        [a.0, b.0],
        tile,
    )
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
    let [a, b] = check_call(call, inputs, out).map_err(|why| declined(call.name(), why))?;
    product(dev, modules, call, a, b, None)
}
