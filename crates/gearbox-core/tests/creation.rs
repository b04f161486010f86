//! Creation functions against plain reference vectors, and their errors.

use gearbox_core::{default_precision, Array, DType, Error};

fn f64s(a: Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// The argument an `InvalidArgument` error names.
fn bad_arg(r: gearbox_core::Result<Array>) -> (&'static str, &'static str) {
    match r {
        Err(Error::InvalidArgument { op, name, .. }) => (op, name),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn creators_are_lazy_elementwise_ops_without_inputs() {
    let arrays = [
        ("zeros", Array::zeros([2, 2], DType::F64).unwrap()),
        ("ones", Array::ones([2], DType::F32).unwrap()),
        ("full", Array::full([3], 4.0, DType::I64).unwrap()),
        ("eye", Array::eye(3).unwrap()),
        ("arange", Array::arange(0.0, 3.0, 1.0).unwrap()),
        ("linspace", Array::linspace(0.0, 1.0, 3).unwrap()),
    ];
    for (name, a) in arrays {
        assert!(!a.is_evaluated(), "{name}");
        let op = a.op().unwrap();
        assert_eq!(op.name(), name);
        assert!(a.inputs().is_empty());
        assert_eq!(a.precision(), default_precision());
        a.eval().unwrap();
        assert!(a.is_evaluated());
    }
}

#[test]
fn zeros_ones_full_of_every_dtype() {
    let z = Array::zeros([2, 3], DType::F64).unwrap();
    assert_eq!(z.dims(), &[2, 3]);
    assert_eq!(f64s(z), vec![0.0; 6]);
    assert_eq!(
        Array::zeros([4], DType::Bool)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![false; 4]
    );
    assert_eq!(
        Array::ones([2, 2], DType::F32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![1.0f32; 4]
    );
    assert_eq!(
        Array::ones([3], DType::Bool)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![true; 3]
    );
    assert_eq!(
        Array::ones([2], DType::I64)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![1; 2]
    );
    assert_eq!(
        Array::full([3], -7.0, DType::I64)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![-7; 3]
    );
    assert_eq!(
        Array::full([2], 0.1, DType::F32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![0.1f32; 2]
    );
    assert_eq!(
        Array::full([1], -9_223_372_036_854_775_808.0, DType::I64)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![i64::MIN]
    );
    let nan = f64s(Array::full([2], f64::NAN, DType::F64).unwrap());
    assert!(nan.iter().all(|x| x.is_nan()));
    let inf = Array::full([1], f64::INFINITY, DType::F32).unwrap();
    assert_eq!(inf.to_vec::<f32>().unwrap(), vec![f32::INFINITY]);
    // Scalars and empty shapes.
    assert_eq!(
        f64s(Array::full(gearbox_core::Shape::scalar(), 2.5, DType::F64).unwrap()),
        vec![2.5]
    );
    assert!(f64s(Array::zeros([0, 4], DType::F64).unwrap()).is_empty());
}

#[test]
fn full_rejects_values_the_dtype_cannot_hold() {
    let cases = [
        (2.5, DType::I64),
        (f64::NAN, DType::I64),
        (f64::INFINITY, DType::I64),
        (9_223_372_036_854_775_808.0, DType::I64),
        (2.0, DType::Bool),
        (f64::NAN, DType::Bool),
        (1e300, DType::F32),
    ];
    for (value, dtype) in cases {
        let err = Array::full([2], value, dtype).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    op: "full",
                    name: "value",
                    ..
                }
            ),
            "{value} as {dtype}: {err:?}"
        );
        assert!(err.to_string().contains("value"), "{err}");
    }
}

#[test]
fn eye_is_the_identity() {
    assert_eq!(
        f64s(Array::eye(3).unwrap()),
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(Array::eye(3).unwrap().dims(), &[3, 3]);
    assert!(f64s(Array::eye(0).unwrap()).is_empty());
    assert_eq!(f64s(Array::eye(1).unwrap()), vec![1.0]);
    assert_eq!(
        Array::eye_dtype(2, DType::Bool)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![true, false, false, true]
    );
    assert_eq!(
        Array::eye_dtype(2, DType::F32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![1.0, 0.0, 0.0, 1.0]
    );
}

#[test]
fn arange_matches_reference_vectors() {
    let ar = |a, b, s| f64s(Array::arange(a, b, s).unwrap());
    assert_eq!(ar(0.0, 5.0, 1.0), vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    assert_eq!(ar(0.0, 5.5, 1.0), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(ar(5.0, 0.0, -1.5), vec![5.0, 3.5, 2.0, 0.5]);
    assert_eq!(ar(-1.0, 1.0, 0.5), vec![-1.0, -0.5, 0.0, 0.5]);
    assert_eq!(ar(1.0, 1.3, 0.1), vec![1.0, 1.1, 1.2]);
    assert!(ar(2.0, 2.0, 1.0).is_empty());
    assert!(ar(2.0, 2.0, -1.0).is_empty());
    let tenths = ar(0.0, 1.0, 0.1);
    assert_eq!(tenths.len(), 10);
    for (k, x) in tenths.iter().enumerate() {
        assert_eq!(*x, k as f64 * 0.1, "point {k} is start + k * step");
    }
    let long = ar(0.0, 100_000.0, 1.0);
    assert_eq!(long.len(), 100_000);
    assert!(long.iter().enumerate().all(|(k, &x)| x == k as f64));
    assert_eq!(Array::arange(0.0, 3.0, 1.0).unwrap().dims(), &[3]);
}

#[test]
fn arange_rejects_bad_steps_and_non_finite_arguments() {
    assert_eq!(bad_arg(Array::arange(0.0, 1.0, 0.0)), ("arange", "step"));
    assert_eq!(bad_arg(Array::arange(0.0, 1.0, -0.1)), ("arange", "step"));
    assert_eq!(bad_arg(Array::arange(1.0, 0.0, 0.1)), ("arange", "step"));
    assert_eq!(
        bad_arg(Array::arange(0.0, 1e300, 1e-300)),
        ("arange", "step")
    );
    assert_eq!(
        bad_arg(Array::arange(f64::NAN, 1.0, 0.1)),
        ("arange", "start")
    );
    assert_eq!(
        bad_arg(Array::arange(0.0, f64::INFINITY, 1.0)),
        ("arange", "stop")
    );
    assert_eq!(
        bad_arg(Array::arange(0.0, 1.0, f64::NAN)),
        ("arange", "step")
    );
    let msg = Array::arange(0.0, 1.0, -0.5).unwrap_err().to_string();
    assert!(
        msg.contains("step") && msg.contains("positive"),
        "message: {msg}"
    );
}

#[test]
fn linspace_matches_reference_vectors() {
    let ls = |a, b, n| f64s(Array::linspace(a, b, n).unwrap());
    assert_eq!(ls(0.0, 1.0, 5), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    assert_eq!(ls(1.0, -1.0, 3), vec![1.0, 0.0, -1.0]);
    assert_eq!(ls(2.0, 3.0, 2), vec![2.0, 3.0]);
    assert_eq!(ls(3.0, 9.0, 1), vec![3.0]);
    assert!(ls(3.0, 9.0, 0).is_empty());
    assert_eq!(ls(4.0, 4.0, 3), vec![4.0; 3]);
    // Both ends exact, values close to the exact decimals, increasing.
    let x = ls(0.1, 0.7, 7);
    assert_eq!((x[0], x[6]), (0.1, 0.7));
    for (k, v) in x.iter().enumerate() {
        assert!((v - (0.1 + 0.1 * k as f64)).abs() < 1e-15, "point {k}: {v}");
    }
    let y = ls(-3.0, 1e4 / 3.0, 100_001);
    assert_eq!(y[100_000], 1e4 / 3.0);
    assert!(y.windows(2).all(|w| w[0] < w[1]));
    // No overflow when stop - start exceeds the f64 range.
    let wide = ls(-f64::MAX, f64::MAX, 3);
    assert_eq!(wide, vec![-f64::MAX, 0.0, f64::MAX]);
}

#[test]
fn linspace_rejects_non_finite_ends() {
    assert_eq!(
        bad_arg(Array::linspace(f64::NAN, 1.0, 3)),
        ("linspace", "start")
    );
    assert_eq!(
        bad_arg(Array::linspace(0.0, f64::NEG_INFINITY, 3)),
        ("linspace", "stop")
    );
}

#[test]
fn arange_length_is_robust_to_rounding() {
    let len = |a, b, s| Array::arange(a, b, s).unwrap().numel();
    assert_eq!(len(1.0, 1.3, 0.1), 3); // (1.3 - 1) / 0.1 = 3.0000000000000004
    assert_eq!(len(0.0, 0.3, 0.1), 3);
    assert_eq!(len(0.0, 1.0, 0.1), 10);
    assert_eq!(len(0.0, 1.0000001, 0.1), 11);
    assert_eq!(len(1e6, 1e6 + 0.3, 0.1), 3);
    assert_eq!(len(0.0, 1e9, 1.0), 1_000_000_000);
    assert_eq!(len(3.0, 0.0, -1.0), 3);
    // Points that round onto stop are left out: all points lie before stop.
    let x = f64s(Array::arange(1e15, 1e15 + 1.0, 1e-3).unwrap());
    assert!(x.len() > 900 && x.iter().all(|&v| v < 1e15 + 1.0));
    for (a, b, s) in [(0.0, 10.0, 0.7), (-2.0, 2.0, 0.1), (1.0, -1.0, -0.3)] {
        let x = f64s(Array::arange(a, b, s).unwrap());
        let before = |v: f64| if s > 0.0 { v < b } else { v > b };
        assert!(x.iter().all(|&v| before(v)));
        assert!(
            !before(a + x.len() as f64 * s),
            "one more point would reach stop"
        );
    }
}

#[test]
fn sizes_that_cannot_be_allocated_are_errors_not_panics() {
    let big = [usize::MAX / 2, 4];
    assert!(matches!(
        Array::zeros(big, DType::F64),
        Err(Error::BadShape { op: "zeros", .. })
    ));
    assert!(Array::full(big, 1.0, DType::Bool).is_err());
    assert!(Array::rand(big, 0).is_err());
    assert!(Array::randn([usize::MAX, 2], 0).is_err());
    assert!(Array::eye(usize::MAX / 4).is_err());
    assert!(Array::linspace(0.0, 1.0, usize::MAX).is_err());
    assert_eq!(
        bad_arg(Array::arange(0.0, 1e300, 1e-10)),
        ("arange", "step")
    );
    assert_eq!(
        bad_arg(Array::arange(-1e308, 1e308, 1.0)),
        ("arange", "step")
    );
}
