//! The source both grid kernels share: the term functions, the point
//! loader, the penalty finish, the finishing kernel that adds observation
//! slices, the kernel signature, the staging of a tile of observations
//! into shared memory, and the term calls. Each kernel's body (the
//! `scalar` and `mma` modules) is written between [`head`] and
//! [`finishing_kernel`].

use std::fmt::Write as _;

use gearbox_core::ops::linear_grid::{GridTerm, LinearGridSpec, TermArg};
use gearbox_core::Result;

use super::GridShape;
use crate::codegen::scalar_fns_source;

/// The term functions, the plan's constants, `gb_point` (point `j`'s
/// coefficients, dense or from the product's digits), `gb_finish_point`
/// and the main kernel's signature and shared tile, up to the body.
/// `defines` gives `LS` (the tile's row stride), `KP` (its columns) and
/// `GB_ROW(t)` (the shared row of tile observation `t`); `helpers` are
/// device functions of the kernel's own, placed before it.
pub(super) fn head(
    spec: &LinearGridSpec,
    full: &[bool],
    plan: GridShape,
    defines: &str,
    helpers: &str,
) -> Result<String> {
    let nc = full.len();
    let nfull = full.iter().filter(|f| **f).count();
    let mut s = match spec.pair_term()? {
        Some(pair) => scalar_fns_source([pair.f.get()])?,
        None => scalar_fns_source([spec.value.f.get(), spec.slope.f.get()])?,
    };
    let w = &mut s;
    let _ = writeln!(
        w,
        "#define L2 {}\n#define TILE {}\n#define BLOCK {}\n#define NF {}\n{defines}",
        plan.l2,
        plan.tile,
        plan.block,
        nfull.max(1)
    );
    if plan.product {
        w.push_str(
            "__device__ __forceinline__ void gb_point(const double* sets, const double* counts, unsigned long long idx, double* b) {\n\
             \x20   long long start = 0;\n\
             \x20   #pragma unroll\n\
             \x20   for (int k = 0; k < L2; ++k) { unsigned long long n = (unsigned long long)counts[k]; b[k] = sets[start + (long long)(idx % n)]; idx /= n; start += (long long)n; }\n}\n",
        );
    } else {
        w.push_str(
            "__device__ __forceinline__ void gb_point(const double* B, const double* unused, unsigned long long j, double* b) {\n\
             \x20   #pragma unroll\n\
             \x20   for (int k = 0; k < L2; ++k) b[k] = B[j * L2 + k];\n}\n",
        );
    }
    w.push_str(
        "__device__ __forceinline__ void gb_finish_point(const double* b, double v, const double* g, const double* mu, const double* P, double* out) {\n\
         \x20   double c[L2];\n\
         \x20   #pragma unroll\n\
         \x20   for (int k = 0; k < L2; ++k) c[k] = b[k] - mu[k];\n\
         \x20   double quad = 0.0;\n\
         \x20   for (int k = 0; k < L2; ++k) {\n\
         \x20       double pc = 0.0;\n\
         \x20       for (int r = 0; r < L2; ++r) pc += __ldg(&P[k + r * L2]) * c[r];\n\
         \x20       quad += c[k] * pc;\n\
         \x20       out[1 + k] = pc - g[k];\n\
         \x20   }\n\
         \x20   out[0] = 0.5 * quad - v;\n}\n",
    );
    w.push_str(helpers);
    let min_blocks = match plan.min_blocks {
        0 => String::new(),
        b => format!(", {b}"),
    };
    let col_params: String = (0..nc)
        .map(|c| format!(", const double* __restrict__ col{c}"))
        .collect();
    let _ = writeln!(
        w,
        "extern \"C\" __global__ void __launch_bounds__(BLOCK{min_blocks}) gb_linear_grid(const double* __restrict__ X, const double* __restrict__ B, const double* __restrict__ counts, \
         const double* __restrict__ off, const double* __restrict__ mu, const double* __restrict__ P{col_params}, \
         double* __restrict__ out, long long l1, long long m, unsigned long long first, long long per_slice) {{\n\
         \x20   __shared__ double xs[TILE * LS];\n    __shared__ double os[TILE];\n    __shared__ double cs[TILE * NF];\n\
         \x20   long long i0 = (long long)blockIdx.y * per_slice;\n\
         \x20   long long i1 = min(l1, i0 + per_slice);"
    );
    for (c, _) in full.iter().enumerate().filter(|(_, f)| !**f) {
        let _ = writeln!(w, "    const double sc{c} = col{c}[0];");
    }
    Ok(s)
}

