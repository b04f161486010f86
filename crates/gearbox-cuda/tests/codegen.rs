//! Golden sources and structural checks of the CUDA code generator.
//!
//! `GEARBOX_BLESS=1 cargo test -p gearbox-cuda --test codegen` rewrites the
//! golden files under `tests/golden/`.

mod common;

use std::path::PathBuf;

use common::*;
use gearbox_core::fusion::ir::{Expr, IrReduce, KernelIr};
use gearbox_core::{BinaryOp, DType, ReduceOp, UnaryOp};
use gearbox_cuda::codegen::{
    fnv1a64, render, render_tuned, KernelKind, Mapping, RenderedKernel, Tuning, CUDA,
};

fn golden(name: &str, ir: &KernelIr) {
    // The default knobs, whatever GEARBOX_CUDA_* this process was given.
    let k = render_tuned(&CUDA, ir, Tuning::default()).expect("render");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.cu"));
    if std::env::var("GEARBOX_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &k.source).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with GEARBOX_BLESS=1)", path.display()));
    if k.source != want {
        let line = k
            .source
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map_or("(length)".to_string(), |i| (i + 1).to_string());
        panic!(
            "{name}: generated source differs from {} at line {line}; rerun with GEARBOX_BLESS=1 if intended.\n--- generated ---\n{}",
            path.display(),
            k.source
        );
    }
}

#[test]
fn golden_f32_chain_with_scalar() {
    golden("f32_chain", &f32_chain(1000));
}

#[test]
fn golden_f64_column_broadcast() {
    golden("f64_column_broadcast", &f64_column_broadcast(5, 7));
}

#[test]
fn golden_f32_softmax_with_a_warp_per_lane() {
    let s = gearbox_core::Shape::new(vec![300, 40]);
    let ir = epilogue_ir(Epilogue::Softmax, DType::F32, &s, 0).expect("valid IR");
    golden("f32_softmax_warp", &ir);
}

/// Contiguous lanes a block reduces, or a warp or a group of one when
/// short, get one kernel writing the outputs after the reduction; strided
/// lanes, lanes too long to find in cache and single lanes run as two
/// passes.
#[test]
fn epilogues_fuse_only_where_a_unit_holds_a_lane() {
    let fuses = |what: Epilogue, dt: DType, dims: &[usize], axis: usize| {
        let s = gearbox_core::Shape::new(dims.to_vec());
        let ir = epilogue_ir(what, dt, &s, axis).expect("valid IR");
        gearbox_codegen::fuses_epilogue(&CUDA, &ir, Tuning::default())
    };
    let sd = Epilogue::Standardize;
    let center = Epilogue::ScaledCenter;
    assert!(fuses(sd, DType::F64, &[6000, 6000], 0), "a block per lane");
    assert!(
        fuses(center, DType::F32, &[64, 1000], 0),
        "a warp per short lane"
    );
    assert!(fuses(center, DType::F64, &[256, 1000], 0), "2 KiB lanes");
    assert!(
        !fuses(center, DType::F64, &[300, 1000], 0),
        "lanes a warp cannot keep"
    );
    assert!(
        fuses(sd, DType::F64, &[64, 1000], 0),
        "a group of a warp per lane"
    );
    assert!(!fuses(sd, DType::F64, &[6000, 6000], 1), "strided lanes");
    assert!(
        !fuses(sd, DType::F64, &[1_000_000, 64], 0),
        "lanes split into chunks"
    );
    assert!(
        !fuses(sd, DType::F64, &[20_000, 5000], 0),
        "lanes longer than the cache holds"
    );
    assert!(!fuses(sd, DType::F64, &[77, 1], 0), "a single lane");
    let s = gearbox_core::Shape::new(vec![300, 40]);
    let ir = epilogue_ir(Epilogue::ScaledCenter, DType::F32, &s, 0).expect("valid IR");
    let k = render_tuned(&CUDA, &ir, Tuning::default()).expect("render");
    assert_eq!(k.kind, KernelKind::AxisReduce);
    assert_eq!(k.chunks, 1);
    assert!(k.source.contains("gb_epilogue("), "{}", k.source);
    let strided = epilogue_ir(Epilogue::Softmax, DType::F32, &s, 1).expect("valid IR");
    let err = render_tuned(&CUDA, &strided, Tuning::default()).expect_err("two passes");
    assert!(err.to_string().contains("two passes"), "{err}");
}

