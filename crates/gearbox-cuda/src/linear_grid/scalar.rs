//! The grid kernel on the CUDA cores: one thread per grid point, its
//! coefficients and gradient in registers, `eta` and the gradient as
//! fused multiply-adds over the tile's rows. Takes every width up to
//! [`super::MAX_L2`]; the tensor-core kernel (`mma`) is faster where it
//! applies.

use gearbox_core::ops::linear_grid::LinearGridSpec;
use gearbox_core::Result;

use super::{source, GridShape};

/// Grid points one block takes.
pub(super) const POINTS_PER_BLOCK: usize = super::BLOCK;

/// The kernel's source: the main kernel (which finishes its points itself
/// when it has one observation slice) and the finishing kernel.
pub(super) fn render(spec: &LinearGridSpec, full: &[bool], plan: GridShape) -> Result<String> {
    // Rows of the design tile at an odd stride (in doubles), so the
    // column-by-column stores of a warp fall in different banks.
    let defines = format!(
        "#define LS {}\n#define KP L2\n#define GB_ROW(t) (t)",
        plan.l2 | 1
    );
    let mut s = source::head(spec, full, plan, &defines, "")?;
    s.push_str(
        "    long long j = (long long)blockIdx.x * BLOCK + threadIdx.x;\n\
         \x20   double b[L2], g[L2], v = 0.0;\n\
         \x20   gb_point(B, counts, first + (unsigned long long)min(j, m - 1), b);\n\
         \x20   #pragma unroll\n\
         \x20   for (int k = 0; k < L2; ++k) g[k] = 0.0;\n",
    );
    s.push_str(&source::stage_tile(full));
    s.push_str(&format!(
        "        for (int t = 0; t < n; ++t) {{\n\
         \x20           const double* xr = &xs[t * LS];\n\
         \x20           double eta = os[t];\n\
         \x20           #pragma unroll\n\
         \x20           for (int k = 0; k < L2; ++k) eta = fma(xr[k], b[k], eta);\n\
         {}\n\
         \x20           #pragma unroll\n\
         \x20           for (int k = 0; k < L2; ++k) g[k] = fma(xr[k], s, g[k]);\n\
         \x20       }}\n\
         \x20   }}\n",
        source::terms(spec, full, "v")?
    ));
    s.push_str(
        "    if (j >= m) return;\n\
         \x20   if (gridDim.y == 1) {\n\
         \x20       gb_finish_point(b, v, g, mu, P, &out[j * (L2 + 1)]);\n\
         \x20   } else {\n\
         \x20       double* part = &out[((long long)blockIdx.y * m + j) * (L2 + 1)];\n\
         \x20       part[0] = v;\n\
         \x20       #pragma unroll\n\
         \x20       for (int k = 0; k < L2; ++k) part[1 + k] = g[k];\n\
         \x20   }\n}\n",
    );
    s.push_str(source::FINISHING_KERNEL);
    Ok(s)
}