/// The tile loop's opening: stages observations `base..base + n` (the
/// design's columns up to `KP`, zero past `l2` and past `n`, at shared row
/// `GB_ROW(t)`; the offset and the full columns at `t`) between two
/// barriers. The body that follows reads the tile and closes the loop.
pub(super) fn stage_tile(full: &[bool]) -> String {
    let mut w = String::from(
        "    for (long long base = i0; base < i1; base += TILE) {\n\
         \x20       int n = (int)min((long long)TILE, i1 - base);\n\
         \x20       __syncthreads();\n\
         \x20       for (int e = threadIdx.x; e < TILE * KP; e += BLOCK) {\n\
         \x20           int t = e % TILE, k = e / TILE;\n\
         \x20           xs[GB_ROW(t) * LS + k] = (t < n && k < L2) ? X[base + t + (long long)k * l1] : 0.0;\n\
         \x20       }\n\
         \x20       for (int t = threadIdx.x; t < TILE; t += BLOCK) {\n\
         \x20           os[t] = t < n ? off[base + t] : 0.0;\n",
    );
    let full_columns = full.iter().enumerate().filter(|(_, f)| **f);
    for (slot, (c, _)) in full_columns.enumerate() {
        let _ = writeln!(
            w,
            "            cs[t * NF + {slot}] = t < n ? col{c}[base + t] : 0.0;"
        );
    }
    w.push_str("        }\n        __syncthreads();\n");
    w
}

/// The finishing kernel: adds the slices' partials in slice order, then
/// the penalty.
pub(super) const FINISHING_KERNEL: &str =
    "extern \"C\" __global__ void gb_linear_grid_finish(const double* __restrict__ B, const double* __restrict__ counts, const double* __restrict__ mu, const double* __restrict__ P, \
     const double* __restrict__ parts, double* __restrict__ out, long long m, unsigned long long first, int slices) {\n\
     \x20   for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += (long long)gridDim.x * blockDim.x) {\n\
     \x20       double b[L2], g[L2], v = 0.0;\n\
     \x20       gb_point(B, counts, first + (unsigned long long)j, b);\n\
     \x20       for (int k = 0; k < L2; ++k) g[k] = 0.0;\n\
     \x20       for (int s = 0; s < slices; ++s) {\n\
     \x20           const double* part = &parts[((long long)s * m + j) * (L2 + 1)];\n\
     \x20           v += part[0];\n\
     \x20           for (int k = 0; k < L2; ++k) g[k] += part[1 + k];\n\
     \x20       }\n\
     \x20       gb_finish_point(b, v, g, mu, P, &out[j * (L2 + 1)]);\n\
     \x20   }\n}\n";

/// The terms at `eta` for tile observation `t`: adds the log-likelihood
/// term to `acc` and declares its slope `s` (one pair call where the spec
/// has a pair).
pub(super) fn terms(spec: &LinearGridSpec, full: &[bool], acc: &str) -> Result<String> {
    // Column c's slot among the full columns.
    let slots: Vec<usize> = full
        .iter()
        .scan(0, |next, &is| {
            let slot = *next;
            *next += usize::from(is);
            Some(slot)
        })
        .collect();
    Ok(match spec.pair_term()? {
        Some(pair) => format!(
            "double s;\n{acc} += {};",
            call(&pair, &slots, full, Some("&s"))
        ),
        None => format!(
            "{acc} += {};\ndouble s = {};",
            call(&spec.value, &slots, full, None),
            call(&spec.slope, &slots, full, None)
        ),
    })
}

/// The call of `term` at tile row `t`: a full column `c` is read from its
/// tile slot `slots[c]`, a one-value column from its register `sc{c}`;
/// `out`, if given, is one more argument after the flags (a pair's slope).
fn call(term: &GridTerm, slots: &[usize], full: &[bool], out: Option<&str>) -> String {
    let f = term.f.get();
    let args: Vec<String> = term
        .sources()
        .iter()
        .map(|s| match *s {
            TermArg::Eta => "eta".to_string(),
            TermArg::Column(c) if full[c as usize] => {
                format!("cs[t * NF + {}]", slots[c as usize])
            }
            TermArg::Column(c) => format!("sc{c}"),
        })
        .chain((0..f.flags).map(|i| ((term.flags >> i) & 1).to_string()))
        .chain(out.map(str::to_string))
        .collect();
    format!("{}({})", f.device_name, args.join(", "))
}