#[test]
fn golden_f64_standardize_with_a_group_per_lane() {
    let s = gearbox_core::Shape::new(vec![64, 9]);
    let ir = epilogue_ir(Epilogue::Standardize, DType::F64, &s, 0).expect("valid IR");
    golden("f64_standardize_group", &ir);
}

#[test]
fn golden_f32_full_sum() {
    golden("f32_full_sum", &f32_full_sum(1000));
}

/// The exact `gb_main` parameter list the ABI promises for `ir`.
fn expected_params(ir: &KernelIr, k: &RenderedKernel) -> Vec<String> {
    let st = |d: DType| match d {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I64 => "long long",
        DType::Bool => "unsigned char",
    };
    let mut p: Vec<String> = ir
        .inputs()
        .iter()
        .enumerate()
        .map(|(i, (_, d))| format!("const {}* __restrict__ in{i}", st(*d)))
        .collect();
    for (m, &o) in ir.outputs().iter().enumerate() {
        p.push(format!("{}* __restrict__ out{m}", st(ir.nodes()[o].dtype)));
    }
    if let Some(r) = ir.reduce() {
        let partials = k.kind == KernelKind::FullReduce || k.chunks > 1;
        let ty = match r.op {
            _ if !partials => st(r.dtype),
            _ => accumulator(ir, r),
        };
        p.push(format!("{ty}* __restrict__ red"));
        if !partials && r.companion.is_some() {
            p.push(format!("{ty}* __restrict__ red_companion"));
        }
    }
    p.push("long long n".into());
    p
}

/// The parameters of kernel `name`, as written.
fn params_of(src: &str, name: &str) -> Vec<String> {
    let head = format!("extern \"C\" __global__ void {name}(");
    let start = src.find(&head).expect("kernel head") + head.len();
    let end = start + src[start..].find(") {").expect("end of params");
    src[start..end]
        .split(',')
        .map(|s| s.trim().to_string())
        .collect()
}

fn balanced(src: &str, open: char, close: char) -> bool {
    let mut depth = 0i64;
    for c in src.chars() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth < 0 {
                return false;
            }
        }
    }
    depth == 0
}

/// The CUDA math function an op calls, by its f64 name.
fn math_name(op: UnaryOp) -> Option<&'static str> {
    use UnaryOp::*;
    Some(match op {
        Abs => "fabs",
        Floor => "floor",
        Ceil => "ceil",
        Round => "rint",
        Sqrt => "sqrt",
        Exp | Sigmoid => "exp",
        Expm1 => "expm1",
        Log => "log",
        Log1p | Softplus => "log1p",
        Sin => "sin",
        Cos => "cos",
        Tan => "tan",
        Tanh => "tanh",
        _ => return None,
    })
}

