//! The grid kernel on the float64 tensor cores (`mma.m8n8k4`, compute
//! capability 8.0 and later): each warp takes 8 x `groups` grid points and
//! the tile's observations 8 at a time. `eta` for 8 points x 8
//! observations is one 8 x 8 product (`points' coefficients x X'`, over
//! the coefficients 4 at a time); each lane evaluates the terms at the two
//! `eta` it holds; the gradient `X' slopes` (coefficients 8 at a time x
//! points) is a second product whose `slopes` operand is exactly the
//! slopes the lane computed, because the observation order of the first
//! product's columns is chosen so (`OBS_OF_COLUMN` below). A lane holds a
//! quarter of its point's coefficients and of a quarter of the gradient,
//! so wide designs stay in registers where the one-point-per-thread
//! kernel spills. With the whole design in one block the kernel adds the
//! penalty itself, on the tensor cores too ([`EPILOGUE`]); with several
//! observation slices its partial sums go to the finishing kernel, which
//! adds the slices and the penalty.

use gearbox_core::ops::linear_grid::LinearGridSpec;
use gearbox_core::Result;

use super::{source, GridShape};

/// The widest design the kernel takes: a lane holds `2 groups (l2 / 4)`
/// coefficients and gradient sums.
pub(super) const MAX_L2: usize = 128;

/// Point groups of 8 per warp: one, so a lane holds a quarter of one
/// point's coefficients and gradient. Two groups share each read of the
/// design tile but hold twice the registers, which cost more occupancy
/// than they saved on an H100 (docs/perf/stats.md); the knob
/// `GEARBOX_CUDA_GRID_MMA_GROUPS` ([`crate::params`]) asks for two.
pub(super) fn groups() -> usize {
    crate::params::params().grid.mma_groups
}

/// Threads per block: 256 (`GEARBOX_CUDA_GRID_MMA_BLOCK` for others).
pub(super) fn block() -> usize {
    crate::params::params().grid.mma_block
}

/// The shared-memory stride (in doubles) of the design tile's rows for
/// `kp` columns: at least `kp` and 4 more than a multiple of 16, which with
/// [`GB_ROW`]'s row order makes both products' reads free of bank
/// conflicts (each half-warp's 16 doubles fall in 16 different bank
/// pairs; checked by the test below).
pub(super) fn row_stride(kp: usize) -> usize {
    kp + (20 - kp % 16) % 16
}

/// Observations per tile: a multiple of 8, at most 32, the design's tile
/// within 32 KiB of shared memory.
pub(super) fn tile_for(l2: usize) -> usize {
    let rows = 4096 / row_stride(l2.next_multiple_of(8));
    (rows / 8 * 8).clamp(8, 32)
}

/// The shared row of tile observation `t`: within each 8, rows 4-5 and 6-7
/// trade places (see [`row_stride`]).
const GB_ROW: &str = "#define GB_ROW(t) ((t) ^ (((t) >> 1) & 2))";

