//! The fused CPU executor against the same work done op by op with the public
//! `Array` API: elementwise results must be identical (bit for bit, NaN
//! matching NaN), reductions equal to rounding.

mod common;

use common::fusion::{f32s, f64s, floats, ints, sprinkle, Build};
use common::TestRng;
use gearbox_core::fusion::cpu::{self, MAX_TILE, TILE};
use gearbox_core::ops::loops::PAR_MIN;
use gearbox_core::{BinaryOp, DType, Error, HostBuffer, ReduceOp, Shape, UnaryOp};

/// Sizes around tile and task boundaries (kernels with little scratch take
/// tiles of up to `MAX_TILE`), and one that runs in parallel.
fn sizes() -> Vec<usize> {
    vec![
        1,
        2,
        3,
        127,
        128,
        129,
        TILE - 1,
        TILE,
        TILE + 1,
        MAX_TILE - 1,
        MAX_TILE,
        MAX_TILE + 1,
        16 * TILE + 1,
        PAR_MIN * 3 + 7,
    ]
}

/// `exp(x)*y + sin(x) - 2*y`, as the planner would lower it.
fn chain(dtype: DType, n: usize, seed: u64) -> (Build, usize) {
    let mut rng = TestRng::new(seed);
    let mut b = Build::new([n]);
    let x = b.load([n], floats(dtype, &mut rng, n, -3.0, 3.0));
    let y = b.load([n], floats(dtype, &mut rng, n, -3.0, 3.0));
    let two = b.load(
        Shape::scalar(),
        HostBuffer::F64(vec![2.0]).cast(dtype).unwrap(),
    );
    let e = b.un(UnaryOp::Exp, x);
    let ey = b.bin(BinaryOp::Mul, e, y);
    let s = b.un(UnaryOp::Sin, x);
    let sum = b.bin(BinaryOp::Add, ey, s);
    let ty = b.bin(BinaryOp::Mul, two, y);
    let z = b.bin(BinaryOp::Sub, sum, ty);
    (b, z)
}

#[test]
fn chain_matches_op_by_op() {
    for dtype in [DType::F64, DType::F32] {
        for n in sizes() {
            let (b, z) = chain(dtype, n, n as u64);
            b.check(&[z], None, 0.0);
            // The same chain with its sum fused in.
            let rtol = if dtype == DType::F32 { 1e-6 } else { 1e-12 };
            b.check(&[z], Some((ReduceOp::Sum, None, z)), rtol);
            // Less scratch, longer tiles: exp(x) alone, and x read in place.
            b.check(&[3], Some((ReduceOp::Max, None, 3)), 0.0);
            b.check(&[], Some((ReduceOp::Mean, None, 0)), rtol);
        }
    }
}

#[test]
fn every_unary_op() {
    use UnaryOp::*;
    let float_ops = [
        Neg, Abs, Sign, Floor, Ceil, Round, Sqrt, Exp, Expm1, Log, Log1p, Sin, Cos, Tan, Tanh,
        Sigmoid, Softplus, IsNan, IsFinite,
    ];
    for dtype in [DType::F64, DType::F32] {
        let mut rng = TestRng::new(7);
        let n = 2 * TILE + 77;
        let mut b = Build::new([n]);
        let x = b.load(
            [n],
            sprinkle(floats(dtype, &mut rng, n, -4.0, 4.0), &mut rng),
        );
        let outs: Vec<usize> = float_ops.iter().map(|&op| b.un(op, x)).collect();
        let nan = b.un(IsNan, x);
        let not = b.un(Not, nan);
        let mut all = outs;
        all.push(not);
        b.check(&all, None, 0.0);
    }
}

