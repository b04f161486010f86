//! The renderer through dialects other than CUDA's: a plain C dialect
//! shows that the kernel structure names no CUDA construct, and variants of
//! it declare their own entry points, lack 64-bit values or shuffles.

mod common;

use common::*;
use gearbox_core::{DType, ReduceOp};
use gearbox_cuda::codegen::{render_tuned, KernelParam, Mapping, Tuning, CUDA};

/// A plain C dialect that overrides only what every dialect must give: what
/// it renders shows that the kernel structure itself names no CUDA construct.
struct PlainC;

static PLAIN_C: gearbox_cuda::codegen::Spellings = gearbox_cuda::codegen::Spellings {
    name: "c",
    generator: "a test",
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
    kernel_prefix: "kernel void",
    device_fn: "static inline",
    restrict: "restrict",
    shared: "local",
    thread_idx: "get_local_id(0)",
    block_idx: "get_group_id(0)",
    block_dim: "get_local_size(0)",
    grid_dim: "get_num_groups(0)",
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

impl gearbox_cuda::codegen::Dialect for PlainC {
    fn spellings(&self) -> &gearbox_cuda::codegen::Spellings {
        &PLAIN_C
    }
    fn pack_type(&self, storage: &str, v: usize) -> String {
        format!("{storage}{v}")
    }
    fn pack_load(&self, buffer: &str, _: &str, v: usize, index: &str, _: bool) -> String {
        format!("vload{v}({index}, {buffer})")
    }
    fn pack_store(
        &self,
        buffer: &str,
        _: &str,
        v: usize,
        index: &str,
        value: &str,
        _: bool,
    ) -> String {
        format!("vstore{v}({value}, {index}, {buffer});")
    }
    fn shuffle_down(&self, value: &str, offset: &str) -> String {
        format!("sub_group_shuffle_down({value}, {offset})")
    }
}

#[test]
fn the_renderer_writes_no_cuda_of_its_own() {
    let cuda_only = [
        "__",
        "reinterpret_cast",
        "template",
        "gb_pack",
        "#pragma",
        "threadIdx",
        "blockIdx",
        "extern \"C\"",
        "& y",
        "& r",
    ];
    // CUDA's literal suffixes, after a digit.
    let cuda_literal = |src: &str| {
        ["LL", "ull"].iter().any(|suffix| {
            src.match_indices(suffix)
                .any(|(i, _)| i > 0 && src.as_bytes()[i - 1].is_ascii_digit())
        })
    };
    for tuning in [
        Tuning::default(),
        Tuning {
            reduce_packs: 4,
            compound_packs: 2,
            held_packs: 2,
            elementwise_packs: 2,
            heavy_packs: 3,
            streaming: true,
            axis_group: 4,
            compound_thread_len: 512,
            strided_packs: 3,
            compound_block_len: 100_000,
            fold_moments: false,
            lane_threads: 512,
        },
    ] {
        for c in catalog() {
            let k = render_tuned(&PlainC, &c.ir, tuning).expect("render");
            // Scalar functions bring their own device library, in CUDA.
            if k.source.contains(gearbox_cuda::codegen::NO_FMA_MARKER) {
                continue;
            }
            assert!(!cuda_literal(&k.source), "{}:\n{}", c.name, k.source);
            for token in cuda_only {
                assert!(
                    !k.source.contains(token),
                    "{}: `{token}` in the plain C rendering:\n{}",
                    c.name,
                    k.source
                );
            }
        }
    }
}

/// [`PlainC`] on a device without 64-bit values, whose entry points are
/// declared its own way: the hooks a language with another kernel syntax
/// or fewer types overrides.
struct NarrowC;

/// The [`gearbox_cuda::codegen::Dialect`] methods every variant of
/// [`PlainC`] takes from it (spellings and packs).
macro_rules! plain_c_packs {
    () => {
        fn spellings(&self) -> &gearbox_cuda::codegen::Spellings {
            &PLAIN_C
        }
        fn pack_type(&self, storage: &str, v: usize) -> String {
            PlainC.pack_type(storage, v)
        }
        fn pack_load(&self, buffer: &str, st: &str, v: usize, index: &str, s: bool) -> String {
            PlainC.pack_load(buffer, st, v, index, s)
        }
        fn pack_store(&self, b: &str, st: &str, v: usize, i: &str, x: &str, s: bool) -> String {
            PlainC.pack_store(b, st, v, i, x, s)
        }
    };
}

impl gearbox_cuda::codegen::Dialect for NarrowC {
    plain_c_packs!();
    fn shuffle_down(&self, value: &str, offset: &str) -> String {
        PlainC.shuffle_down(value, offset)
    }
    fn kernel_signature(&self, name: &str, params: &[KernelParam]) -> String {
        let params: Vec<String> = params
            .iter()
            .map(|p| match p {
                KernelParam::Buffer { storage, name, .. } => format!("{storage} {name}"),
                KernelParam::Count(name) => format!("count {name}"),
            })
            .collect();
        format!("ENTRY {name} [{}] {{", params.join("; "))
    }
    fn has_dtype(&self, dtype: DType) -> bool {
        matches!(dtype, DType::F32 | DType::Bool)
    }
}

#[test]
fn a_dialect_declares_its_entry_points_and_the_dtypes_it_lacks() {
    let k = render_tuned(&NarrowC, &f32_chain(1000), Tuning::default()).expect("render");
    assert!(
        k.source
            .contains("ENTRY gb_main [float in0; float in1; float in2; float out0; count n] {"),
        "{}",
        k.source
    );
    for (dtype, ir) in [
        (DType::F64, f64_column_broadcast(5, 7)),
        (
            DType::I64,
            reduce_ir(ReduceOp::Sum, DType::I64, &shape(&[100]), None).unwrap(),
        ),
        (
            DType::F64,
            cast_ir(DType::F32, DType::F64, &shape(&[100])).unwrap(),
        ),
    ] {
        let err = render_tuned(&NarrowC, &ir, Tuning::default())
            .expect_err("a dtype the dialect lacks")
            .to_string();
        assert!(
            err.contains(&format!("no {dtype} values")) && err.contains("the c dialect"),
            "{err}"
        );
    }
}

/// [`PlainC`] without shuffles (OpenCL C 1.2's case).
struct NoShuffles;

impl gearbox_cuda::codegen::Dialect for NoShuffles {
    plain_c_packs!();
    fn shuffle_down(&self, value: &str, _: &str) -> String {
        value.to_string()
    }
    fn has_shuffles(&self) -> bool {
        false
    }
}

/// In a dialect without shuffles, many lanes of a warp's length take a
/// thread each (a block each would leave most of its threads idle); few
/// such lanes, or longer ones, keep a block.
#[test]
fn without_shuffles_many_short_lanes_take_a_thread_each() {
    let d = &NoShuffles;
    let many = reduce_ir(ReduceOp::Sum, DType::F32, &shape(&[100, 40_000]), Some(0)).unwrap();
    let k = render_tuned(d, &many, Tuning::default()).unwrap();
    assert_eq!(k.mapping, Mapping::ThreadPerLane { items: 40_000 });
    let few = reduce_ir(ReduceOp::Sum, DType::F32, &shape(&[100, 400]), Some(0)).unwrap();
    let k = render_tuned(d, &few, Tuning::default()).unwrap();
    assert_eq!(k.mapping, Mapping::BlockPerLane { lanes: 400 });
    let long = reduce_ir(ReduceOp::Sum, DType::F32, &shape(&[2000, 40_000]), Some(0)).unwrap();
    let k = render_tuned(d, &long, Tuning::default()).unwrap();
    assert_eq!(k.mapping, Mapping::BlockPerLane { lanes: 40_000 });
    // CUDA has shuffles: a warp each.
    let k = render_tuned(&CUDA, &many, Tuning::default()).unwrap();
    assert_eq!(k.mapping, Mapping::WarpPerLane { lanes: 40_000 });
}