fn check_structure(c: &Case) {
    let k = render(&c.ir).unwrap_or_else(|e| panic!("{}: {e}", c.name));
    let src = &k.source;
    let ctx = |what: &str| format!("{}: {what}\n{src}", c.name);
    for (o, cl) in [('{', '}'), ('(', ')'), ('[', ']')] {
        assert!(
            balanced(src, o, cl),
            "{}",
            ctx(&format!("unbalanced {o}{cl}"))
        );
    }
    assert!(
        !src.contains("fmin") && !src.contains("fmax"),
        "{}",
        ctx("fmin/fmax")
    );
    assert!(!src.contains("#include"), "{}", ctx("#include"));
    assert_eq!(k.entry, "gb_main");
    assert_eq!(
        params_of(src, "gb_main"),
        expected_params(&c.ir, &k),
        "{}",
        ctx("params")
    );
    match k.kind {
        _ if k.kind == KernelKind::FullReduce || k.chunks > 1 => {
            assert_eq!(k.finish_entry, Some("gb_finish"));
            let r = c.ir.reduce().expect("reduction");
            let acc = accumulator(&c.ir, r);
            let out = match r.dtype {
                DType::F32 => "float",
                DType::F64 => "double",
                DType::Bool => "unsigned char",
                _ => "long long",
            };
            let mut want = vec![
                format!("const {acc}* __restrict__ partials"),
                format!("{out}* __restrict__ result"),
            ];
            if r.companion.is_some() {
                want.push(format!("{out}* __restrict__ result_companion"));
            }
            want.extend([
                "long long num_partials".to_string(),
                "long long n".to_string(),
            ]);
            assert_eq!(
                params_of(src, "gb_finish"),
                want,
                "{}",
                ctx("gb_finish params")
            );
            assert_eq!(
                k.partial_dtype,
                Some(match acc {
                    "long long" => DType::I64,
                    "float" => DType::F32,
                    _ => DType::F64,
                })
            );
        }
        _ => {
            assert_eq!(k.finish_entry, None);
            assert!(!src.contains("gb_finish"), "{}", ctx("stray gb_finish"));
            assert_eq!(k.partial_dtype, None);
        }
    }
    assert_eq!(k.kind == KernelKind::Elementwise, c.ir.reduce().is_none());
    // Math functions are spelled per dtype.
    for n in c.ir.nodes() {
        if let Expr::Unary(op, a) = n.expr {
            let dt = c.ir.nodes()[a].dtype;
            if let (Some(f), true) = (math_name(op), dt.is_float()) {
                let want = if dt == DType::F32 {
                    format!("{f}f(")
                } else {
                    format!("{f}(")
                };
                assert!(src.contains(&want), "{}", ctx(&format!("expected {want}")));
                if dt == DType::F64 {
                    assert!(
                        !src.contains(&format!("{f}f(")),
                        "{}",
                        ctx("f32 math in f64")
                    );
                }
            }
        }
        if let Expr::Binary(op @ (BinaryOp::Pow | BinaryOp::Atan2), a, _) = n.expr {
            let base = if op == BinaryOp::Pow { "pow" } else { "atan2" };
            let want = if c.ir.nodes()[a].dtype == DType::F32 {
                format!("{base}f(")
            } else {
                format!("{base}(")
            };
            assert!(src.contains(&want), "{}", ctx(&format!("expected {want}")));
        }
    }
    // Hash: FNV-1a of the source, the same on every render.
    assert_eq!(k.source_hash, fnv1a64(src.as_bytes()));
    assert_eq!(render(&c.ir).expect("render").source_hash, k.source_hash);
    if k.kind == KernelKind::Elementwise {
        let widest =
            c.ir.outputs()
                .iter()
                .map(|&o| c.ir.nodes()[o].dtype.size_bytes())
                .chain(
                    // Full-size inputs the kernel reads (isnan of an i64,
                    // say, reads nothing).
                    c.ir.inputs()
                        .iter()
                        .enumerate()
                        .filter(|(k, (s, _))| {
                            s.numel() == c.ir.shape().numel()
                                && (src.contains(&format!("in{k}["))
                                    || src.contains(&format!("(in{k})")))
                        })
                        .map(|(_, (_, d))| d.size_bytes()),
                )
                .max()
                .expect("an output");
        assert_eq!(k.vector_width, 16 / widest, "{}", ctx("vector width"));
        assert_eq!(k.mapping, Mapping::Elements);
    }
}

#[test]
fn structure_of_every_catalog_kernel() {
    let cases = catalog();
    // Every op and dtype combination the IR accepts is in the catalog.
    assert!(cases.len() > 250, "{} cases", cases.len());
    for c in &cases {
        check_structure(c);
    }
}

