//! The OpenCL C dialect of the shared renderer: OpenCL C 1.2 with
//! `cl_khr_fp64` where the device has it.
//!
//! Storage types: f32 `float`, f64 `double`, i64 `long`, bool `uchar`
//! holding 0 or 1 (as on the host and in CUDA). Buffers are `__global`;
//! wide loads and stores go through 16-byte aligned structs (`gb_pack_*`),
//! which compilers turn into vector loads. OpenCL C has no warp shuffles in
//! its core language, so block reductions go through a tree in `__local`
//! memory, declared in each kernel that reduces (the language allows
//! `__local` variables only there) and passed to the helper.
//!
//! Floating-point contraction is off (`FP_CONTRACT OFF`): results round
//! like the CPU reference, as CUDA's `--fmad=false` does for the nmath
//! kernels; the fused kernels are memory-bound, so nothing is lost.

use gearbox_codegen::{Dialect, Spellings};
use gearbox_core::DType;

/// OpenCL C, with or without float64.
pub struct OpenClC {
    fp64: bool,
}

/// The dialect for devices with `cl_khr_fp64`: f64 and i64 kernels.
pub static OPENCL_C_FP64: OpenClC = OpenClC { fp64: true };

/// The dialect for devices without float64: f32 and bool kernels (i64
/// works without the extension but shares the f64 accumulators).
pub static OPENCL_C: OpenClC = OpenClC { fp64: false };

/// The dialect for a device that has float64 or not.
pub fn dialect(fp64: bool) -> &'static OpenClC {
    if fp64 {
        &OPENCL_C_FP64
    } else {
        &OPENCL_C
    }
}

static SPELLINGS: Spellings = Spellings {
    name: "opencl-c",
    generator: "gearbox-opencl",
    f32_type: "float",
    f64_type: "double",
    i64_type: "long",
    bool_type: "bool",
    int_type: "int",
    index_type: "long",
    bool_storage: "uchar",
    u32_type: "uint",
    u64_type: "ulong",
    f32_math_suffix: "",
    f64_math_suffix: "",
    f32_literal_suffix: "f",
    i64_literal_suffix: "L",
    u32_literal_suffix: "u",
    u64_literal_suffix: "UL",
    kernel_prefix: "__kernel void",
    device_fn: "static inline",
    restrict: "restrict",
    shared: "__local",
    thread_idx: "((int)get_local_id(0))",
    block_idx: "((int)get_group_id(0))",
    block_dim: "((int)get_local_size(0))",
    grid_dim: "((int)get_num_groups(0))",
    warp_size: 32,
    barrier: "barrier(CLK_LOCAL_MEM_FENCE)",
    f32_bits: "as_uint",
    f64_bits: "as_long",
    f64_from_bits: "as_double",
    f32_from_bits: "as_float",
    f64_to_f32: "convert_float_rte",
    i64_to_f32: "convert_float_rte",
    i64_to_f64: "convert_double_rte",
};

/// What every kernel starts with: float64 where the device has it, and no
/// contraction of multiply-adds.
const PRELUDE_FP64: &str =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL FP_CONTRACT OFF";
const PRELUDE: &str = "#pragma OPENCL FP_CONTRACT OFF";

/// The pack structs: `gb_pack_<storage>_<v>` for every storage type and
/// every power-of-two `v` from 1 up to 16 bytes, aligned to their size
/// (a kernel mixing dtypes packs as many elements of each as its widest
/// dtype allows); the f64 one only with float64.
fn packs(fp64: bool) -> String {
    let mut out = Vec::new();
    let storages: &[(&str, usize)] = if fp64 {
        &[("float", 4), ("uchar", 1), ("long", 8), ("double", 8)]
    } else {
        &[("float", 4), ("uchar", 1), ("long", 8)]
    };
    for &(ty, size) in storages {
        let mut v = 1;
        while v * size <= 16 {
            out.push(format!(
                "typedef struct __attribute__((aligned({}))) {{ {ty} v[{v}]; }} gb_pack_{ty}_{v};",
                v * size
            ));
            v *= 2;
        }
    }
    out.join("\n")
}

impl Dialect for OpenClC {
    fn spellings(&self) -> &Spellings {
        &SPELLINGS
    }

    fn prelude(&self) -> &str {
        if self.fp64 {
            PRELUDE_FP64
        } else {
            PRELUDE
        }
    }

    fn pack_decl(&self) -> &str {
        static WITH_FP64: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        static WITHOUT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let cell = if self.fp64 { &WITH_FP64 } else { &WITHOUT };
        cell.get_or_init(|| packs(self.fp64))
    }

    fn pack_type(&self, storage: &str, v: usize) -> String {
        format!("gb_pack_{storage}_{v}")
    }

    fn pack_load(&self, buffer: &str, storage: &str, v: usize, index: &str, _: bool) -> String {
        format!("((__global const gb_pack_{storage}_{v}*){buffer})[{index}]")
    }

    fn pack_store(
        &self,
        buffer: &str,
        storage: &str,
        v: usize,
        index: &str,
        value: &str,
        _: bool,
    ) -> String {
        format!("((__global gb_pack_{storage}_{v}*){buffer})[{index}] = {value};")
    }

    fn buffer_param(&self, storage: &str, name: &str, writable: bool) -> String {
        if writable {
            format!("__global {storage}* restrict {name}")
        } else {
            format!("__global const {storage}* restrict {name}")
        }
    }

    fn has_dtype(&self, dtype: DType) -> bool {
        self.fp64 || !matches!(dtype, DType::F64 | DType::I64)
    }

    /// f64 accumulators where the device has them, else f32.
    fn float_accumulator(&self) -> DType {
        if self.fp64 {
            DType::F64
        } else {
            DType::F32
        }
    }

    fn has_shuffles(&self) -> bool {
        false
    }

    fn shuffle_down(&self, value: &str, _: &str) -> String {
        // Never called: the dialect has no shuffles.
        value.to_string()
    }

    fn shared_in_kernels(&self) -> bool {
        true
    }

    fn unroll(&self, times: Option<usize>) -> String {
        match times {
            Some(n) => format!("#pragma unroll {n}"),
            None => "#pragma unroll".into(),
        }
    }
}
