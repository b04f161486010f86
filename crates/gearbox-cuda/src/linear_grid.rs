//! The per-point grid kernel ([`gearbox_core::ops::linear_grid`]) on the
//! device: one thread per grid point, looping over the observations, with the design, the offset and the per-observation
//! columns staged through shared memory a tile at a time and read by every
//! thread of the block; `eta`, the summed terms and the gradient stay in
//! registers, so nothing of size `observations x points` is ever written.
//!
//! Long designs with few points are cut into observation slices (a second
//! grid dimension) so the device stays busy: each slice writes partial
//! sums, and a finishing kernel adds the slices in order and the penalty.
//! With one slice the main kernel finishes itself. The source is specific
//! to `l2`, the term functions, the column layout and the point form (all
//! constants, so the coefficient loops unroll), and is cached by source.

use std::fmt::Write as _;

use cudarc::driver::{LaunchConfig, PushKernelArg};
use gearbox_core::ops::linear_grid::{
    GridPoints, GridTerm, InputLayout, LinearGridId, LinearGridSpec, TermArg,
};
use gearbox_core::{DType, Result, Shape};

use crate::blas::unsupported;
use crate::codegen::scalar_fns_source;
use crate::compile::KernelCache;
use crate::device::{fault, Device};
use crate::pool::CudaBuf;

/// Threads per block. With 256, `__launch_bounds__` holds a thread to 255
/// registers and the compiler settles near 128 for narrow designs, so
/// enough warps hide the float64 latency of the terms. One point per
/// thread: each point's coefficients and gradient live in registers, so a
/// second point would double them (spilling past l2 = 16) and halve the
/// warps in flight.
const BLOCK: usize = 256;
/// Observations per shared-memory tile, at most: fewer for wide designs,
/// so a tile of the design stays within 32 KiB of shared memory.
const TILE: usize = 32;
/// The widest design the kernel takes (its registers and tile would not
/// fit beyond); wider work is declined and runs on the CPU.
const MAX_L2: usize = 1024;

/// The kernel's shape parameters, baked into the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    l2: usize,
    /// Observations per tile.
    tile: usize,
    product: bool,
}

