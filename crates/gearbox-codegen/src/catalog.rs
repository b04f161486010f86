//! A catalog of fused kernel IRs that every dialect's tests render (and
//! every backend's tests run): each unary and binary op on each dtype,
//! broadcasts, casts, selections, full and axis reductions at lengths
//! around the lane mappings' thresholds, lane-grouped reductions,
//! multi-output kernels and scalar-function calls, each named and with the
//! kind of data to draw for it. Adding an op adds its cases (the lists
//! come from the op definitions).

use gearbox_core::fusion::ir::{Expr, IrNode, IrReduce, KernelIr};
use gearbox_core::{BinaryOp, DType, ReduceOp, Shape, UnaryOp};

/// Every dtype.
pub const DTYPES: [DType; 4] = [DType::F32, DType::F64, DType::I64, DType::Bool];

/// Every unary op, from its definition (a new op is in the catalog at once).
pub const UNARY: &[UnaryOp] = UnaryOp::ALL;

/// Every binary op, from its definition.
pub const BINARY: &[BinaryOp] = BinaryOp::ALL;

/// The reductions a fused pass can close with: every one.
pub const REDUCE: &[ReduceOp] = ReduceOp::ALL;

/// An IR node.
pub fn node(expr: Expr, dtype: DType) -> IrNode {
    IrNode { expr, dtype }
}

/// A shape from its dimensions.
pub fn shape(d: &[usize]) -> Shape {
    Shape::new(d.to_vec())
}

/// How the test data for a case is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// Special values (NaN, infinities, zeros, halves, extremes) mixed in.
    Special,
    /// Moderate finite values (reductions compare against a differently
    /// ordered CPU sum).
    Tame,
    /// Tame, with one NaN.
    TameNan,
}

/// A named kernel and the data to run it on.
#[derive(Debug, Clone)]
pub struct Case {
    /// A unique name (file names of the bundle, test messages).
    pub name: String,
    /// The kernel.
    pub ir: KernelIr,
    /// The data to draw for it.
    pub data: Data,
}

fn case(name: String, ir: Option<KernelIr>, data: Data) -> Option<Case> {
    ir.map(|ir| Case { name, ir, data })
}

/// `op(x)` over `s`, if the IR accepts `op` on `dt`.
pub fn unary_ir(op: UnaryOp, dt: DType, s: &Shape) -> Option<KernelIr> {
    let out = op.result_dtype(dt).ok()?;
    KernelIr::new(
        s.clone(),
        vec![(s.clone(), dt)],
        vec![node(Expr::Load(0), dt), node(Expr::Unary(op, 0), out)],
        vec![1],
        None,
    )
    .ok()
}

/// `a op b` with `a` of shape `sa` and `b` of `sb`.
pub fn binary_ir(op: BinaryOp, dt: DType, sa: &Shape, sb: &Shape) -> Option<KernelIr> {
    let out = op.result_dtype(dt, dt).ok()?;
    let s = Shape::broadcast(sa, sb).ok()?;
    KernelIr::new(
        s,
        vec![(sa.clone(), dt), (sb.clone(), dt)],
        vec![
            node(Expr::Load(0), dt),
            node(Expr::Load(1), dt),
            node(Expr::Binary(op, 0, 1), out),
        ],
        vec![2],
        None,
    )
    .ok()
}

/// `x` cast from `from` to `to`.
pub fn cast_ir(from: DType, to: DType, s: &Shape) -> Option<KernelIr> {
    KernelIr::new(
        s.clone(),
        vec![(s.clone(), from)],
        vec![node(Expr::Load(0), from), node(Expr::Cast(0), to)],
        vec![1],
        None,
    )
    .ok()
}

/// `m ? a : b` with a mask of shape `sm`.
pub fn select_ir(dt: DType, sm: &Shape, s: &Shape) -> Option<KernelIr> {
    KernelIr::new(
        s.clone(),
        vec![(sm.clone(), DType::Bool), (s.clone(), dt), (s.clone(), dt)],
        vec![
            node(Expr::Load(0), DType::Bool),
            node(Expr::Load(1), dt),
            node(Expr::Load(2), dt),
            node(Expr::Select(0, 1, 2), dt),
        ],
        vec![3],
        None,
    )
    .ok()
}

