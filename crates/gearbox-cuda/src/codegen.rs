//! The CUDA C++ dialect of the shared kernel renderer
//! ([`gearbox_codegen`]), and rendering for NVRTC with this process's
//! code-shape knobs.
//!
//! # Compiling
//!
//! NVRTC with `-std=c++17` and the device's architecture
//! (`--gpu-architecture=sm_90` on an H100); no include paths, only CUDA
//! built-ins (`expf`, `__ldg`, `__shfl_down_sync`). Kernels are
//! `extern "C"`, so `cuModuleGetFunction(module, "gb_main")` finds them.
//! `--fmad=false` keeps results within a few ulps of the CPU; the default
//! `--fmad=true` is a little faster but lets cancelling sums like
//! `a * b - c` differ by more. `--use_fast_math` is not needed and changes
//! results (approximate `expf`, denormals flushed); the NaN tests stay
//! correct under it since they look at bits. `scripts/nvrtc_check.py` runs
//! every test kernel on a GPU against the CPU (see `tests/nvrtc_bundle.rs`).
//!
//! Storage types: f32 `float`, f64 `double`, i64 `long long`, bool
//! `unsigned char` holding 0 or 1. Buffers must be 256-byte aligned (16 is
//! enough): the vectorized loops load and store 16 bytes at a time.
//!
//! The code-shape knobs ([`Tuning`]) come from [`crate::params`].

use gearbox_core::fusion::ir::KernelIr;
use gearbox_core::Error;

pub use gearbox_codegen::{
    fnv1a64, render_tuned, scalar_fns_source, Dialect, KernelKind, KernelParam, Mapping,
    RenderedKernel, Spellings, Tuning, BLOCK_SIZE, FINISH_BLOCK_SIZE, NO_FMA_MARKER,
};

/// CUDA C++17 as NVRTC accepts it, with no header included.
pub struct CudaCpp;

/// The CUDA C++ dialect.
pub static CUDA: CudaCpp = CudaCpp;

static CUDA_SPELLINGS: Spellings = Spellings {
    name: "cuda",
    generator: "gearbox-cuda",
    f32_type: "float",
    f64_type: "double",
    i64_type: "long long",
    bool_type: "bool",
    int_type: "int",
    index_type: "long long",
    bool_storage: "unsigned char",
    u32_type: "unsigned int",
    u64_type: "unsigned long long",
    f32_math_suffix: "f",
    f64_math_suffix: "",
    f32_literal_suffix: "f",
    i64_literal_suffix: "LL",
    u32_literal_suffix: "u",
    u64_literal_suffix: "ull",
    kernel_prefix: "extern \"C\" __global__ void",
    device_fn: "static __device__ __forceinline__",
    restrict: "__restrict__",
    shared: "__shared__",
    thread_idx: "threadIdx.x",
    block_idx: "blockIdx.x",
    block_dim: "blockDim.x",
    grid_dim: "gridDim.x",
    warp_size: 32,
    barrier: "__syncthreads()",
    f32_bits: "__float_as_uint",
    f64_bits: "__double_as_longlong",
    f64_from_bits: "__longlong_as_double",
    f32_from_bits: "__uint_as_float",
    f64_to_f32: "__double2float_rn",
    i64_to_f32: "__ll2float_rn",
    i64_to_f64: "__ll2double_rn",
};

impl Dialect for CudaCpp {
    fn spellings(&self) -> &Spellings {
        &CUDA_SPELLINGS
    }

    fn pack_decl(&self) -> &str {
        "template <typename T, int V>\nstruct alignas(sizeof(T) * V) gb_pack {\n  T v[V];\n};"
    }

    fn pack_streaming_decl(&self) -> &str {
        CUDA_PACK_STREAMING
    }

    fn pack_type(&self, storage: &str, v: usize) -> String {
        format!("gb_pack<{storage}, {v}>")
    }

    fn pack_load(
        &self,
        buffer: &str,
        storage: &str,
        v: usize,
        index: &str,
        streaming: bool,
    ) -> String {
        if streaming {
            format!(
                "gb_ld_cs(reinterpret_cast<const gb_pack<{storage}, {v}>*>({buffer}) + ({index}))"
            )
        } else {
            format!("reinterpret_cast<const gb_pack<{storage}, {v}>*>({buffer})[{index}]")
        }
    }

    fn pack_store(
        &self,
        buffer: &str,
        storage: &str,
        v: usize,
        index: &str,
        value: &str,
        streaming: bool,
    ) -> String {
        if streaming {
            format!(
                "gb_st_cs(reinterpret_cast<gb_pack<{storage}, {v}>*>({buffer}) + {index}, {value});"
            )
        } else {
            format!("reinterpret_cast<gb_pack<{storage}, {v}>*>({buffer})[{index}] = {value};")
        }
    }

    fn out_param(&self, ty: &str, name: &str) -> String {
        format!("{ty}& {name}")
    }

    fn out_arg(&self, name: &str) -> String {
        name.to_string()
    }

    fn out_assign(&self, name: &str, value: &str) -> String {
        format!("{name} = {value};")
    }

    fn unroll(&self, times: Option<usize>) -> String {
        match times {
            Some(n) => format!("#pragma unroll {n}"),
            None => "#pragma unroll".into(),
        }
    }

    fn shuffle_down(&self, value: &str, offset: &str) -> String {
        format!("__shfl_down_sync(0xffffffffu, {value}, {offset})")
    }

    fn shuffle_from(&self, value: &str, lane: &str) -> Option<String> {
        Some(format!("__shfl_sync(0xffffffffu, {value}, {lane})"))
    }

    fn load_readonly(&self, ptr: &str, index: &str) -> String {
        format!("__ldg(&{ptr}[{index}])")
    }
}

/// The CUDA spelling of [`Dialect::pack_streaming_decl`]: `__ldcs` /
/// `__stcs` on the pack seen as a `uint4` or `uint2`.
const CUDA_PACK_STREAMING: &str = r#"template <typename T, int V>
static __device__ __forceinline__ gb_pack<T, V> gb_ld_cs(const gb_pack<T, V>* p) {
  if constexpr (sizeof(gb_pack<T, V>) == 16) {
    const uint4 u = __ldcs(reinterpret_cast<const uint4*>(p));
    return *reinterpret_cast<const gb_pack<T, V>*>(&u);
  } else if constexpr (sizeof(gb_pack<T, V>) == 8) {
    const uint2 u = __ldcs(reinterpret_cast<const uint2*>(p));
    return *reinterpret_cast<const gb_pack<T, V>*>(&u);
  } else {
    return *p;
  }
}
template <typename T, int V>
static __device__ __forceinline__ void gb_st_cs(gb_pack<T, V>* p, const gb_pack<T, V>& x) {
  if constexpr (sizeof(gb_pack<T, V>) == 16) {
    __stcs(reinterpret_cast<uint4*>(p), *reinterpret_cast<const uint4*>(&x));
  } else if constexpr (sizeof(gb_pack<T, V>) == 8) {
    __stcs(reinterpret_cast<uint2*>(p), *reinterpret_cast<const uint2*>(&x));
  } else {
    *p = x;
  }
}"#;

/// Renders `ir` as CUDA C++ for NVRTC with this process's knobs (see
/// [`gearbox_codegen`] for the launch ABI).
///
/// Fails only for an axis reduction fused with full-size outputs.
pub fn render(ir: &KernelIr) -> Result<RenderedKernel, Error> {
    render_tuned(&CUDA, ir, crate::params::params().tuning)
}