/// The CUDA source of the main and finishing kernels. A spec with a pair
/// function calls it once per observation instead of the two terms.
fn render(spec: &LinearGridSpec, full: &[bool], plan: Plan) -> Result<String> {
    let (l2, tile) = (plan.l2, plan.tile);
    // Rows of the design tile at an odd stride (in doubles), so the
    // column-by-column stores of a warp fall in different banks.
    let stride = l2 | 1;
    let nc = full.len();
    let nfull = full.iter().filter(|f| **f).count();
    let pair = spec.pair_term()?;
    let mut s = match &pair {
        Some(pair) => scalar_fns_source([pair.f.get()])?,
        None => scalar_fns_source([spec.value.f.get(), spec.slope.f.get()])?,
    };
    let w = &mut s;
    let _ = writeln!(
        w,
        "#define L2 {l2}\n#define LS {stride}\n#define TILE {tile}\n#define BLOCK {BLOCK}"
    );
    // Point j's coefficients, dense or from the product's digits.
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
    // The finish of one point: the penalty and the output column.
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
    let col_params: String = (0..nc)
        .map(|c| format!(", const double* __restrict__ col{c}"))
        .collect();
    let _ = writeln!(
        w,
        "extern \"C\" __global__ void __launch_bounds__(BLOCK) gb_linear_grid(const double* __restrict__ X, const double* __restrict__ B, const double* __restrict__ counts, \
         const double* __restrict__ off, const double* __restrict__ mu, const double* __restrict__ P{col_params}, \
         double* __restrict__ out, long long l1, long long m, unsigned long long first, long long per_slice) {{"
    );
    let _ = writeln!(
        w,
        "    __shared__ double xs[TILE * LS];\n    __shared__ double os[TILE];\n    __shared__ double cs[TILE * {}];",
        nfull.max(1)
    );
    for (c, _) in full.iter().enumerate().filter(|(_, f)| !**f) {
        let _ = writeln!(w, "    const double sc{c} = col{c}[0];");
    }
    w.push_str(
        "    long long j = (long long)blockIdx.x * BLOCK + threadIdx.x;\n\
         \x20   long long i0 = (long long)blockIdx.y * per_slice;\n\
         \x20   long long i1 = min(l1, i0 + per_slice);\n\
         \x20   double b[L2], g[L2], v = 0.0;\n\
         \x20   gb_point(B, counts, first + (unsigned long long)min(j, m - 1), b);\n\
         \x20   #pragma unroll\n\
         \x20   for (int k = 0; k < L2; ++k) g[k] = 0.0;\n\
         \x20   for (long long base = i0; base < i1; base += TILE) {\n\
         \x20       int n = (int)min((long long)TILE, i1 - base);\n\
         \x20       __syncthreads();\n\
         \x20       for (int e = threadIdx.x; e < TILE * L2; e += BLOCK) {\n\
         \x20           int t = e % TILE, k = e / TILE;\n\
         \x20           xs[t * LS + k] = t < n ? X[base + t + (long long)k * l1] : 0.0;\n\
         \x20       }\n\
         \x20       for (int t = threadIdx.x; t < TILE; t += BLOCK) {\n\
         \x20           os[t] = t < n ? off[base + t] : 0.0;\n",
    );
    let full_columns = full.iter().enumerate().filter(|(_, f)| **f);
    for (slot, (c, _)) in full_columns.enumerate() {
        let _ = writeln!(
            w,
            "            cs[t * {} + {slot}] = t < n ? col{c}[base + t] : 0.0;",
            nfull.max(1)
        );
    }
    w.push_str(
        "        }\n\
         \x20       __syncthreads();\n\
         \x20       for (int t = 0; t < n; ++t) {\n\
         \x20           const double* xr = &xs[t * LS];\n",
    );
    // Column c's slot among the full columns.
    let slots: Vec<usize> = full
        .iter()
        .scan(0, |next, &is| {
            let slot = *next;
            *next += usize::from(is);
            Some(slot)
        })
        .collect();
    let terms = match &pair {
        Some(pair) => format!(
            "double s;\n            v += {};",
            call(pair, &slots, full, Some("&s"))
        ),
        None => format!(
            "v += {};\n            double s = {};",
            call(&spec.value, &slots, full, None),
            call(&spec.slope, &slots, full, None)
        ),
    };
    let _ = writeln!(
        w,
        "            double eta = os[t];\n            #pragma unroll\n            for (int k = 0; k < L2; ++k) eta = fma(xr[k], b[k], eta);\n            {terms}"
    );
    w.push_str(
        "            #pragma unroll\n\
         \x20           for (int k = 0; k < L2; ++k) g[k] = fma(xr[k], s, g[k]);\n\
         \x20       }\n\
         \x20   }\n\
         \x20   if (j >= m) return;\n\
         \x20   if (gridDim.y == 1) {\n\
         \x20       gb_finish_point(b, v, g, mu, P, &out[j * (L2 + 1)]);\n\
         \x20   } else {\n\
         \x20       double* part = &out[((long long)blockIdx.y * m + j) * (L2 + 1)];\n\
         \x20       part[0] = v;\n\
         \x20       #pragma unroll\n\
         \x20       for (int k = 0; k < L2; ++k) part[1 + k] = g[k];\n\
         \x20   }\n}\n",
    );
    // Adds the slices' partials in slice order, then the penalty.
    w.push_str(
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
         \x20   }\n}\n",
    );
    Ok(s)
}

