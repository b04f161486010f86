//! Calls of float64 scalar functions (`Array::call_fn`): values against the
//! function applied directly, broadcasting and dtype conversion, fusion with
//! the work around the call, and clear errors for bad calls.

mod common;

use common::{assert_close, TestRng};
use gearbox_core::fusion::ir::{DeviceLibrary, ScalarFn};
use gearbox_core::fusion::plan::{plan, Region};
use gearbox_core::runtime::{options, set_options, RuntimeOptions};
use gearbox_core::{Array, DType};

static TEST_LIBRARY: DeviceLibrary = DeviceLibrary {
    name: "test",
    assemble: |names| {
        Ok(names
            .iter()
            .map(|n| format!("__device__ double {n}(double a, double b, int f) {{ return f ? log(a) * b : a * b + 1.0; }}\n"))
            .collect())
    },
};

fn reference(a: f64, b: f64, flag: bool) -> f64 {
    if flag {
        a.ln() * b
    } else {
        a * b + 1.0
    }
}

static LOG_TIMES: ScalarFn = ScalarFn {
    name: "log_times",
    device_name: "gb_log_times",
    arity: 2,
    flags: 1,
    eval: |a, f| reference(a[0], a[1], f & 1 == 1),
    library: &TEST_LIBRARY,
    partials: None,
};

fn arr(shape: &[usize], seed: u64) -> Array {
    let mut rng = TestRng::new(seed);
    let n = shape.iter().product();
    Array::from_vec(shape.to_vec(), rng.vec(n, 0.1, 3.0)).unwrap()
}

#[test]
fn a_call_gives_the_function_at_every_broadcast_position() {
    let (x, y) = (arr(&[40, 30], 1), arr(&[1, 30], 2));
    for flag in [false, true] {
        let z = Array::call_fn(&LOG_TIMES, &[&x, &y], flag as u8).unwrap();
        assert_eq!(z.dtype(), DType::F64);
        let (xv, yv) = (x.to_vec::<f64>().unwrap(), y.to_vec::<f64>().unwrap());
        let want: Vec<f64> = (0..40 * 30)
            .map(|i| reference(xv[i], yv[i / 40], flag))
            .collect();
        assert_close(&z.to_vec::<f64>().unwrap(), &want, 0.0, "log_times");
    }
    // f32 operands are converted to float64 first.
    let x32 = x.astype(DType::F32).unwrap();
    let z = Array::call_fn(&LOG_TIMES, &[&x32, &y], 1).unwrap();
    let xv = x32.to_f64_vec().unwrap();
    let yv = y.to_vec::<f64>().unwrap();
    let want: Vec<f64> = (0..40 * 30)
        .map(|i| reference(xv[i], yv[i / 40], true))
        .collect();
    assert_close(&z.to_vec::<f64>().unwrap(), &want, 0.0, "from f32");
}

#[test]
fn a_call_fuses_with_the_chain_and_reduction_around_it() {
    let build = || {
        let (x, y) = (arr(&[64, 16], 3), arr(&[64, 16], 4));
        let z = Array::call_fn(&LOG_TIMES, &[&(&x * 2.0).unwrap(), &y], 1).unwrap();
        (&z + &x).unwrap().sum_axis(0).unwrap()
    };
    let s = build();
    let p = plan(&s.pending_in_order(), &[&s], true).unwrap();
    assert_eq!(p.regions.len(), 1);
    let Region::Fused(f) = &p.regions[0] else {
        panic!("one fused region")
    };
    assert!(f.ops.contains(&"log_times"), "{:?}", f.ops);
    let fused = s.to_vec::<f64>().unwrap();
    let saved = set_options(RuntimeOptions {
        fusion: false,
        ..options()
    });
    let unfused = build().to_vec::<f64>().unwrap();
    set_options(saved);
    assert_close(&fused, &unfused, 1e-15, "fused call");
}

#[test]
fn bad_calls_are_clear_errors() {
    let x = arr(&[3], 5);
    let e = Array::call_fn(&LOG_TIMES, &[&x], 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("takes 2 array arguments"), "{e}");
    let e = Array::call_fn(&LOG_TIMES, &[&x, &x], 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("takes 1 flags"), "{e}");
    let b = x.gt(&x).unwrap();
    let e = Array::call_fn(&LOG_TIMES, &[&x, &b], 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("dtype bool"), "{e}");
    let e = Array::call_fn(&LOG_TIMES, &[&x, &arr(&[4], 6)], 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("log_times"), "{e}");
}

/// A weighted sum of all [`MAX_CALL_ARGS`] arguments: `sum_i (i + 1) a_i`,
/// negated with flag bit 1 set.
static WEIGHTED_SUM: ScalarFn = ScalarFn {
    name: "weighted_sum",
    device_name: "gb_weighted_sum",
    arity: gearbox_core::fusion::ir::MAX_CALL_ARGS,
    flags: 2,
    eval: |a, f| {
        let s: f64 = a.iter().enumerate().map(|(i, v)| (i + 1) as f64 * v).sum();
        if f & 2 != 0 {
            -s
        } else {
            s
        }
    },
    library: &TEST_LIBRARY,
    partials: None,
};

#[test]
fn a_call_takes_the_most_arguments_each_in_its_place() {
    use gearbox_core::fusion::ir::MAX_CALL_ARGS;
    assert_eq!(MAX_CALL_ARGS, 8);
    // Mixed shapes: columns, rows and full matrices, so that a swapped or
    // dropped argument changes the sum.
    let shapes: [&[usize]; MAX_CALL_ARGS] = [
        &[6, 5],
        &[6, 1],
        &[1, 5],
        &[6, 5],
        &[6, 1],
        &[6, 5],
        &[1, 1],
        &[6, 1],
    ];
    let args: Vec<Array> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| arr(s, 40 + i as u64))
        .collect();
    let refs: Vec<&Array> = args.iter().collect();
    let values: Vec<Vec<f64>> = args.iter().map(|a| a.to_vec::<f64>().unwrap()).collect();
    for flags in [0u8, 2] {
        let z = Array::call_fn(&WEIGHTED_SUM, &refs, flags).unwrap();
        let got = (&z * 1.0)
            .unwrap()
            .sum_axis(0)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let want: Vec<f64> = (0..5)
            .map(|j| {
                (0..6)
                    .map(|i| {
                        let at = |k: usize| {
                            let (r, c) = (shapes[k][0], shapes[k][1]);
                            values[k][(i % r) + (j % c) * r]
                        };
                        let a: Vec<f64> = (0..MAX_CALL_ARGS).map(at).collect();
                        (WEIGHTED_SUM.eval)(&a, flags)
                    })
                    .sum()
            })
            .collect();
        assert_close(&got, &want, 1e-14, "weighted_sum");
    }
    let e = Array::call_fn(&WEIGHTED_SUM, &refs[..7], 0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("takes 8 array arguments"), "{e}");
}