/// The kernel's source: the main kernel (finishing its points itself
/// when it has one observation slice, writing partial sums per slice
/// otherwise) and the finishing kernel.
pub(super) fn render(
    spec: &LinearGridSpec,
    full: &[bool],
    plan: GridShape,
    groups: usize,
) -> Result<String> {
    let kp = plan.l2.next_multiple_of(8);
    let defines = format!(
        "#define LS {}\n#define KP {kp}\n#define KC {}\n#define CC {}\n#define PG {groups}\n{GB_ROW}\n\
         // The observation (within 8) of eta's column n: lane 4 q + i's accumulator\n\
         // column 2 q + i holds observation 4 i + q, the row the gradient product's\n\
         // slope operand takes from that lane in its chunk i.\n\
         #define OBS_OF_COLUMN(n) ((((n) & 1) << 2) | ((n) >> 1))",
        row_stride(kp),
        plan.l2.div_ceil(4),
        kp / 8
    );
    let quarter = if plan.product {
        PRODUCT_QUARTER
    } else {
        DENSE_QUARTER
    };
    let mut s = source::head(
        spec,
        full,
        plan,
        &defines,
        &format!("{MMA_HELPERS}{quarter}"),
    )?;
    s.push_str(
        "    const int lane = threadIdx.x & 31, q = lane & 3, r = lane >> 2;\n\
         \x20   const long long warp_first = ((long long)blockIdx.x * (BLOCK / 32) + threadIdx.x / 32) * (8 * PG);\n\
         \x20   double a[PG][KC], g[PG][CC][2], v[PG];\n\
         \x20   #pragma unroll\n\
         \x20   for (int p = 0; p < PG; ++p) {\n\
         \x20       long long j = min(warp_first + 8 * p + r, m - 1);\n\
         \x20       gb_point_quarter(B, counts, first + (unsigned long long)j, q, a[p]);\n\
         \x20       v[p] = 0.0;\n\
         \x20       #pragma unroll\n\
         \x20       for (int c = 0; c < CC; ++c) g[p][c][0] = g[p][c][1] = 0.0;\n\
         \x20   }\n",
    );
    s.push_str(&source::stage_tile(full));
    let terms = source::terms(spec, full, "v[p]")?;
    s.push_str(&format!(
        "        for (int c8 = 0; c8 < n; c8 += 8) {{\n\
         \x20           const double* xt = &xs[c8 * LS];\n\
         \x20           // eta in two accumulators (even and odd coefficient chunks),\n\
         \x20           // so consecutive products do not wait on each other.\n\
         \x20           double d[PG][2][2];\n\
         \x20           #pragma unroll\n\
         \x20           for (int p = 0; p < PG; ++p) {{\n\
         \x20               d[p][0][0] = os[c8 + q]; d[p][0][1] = os[c8 + 4 + q];\n\
         \x20               d[p][1][0] = 0.0; d[p][1][1] = 0.0;\n\
         \x20           }}\n\
         \x20           #pragma unroll\n\
         \x20           for (int kc = 0; kc < KC; ++kc) {{\n\
         \x20               double xe = xt[GB_ROW(OBS_OF_COLUMN(r)) * LS + 4 * kc + q];\n\
         \x20               #pragma unroll\n\
         \x20               for (int p = 0; p < PG; ++p) gb_mma(d[p][kc & 1][0], d[p][kc & 1][1], a[p][kc], xe);\n\
         \x20           }}\n\
         \x20           double sl[PG][2];\n\
         \x20           #pragma unroll\n\
         \x20           for (int p = 0; p < PG; ++p) {{\n\
         \x20               #pragma unroll\n\
         \x20               for (int i = 0; i < 2; ++i) {{\n\
         \x20                   int t = c8 + 4 * i + q;\n\
         \x20                   sl[p][i] = 0.0;\n\
         \x20                   if (t < n) {{\n\
         \x20                       double eta = d[p][0][i] + d[p][1][i];\n\
         {terms}\n\
         \x20                       sl[p][i] = s;\n\
         \x20                   }}\n\
         \x20               }}\n\
         \x20           }}\n\
         \x20           #pragma unroll\n\
         \x20           for (int c = 0; c < CC; ++c) {{\n\
         \x20               #pragma unroll\n\
         \x20               for (int i = 0; i < 2; ++i) {{\n\
         \x20                   double xg = xt[GB_ROW(4 * i + q) * LS + 8 * c + r];\n\
         \x20                   #pragma unroll\n\
         \x20                   for (int p = 0; p < PG; ++p) gb_mma(g[p][c][0], g[p][c][1], xg, sl[p][i]);\n\
         \x20               }}\n\
         \x20           }}\n\
         \x20       }}\n\
         \x20   }}\n"
    ));
    s.push_str(EPILOGUE);
    s.push_str(source::FINISHING_KERNEL);
    Ok(s)
}