#[test]
fn every_op_and_cast_is_covered() {
    let names: Vec<String> = catalog().into_iter().map(|c| c.name).collect();
    for &op in UNARY {
        assert!(names
            .iter()
            .any(|n| n.starts_with(&format!("unary_{}_", op.name()))));
    }
    for &op in BINARY {
        assert!(names
            .iter()
            .any(|n| n.starts_with(&format!("binary_{}_", op.name()))));
    }
    for a in DTYPES {
        for b in DTYPES {
            assert!(names.contains(&format!("cast_{}_{}", a.name(), b.name())));
        }
        assert!(names.contains(&format!("select_{}", a.name())));
    }
    for &op in REDUCE {
        for dt in [DType::F32, DType::F64, DType::I64] {
            if op.result_dtype(dt).is_err() {
                continue;
            }
            assert!(names.contains(&format!("reduce_{}_{}_all", op.name(), dt.name())));
        }
    }
}

#[test]
fn full_size_kernels_do_not_depend_on_the_shape() {
    let same = |a: &KernelIr, b: &KernelIr| {
        let (ka, kb) = (render(a).expect("a"), render(b).expect("b"));
        assert_eq!(ka.source, kb.source);
        assert_eq!(ka.source_hash, kb.source_hash);
    };
    same(&f32_chain(1000), &f32_chain(3));
    same(&f32_full_sum(1000), &f32_full_sum(1 << 30));
    for &op in UNARY {
        for dt in DTYPES {
            if let (Some(a), Some(b)) = (
                unary_ir(op, dt, &shape(&[37])),
                unary_ir(op, dt, &shape(&[4096, 3])),
            ) {
                same(&a, &b);
            }
        }
    }
    for dt in DTYPES {
        let a = select_ir(dt, &shape(&[10]), &shape(&[10])).expect("a");
        let b = select_ir(dt, &shape(&[2, 2, 2]), &shape(&[2, 2, 2])).expect("b");
        same(&a, &b);
        // One-element inputs are loaded once and do not bake the shape in.
        let a = binary_ir(BinaryOp::Eq, dt, &shape(&[10]), &shape(&[])).expect("a");
        let b = binary_ir(BinaryOp::Eq, dt, &shape(&[99, 2]), &shape(&[1, 1])).expect("b");
        same(&a, &b);
        for &op in REDUCE {
            if let (Some(a), Some(b)) = (
                reduce_ir(op, dt, &shape(&[10]), None),
                reduce_ir(op, dt, &shape(&[7, 7]), None),
            ) {
                same(&a, &b);
            }
        }
    }
}

#[test]
fn hash_changes_with_the_ir() {
    let h = |ir: &KernelIr| render(ir).expect("render").source_hash;
    let s = shape(&[10]);
    let exp = unary_ir(UnaryOp::Exp, DType::F32, &s).expect("ir");
    assert_ne!(
        h(&exp),
        h(&unary_ir(UnaryOp::Log, DType::F32, &s).expect("ir"))
    );
    assert_ne!(
        h(&exp),
        h(&unary_ir(UnaryOp::Exp, DType::F64, &s).expect("ir"))
    );
    assert_ne!(
        h(&f64_column_broadcast(5, 7)),
        h(&f64_column_broadcast(6, 7))
    );
    let sum = reduce_ir(ReduceOp::Sum, DType::F64, &s, None).expect("ir");
    let mean = reduce_ir(ReduceOp::Mean, DType::F64, &s, None).expect("ir");
    assert_ne!(h(&sum), h(&mean));
    // No collisions: equal hashes only for equal sources (kernels that
    // compute the same thing, like floor and ceil of an i64, share one).
    let mut seen: std::collections::HashMap<u64, String> = Default::default();
    for c in catalog() {
        let k = render(&c.ir).expect("render");
        let prev = seen
            .entry(k.source_hash)
            .or_insert_with(|| k.source.clone());
        assert_eq!(*prev, k.source, "{}: hash collision", c.name);
    }
    assert!(seen.len() > 250, "{} distinct sources", seen.len());
}

