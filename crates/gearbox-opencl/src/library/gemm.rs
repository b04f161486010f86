//! Dense matrix products on the OpenCL device: [`LibraryCall::Matmul`]
//! (`C = A B`), [`LibraryCall::Crossprod`] (`C = Aᵀ B`) and
//! [`LibraryCall::Tcrossprod`] (`C = A Bᵀ`) on column-major storage, in f32
//! and f64 (with `cl_khr_fp64`), through CLBlast ([`super::clblast`]) where
//! it is installed and works, else through a tiled GEMM kernel written here
//! in OpenCL C for a tile configuration ([`Tile`]). Accumulation is in the
//! element type (f32 for f32, as cuBLAS's and CLBlast's SGEMM).
//!
//! # Which engine
//!
//! [`Engine::Auto`] (every library call): CLBlast, unless it is missing,
//! disabled (`GEARBOX_OPENCL_CLBLAST=0`) or turned off by an earlier error
//! status, or the inner dimension is empty (the tiled kernel writes the
//! zeros); a call CLBlast refuses runs on the tiled kernel. Tests and
//! benches pick an engine with [`product`].
//!
//! # The tiled kernel
//!
//! A work-group of `(bm / tm) x (bn / tn)` work-items computes a `bm x bn`
//! tile of C; work-item `(tx, ty)` holds a `tm x tn` block in registers,
//! rows `tx + i bm / tm` and columns `ty + j bn / tn` (strided, so that
//! neighbouring work-items read neighbouring local memory and store
//! neighbouring elements of C). The kernel walks k in steps of `bk`: each
//! step stages a `bk x bm` tile of A and a `bk x bn` tile of B in local
//! memory (k-major, rows padded by one value so the transposing stores hit
//! distinct banks), and every work-item multiplies its block out of them:
//! `tm + tn` local reads for `tm tn` multiply-adds per k. The next step's
//! values are loaded from global memory into registers before the current
//! step is multiplied, so their latency hides behind the arithmetic.
//!
//! Transposes are loads: an operand running along its outer dimension (A
//! of `matmul` and `tcrossprod` along m, B of `tcrossprod` along n) is read
//! along it, one running along k (A of `crossprod`, B of `matmul` and
//! `crossprod`) is read along k; both reads are coalesced, and no operand
//! is ever transposed in memory. Loads outside A or B read 0 and stores
//! outside C are skipped, so any m, n and k work (k = 0 gives zeros).
//! Multiply-adds may be contracted to FMAs (`FP_CONTRACT ON`), as BLAS
//! libraries do.
//!
//! [`Tile::pick`] takes the large tile (128 x 128, 8 x 8 a work-item) when
//! the product has at least a tile per compute unit, the medium one (64 x
//! 64, 4 x 4) when both sides reach 64, the small one (32 x 32, 4 x 4)
//! otherwise; f64 steps half as deep. A tile the device cannot run (local
//! memory, work-group size, or the kernel's own limit after compiling)
//! falls back to the next smaller one.
//!
//! # Rules
//!
//! Operands are vectors (read as a column) or matrices of one float dtype,
//! the result's; their buffers hold what their shapes say; the result has
//! the product's shape. Anything else is declined (an error of kind
//! `Compile`: the runtime reruns the call on the CPU), never a panic.

use gearbox_core::runtime::backend::{DeviceBuffer, LibraryCall};
use gearbox_core::runtime::copies::described;
use gearbox_core::runtime::gemm_shapes::{check_call, check_product, GemmShape};
use gearbox_core::{DType, Result, Shape};

use super::{declined, Lib, FP64_PRAGMA};
use crate::buffer::ClBuf;
use crate::launch::Arg;

/// A work-group's share of a product and how its work-items divide it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tile {
    /// Rows of C a work-group computes.
    pub bm: usize,
    /// Columns of C a work-group computes.
    pub bn: usize,
    /// Depth of the operand tiles staged per step.
    pub bk: usize,
    /// Rows of C a work-item computes.
    pub tm: usize,
    /// Columns of C a work-item computes.
    pub tn: usize,
}