/// The end of the main kernel. Each point's value is summed over its
/// four lanes. With one observation slice the kernel finishes its points
/// itself: the penalty gradient `P c` (`c = b - mu`) of the group's 8
/// points is one more product per 8 coefficients, `P[8 c.., 4 kc..] x
/// c[4 kc.., points]`, whose accumulators hold coefficient `8 c + r` of
/// points `2 q` and `2 q + 1`, the layout of the gradient sums `g`; the
/// quadratic form takes each such coefficient of `c` from the lane that
/// holds it (point `2 q + i`'s lane `4 (2 q + i) + (k & 3)`, register
/// `k >> 2`). With several slices it leaves partial sums for the
/// finishing kernel.
const EPILOGUE: &str = "    const unsigned full_mask = 0xffffffffu;\n\
     \x20   #pragma unroll\n\
     \x20   for (int p = 0; p < PG; ++p) {\n\
     \x20       double vv = v[p];\n\
     \x20       vv += __shfl_xor_sync(full_mask, vv, 1);\n\
     \x20       vv += __shfl_xor_sync(full_mask, vv, 2);\n\
     \x20       const long long group = warp_first + 8 * p;\n\
     \x20       if (gridDim.y == 1) {\n\
     \x20           double cb[KC], quad[2] = {0.0, 0.0};\n\
     \x20           #pragma unroll\n\
     \x20           for (int kc = 0; kc < KC; ++kc) cb[kc] = 4 * kc + q < L2 ? a[p][kc] - __ldg(&mu[4 * kc + q]) : 0.0;\n\
     \x20           #pragma unroll\n\
     \x20           for (int c = 0; c < CC; ++c) {\n\
     \x20               const int k = 8 * c + r;\n\
     \x20               double d0 = 0.0, d1 = 0.0;\n\
     \x20               #pragma unroll\n\
     \x20               for (int kc = 0; kc < KC; ++kc) {\n\
     \x20                   double pa = (k < L2 && 4 * kc + q < L2) ? __ldg(&P[k + (4 * kc + q) * L2]) : 0.0;\n\
     \x20                   gb_mma(d0, d1, pa, cb[kc]);\n\
     \x20               }\n\
     \x20               #pragma unroll\n\
     \x20               for (int i = 0; i < 2; ++i) {\n\
     \x20                   const int src = 4 * (2 * q + i) + (r & 3);\n\
     \x20                   double lo = __shfl_sync(full_mask, cb[2 * c], src);\n\
     \x20                   double hi = __shfl_sync(full_mask, 2 * c + 1 < KC ? cb[2 * c + 1] : 0.0, src);\n\
     \x20                   double pc = i ? d1 : d0;\n\
     \x20                   long long jp = group + 2 * q + i;\n\
     \x20                   if (k < L2) {\n\
     \x20                       quad[i] += ((r >> 2) ? hi : lo) * pc;\n\
     \x20                       if (jp < m) out[jp * (L2 + 1) + 1 + k] = pc - g[p][c][i];\n\
     \x20                   }\n\
     \x20               }\n\
     \x20           }\n\
     \x20           #pragma unroll\n\
     \x20           for (int i = 0; i < 2; ++i) {\n\
     \x20               double qd = quad[i];\n\
     \x20               qd += __shfl_xor_sync(full_mask, qd, 4);\n\
     \x20               qd += __shfl_xor_sync(full_mask, qd, 8);\n\
     \x20               qd += __shfl_xor_sync(full_mask, qd, 16);\n\
     \x20               double vp = __shfl_sync(full_mask, vv, 4 * (2 * q + i));\n\
     \x20               long long jp = group + 2 * q + i;\n\
     \x20               if (r == 0 && jp < m) out[jp * (L2 + 1)] = 0.5 * qd - vp;\n\
     \x20           }\n\
     \x20       } else {\n\
     \x20           double* part = &out[(long long)blockIdx.y * m * (L2 + 1)];\n\
     \x20           long long j = group + r;\n\
     \x20           if (q == 0 && j < m) part[j * (L2 + 1)] = vv;\n\
     \x20           #pragma unroll\n\
     \x20           for (int c = 0; c < CC; ++c) {\n\
     \x20               int k = 8 * c + r;\n\
     \x20               #pragma unroll\n\
     \x20               for (int i = 0; i < 2; ++i) {\n\
     \x20                   long long jp = group + 2 * q + i;\n\
     \x20                   if (k < L2 && jp < m) part[jp * (L2 + 1) + 1 + k] = g[p][c][i];\n\
     \x20               }\n\
     \x20           }\n\
     \x20       }\n\
     \x20   }\n}\n";