#[test]
fn every_binary_op_with_broadcasting() {
    use BinaryOp::*;
    let ops = [
        Add, Sub, Mul, Div, Pow, Minimum, Maximum, Atan2, Eq, Ne, Lt, Le, Gt, Ge,
    ];
    for dtype in [DType::F64, DType::F32] {
        for (m, n) in [(1, 1), (3, 5), (129, 17), (TILE + 1, 3), (300, 400)] {
            let mut rng = TestRng::new((m * n) as u64);
            let mut b = Build::new([m, n]);
            let x = b.load(
                [m, n],
                sprinkle(floats(dtype, &mut rng, m * n, -3.0, 3.0), &mut rng),
            );
            let col = b.load([m], floats(dtype, &mut rng, m, -3.0, 3.0));
            let row = b.load(
                [1, n],
                sprinkle(floats(dtype, &mut rng, n, -3.0, 3.0), &mut rng),
            );
            let k = b.load(Shape::scalar(), floats(dtype, &mut rng, 1, 0.5, 2.0));
            let mut outs = vec![];
            for op in ops {
                outs.push(b.bin(op, x, col));
                outs.push(b.bin(op, row, x));
                outs.push(b.bin(op, k, x));
                outs.push(b.bin(op, col, row));
            }
            b.check(&outs, None, 0.0);
        }
    }
}

#[test]
fn integer_nodes() {
    use BinaryOp::*;
    for n in [1, 129, TILE + 1, PAR_MIN + 5] {
        let mut rng = TestRng::new(n as u64 + 3);
        let mut b = Build::new([n]);
        let x = b.load([n], f64s(&mut rng, n, -1e3, 1e3));
        let big = b.load([n], ints(&mut rng, n, i64::MAX / 2));
        let mid = b.load([n], ints(&mut rng, n, 1 << 50));
        let small = b.load(Shape::scalar(), HostBuffer::I64(vec![-7]));
        let xi = b.cast(x, DType::I64);
        let mut outs = vec![xi];
        // Large operands whose results stay within i64 (overflow is an
        // error: tests/integers.rs).
        for (op, other) in [
            (Add, big),
            (Sub, big),
            (Mul, mid),
            (Minimum, big),
            (Maximum, big),
        ] {
            outs.push(b.bin(op, xi, other));
            outs.push(b.bin(op, small, xi));
        }
        for op in [
            UnaryOp::Neg,
            UnaryOp::Abs,
            UnaryOp::Sign,
            UnaryOp::Floor,
            UnaryOp::IsNan,
            UnaryOp::IsFinite,
        ] {
            outs.push(b.un(op, xi));
        }
        let lt = b.bin(Lt, xi, small);
        let back = b.cast(big, DType::F32);
        let again = b.cast(xi, DType::F64);
        outs.extend([lt, back, again]);
        b.check(&outs, None, 0.0);
        // Integer sums are exact: the i128 total when it fits in i64, else
        // the op-by-op path's error.
        let kernel = b.kernel(&[], Some((ReduceOp::Sum, None, outs[1])));
        let fused = cpu::run(&kernel, &b.bufs.iter().collect::<Vec<_>>());
        let HostBuffer::I64(v) = b.reference(outs[1]) else {
            unreachable!()
        };
        let exact: i128 = v.iter().map(|&x| i128::from(x)).sum();
        match i64::try_from(exact) {
            Ok(want) => assert_eq!(fused.unwrap().reduced, vec![HostBuffer::I64(vec![want])]),
            Err(_) => {
                let full = gearbox_core::Array::from_buffer([n], HostBuffer::I64(v)).unwrap();
                let want = full.sum().unwrap().eval().unwrap_err();
                assert!(matches!(want, Error::IntegerOverflow { op: "sum", .. }));
                assert_eq!(fused.unwrap_err(), want);
            }
        }
        for op in [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::Mean] {
            b.check(&[], Some((op, None, xi)), 1e-12);
        }
        let unit = b.load([n], ints(&mut rng, n, 1));
        b.check(&[], Some((ReduceOp::Prod, None, unit)), 0.0);
    }
}