/// The call of `term` at tile row `t`: a full column `c` is read from its
/// tile slot `slots[c]`, a one-value column from its register `sc{c}`;
/// `out`, if given, is one more argument after the flags (a pair's slope).
fn call(term: &GridTerm, slots: &[usize], full: &[bool], out: Option<&str>) -> String {
    let f = term.f.get();
    let nfull = full.iter().filter(|f| **f).count().max(1);
    let args: Vec<String> = term
        .sources()
        .iter()
        .map(|s| match *s {
            TermArg::Eta => "eta".to_string(),
            TermArg::Column(c) if full[c as usize] => {
                format!("cs[t * {nfull} + {}]", slots[c as usize])
            }
            TermArg::Column(c) => format!("sc{c}"),
        })
        .chain((0..f.flags).map(|i| ((term.flags >> i) & 1).to_string()))
        .chain(out.map(str::to_string))
        .collect();
    format!("{}({})", f.device_name, args.join(", "))
}

/// Observation slices for `point_blocks` blocks of points over `l1`
/// observations: enough blocks for about eight per SM, each slice at least
/// four tiles long.
fn slices_for(dev: &Device, point_blocks: usize, l1: usize, tile: usize) -> usize {
    let want = (dev.sm_count as usize * 8).div_ceil(point_blocks.max(1));
    let most = l1.div_ceil(4 * tile).max(1);
    want.clamp(1, most)
}