#[test]
fn kinds_mappings_and_widths() {
    let f = DType::F32;
    let k = |s: &[usize], axis: Option<usize>, dt: DType| {
        render(&reduce_ir(ReduceOp::Sum, dt, &shape(s), axis).expect("ir")).expect("render")
    };
    let full = k(&[1000], None, f);
    assert_eq!((full.kind, full.vector_width), (KernelKind::FullReduce, 4));
    assert_eq!(full.partial_dtype, Some(DType::F64));
    assert_eq!(k(&[1000], None, DType::I64).partial_dtype, Some(DType::I64));
    assert_eq!(k(&[1000], None, DType::Bool).vector_width, 16);
    // One lane along an axis is a full reduction.
    assert_eq!(k(&[77], Some(0), f).kind, KernelKind::FullReduce);
    assert_eq!(k(&[1, 77], Some(1), f).kind, KernelKind::FullReduce);
    let cases: [(&[usize], usize, DType, Mapping, usize); 7] = [
        (&[6, 5], 0, f, Mapping::ThreadPerLane { items: 5 }, 1),
        (&[8, 5], 0, f, Mapping::ThreadPerLane { items: 5 }, 4),
        (&[200, 3], 0, f, Mapping::WarpPerLane { lanes: 3 }, 4),
        (
            &[4100, 2],
            0,
            DType::F64,
            Mapping::BlockPerLane { lanes: 2 },
            2,
        ),
        (&[4099, 2], 0, f, Mapping::BlockPerLane { lanes: 2 }, 1),
        (&[6, 5], 1, f, Mapping::ThreadPerLane { items: 6 }, 1),
        (&[8, 9], 1, f, Mapping::ThreadPerLane { items: 2 }, 4),
    ];
    for (s, axis, dt, mapping, v) in cases {
        let r = k(s, Some(axis), dt);
        assert_eq!(r.kind, KernelKind::AxisReduce, "{s:?}");
        assert_eq!(
            (r.mapping, r.vector_width),
            (mapping, v),
            "{s:?} axis {axis}"
        );
    }
    assert_eq!(
        Mapping::Elements.suggested_grid(1 << 20, 4, 256, 100_000),
        1024
    );
    assert_eq!(Mapping::Elements.suggested_grid(0, 4, 256, 1000), 1);
    assert_eq!(
        Mapping::Elements.suggested_grid(1 << 30, 4, 256, 1000),
        1000
    );
    assert_eq!(
        Mapping::WarpPerLane { lanes: 100 }.suggested_grid(0, 1, 256, 1000),
        13
    );
    assert_eq!(
        Mapping::BlockPerLane { lanes: 7 }.suggested_grid(0, 1, 256, 1000),
        7
    );
}

#[test]
fn reductions_store_full_size_outputs_in_the_same_pass() {
    let k = render(&outputs_and_full_reduce(3, 4)).expect("render");
    assert_eq!(k.kind, KernelKind::FullReduce);
    assert!(k.source.contains("out0"));
    for (rows, cols, axis) in [(200, 4, 0), (8, 12, 1), (6, 5, 1)] {
        let k = render(&outputs_and_reduce(rows, cols, Some(axis))).expect("render");
        assert_eq!(k.kind, KernelKind::AxisReduce);
        assert!(k.source.contains("out0"), "{}", k.source);
    }
}

#[test]
fn broadcast_index_math_widens_for_large_shapes() {
    let small = f64_column_broadcast(5, 7);
    let large = f64_column_broadcast(1 << 20, 1 << 13);
    let (ks, kl) = (render(&small).expect("s"), render(&large).expect("l"));
    assert!(ks.source.contains("unsigned int r = (unsigned int)i;"));
    assert!(kl
        .source
        .contains("unsigned long long r = (unsigned long long)i;"));
    assert!(kl.source.contains("% 1048576ull"));
}