impl Tile {
    /// 128 x 128 by steps of 16, 256 work-items of 8 x 8 (f32).
    pub const LARGE: Tile = Tile::new(128, 128, 16, 8, 8);
    /// 64 x 64 by steps of 16, 256 work-items of 4 x 4 (f32).
    pub const MEDIUM: Tile = Tile::new(64, 64, 16, 4, 4);
    /// 32 x 32 by steps of 16, 64 work-items of 4 x 4 (f32).
    pub const SMALL: Tile = Tile::new(32, 32, 16, 4, 4);
    /// 128 x 128 by steps of 8, 256 work-items of 8 x 8 (f64).
    pub const LARGE_F64: Tile = Tile::new(128, 128, 8, 8, 8);
    /// 64 x 64 by steps of 8, 256 work-items of 4 x 4 (f64).
    pub const MEDIUM_F64: Tile = Tile::new(64, 64, 8, 4, 4);
    /// 32 x 32 by steps of 8, 64 work-items of 4 x 4 (f64).
    pub const SMALL_F64: Tile = Tile::new(32, 32, 8, 4, 4);

    const fn new(bm: usize, bn: usize, bk: usize, tm: usize, tn: usize) -> Tile {
        Tile { bm, bn, bk, tm, tn }
    }

    /// Work-items per work-group.
    pub fn threads(&self) -> usize {
        (self.bm / self.tm.max(1)) * (self.bn / self.tn.max(1))
    }

    /// Why this configuration cannot be generated, if it cannot: blocks
    /// that divide the tile, at most 16 x 16 a work-item and 1024
    /// work-items, and staged tiles that the work-items load in equal
    /// shares.
    pub fn check(&self) -> std::result::Result<(), String> {
        let t = self;
        let blocks = (1..=16).contains(&t.tm)
            && (1..=16).contains(&t.tn)
            && t.bm.is_multiple_of(t.tm)
            && t.bn.is_multiple_of(t.tn);
        if !blocks || t.bk == 0 || t.bk > 64 {
            return Err(format!(
                "{t}: a work-item's block (at most 16 x 16) must divide the tile, steps 1 to 64 deep"
            ));
        }
        let threads = t.threads();
        if threads > 1024 || !(t.bm * t.bk).is_multiple_of(threads) {
            return Err(format!(
                "{t}: {threads} work-items (at most 1024) must load the staged tiles in equal shares"
            ));
        }
        if !(t.bn * t.bk).is_multiple_of(threads) {
            return Err(format!(
                "{t}: {threads} work-items must load the staged tiles in equal shares"
            ));
        }
        Ok(())
    }

    /// Bytes of local memory with elements of `size` bytes.
    pub fn local_bytes(&self, size: usize) -> usize {
        self.bk * (self.bm + 1 + self.bn + 1) * size
    }

    /// The large, medium and small tiles of `dtype`.
    pub fn built_in(dtype: DType) -> [Tile; 3] {
        match dtype {
            DType::F64 => [Tile::LARGE_F64, Tile::MEDIUM_F64, Tile::SMALL_F64],
            _ => [Tile::LARGE, Tile::MEDIUM, Tile::SMALL],
        }
    }

    /// The built-in choice for an `m x n` result in `dtype` on a device of
    /// `units` compute units (the module docs give the rule).
    pub fn pick(dtype: DType, m: usize, n: usize, units: usize) -> Tile {
        let [large, medium, small] = Tile::built_in(dtype);
        let count = m.div_ceil(large.bm) * n.div_ceil(large.bn);
        if m >= 128 && n >= 128 && count >= units {
            large
        } else if m >= 64 && n >= 64 {
            medium
        } else {
            small
        }
    }
}

impl std::fmt::Display for Tile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self;
        write!(f, "{}x{}x{}/{}x{}", t.bm, t.bn, t.bk, t.tm, t.tn)
    }
}

