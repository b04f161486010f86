//! The tile configuration of a GEMM kernel ([`Tile`]): its fields and the
//! rules that make one valid, the built-in tiles of each dtype, the choice
//! among them by the product's size ([`Tile::pick`]), the text form that
//! `GEARBOX_WGPU_GEMM_TILE` takes ([`Tile::parse`], [`env_tile`]), and the
//! fallback to a smaller built-in tile where the adapter's limits refuse
//! one. Why the tiles have the shapes they have: the module docs of
//! [`super`].

use std::sync::OnceLock;

use gearbox_core::{DType, Result};

use crate::device::Device;
use crate::library::declined;

/// The environment variable that replaces [`Tile::pick`] for every product.
pub const TILE_ENV: &str = "GEARBOX_WGPU_GEMM_TILE";

/// Values of padding at the end of each k-row of a staged tile (one `vec4`):
/// the transposing stores of 16 neighbouring rows and 2 k-rows then hit 32
/// distinct banks (see the module docs).
pub(super) const PAD: u32 = 4;

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
    /// products (the fastest of the large tiles tried, against 8 x 8 blocks
    /// by 256 invocations, deeper steps and 16 x 16 blocks; measurements
    /// in `docs/perf/wgpu.md`).
    pub const LARGE: Tile = Tile {
        bm: 128,
        bn: 128,
        bk: 8,
        tm: 8,
        tn: 16,
        group_m: 8,
    };

    /// 64 x 64 by steps of 16, 256 invocations of 4 x 4: for mid-sized
    /// ones, where the large tile makes too few workgroups and leaves most
    /// multiprocessors idle.
    pub const MEDIUM: Tile = Tile {
        bm: 64,
        bn: 64,
        bk: 16,
        tm: 4,
        tn: 4,
        group_m: 8,
    };

    /// The large tile of f64: 128 x 128 by steps of 8, 256 invocations of
    /// 8 x 8.
    pub const LARGE_F64: Tile = Tile {
        bm: 128,
        bn: 128,
        bk: 8,
        tm: 8,
        tn: 8,
        group_m: 8,
    };

    /// The medium tile of f64: 64 x 64 by steps of 8, 128 invocations of
    /// 4 x 8.
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
    /// (an H100 has 132) leave it idle. The threshold lies between the
    /// sizes measured faster with each tile (`docs/perf/wgpu.md`).
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
    /// f64): the f32 tiles' blocks spill in f64 and run several times
    /// slower (`docs/perf/wgpu.md`).
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
pub(super) fn fit(
    dev: &Device,
    dtype: DType,
    wanted: Option<Tile>,
    m: usize,
    n: usize,
) -> Result<Tile> {
    let first = wanted
        .or_else(env_tile)
        .unwrap_or_else(|| Tile::pick(dtype, m, n));
    first.check().map_err(|why| declined("gemm", why))?;
    let size = element_size(dtype);
    let [_, medium, small] = Tile::built_in(dtype);
    let fallbacks = [medium, small].into_iter().filter(|&t| t != first);
    std::iter::once(first)
        .chain(fallbacks)
        .find(|t| t.fits(&dev.limits, size))
        .ok_or_else(|| {
            declined(
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