/// Runs the grid call: `inputs` as the primitive takes them, result
/// `(1 + l2) x m`.
pub fn linear_grid(
    dev: &Device,
    cache: &KernelCache,
    id: LinearGridId,
    points: GridPoints,
    inputs: &[(&CudaBuf, &Shape)],
    out: &Shape,
) -> Result<CudaBuf> {
    let spec = id.spec()?;
    let layout = InputLayout::of(points);
    if inputs.iter().any(|(b, _)| b.dtype_of() != DType::F64) {
        return Err(unsupported("the grid kernel takes f64 inputs".into()));
    }
    let x_shape = inputs[0].1;
    let l1 = x_shape.dim(0);
    let l2 = out.dim(0) - 1;
    let m = out.dim(1);
    let result = dev.pool.alloc(out.numel(), DType::F64)?;
    if m == 0 {
        return Ok(result);
    }
    let columns = &inputs[layout.columns..];
    let full: Vec<bool> = columns
        .iter()
        .map(|(_, s)| s.numel() != 1 || l1 == 1)
        .collect();
    if l2 > MAX_L2 {
        return Err(unsupported(format!(
            "the grid kernel takes at most {MAX_L2} coefficients, not {l2}"
        )));
    }
    let plan = Plan {
        l2,
        tile: (4096 / l2).clamp(1, TILE),
        product: matches!(points, GridPoints::Product { .. }),
    };
    let source = render(spec, &full, plan)?;
    let compiled = cache.get(dev, &source, &["gb_linear_grid", "gb_linear_grid_finish"])?;
    let (first, counts) = match points {
        GridPoints::Dense => (0u64, dev.ptr(inputs[1].0)),
        GridPoints::Product { first, .. } => (first, dev.ptr(inputs[2].0)),
    };
    let point_blocks = m.div_ceil(BLOCK);
    let slices = slices_for(dev, point_blocks, l1, plan.tile);
    let per_slice = (l1.div_ceil(slices)).div_ceil(plan.tile) * plan.tile;
    let slices = l1.div_ceil(per_slice.max(1)).max(1);
    let parts = if slices > 1 {
        Some(dev.pool.alloc(slices * out.numel(), DType::F64)?)
    } else {
        None
    };
    let ptrs: Vec<u64> = inputs.iter().map(|(b, _)| dev.ptr(b)).collect();
    let (px, pb) = (ptrs[0], ptrs[1]);
    let (po, pmu, pp) = (ptrs[layout.offset], ptrs[layout.mu], ptrs[layout.p]);
    let pout = dev.ptr(parts.as_ref().unwrap_or(&result));
    let (l1i, mi, per_slice_i) = (l1 as i64, m as i64, per_slice as i64);
    let f = compiled.function("gb_linear_grid")?;
    let mut launch = dev.stream.launch_builder(f);
    launch
        .arg(&px)
        .arg(&pb)
        .arg(&counts)
        .arg(&po)
        .arg(&pmu)
        .arg(&pp);
    for p in &ptrs[layout.columns..] {
        launch.arg(p);
    }
    launch
        .arg(&pout)
        .arg(&l1i)
        .arg(&mi)
        .arg(&first)
        .arg(&per_slice_i);
    let config = LaunchConfig {
        grid_dim: (point_blocks as u32, slices as u32, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel reads X (l1 x l2), the points, the offset, mu, P
    // and the columns within the sizes the primitive checked, and writes
    // (1 + l2) values per point of `m`, per slice when there are several,
    // into a buffer of that size; the arguments follow `render`'s signature.
    unsafe { launch.launch(config) }.map_err(|e| fault("linear_grid", e))?;
    if let Some(parts) = &parts {
        let f = compiled.function("gb_linear_grid_finish")?;
        let (pparts, pres, sl) = (dev.ptr(parts), dev.ptr(&result), slices as i32);
        let config = LaunchConfig {
            grid_dim: (m.div_ceil(BLOCK).min(1 << 16) as u32, 1, 1),
            block_dim: (BLOCK as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: reads `slices` partial results of (1 + l2) x m values and
        // writes the (1 + l2) x m result; arguments follow `render`.
        unsafe {
            dev.stream
                .launch_builder(f)
                .arg(&pb)
                .arg(&counts)
                .arg(&pmu)
                .arg(&pp)
                .arg(&pparts)
                .arg(&pres)
                .arg(&mi)
                .arg(&first)
                .arg(&sl)
                .launch(config)
        }
        .map_err(|e| fault("linear_grid", e))?;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gearbox_core::fusion::ir::{DeviceLibrary, FnRef, ScalarFn};

    fn assemble(names: &[&str]) -> Result<String> {
        Ok(names
            .iter()
            .map(|n| format!("__device__ double {n}(double e, double a, double b, int f) {{ return e * a + b; }}\n"))
            .collect())
    }

    static LIB: DeviceLibrary = DeviceLibrary {
        name: "test",
        assemble,
    };
    static F: ScalarFn = ScalarFn {
        name: "f",
        device_name: "gb_f",
        arity: 3,
        flags: 1,
        eval: |a, _| a[0] * a[1] + a[2],
        library: &LIB,
    };
    static PAIR: ScalarFn = ScalarFn {
        name: "pair",
        device_name: "gb_pair",
        arity: 6,
        flags: 2,
        ..F
    };

    #[test]
    fn the_source_reads_full_columns_from_the_tile_and_scalars_from_registers() {
        let term = GridTerm::new(
            &F,
            1,
            &[TermArg::Eta, TermArg::Column(1), TermArg::Column(0)],
        )
        .unwrap();
        let plan = Plan {
            l2: 3,
            tile: 32,
            product: true,
        };
        let spec = LinearGridSpec {
            value: term,
            slope: term,
            pair: None,
            columns: 3,
        };
        // Column 0 is a scalar, column 1 and 2 full.
        let src = render(&spec, &[false, true, true], plan).unwrap();
        if std::env::var_os("GEARBOX_PRINT_SOURCE").is_some() {
            println!("{src}");
        }
        assert!(src.contains("gb_f(eta, cs[t * 2 + 0], sc0, 1)"), "{src}");
        assert!(src.contains("const double sc0 = col0[0];"), "{src}");
        assert!(
            src.contains("cs[t * 2 + 1] = t < n ? col2[base + t] : 0.0;"),
            "{src}"
        );
        assert!(src.contains("#define L2 3"), "{src}");
        assert_eq!(src.matches("__device__ double gb_f").count(), 1, "{src}");
        // With a pair, one call per observation: both terms' arguments and
        // flags, then the slope's address.
        let paired = LinearGridSpec {
            pair: Some(FnRef(&PAIR)),
            ..spec
        };
        let src = render(&paired, &[false, true, true], plan).unwrap();
        let call = "v += gb_pair(eta, cs[t * 2 + 0], sc0, eta, cs[t * 2 + 0], sc0, 1, 1, &s);";
        assert!(src.contains(call), "{src}");
        assert!(!src.contains("gb_f("), "{src}");
    }
}