#[test]
fn dead_nodes_and_unread_inputs_are_skipped() {
    let f = DType::F32;
    let s = shape(&[16]);
    let ir = KernelIr::new(
        s.clone(),
        vec![(s.clone(), f), (s, DType::F64)],
        vec![
            node(Expr::Load(0), f),
            node(Expr::Load(1), DType::F64),
            node(Expr::Unary(UnaryOp::Log, 1), DType::F64),
            node(Expr::Unary(UnaryOp::Exp, 0), f),
        ],
        vec![3],
        None,
    )
    .expect("valid IR");
    let k = render(&ir).expect("render");
    assert!(!k.source.contains("log("));
    // The unread f64 input does not narrow the vector width, but is passed.
    assert_eq!(k.vector_width, 4);
    assert!(k.source.contains("const double* __restrict__ in1"));
}

static TEST_LIBRARY: gearbox_core::fusion::ir::DeviceLibrary =
    gearbox_core::fusion::ir::DeviceLibrary {
        name: "test",
        assemble: |names| {
            let mut names = names.to_vec();
            names.sort();
            // A shared callee, defined once however many functions need it.
            let mut src = String::from("__device__ double gb_shared(double a) { return a; }\n");
            for n in names {
                src.push_str(&format!(
                    "__device__ double {n}(double a, double b, int f) {{ return f ? gb_shared(a) : b; }}\n"
                ));
            }
            Ok(src)
        },
    };

static FN_A: gearbox_core::fusion::ir::ScalarFn = gearbox_core::fusion::ir::ScalarFn {
    name: "fa",
    device_name: "gb_fa",
    arity: 2,
    flags: 1,
    eval: |a, f| if f & 1 == 1 { a[0] } else { a[1] },
    library: &TEST_LIBRARY,
    partials: None,
};

static FN_B: gearbox_core::fusion::ir::ScalarFn = gearbox_core::fusion::ir::ScalarFn {
    name: "fb",
    device_name: "gb_fb",
    arity: 2,
    flags: 1,
    eval: |a, f| if f & 1 == 1 { a[0] } else { a[1] },
    library: &TEST_LIBRARY,
    partials: None,
};

#[test]
fn scalar_function_calls_bring_their_library_source_once() {
    use gearbox_core::fusion::ir::{Expr, FnRef, IrNode};
    use gearbox_core::{DType, Shape};
    let s = Shape::new(vec![1000]);
    let node = |expr| IrNode {
        expr,
        dtype: DType::F64,
    };
    let ir = KernelIr::new(
        s.clone(),
        vec![(s.clone(), DType::F64), (s, DType::F64)],
        vec![
            node(Expr::Load(0)),
            node(Expr::Load(1)),
            node(Expr::Call(FnRef(&FN_A), [0, 1, 0, 0, 0, 0, 0, 0], 1)),
            node(Expr::Call(FnRef(&FN_B), [2, 1, 0, 0, 0, 0, 0, 0], 0)),
        ],
        vec![3],
        None,
    )
    .unwrap();
    let k = gearbox_cuda::codegen::render(&ir).unwrap();
    assert_eq!(
        k.source.matches("double gb_shared(").count(),
        1,
        "{}",
        k.source
    );
    assert!(k.source.contains("gb_fa(v0, v1, 1)"), "{}", k.source);
    assert!(k.source.contains(gearbox_cuda::codegen::NO_FMA_MARKER));
    assert!(k.source.contains("gb_fb(v2, v1, 0)"), "{}", k.source);
    assert!(
        k.source.find("double gb_fb(").unwrap() < k.source.find("gb_main").unwrap(),
        "functions are defined before the kernel"
    );
}