/// `op(x)` over everything or one axis.
pub fn reduce_ir(op: ReduceOp, dt: DType, s: &Shape, axis: Option<usize>) -> Option<KernelIr> {
    let out = op.result_dtype(dt).ok()?;
    KernelIr::new(
        s.clone(),
        vec![(s.clone(), dt)],
        vec![node(Expr::Load(0), dt)],
        vec![],
        Some(IrReduce {
            op,
            axis,
            node: 0,
            dtype: out,
            companion: None,
        }),
    )
    .ok()
}

/// `op(x)` (a moments reduction, `var` or `sd`) over everything or one
/// axis, with the mean as its companion result.
pub fn moments_with_mean_ir(
    op: ReduceOp,
    dt: DType,
    s: &Shape,
    axis: Option<usize>,
) -> Option<KernelIr> {
    let ir = reduce_ir(op, dt, s, axis)?;
    let r = *ir.reduce()?;
    KernelIr::new(
        s.clone(),
        ir.inputs().to_vec(),
        ir.nodes().to_vec(),
        vec![],
        Some(IrReduce {
            companion: Some(ReduceOp::Mean),
            ..r
        }),
    )
    .ok()
}

/// A reduction along axis 0 of `[len, outer]` whose inputs follow the
/// lanes (the grouped path of `codegen::lanes`): optionally a full-size
/// `x`, always a column `a` (`[len, 1]`) unless `along` is false, a row
/// `c` (`[1, outer]`) when `constant`; the reduced value is `x * a + c`
/// (missing parts left out), and with `output` also stored full-size.
pub fn lanes_ir(
    dt: DType,
    len: usize,
    outer: usize,
    op: ReduceOp,
    (full, along, constant, output): (bool, bool, bool, bool),
) -> Option<KernelIr> {
    let s = shape(&[len, outer]);
    let mut inputs = Vec::new();
    let mut nodes: Vec<IrNode> = Vec::new();
    let mut value: Option<usize> = None;
    let load = |shape: Shape, inputs: &mut Vec<(Shape, DType)>, nodes: &mut Vec<IrNode>| {
        inputs.push((shape, dt));
        nodes.push(node(Expr::Load(inputs.len() - 1), dt));
        nodes.len() - 1
    };
    let combine = |v: Option<usize>, x: usize, op: BinaryOp, nodes: &mut Vec<IrNode>| match v {
        None => Some(x),
        Some(v) => {
            nodes.push(node(Expr::Binary(op, v, x), dt));
            Some(nodes.len() - 1)
        }
    };
    if full {
        let x = load(s.clone(), &mut inputs, &mut nodes);
        value = combine(value, x, BinaryOp::Mul, &mut nodes);
    }
    if along {
        let a = load(shape(&[len, 1]), &mut inputs, &mut nodes);
        value = combine(value, a, BinaryOp::Mul, &mut nodes);
    }
    if constant {
        let c = load(shape(&[1, outer]), &mut inputs, &mut nodes);
        value = combine(value, c, BinaryOp::Add, &mut nodes);
    }
    let v = value?;
    KernelIr::new(
        s,
        inputs,
        nodes,
        if output { vec![v] } else { vec![] },
        Some(IrReduce {
            op,
            axis: Some(0),
            node: v,
            dtype: op.result_dtype(dt).ok()?,
            companion: None,
        }),
    )
    .ok()
}

/// Golden 1: `exp(x) * y + sin(x) - two * y` in f32, `two` a scalar input.
pub fn f32_chain(n: usize) -> KernelIr {
    let f = DType::F32;
    KernelIr::new(
        shape(&[n]),
        vec![(shape(&[n]), f), (shape(&[n]), f), (Shape::scalar(), f)],
        vec![
            node(Expr::Load(0), f),
            node(Expr::Load(1), f),
            node(Expr::Load(2), f),
            node(Expr::Unary(UnaryOp::Exp, 0), f),
            node(Expr::Binary(BinaryOp::Mul, 3, 1), f),
            node(Expr::Unary(UnaryOp::Sin, 0), f),
            node(Expr::Binary(BinaryOp::Add, 4, 5), f),
            node(Expr::Binary(BinaryOp::Mul, 2, 1), f),
            node(Expr::Binary(BinaryOp::Sub, 6, 7), f),
        ],
        vec![8],
        None,
    )
    .expect("valid IR")
}