/// Which library multiplies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// CLBlast where it is there and works, else the tiled kernel.
    Auto,
    /// The tiled kernel, with this tile (else [`Tile::pick`]'s).
    Tiled(Option<Tile>),
    /// CLBlast only (an error where it is missing or fails).
    Clblast,
}

/// The entry point of every tiled GEMM program.
const ENTRY: &str = "gb_gemm";

/// The tiled kernel's body; the program's `#define`s (written by
/// [`source`]) set the element type, the tile and the operands' layouts.
const KERNEL: &str = "
#pragma OPENCL FP_CONTRACT ON
#define TX (BM / TM)
#define TY (BN / TN)
#define THREADS (TX * TY)
#define A_LOADS (BM * BK / THREADS)
#define B_LOADS (BN * BK / THREADS)

// Where load e (0 <= e < BM * BK) of A's tile sits: row r, depth p; and
// its global index. Consecutive e run along the operand's memory.
#if A_T
#define A_R(e) ((e) / BK)
#define A_P(e) ((e) % BK)
#define A_AT(i, p) ((p) + (i) * lda)
#else
#define A_R(e) ((e) % BM)
#define A_P(e) ((e) / BM)
#define A_AT(i, p) ((i) + (p) * lda)
#endif
// The same for B's tile: column q, depth p.
#if B_T
#define B_Q(e) ((e) % BN)
#define B_P(e) ((e) / BN)
#define B_AT(p, j) ((j) + (p) * ldb)
#else
#define B_Q(e) ((e) / BK)
#define B_P(e) ((e) % BK)
#define B_AT(p, j) ((p) + (j) * ldb)
#endif