#[test]
fn reductions_whose_inputs_follow_the_lanes_group_them() {
    use common::lanes_ir;
    let d = &CUDA;
    // A block per lane (blocks are never grouped): the column read at the
    // in-lane position, the row once per lane, nothing through a broadcast
    // offset per element.
    let ir = lanes_ir(DType::F64, 8200, 5, ReduceOp::Sum, (true, true, true, true)).unwrap();
    let k = render_tuned(d, &ir, Tuning::default()).unwrap();
    assert_eq!(k.mapping, Mapping::BlockPerLane { lanes: 5 });
    assert!(k.source.contains("Lanes in groups of 1"), "{}", k.source);
    assert!(k
        .source
        .contains("gb_al1 = reinterpret_cast<const gb_pack<double, 2>*>(in1)[q]"));
    assert!(k
        .source
        .contains("gb_hc2[c] = gb_o0 + c < 5LL ? __ldg(&in2[gb_off2((gb_o0 + c) * 8200LL)])"));
    assert!(!k.source.contains("gb_off1(i)") && !k.source.contains("gb_off2(i)"));
    // Only a lane constant: one lane per warp, the row hoisted.
    let ir = lanes_ir(
        DType::F64,
        300,
        6,
        ReduceOp::Max,
        (true, false, true, false),
    )
    .unwrap();
    let k = render_tuned(d, &ir, Tuning::default()).unwrap();
    assert_eq!(k.mapping, Mapping::WarpPerLane { lanes: 6 });
    assert!(k.source.contains("Lanes in groups of 1"));
    // A warp per group of two lanes by default; the knob sets the group.
    let ir = lanes_ir(DType::F32, 300, 9, ReduceOp::Sum, (true, true, false, true)).unwrap();
    let k = render_tuned(d, &ir, Tuning::default()).unwrap();
    assert_eq!(k.mapping, Mapping::WarpPerLane { lanes: 5 });
    assert!(k.source.contains("Lanes in groups of 2"));
    let tuning = Tuning {
        axis_group: 4,
        ..Tuning::default()
    };
    let k = render_tuned(d, &ir, tuning).unwrap();
    assert_eq!(k.mapping, Mapping::WarpPerLane { lanes: 3 });
}

/// The C type of reduction `r`'s partials: a struct for the compound
/// accumulators, `float` for the selections of f32 and bool values (exact),
/// `long long` for integer results, `double` otherwise.
fn accumulator(ir: &KernelIr, r: &IrReduce) -> &'static str {
    let input = ir.nodes()[r.node].dtype;
    let selects = matches!(
        r.op,
        ReduceOp::Min | ReduceOp::Max | ReduceOp::Any | ReduceOp::All
    );
    match r.op {
        _ if compound(r.op) => "gb_acc",
        _ if r.dtype == DType::I64 => "long long",
        _ if selects && matches!(input, DType::F32 | DType::Bool) => "float",
        _ => "double",
    }
}

/// Whether `op` accumulates in a struct: those without a one-value
/// monoid, and `prod` (its scaled mantissa and exponent).
fn compound(op: ReduceOp) -> bool {
    op.monoid().is_none() || op == ReduceOp::Prod
}

#[test]
fn many_split_lanes_finish_a_thread_each() {
    use gearbox_codegen::catalog::reduce_ir;
    use gearbox_core::Shape;
    let render = |dims: &[usize]| {
        let ir = reduce_ir(
            ReduceOp::Sum,
            DType::F32,
            &Shape::new(dims.to_vec()),
            Some(1),
        )
        .expect("valid IR");
        render_tuned(&CUDA, &ir, Tuning::default()).expect("render")
    };
    // 1024 lanes of 2 chunks: a thread per lane, chunks in order.
    let k = render(&[1024, 128]);
    assert_eq!(k.chunks, 2);
    assert!(
        k.source.contains("a thread per lane combines"),
        "{}",
        k.source
    );
    // 8 lanes of many chunks: a block per lane.
    let k = render(&[8, 4096]);
    assert!(k.chunks > 16);
    assert!(
        k.source.contains("a block per lane combines"),
        "{}",
        k.source
    );
}