/// Golden 2: an f64 matrix minus a column vector, and whether the result
/// exceeds the matrix (a bool output).
pub fn f64_column_broadcast(rows: usize, cols: usize) -> KernelIr {
    let d = DType::F64;
    KernelIr::new(
        shape(&[rows, cols]),
        vec![(shape(&[rows, cols]), d), (shape(&[rows]), d)],
        vec![
            node(Expr::Load(0), d),
            node(Expr::Load(1), d),
            node(Expr::Binary(BinaryOp::Sub, 0, 1), d),
            node(Expr::Binary(BinaryOp::Gt, 2, 0), DType::Bool),
        ],
        vec![2, 3],
        None,
    )
    .expect("valid IR")
}

/// Golden 3: the sum of an f32 vector.
pub fn f32_full_sum(n: usize) -> KernelIr {
    reduce_ir(ReduceOp::Sum, DType::F32, &shape(&[n]), None).expect("valid IR")
}

/// A fused pass with an output AND a full reduction: `y = x * x`,
/// `sum(sqrt(y))` over a broadcast `[rows, cols]` from a row vector.
pub fn outputs_and_full_reduce(rows: usize, cols: usize) -> KernelIr {
    outputs_and_reduce(rows, cols, None)
}

/// [`outputs_and_full_reduce`] reducing along `axis` (or everything).
pub fn outputs_and_reduce(rows: usize, cols: usize, axis: Option<usize>) -> KernelIr {
    let f = DType::F32;
    KernelIr::new(
        shape(&[rows, cols]),
        vec![(shape(&[rows, cols]), f), (shape(&[1, cols]), f)],
        vec![
            node(Expr::Load(0), f),
            node(Expr::Load(1), f),
            node(Expr::Binary(BinaryOp::Mul, 0, 1), f),
            node(Expr::Unary(UnaryOp::Abs, 2), f),
            node(Expr::Unary(UnaryOp::Sqrt, 3), f),
        ],
        vec![2],
        Some(IrReduce {
            op: ReduceOp::Sum,
            axis,
            node: 4,
            dtype: f,
            companion: None,
        }),
    )
    .expect("valid IR")
}

/// The reductions with an epilogue ([`Expr::Reduced`]) the catalog has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Epilogue {
    /// `x - logsumexp(x)`.
    LogSoftmax,
    /// `exp(x - logsumexp(x))`.
    Softmax,
    /// `(x - mean) / sd`, the mean the companion of `sd`.
    Standardize,
    /// `y = x * c` (`c` a scalar input) stored, and `(y - mean(y)) * g`
    /// (`g` an input constant along the lanes).
    ScaledCenter,
}

/// The kernel `what` of `dt` values of shape `s` along `axis`.
pub fn epilogue_ir(what: Epilogue, dt: DType, s: &Shape, axis: usize) -> Option<KernelIr> {
    let lane = s.with_dim(axis, 1);
    let reduce = |op, node, companion| IrReduce {
        op,
        axis: Some(axis),
        node,
        dtype: dt,
        companion,
    };
    let x = node(Expr::Load(0), dt);
    let (inputs, nodes, outputs, r) = match what {
        Epilogue::LogSoftmax | Epilogue::Softmax => {
            let mut nodes = vec![
                x,
                node(Expr::Reduced(0), dt),
                node(Expr::Binary(BinaryOp::Sub, 0, 1), dt),
            ];
            if what == Epilogue::Softmax {
                nodes.push(node(Expr::Unary(UnaryOp::Exp, 2), dt));
            }
            let out = nodes.len() - 1;
            let r = reduce(ReduceOp::LogSumExp, 0, None);
            (vec![(s.clone(), dt)], nodes, vec![out], r)
        }
        Epilogue::Standardize => (
            vec![(s.clone(), dt)],
            vec![
                x,
                node(Expr::Reduced(0), dt),
                node(Expr::Reduced(1), dt),
                node(Expr::Binary(BinaryOp::Sub, 0, 2), dt),
                node(Expr::Binary(BinaryOp::Div, 3, 1), dt),
            ],
            vec![4],
            reduce(ReduceOp::Sd, 0, Some(ReduceOp::Mean)),
        ),
        Epilogue::ScaledCenter => (
            vec![(s.clone(), dt), (Shape::scalar(), dt), (lane, dt)],
            vec![
                x,
                node(Expr::Load(1), dt),
                node(Expr::Load(2), dt),
                node(Expr::Binary(BinaryOp::Mul, 0, 1), dt),
                node(Expr::Reduced(0), dt),
                node(Expr::Binary(BinaryOp::Sub, 3, 4), dt),
                node(Expr::Binary(BinaryOp::Mul, 5, 2), dt),
            ],
            vec![3, 6],
            reduce(ReduceOp::Mean, 3, None),
        ),
    };
    KernelIr::new(s.clone(), inputs, nodes, outputs, Some(r)).ok()
}