#[test]
fn bool_nodes() {
    for n in [1, 3, TILE, PAR_MIN + 1] {
        let mut rng = TestRng::new(n as u64);
        let mut b = Build::new([n, 2]);
        let x = b.load([n, 2], sprinkle(f64s(&mut rng, 2 * n, -1.0, 1.0), &mut rng));
        let y = b.load([n], f64s(&mut rng, n, -1.0, 1.0));
        let zero = b.load(Shape::scalar(), HostBuffer::F64(vec![0.0]));
        let pos = b.bin(BinaryOp::Gt, x, zero);
        let less = b.bin(BinaryOp::Lt, x, y);
        let and = b.bin(BinaryOp::And, pos, less);
        let or = b.bin(BinaryOp::Or, pos, less);
        let nan = b.un(UnaryOp::IsNan, x);
        let not = b.un(UnaryOp::Not, nan);
        let eq = b.bin(BinaryOp::Eq, and, or);
        let pick = b.sel(and, x, y);
        let pick0 = b.sel(nan, zero, x);
        let pickb = b.sel(or, nan, not);
        let as_f = b.cast(or, DType::F64);
        let as_i = b.cast(and, DType::I64);
        let as_b = b.cast(x, DType::Bool);
        let outs = [
            pos, less, and, or, nan, not, eq, pick, pick0, pickb, as_f, as_i, as_b,
        ];
        b.check(&outs, None, 0.0);
        for op in [
            ReduceOp::Sum,
            ReduceOp::Min,
            ReduceOp::Max,
            ReduceOp::Mean,
            ReduceOp::Prod,
        ] {
            b.check(&[], Some((op, None, or)), 1e-12);
            b.check(&[], Some((op, Some(1), pos)), 1e-12);
        }
    }
}

#[test]
fn broadcast_patterns_in_three_dimensions() {
    let shapes = [
        [5, 7, 3],
        [1, 7, 3],
        [5, 1, 3],
        [5, 7, 1],
        [1, 1, 3],
        [5, 1, 1],
        [1, 7, 1],
    ];
    for full in [[5usize, 7, 3], [130, 1, 17], [TILE + 3, 2, 3]] {
        let mut rng = TestRng::new(full[0] as u64);
        let mut b = Build::new(full);
        let base = b.load(full, f64s(&mut rng, full.iter().product(), -1.0, 1.0));
        let mut outs = vec![];
        for s in shapes {
            let s: Vec<usize> = s
                .iter()
                .zip(full)
                .map(|(&d, f)| if d == 1 { 1 } else { f })
                .collect();
            let v = b.load(s.clone(), f64s(&mut rng, s.iter().product(), -1.0, 1.0));
            outs.push(b.bin(BinaryOp::Sub, base, v));
            outs.push(b.un(UnaryOp::Exp, v)); // stored at the full shape
        }
        b.check(&outs, None, 0.0);
    }
}

#[test]
fn reductions_all_and_each_axis() {
    let ops = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Mean,
        ReduceOp::Min,
        ReduceOp::Max,
    ];
    let shapes = [
        [1, 1, 1],
        [3, 4, 5],
        [129, 3, 2],
        [2, TILE + 1, 3],
        [5, 3, TILE - 1],
        [37, 1100, 5],
    ];
    for dtype in [DType::F64, DType::F32] {
        for shape in shapes {
            let n: usize = shape.iter().product();
            let mut rng = TestRng::new(n as u64);
            let mut b = Build::new(shape);
            let x = b.load(shape, floats(dtype, &mut rng, n, 0.99, 1.01));
            let col = b.load([shape[0]], floats(dtype, &mut rng, shape[0], -1.0, 1.0));
            let y = b.bin(BinaryOp::Sub, x, col);
            let rtol = if dtype == DType::F32 { 1e-5 } else { 1e-10 };
            for op in ops {
                let node = if op == ReduceOp::Prod { x } else { y };
                for axis in [None, Some(0), Some(1), Some(2)] {
                    b.check(&[], Some((op, axis, node)), rtol);
                }
            }
        }
    }
}