/// The warp's product `D += A B` of an 8 x 4 and a 4 x 8 float64 fragment.
const MMA_HELPERS: &str = "__device__ __forceinline__ void gb_mma(double& d0, double& d1, double a, double b) {\n\
     \x20   asm(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\" : \"+d\"(d0), \"+d\"(d1) : \"d\"(a), \"d\"(b));\n}\n";

/// Coefficients `4 kc + q` of dense point `j` (zero past `l2`).
const DENSE_QUARTER: &str = "__device__ __forceinline__ void gb_point_quarter(const double* B, const double* unused, unsigned long long j, int q, double* a) {\n\
     \x20   #pragma unroll\n\
     \x20   for (int kc = 0; kc < KC; ++kc) a[kc] = 4 * kc + q < L2 ? B[j * L2 + 4 * kc + q] : 0.0;\n}\n";

/// Coefficients `4 kc + q` of product point `idx` (zero past `l2`): every
/// digit is decoded, the lane keeps its quarter.
const PRODUCT_QUARTER: &str = "__device__ __forceinline__ void gb_point_quarter(const double* sets, const double* counts, unsigned long long idx, int q, double* a) {\n\
     \x20   long long start = 0;\n\
     \x20   #pragma unroll\n\
     \x20   for (int kc = 0; kc < KC; ++kc) a[kc] = 0.0;\n\
     \x20   #pragma unroll\n\
     \x20   for (int k = 0; k < L2; ++k) {\n\
     \x20       unsigned long long n = (unsigned long long)counts[k];\n\
     \x20       double value = sets[start + (long long)(idx % n)];\n\
     \x20       idx /= n; start += (long long)n;\n\
     \x20       if ((k & 3) == q) a[k >> 2] = value;\n\
     \x20   }\n}\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// Both products' shared reads, per half-warp, touch 16 different
    /// 8-byte bank pairs, for every stride the kernel uses.
    #[test]
    fn the_tile_reads_are_free_of_bank_conflicts() {
        let row = |t: usize| t ^ ((t >> 1) & 2);
        let obs_of_column = |n: usize| ((n & 1) << 2) | (n >> 1);
        for l2 in 1..=MAX_L2 {
            let ls = row_stride(l2.next_multiple_of(8));
            assert!(
                ls >= l2.next_multiple_of(8) && ls % 16 == 4,
                "l2 {l2}: {ls}"
            );
            for half in 0..2 {
                let lanes = 16 * half..16 * half + 16;
                for chunk in 0..2 {
                    let eta: std::collections::HashSet<usize> = lanes
                        .clone()
                        .map(|l| (row(obs_of_column(l >> 2)) * ls + 4 * chunk + (l & 3)) % 16)
                        .collect();
                    let grad: std::collections::HashSet<usize> = lanes
                        .clone()
                        .map(|l| (row(4 * chunk + (l & 3)) * ls + 8 + (l >> 2)) % 16)
                        .collect();
                    assert_eq!((eta.len(), grad.len()), (16, 16), "l2 {l2}");
                }
            }
        }
        assert!((1..=MAX_L2).all(|l2| {
            let t = tile_for(l2);
            t.is_multiple_of(8) && t * row_stride(l2.next_multiple_of(8)) * 8 <= 32 * 1024
        }));
    }
}