/// Kernels with an epilogue, along contiguous lanes that a thread, a group
/// of a warp, a warp and a block reduce, and along strided lanes (which
/// run as two passes):
/// every [`Epilogue`] in f32 and f64. Kept out of [`catalog`]: a renderer
/// writes only those [`crate::fuses_epilogue`] accepts in its dialect.
pub fn epilogue_catalog() -> Vec<Case> {
    let shapes: [(&str, &[usize], usize); 8] = [
        ("cols_thread", &[6, 5], 0),
        ("cols_group", &[64, 9], 0),
        ("cols_warp", &[300, 5], 0),
        ("cols_warp_held", &[256, 6], 0),
        ("cols_block", &[4100, 2], 0),
        ("cols_block_odd", &[4099, 3], 0),
        ("rows_strided", &[6, 5], 1),
        ("mid_axis", &[3, 70, 2], 1),
    ];
    let whats = [
        ("log_softmax", Epilogue::LogSoftmax),
        ("softmax", Epilogue::Softmax),
        ("standardize", Epilogue::Standardize),
        ("scaled_center", Epilogue::ScaledCenter),
    ];
    let mut out = Vec::new();
    for (name, what) in whats {
        for dt in [DType::F32, DType::F64] {
            for (tag, dims, axis) in shapes {
                out.push(case(
                    format!("epilogue_{name}_{}_{tag}", dt.name()),
                    epilogue_ir(what, dt, &shape(dims), axis),
                    Data::Tame,
                ));
            }
            // Lanes held in registers, with infinities and NaNs: the
            // softmax's lanes whose log-sum-exp is not finite.
            if matches!(what, Epilogue::Softmax | Epilogue::LogSoftmax) {
                out.push(case(
                    format!("epilogue_{name}_{}_cols_group_special", dt.name()),
                    epilogue_ir(what, dt, &shape(&[64, 9]), 0),
                    Data::Special,
                ));
            }
        }
    }
    out.into_iter().flatten().collect()
}