#[test]
fn column_means_of_a_matrix() {
    for (m, n) in [(4000, 250), (3, 20000), (TILE, 3)] {
        let mut rng = TestRng::new(m as u64);
        let mut b = Build::new([m, n]);
        let x = b.load([m, n], f64s(&mut rng, m * n, -1.0, 1.0));
        b.check(&[], Some((ReduceOp::Mean, Some(0), x)), 1e-12);
        b.check(&[], Some((ReduceOp::Sum, Some(1), x)), 1e-12);
    }
}

#[test]
fn outputs_and_a_reduction_in_one_kernel() {
    for shape in [[3usize, 4], [TILE + 1, 5], [300, 200]] {
        let n = shape[0] * shape[1];
        let mut rng = TestRng::new(n as u64);
        let mut b = Build::new(shape);
        let x = b.load(shape, f32s(&mut rng, n, -2.0, 2.0));
        let mu = b.load([1, shape[1]], f32s(&mut rng, shape[1], -1.0, 1.0));
        let d = b.bin(BinaryOp::Sub, x, mu);
        let sq = b.bin(BinaryOp::Mul, d, d);
        let big = b.bin(BinaryOp::Gt, sq, x);
        let as_i = b.cast(big, DType::I64);
        for axis in [None, Some(0), Some(1)] {
            b.check(
                &[d, sq, big, as_i, d],
                Some((ReduceOp::Sum, axis, sq)),
                1e-5,
            );
            b.check(&[x], Some((ReduceOp::Max, axis, as_i)), 0.0);
        }
    }
}

#[test]
fn nan_propagates_through_reductions() {
    let (m, n) = (TILE + 5, 4);
    let mut v = TestRng::new(1).vec(m * n, -1.0, 1.0);
    v[3] = f64::NAN; // column 0
    v[2 * m + m - 1] = f64::NAN; // column 2, last row
    let mut b = Build::new([m, n]);
    let x = b.load([m, n], HostBuffer::F64(v));
    for op in [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Mean,
        ReduceOp::Min,
        ReduceOp::Max,
    ] {
        for axis in [None, Some(0), Some(1)] {
            b.check(&[], Some((op, axis, x)), 1e-12);
        }
        let got = b
            .run(&b.kernel(&[], Some((op, Some(0), x))))
            .reduced
            .remove(0)
            .to_f64_vec()
            .unwrap();
        assert!(got[0].is_nan() && got[2].is_nan(), "{op:?}: {got:?}");
        assert!(!got[1].is_nan() && !got[3].is_nan(), "{op:?}: {got:?}");
    }
}

#[test]
fn empty_iteration_shapes() {
    for shape in [vec![0], vec![0, 3], vec![3, 0], vec![2, 0, 4]] {
        let mut b = Build::new(shape.clone());
        let x = b.load(shape.clone(), HostBuffer::F64(vec![]));
        let k = b.load(Shape::scalar(), HostBuffer::F64(vec![1.5]));
        let y = b.bin(BinaryOp::Mul, x, k);
        let c = b.bin(BinaryOp::Gt, y, k);
        let kernel = b.kernel(&[y, c], Some((ReduceOp::Sum, None, y)));
        let out = b.run(&kernel);
        assert_eq!(
            out.outputs,
            vec![HostBuffer::F64(vec![]), HostBuffer::Bool(vec![])]
        );
        assert_eq!(out.reduced, vec![HostBuffer::F64(vec![0.0])]);
        for axis in std::iter::once(None).chain((0..shape.len()).map(Some)) {
            for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Mean] {
                b.check(&[y], Some((op, axis, y)), 0.0);
            }
            let (len, lanes): (usize, usize) = match axis {
                None => (0, 1),
                Some(a) => (
                    shape[a],
                    (0..shape.len())
                        .filter(|&i| i != a)
                        .map(|i| shape[i])
                        .product(),
                ),
            };
            let min = cpu::run(
                &b.kernel(&[], Some((ReduceOp::Min, axis, y))),
                &[&b.bufs[0], &b.bufs[1]],
            );
            if len == 0 && lanes > 0 {
                assert!(
                    matches!(min, Err(Error::Empty { .. })),
                    "{shape:?} {axis:?}: {min:?}"
                );
            } else {
                assert_eq!(min.unwrap().reduced, vec![HostBuffer::F64(vec![])]);
            }
        }
        let mean = b.run(&b.kernel(&[], Some((ReduceOp::Mean, None, y))));
        assert!(mean.reduced[0].get_f64(0).is_nan());
    }
}