__kernel __attribute__((reqd_work_group_size(TX, TY, 1)))
void gb_gemm(__global const real* restrict a, __global const real* restrict b,
             __global real* restrict c, long m, long n, long k,
             long lda, long ldb, long ldc) {
  __local real as[BK][BM + 1];
  __local real bs[BK][BN + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = tx + TX * ty;
  const long m0 = (long)get_group_id(0) * BM, n0 = (long)get_group_id(1) * BN;
  real ra[A_LOADS], rb[B_LOADS];
  real acc[TM][TN];
  #pragma unroll
  for (int i = 0; i < TM; ++i) {
    #pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = (real)0;
  }
  const long steps = (k + BK - 1) / BK;
  for (long s = -1; s < steps; ++s) {
    if (s >= 0) {
      // Stage step s (loaded into registers the round before).
      #pragma unroll
      for (int q = 0; q < A_LOADS; ++q) {
        const int e = tid + q * THREADS;
        as[A_P(e)][A_R(e)] = ra[q];
      }
      #pragma unroll
      for (int q = 0; q < B_LOADS; ++q) {
        const int e = tid + q * THREADS;
        bs[B_P(e)][B_Q(e)] = rb[q];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (s + 1 < steps) {
      // Load step s + 1, zeros outside the operands.
      const long k0 = (s + 1) * BK;
      #pragma unroll
      for (int q = 0; q < A_LOADS; ++q) {
        const int e = tid + q * THREADS;
        const long i = m0 + A_R(e), p = k0 + A_P(e);
        ra[q] = (i < m && p < k) ? a[A_AT(i, p)] : (real)0;
      }
      #pragma unroll
      for (int q = 0; q < B_LOADS; ++q) {
        const int e = tid + q * THREADS;
        const long j = n0 + B_Q(e), p = k0 + B_P(e);
        rb[q] = (j < n && p < k) ? b[B_AT(p, j)] : (real)0;
      }
    }
    if (s >= 0) {
      #pragma unroll
      for (int p = 0; p < BK; ++p) {
        real av[TM], bv[TN];
        #pragma unroll
        for (int i = 0; i < TM; ++i) av[i] = as[p][tx + i * TX];
        #pragma unroll
        for (int j = 0; j < TN; ++j) bv[j] = bs[p][ty + j * TY];
        #pragma unroll
        for (int i = 0; i < TM; ++i) {
          #pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
        }
      }
      // Every work-item is done with the staged step before the next
      // one overwrites it.
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  #pragma unroll
  for (int j = 0; j < TN; ++j) {
    const long col = n0 + ty + j * TY;
    #pragma unroll
    for (int i = 0; i < TM; ++i) {
      const long row = m0 + tx + i * TX;
      if (row < m && col < n) c[row + col * ldc] = acc[i][j];
    }
  }
}
";

/// The OpenCL C of the tiled kernel for `tile`, `dtype` (f32 or f64) and
/// whether A and B enter transposed.
pub fn source(tile: Tile, dtype: DType, (a_t, b_t): (bool, bool)) -> String {
    let (pragma, real) = match dtype {
        DType::F64 => (FP64_PRAGMA, "double"),
        _ => ("", "float"),
    };
    let t = tile;
    format!(
        "{pragma}typedef {real} real;\n#define BM {}\n#define BN {}\n#define BK {}\n\
         #define TM {}\n#define TN {}\n#define A_T {}\n#define B_T {}\n{KERNEL}",
        t.bm, t.bn, t.bk, t.tm, t.tn, a_t as u8, b_t as u8
    )
}

/// `call` (`Matmul`, `Crossprod` or `Tcrossprod`) of `a` and `b` (buffer
/// and shape, column-major, a 1-D operand read as a column; both of one
/// dtype, f32 or f64) into a new `m x n` buffer, by `engine`.
pub fn product(
    lib: &Lib<'_>,
    call: LibraryCall,
    a: (&ClBuf, &Shape),
    b: (&ClBuf, &Shape),
    engine: Engine,
) -> Result<ClBuf> {
    let no_f64 = "f64 products need cl_khr_fp64, which the device lacks";
    let g = check_product(call, described(a), described(b), (lib.dev.fp64, no_f64))
        .map_err(|why| declined(call.name(), why))?;
    let dtype = a.0.dtype();
    let c = lib.dev.alloc(g.m * g.n, dtype)?;
    if g.m == 0 || g.n == 0 {
        return Ok(c);
    }
    let operands = [a.0, b.0, &c];
    let tile = match engine {
        Engine::Tiled(tile) => tile,
        Engine::Clblast => {
            let blas = lib
                .library
                .clblast
                .get()
                .map_err(|why| declined(call.name(), why))?;
            blas.gemm(lib.dev, dtype, &g, operands).map_err(|status| {
                declined(call.name(), format!("CLBlast returned status {status}"))
            })?;
            return Ok(c);
        }
        Engine::Auto => {
            let blas = lib.library.clblast.get().ok().filter(|_| g.k > 0);
            if let Some(blas) = blas {
                match blas.gemm(lib.dev, dtype, &g, operands) {
                    Ok(()) => return Ok(c),
                    Err(status) => lib.library.clblast.turn_off(format!(
                        "CLBlast ({}) returned status {status} for a {} of {} x {} x {} in {dtype}",
                        blas.path,
                        call.name(),
                        g.m,
                        g.k,
                        g.n
                    )),
                }
            }
            None
        }
    };
    tiled(lib, &g, dtype, operands, tile)?;
    Ok(c)
}

/// Runs `g` on the tiled kernel with `wanted` (else [`Tile::pick`]'s), or
/// the dtype's next smaller tile the device can run.
fn tiled(
    lib: &Lib<'_>,
    g: &GemmShape,
    dtype: DType,
    [a, b, c]: [&ClBuf; 3],
    wanted: Option<Tile>,
) -> Result<()> {
    let dev = lib.dev;
    let first = wanted.unwrap_or_else(|| Tile::pick(dtype, g.m, g.n, dev.compute_units as usize));
    first.check().map_err(|why| declined("gemm", why))?;
    let [_, medium, small] = Tile::built_in(dtype);
    let later = [medium, small].into_iter().filter(|&t| t != first);
    let size = dtype.size_bytes();
    let local = dev.cl.local_mem_size().unwrap_or(32 << 10) as usize;
    let most = dev.cl.max_work_group_size().unwrap_or(256);
    let mut refused = Vec::new();
    for tile in std::iter::once(first).chain(later) {
        if tile.local_bytes(size) > local || tile.threads() > most {
            refused.push(format!("{tile}: needs more local memory or work-items"));
            continue;
        }
        let key = format!(
            "gemm-{dtype}-{tile}-{}{}",
            g.a_transposed as u8, g.b_transposed as u8
        );
        let layouts = (g.a_transposed, g.b_transposed);
        let program = lib.program(&key, || source(tile, dtype, layouts), &[ENTRY])?;
        let kernel = program.kernel(ENTRY)?;
        let limit = kernel.get_work_group_size(dev.id()).unwrap_or(most);
        if tile.threads() > limit {
            refused.push(format!(
                "{tile}: the compiled kernel runs {limit} work-items"
            ));
            continue;
        }
        let (tx, ty) = (tile.bm / tile.tm, tile.bn / tile.tn);
        let global = [g.m.div_ceil(tile.bm) * tx, g.n.div_ceil(tile.bn) * ty];
        let long = |v: usize| Arg::Long(v as i64);
        let [lda, ldb, ldc] = g.leading_dims();
        let args = [
            Arg::Buf(a),
            Arg::Buf(b),
            Arg::Buf(c),
            long(g.m),
            long(g.n),
            long(g.k),
            long(lda),
            long(ldb),
            long(ldc),
        ];
        return dev.enqueue(&kernel, &args, global, [tx, ty]);
    }
    Err(declined(
        "gemm",
        format!("the device runs no GEMM tile ({})", refused.join("; ")),
    ))
}

/// The library call `call` on `inputs` (two operands), producing `out`:
/// checks that `out` is the product's shape (`m x n`, or `m` for a vector
/// on the right) and dtype, then runs [`product`] with [`Engine::Auto`].
pub fn call(
    lib: &Lib<'_>,
    call: LibraryCall,
    inputs: &[(&ClBuf, &Shape)],
    out: (&Shape, DType),
) -> Result<ClBuf> {
    let [a, b] = check_call(call, inputs, out).map_err(|why| declined(call.name(), why))?;
    product(lib, call, a, b, Engine::Auto)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_tiles_are_valid_and_picked_by_size() {
        for dtype in [DType::F32, DType::F64] {
            for tile in Tile::built_in(dtype) {
                tile.check().unwrap();
                assert!(tile.threads() <= 256, "{tile}");
                assert!(tile.local_bytes(dtype.size_bytes()) <= 32 << 10, "{tile}");
            }
        }
        assert_eq!(Tile::pick(DType::F32, 4096, 4096, 132), Tile::LARGE);
        assert_eq!(Tile::pick(DType::F32, 512, 512, 132), Tile::MEDIUM);
        assert_eq!(Tile::pick(DType::F32, 1000, 5, 132), Tile::SMALL);
        assert_eq!(Tile::pick(DType::F64, 4096, 4096, 132), Tile::LARGE_F64);
        assert_eq!(Tile::pick(DType::F64, 5, 1000, 2), Tile::SMALL_F64);
        assert!(Tile::new(64, 64, 16, 3, 4).check().is_err());
        assert!(Tile::new(64, 64, 0, 4, 4).check().is_err());
        assert!(Tile::new(16, 16, 1, 1, 1).check().is_err());
    }

    #[test]
    fn sources_define_the_tile_and_layouts() {
        let s = source(Tile::MEDIUM_F64, DType::F64, (true, false));
        assert!(s.starts_with("#pragma OPENCL EXTENSION cl_khr_fp64"));
        assert!(s.contains("#define BM 64") && s.contains("#define A_T 1"));
        assert!(s.contains("#define B_T 0") && s.contains("typedef double real;"));
        let s = source(Tile::SMALL, DType::F32, (false, true));
        assert!(!s.contains("double") && s.contains("#define BK 16"));
    }
}