/// Every kernel the structural and host tests run.
pub fn catalog() -> Vec<Case> {
    let mut out: Vec<Option<Case>> = Vec::new();
    let v = shape(&[37]);
    for &op in UNARY {
        for dt in DTYPES {
            out.push(case(
                format!("unary_{}_{}", op.name(), dt.name()),
                unary_ir(op, dt, &v),
                Data::Special,
            ));
        }
    }
    for &op in BINARY {
        for dt in DTYPES {
            let name = format!("binary_{}_{}", op.name(), dt.name());
            out.push(case(name, binary_ir(op, dt, &v, &v), Data::Special));
        }
    }
    let m = shape(&[5, 7]);
    let bcasts: [(&str, &[usize], &[usize]); 6] = [
        ("col", &[5, 7], &[5]),
        ("row", &[5, 7], &[1, 7]),
        ("scalar", &[5, 7], &[]),
        ("outer", &[5], &[1, 7]),
        ("3d", &[2, 3, 4], &[2, 1, 4]),
        ("3d_mid", &[1, 3, 1], &[2, 3, 4]),
    ];
    for (tag, a, b) in bcasts {
        for (op, dt) in [(BinaryOp::Sub, DType::F64), (BinaryOp::Minimum, DType::F32)] {
            out.push(case(
                format!("bcast_{tag}_{}_{}", op.name(), dt.name()),
                binary_ir(op, dt, &shape(a), &shape(b)),
                Data::Special,
            ));
        }
    }
    out.push(case(
        "bcast_col_add_i64".into(),
        binary_ir(BinaryOp::Add, DType::I64, &m, &shape(&[5])),
        Data::Special,
    ));
    for from in DTYPES {
        for to in DTYPES {
            out.push(case(
                format!("cast_{}_{}", from.name(), to.name()),
                cast_ir(from, to, &v),
                Data::Special,
            ));
        }
    }
    for dt in DTYPES {
        out.push(case(
            format!("select_{}", dt.name()),
            select_ir(dt, &m, &m),
            Data::Special,
        ));
        out.push(case(
            format!("select_rowmask_{}", dt.name()),
            select_ir(dt, &shape(&[1, 7]), &m),
            Data::Special,
        ));
    }
    // Reductions: all, and along axes giving every lane mapping.
    let shapes: [(&str, &[usize], Option<usize>); 14] = [
        ("all", &[1003], None),
        // Split within blocks when the tuning aims at few threads.
        ("mid_axis_block_split", &[4, 64, 40], Some(1)),
        ("cols_split", &[20000, 2], Some(0)),
        ("rows_split", &[8, 4096], Some(1)),
        // 1024 lanes of two chunks: finished a thread per lane.
        ("rows_split_many", &[1024, 128], Some(1)),
        ("mid_axis_split", &[4, 512, 3], Some(1)),
        ("all2d", &[6, 5], None),
        ("cols_thread", &[6, 5], Some(0)),
        ("rows_strided", &[6, 5], Some(1)),
        ("rows_packed", &[8, 9], Some(1)),
        ("cols_warp", &[200, 3], Some(0)),
        ("cols_block", &[4100, 2], Some(0)),
        ("mid_axis", &[4, 3, 5], Some(1)),
        ("single_lane", &[77], Some(0)),
    ];
    for &op in REDUCE {
        for dt in DTYPES {
            for (tag, s, axis) in shapes {
                out.push(case(
                    format!("reduce_{}_{}_{tag}", op.name(), dt.name()),
                    reduce_ir(op, dt, &shape(s), axis),
                    Data::Tame,
                ));
            }
        }
    }
    // The mean beside the moments, from the same accumulator.
    for op in [ReduceOp::Var, ReduceOp::Sd] {
        for dt in [DType::F32, DType::F64] {
            for (tag, s, axis) in shapes {
                out.push(case(
                    format!("moments_{}_mean_{}_{tag}", op.name(), dt.name()),
                    moments_with_mean_ir(op, dt, &shape(s), axis),
                    Data::Tame,
                ));
            }
        }
    }
    for op in [ReduceOp::Min, ReduceOp::Max, ReduceOp::Sum] {
        for dt in [DType::F32, DType::F64] {
            for (tag, s, axis) in [
                ("all", &[300usize][..], None),
                ("cols", &[40, 3][..], Some(0)),
            ] {
                out.push(case(
                    format!("reduce_nan_{}_{}_{tag}", op.name(), dt.name()),
                    reduce_ir(op, dt, &shape(s), axis),
                    Data::TameNan,
                ));
            }
        }
    }
    // Many strided lanes of many chunks (2048 lanes of 1100 values: 17
    // chunks a lane with the default tuning), finished by tiles of lanes.
    for (op, dt) in [
        (ReduceOp::Sum, DType::F32),
        (ReduceOp::Prod, DType::F64),
        (ReduceOp::ArgMax, DType::F32),
        (ReduceOp::Var, DType::F64),
        (ReduceOp::Any, DType::Bool),
    ] {
        out.push(case(
            format!("reduce_{}_{}_rows_split_tiles", op.name(), dt.name()),
            reduce_ir(op, dt, &shape(&[2048, 1100]), Some(1)),
            Data::Tame,
        ));
    }
    // Full-size outputs stored by the reduction pass, for every lane mapping.
    for (tag, rows, cols, axis) in [
        ("all", 30, 7, None),
        ("cols_thread", 6, 5, Some(0)),
        ("cols_warp_packed", 200, 4, Some(0)),
        ("cols_block", 4100, 2, Some(0)),
        ("rows_strided", 6, 5, Some(1)),
        ("rows_packed", 8, 12, Some(1)),
    ] {
        out.push(Some(Case {
            name: format!("outputs_and_sum_{tag}"),
            ir: outputs_and_reduce(rows, cols, axis),
            data: Data::Tame,
        }));
    }
    // Empty iterations.
    out.push(case(
        "empty_exp".into(),
        unary_ir(UnaryOp::Exp, DType::F32, &shape(&[0])),
        Data::Special,
    ));
    out.push(case(
        "empty_var_mean_lanes".into(),
        moments_with_mean_ir(ReduceOp::Var, DType::F64, &shape(&[0, 3]), Some(0)),
        Data::Tame,
    ));
    for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Mean] {
        out.push(case(
            format!("empty_{}_all", op.name()),
            reduce_ir(op, DType::F64, &shape(&[0]), None),
            Data::Tame,
        ));
        out.push(case(
            format!("empty_{}_lanes", op.name()),
            reduce_ir(op, DType::F32, &shape(&[0, 3]), Some(0)),
            Data::Tame,
        ));
        out.push(case(
            format!("empty_{}_nolanes", op.name()),
            reduce_ir(op, DType::F32, &shape(&[3, 0]), Some(0)),
            Data::Tame,
        ));
    }
    out.push(case(
        "golden_chain".into(),
        Some(f32_chain(1001)),
        Data::Special,
    ));
    out.push(case(
        "golden_colbcast".into(),
        Some(f64_column_broadcast(5, 7)),
        Data::Special,
    ));
    out.push(case(
        "golden_sum".into(),
        Some(f32_full_sum(1001)),
        Data::Tame,
    ));
    // Long enough for the groups of packs in flight (tuning) to run, with
    // remainders, on the host runner's small grid.
    out.push(case(
        "long_chain".into(),
        Some(f32_chain(20_011)),
        Data::Tame,
    ));
    out.push(case(
        "long_sum".into(),
        Some(f32_full_sum(20_011)),
        Data::Tame,
    ));
    out.push(case(
        "long_column_sums_block".into(),
        reduce_ir(ReduceOp::Sum, DType::F32, &shape(&[8200, 3]), Some(0)),
        Data::Tame,
    ));
    out.push(case(
        "long_column_means_warp".into(),
        reduce_ir(ReduceOp::Mean, DType::F64, &shape(&[300, 5]), Some(0)),
        Data::Tame,
    ));
    // Reductions whose inputs follow the lanes (codegen::lanes): a block
    // per group (len >= 4096) and a warp per group, packed (len a multiple
    // of the vector width) and not, lane counts that leave a partial group.
    for (name, dt, len, outer, op, parts) in [
        (
            "lanes_block",
            DType::F64,
            8200,
            5,
            ReduceOp::Sum,
            (true, true, true, true),
        ),
        (
            "lanes_warp_odd",
            DType::F32,
            301,
            7,
            ReduceOp::Mean,
            (true, true, true, false),
        ),
        (
            "lanes_warp_along",
            DType::F32,
            300,
            9,
            ReduceOp::Sum,
            (true, true, false, true),
        ),
        (
            "lanes_warp_const",
            DType::F64,
            300,
            6,
            ReduceOp::Max,
            (true, false, true, false),
        ),
        (
            "lanes_no_full",
            DType::F64,
            300,
            5,
            ReduceOp::Sum,
            (false, true, true, false),
        ),
        (
            "lanes_i64",
            DType::I64,
            130,
            3,
            ReduceOp::Sum,
            (true, true, true, true),
        ),
    ] {
        out.push(case(
            name.into(),
            lanes_ir(dt, len, outer, op, parts),
            Data::Tame,
        ));
    }
    out.push(case(
        "outputs_and_sum".into(),
        Some(outputs_and_full_reduce(9, 13)),
        Data::Tame,
    ));
    out.into_iter().flatten().collect()
}