#[test]
fn input_mismatches_are_errors() {
    let (b, z) = chain(DType::F64, 100, 1);
    let kernel = b.kernel(&[z], None);
    let (x, y, two) = (&b.bufs[0], &b.bufs[1], &b.bufs[2]);
    let err = cpu::run(&kernel, &[x, y]).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    let short = HostBuffer::F64(vec![1.0; 99]);
    let err = cpu::run(&kernel, &[x, &short, two]).unwrap_err();
    assert!(matches!(err, Error::DataLength { len: 99, .. }), "{err}");
    let wrong = HostBuffer::F32(vec![1.0; 100]);
    let err = cpu::run(&kernel, &[&wrong, y, two]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::DType {
                got: DType::F32,
                ..
            }
        ),
        "{err}"
    );
    let err = cpu::run(&kernel, &[x, y, x]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::DataLength {
                len: 100,
                expected: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn shapes_too_large_to_hold_are_errors() {
    for dims in [
        vec![1usize << 62, 4],
        vec![0, usize::MAX, 2],
        vec![usize::MAX, 3],
    ] {
        let mut b = Build::new(dims.clone());
        let k = b.load(Shape::scalar(), HostBuffer::F64(vec![1.0]));
        let e = b.un(UnaryOp::Exp, k);
        for reduce in [None, Some((ReduceOp::Sum, Some(0), e))] {
            let kernel = b.kernel(&[e], reduce);
            let err = cpu::run(&kernel, &[&b.bufs[0]]).unwrap_err();
            assert!(matches!(err, Error::BadShape { .. }), "{dims:?}: {err}");
        }
    }
}

#[test]
fn results_do_not_depend_on_threads() {
    let mut rng = TestRng::new(5);
    let shape = [700, 130, 3];
    let n = 700 * 130 * 3;
    let mut b = Build::new(shape);
    let x = b.load(shape, f64s(&mut rng, n, -1e3, 1e3));
    let e = b.un(UnaryOp::Sin, x);
    for axis in [None, Some(0), Some(1), Some(2)] {
        let kernel = b.kernel(&[e], Some((ReduceOp::Sum, axis, e)));
        let many = b.run(&kernel);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| b.run(&kernel));
        let three = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
            .install(|| b.run(&kernel));
        assert_eq!(many, one, "{axis:?}");
        assert_eq!(many, three, "{axis:?}");
    }
}

#[test]
fn constant_nodes_are_stored_and_reduced() {
    for n in [1, 5, TILE + 1, PAR_MIN + 1] {
        let mut rng = TestRng::new(9);
        let mut b = Build::new([n, 2]);
        let x = b.load([n, 2], f64s(&mut rng, 2 * n, -1.0, 1.0));
        let k = b.load(Shape::scalar(), HostBuffer::F64(vec![0.25]));
        let t = b.load([1, 1], HostBuffer::Bool(vec![true]));
        let ek = b.un(UnaryOp::Exp, k); // constant
        let ki = b.cast(ek, DType::I64); // constant
        let pick = b.sel(t, x, ek); // constant mask
        let sum = b.bin(BinaryOp::Add, ek, x);
        b.check(
            &[k, ek, ki, t, pick, sum],
            Some((ReduceOp::Sum, Some(0), ek)),
            1e-12,
        );
        b.check(&[ek], Some((ReduceOp::Max, None, ki)), 0.0);
    }
}
