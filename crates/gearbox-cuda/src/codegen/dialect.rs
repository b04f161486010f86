//! The table of spellings that separates the kernel structure from one GPU
//! language.
//!
//! The renderer builds every kernel from these entries (type names, math
//! function names, qualifiers, thread indices, barriers, shuffles, bit casts),
//! so a WGSL or OpenCL renderer can reuse the structure with another table.
//! [`CUDA`] is the table for CUDA C++ as NVRTC compiles it.

use gearbox_core::DType;

/// How one GPU language spells what the kernels need.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// Short name of the dialect, written into the source header.
    pub name: &'static str,
    /// Register type of an f32 value.
    pub f32_type: &'static str,
    /// Register type of an f64 value.
    pub f64_type: &'static str,
    /// Register type of an i64 value.
    pub i64_type: &'static str,
    /// Register type of a bool value.
    pub bool_type: &'static str,
    /// Storage (buffer element) type of a bool, holding 0 or 1.
    pub bool_storage: &'static str,
    /// Unsigned 32-bit type (broadcast index math on small shapes).
    pub u32_type: &'static str,
    /// Unsigned 64-bit type (wrapping integer arithmetic, large index math).
    pub u64_type: &'static str,
    /// Suffix of f32 math functions (`exp` + suffix).
    pub f32_math_suffix: &'static str,
    /// Suffix of f64 math functions.
    pub f64_math_suffix: &'static str,
    /// Suffix of f32 literals (`1.0` + suffix).
    pub f32_literal_suffix: &'static str,
    /// Suffix of i64 literals.
    pub i64_literal_suffix: &'static str,
    /// Suffix of unsigned 32-bit literals.
    pub u32_literal_suffix: &'static str,
    /// Suffix of unsigned 64-bit literals.
    pub u64_literal_suffix: &'static str,
    /// What starts a kernel entry point declaration, up to its name.
    pub kernel_prefix: &'static str,
    /// Qualifiers of an inlined device helper function.
    pub device_fn: &'static str,
    /// Pointer qualifier promising no aliasing.
    pub restrict: &'static str,
    /// Qualifier of block-shared memory.
    pub shared: &'static str,
    /// Index of the thread within its block (x).
    pub thread_idx: &'static str,
    /// Index of the block within the grid (x).
    pub block_idx: &'static str,
    /// Threads per block (x).
    pub block_dim: &'static str,
    /// Blocks in the grid (x).
    pub grid_dim: &'static str,
    /// Threads per warp (subgroup).
    pub warp_size: u32,
    /// Block-wide barrier statement (without `;`).
    pub barrier: &'static str,
    /// Loop-unrolling hint placed on the line before a loop.
    pub unroll: &'static str,
    /// `shuffle_down(value, offset)` within a full warp.
    pub shuffle_down: fn(&str, &str) -> String,
    /// A load through the read-only data cache of `ptr[index]`.
    pub load_readonly: fn(&str, &str) -> String,
    /// Bits of an f32 as an unsigned 32-bit integer.
    pub f32_bits: &'static str,
    /// Bits of an f64 as a signed 64-bit integer.
    pub f64_bits: &'static str,
    /// f64 from the bits of a signed 64-bit integer.
    pub f64_from_bits: &'static str,
    /// f64 to f32, rounding to nearest (overflow gives infinity).
    pub f64_to_f32: &'static str,
    /// i64 to f32, rounding to nearest.
    pub i64_to_f32: &'static str,
    /// i64 to f64, rounding to nearest.
    pub i64_to_f64: &'static str,
    /// Declaration of the aligned pack type `gb_pack<T, V>` used for wide
    /// loads and stores.
    pub pack_decl: &'static str,
    /// `gb_ld_cs` / `gb_st_cs`: pack loads and stores with the streaming
    /// (evict-first) cache hint, for packs of 8 or 16 bytes.
    pub pack_streaming_decl: &'static str,
}

fn cuda_shuffle_down(value: &str, offset: &str) -> String {
    format!("__shfl_down_sync(0xffffffffu, {value}, {offset})")
}

fn cuda_load_readonly(ptr: &str, index: &str) -> String {
    format!("__ldg(&{ptr}[{index}])")
}

/// CUDA C++17 as NVRTC accepts it, with no header included.
pub const CUDA: Dialect = Dialect {
    name: "cuda",
    f32_type: "float",
    f64_type: "double",
    i64_type: "long long",
    bool_type: "bool",
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
    unroll: "#pragma unroll",
    shuffle_down: cuda_shuffle_down,
    load_readonly: cuda_load_readonly,
    f32_bits: "__float_as_uint",
    f64_bits: "__double_as_longlong",
    f64_from_bits: "__longlong_as_double",
    f64_to_f32: "__double2float_rn",
    i64_to_f32: "__ll2float_rn",
    i64_to_f64: "__ll2double_rn",
    pack_decl:
        "template <typename T, int V>\nstruct alignas(sizeof(T) * V) gb_pack {\n  T v[V];\n};",
    pack_streaming_decl: CUDA_PACK_STREAMING,
};

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

impl Dialect {
    /// The register type of a value of `dtype`.
    pub fn value_type(&self, dtype: DType) -> &'static str {
        match dtype {
            DType::F32 => self.f32_type,
            DType::F64 => self.f64_type,
            DType::I64 => self.i64_type,
            DType::Bool => self.bool_type,
        }
    }

    /// The buffer element type of `dtype` (bool is stored as one byte).
    pub fn storage_type(&self, dtype: DType) -> &'static str {
        match dtype {
            DType::Bool => self.bool_storage,
            d => self.value_type(d),
        }
    }

    /// The name of math function `base` (its f64 spelling, e.g. `exp`) for
    /// a float `dtype`: `expf` for f32 and `exp` for f64 in CUDA.
    pub fn math(&self, base: &str, dtype: DType) -> String {
        let suffix = match dtype {
            DType::F32 => self.f32_math_suffix,
            _ => self.f64_math_suffix,
        };
        format!("{base}{suffix}")
    }

    /// A float literal of `dtype` from its decimal digits (`"1.0"`).
    pub fn float_lit(&self, digits: &str, dtype: DType) -> String {
        match dtype {
            DType::F32 => format!("{digits}{}", self.f32_literal_suffix),
            _ => digits.to_string(),
        }
    }

    /// A non-negative i64 literal.
    pub fn i64_lit(&self, v: u64) -> String {
        format!("{v}{}", self.i64_literal_suffix)
    }

    /// The largest i64.
    pub fn i64_max(&self) -> String {
        self.i64_lit(i64::MAX as u64)
    }

    /// The smallest i64, spelled so that no literal overflows.
    pub fn i64_min(&self) -> String {
        format!("(-{} - {})", self.i64_lit(i64::MAX as u64), self.i64_lit(1))
    }

    /// A quiet f64 NaN.
    pub fn f64_nan(&self) -> String {
        format!(
            "{}(0x7ff8000000000000{})",
            self.f64_from_bits, self.i64_literal_suffix
        )
    }

    /// f64 positive infinity.
    pub fn f64_inf(&self) -> String {
        format!(
            "{}(0x7ff0000000000000{})",
            self.f64_from_bits, self.i64_literal_suffix
        )
    }
}
