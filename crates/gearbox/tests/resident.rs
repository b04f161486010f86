//! Resident handles against the same work on immutable arrays, on the CPU
//! backend and on every GPU backend usable here (OpenCL on pocl and wgpu
//! on lavapipe in CI, with CPU devices allowed; CUDA, wgpu and OpenCL on
//! the H100): every in-place operation on random values, amatrix's
//! aliasing rules (a resident source is shared, anything else copied), a
//! view against a snapshot, and bad input. Backends without a device
//! print `SKIP: ...`; `GEARBOX_REQUIRE_<NAME>=1` makes an absence a
//! failure.

use gearbox::resident::{resident_handle, ResidentHandle};
use gearbox::runtime::testing::gpu::{lock, on_cpu, work_on};
use gearbox::runtime::{fallback_log, fallback_log_reset};
use gearbox::{Array, BinaryOp, DType, UnaryOp};

mod common;

/// Runs `f` with the CPU backend's name, then with each usable GPU
/// backend's, checking that device handles ran their work there and
/// nothing fell back.
fn on_each_backend(f: impl Fn(&'static str)) {
    let _g = lock();
    let devices = common::usable_devices();
    f("cpu");
    for d in devices {
        fallback_log_reset();
        let before = work_on(d.backend);
        f(d.backend);
        assert!(work_on(d.backend) > before, "nothing ran on {}", d.backend);
        assert!(
            fallback_log().is_empty(),
            "{}: {:?}",
            d.backend,
            fallback_log()
        );
    }
}

fn randn(dims: [usize; 2], seed: u64, dtype: DType) -> Array {
    Array::randn(dims, seed).unwrap().astype(dtype).unwrap()
}

/// Values of `a` as f64 (evaluated on the CPU).
fn values(a: &Array) -> Vec<f64> {
    on_cpu(|| a.astype(DType::F64).unwrap().to_vec::<f64>().unwrap())
}

/// Checks the handle's values against `want`, elementwise: within `tol`
/// relative to max(1, |want|), NaN where `want` is NaN.
fn check(what: &str, h: &ResidentHandle, want: &Array, tol: f64) {
    let got = values(&h.snapshot().unwrap());
    let want = values(want);
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else {
            (g - w).abs() <= tol * w.abs().max(1.0)
        };
        assert!(
            ok,
            "{what} on {}: element {i}: got {g}, want {w}",
            h.backend()
        );
    }
}

/// An independent host copy of `a`: a handle may share `a`'s device
/// buffer and change it, so references start from copies.
fn host_copy(a: &Array) -> Array {
    Array::from_vec(a.dims().to_vec(), values(a))
        .unwrap()
        .astype(a.dtype())
        .unwrap()
}

fn tolerance(dtype: DType) -> f64 {
    if dtype == DType::F32 {
        2e-5
    } else {
        1e-12
    }
}

#[test]
fn every_operation_matches_the_same_work_on_immutable_arrays() {
    on_each_backend(|b| {
        for dtype in [DType::F64, DType::F32] {
            let tol = tolerance(dtype);
            let (r, c) = (37, 23);
            let x = randn([r, c], 1, dtype);
            let other = randn([r, c], 2, dtype);
            let row = randn([1, c], 3, dtype);
            let col = randn([r, 1], 4, dtype);
            let mut want = host_copy(&x);
            let h = resident_handle(&x, b).unwrap();
            let mut step =
                |what: &str, op: &dyn Fn(&ResidentHandle), reference: &dyn Fn(&Array) -> Array| {
                    op(&h);
                    want = on_cpu(|| {
                        let w = reference(&want);
                        w.eval().unwrap();
                        w
                    });
                    check(&format!("{what} ({dtype})"), &h, &want, tol);
                };
            step(
                "add scalar",
                &|h| h.ewise_inplace(BinaryOp::Add, 0.5).unwrap(),
                &|w| (w + 0.5).unwrap(),
            );
            step(
                "mul row",
                &|h| h.ewise_inplace(BinaryOp::Mul, &row).unwrap(),
                &|w| (w * &row).unwrap(),
            );
            step(
                "sub column",
                &|h| h.ewise_inplace(BinaryOp::Sub, &col).unwrap(),
                &|w| (w - &col).unwrap(),
            );
            step(
                "div full",
                &|h| h.ewise_inplace(BinaryOp::Div, &other).unwrap(),
                &|w| (w / &other).unwrap(),
            );
            step(
                "maximum",
                &|h| h.ewise_inplace(BinaryOp::Maximum, -3.0).unwrap(),
                &|w| w.maximum_scalar(-3.0).unwrap(),
            );
            step(
                "minimum",
                &|h| h.ewise_inplace(BinaryOp::Minimum, 3.0).unwrap(),
                &|w| w.minimum_scalar(3.0).unwrap(),
            );
            step("tanh", &|h| h.map_inplace(UnaryOp::Tanh).unwrap(), &|w| {
                w.tanh().unwrap()
            });
            step("exp", &|h| h.map_inplace(UnaryOp::Exp).unwrap(), &|w| {
                w.exp().unwrap()
            });
            step(
                "greater than",
                &|h| h.ewise_inplace(BinaryOp::Gt, 1.0).unwrap(),
                &|w| w.gt_scalar(1.0).unwrap().astype(dtype).unwrap(),
            );
            step("axpy", &|h| h.axpy(0.25, &other).unwrap(), &|w| {
                (w + &(&other * 0.25).unwrap()).unwrap()
            });
            step(
                "sweep rows",
                &|h| {
                    h.sweep_inplace(&col.reshape([r]).unwrap(), 0, BinaryOp::Sub)
                        .unwrap()
                },
                &|w| (w - &col).unwrap(),
            );
            step(
                "sweep columns",
                &|h| h.sweep_inplace(&row, 1, BinaryOp::Mul).unwrap(),
                &|w| (w * &row).unwrap(),
            );
            step(
                "pow",
                &|h| h.ewise_inplace(BinaryOp::Pow, 2.0).unwrap(),
                &|w| w.pow_scalar(2.0).unwrap(),
            );
            step("sqrt", &|h| h.map_inplace(UnaryOp::Sqrt).unwrap(), &|w| {
                w.sqrt().unwrap()
            });
            step(
                "assign a fused expression",
                &|h| {
                    h.assign(&((&h.as_array().sin().unwrap() * &other).unwrap() + 1.0).unwrap())
                        .unwrap()
                },
                &|w| ((&w.sin().unwrap() * &other).unwrap() + 1.0).unwrap(),
            );
            step("copy_from", &|h| h.copy_from(&other).unwrap(), &|_| {
                other.clone()
            });
            step("fill", &|h| h.fill(-1.5).unwrap(), &|w| {
                (&(w * 0.0).unwrap() - 1.5).unwrap()
            });

            // Summaries of the matrix into vector handles.
            for (name, len) in [
                ("row_sums", r),
                ("col_sums", c),
                ("row_means", r),
                ("col_means", c),
            ] {
                let target = resident_handle(&randn([len, 1], 5, dtype), b).unwrap();
                h.copy_from(&other).unwrap();
                match name {
                    "row_sums" => h.row_sums_into(&target),
                    "col_sums" => h.col_sums_into(&target),
                    "row_means" => h.row_means_into(&target),
                    _ => h.col_means_into(&target),
                }
                .unwrap();
                let want = on_cpu(|| match name {
                    "row_sums" => other.row_sums(),
                    "col_sums" => other.col_sums(),
                    "row_means" => other.row_means(),
                    _ => other.col_means(),
                })
                .unwrap();
                check(&format!("{name} ({dtype})"), &target, &want, tol * 10.0);
            }
        }
    });
}

#[test]
fn gemm_inplace_matches_blas_semantics_for_every_transpose() {
    on_each_backend(|b| {
        for dtype in [DType::F64, DType::F32] {
            let tol = tolerance(dtype) * 10.0;
            let (m, k, n) = (19, 11, 13);
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let a = randn(if ta { [k, m] } else { [m, k] }, 6, dtype);
                let bm = randn(if tb { [n, k] } else { [k, n] }, 7, dtype);
                let c = randn([m, n], 8, dtype);
                let c0 = host_copy(&c);
                let op = |x: &Array, t: bool| if t { x.t().unwrap() } else { x.clone() };
                let product = on_cpu(|| op(&a, ta).matmul(&op(&bm, tb)).unwrap());
                let h = resident_handle(&c, b).unwrap();
                h.gemm_inplace(&a, &bm, 1.5, -0.5, ta, tb).unwrap();
                let want =
                    on_cpu(|| (&(&product * 1.5).unwrap() + &(&c0 * -0.5).unwrap()).unwrap());
                check(&format!("gemm {ta} {tb} ({dtype})"), &h, &want, tol);
                // beta = 0 does not read C: NaN there does not leak.
                h.fill(f64::NAN).unwrap();
                h.gemm_inplace(&a, &bm, 1.0, 0.0, ta, tb).unwrap();
                check(
                    &format!("gemm beta 0 {ta} {tb} ({dtype})"),
                    &h,
                    &product,
                    tol,
                );
            }
        }
    });
}

#[test]
fn a_handle_shares_a_resident_source_and_copies_anything_else() {
    on_each_backend(|b| {
        let x = randn([64, 8], 11, DType::F64).gather().unwrap();
        let original = values(&x);
        let doubled: Vec<f64> = original.iter().map(|v| v * 2.0).collect();
        // Not resident on `b` (host values): the handle owns a copy.
        let owned = resident_handle(&x, b).unwrap();
        assert!(!owned.shares_source());
        owned.ewise_inplace(BinaryOp::Mul, 2.0).unwrap();
        assert_eq!(
            x.to_vec::<f64>().unwrap(),
            original,
            "{b}: the source changed"
        );
        assert_eq!(values(&owned.snapshot().unwrap()), doubled);
        if b == "cpu" {
            return; // host arrays are values, never resident: always copied
        }
        // Resident on `b`, with a host copy too: shared, and the array
        // sees the change (its stale host copy is dropped).
        let y = randn([64, 8], 11, DType::F64).to_device(b).unwrap();
        assert_eq!(y.to_vec::<f64>().unwrap(), original);
        let shared = resident_handle(&y, b).unwrap();
        assert!(shared.shares_source(), "{b}");
        shared.ewise_inplace(BinaryOp::Mul, 2.0).unwrap();
        assert_eq!(
            y.to_vec::<f64>().unwrap(),
            doubled,
            "{b}: the source did not see the change"
        );
    });
}

#[test]
fn a_view_aliases_the_handle_and_a_snapshot_keeps_its_values() {
    on_each_backend(|b| {
        let h = resident_handle(&randn([10, 3], 12, DType::F64), b).unwrap();
        h.fill(1.0).unwrap();
        let view = h.as_array();
        let snapshot = h.snapshot().unwrap();
        let pending = (&view + 1.0).unwrap();
        assert_eq!(view.to_vec::<f64>().unwrap(), vec![1.0; 30]);
        h.fill(5.0).unwrap();
        assert_eq!(
            view.to_vec::<f64>().unwrap(),
            vec![5.0; 30],
            "{b}: the view kept stale values"
        );
        assert_eq!(
            snapshot.to_vec::<f64>().unwrap(),
            vec![1.0; 30],
            "{b}: the snapshot changed"
        );
        // Lazy work on a view reads the values current when it runs.
        assert_eq!(pending.to_vec::<f64>().unwrap(), vec![6.0; 30]);
    });
}

/// The message of an error the handle call must give.
fn error_of(r: gearbox::Result<()>) -> String {
    r.expect_err("bad input was accepted").to_string()
}

#[test]
fn bad_input_is_a_clear_error() {
    let _g = lock();
    let x = randn([6, 4], 13, DType::F64);
    let h = resident_handle(&x, "cpu").unwrap();
    let integers = Array::from_vec([2], vec![1i64, 2]).unwrap();
    let e = resident_handle(&integers, "cpu").unwrap_err().to_string();
    assert!(e.contains("f32 or f64"), "{e}");
    let e = resident_handle(&x, "nope").unwrap_err().to_string();
    assert!(e.contains("no such backend"), "{e}");
    let e = error_of(h.ewise_inplace(BinaryOp::Add, &randn([5, 5], 1, DType::F64)));
    assert!(
        e.contains("5") && e.contains("broadcast")
            || e.contains("6, 4")
            || e.contains("6 x 4")
            || e.contains("[6, 4]"),
        "{e}"
    );
    let e = error_of(h.ewise_inplace(BinaryOp::Add, &randn([6, 4], 1, DType::F32)));
    assert!(e.contains("f32") && e.contains("astype"), "{e}");
    let e = error_of(h.copy_from(&randn([4, 6], 1, DType::F64)));
    assert!(e.contains("keep its shape"), "{e}");
    let e = error_of(h.sweep_inplace(&randn([3, 1], 1, DType::F64), 0, BinaryOp::Sub));
    assert!(e.contains("takes 6 values, one per row"), "{e}");
    let e = error_of(h.sweep_inplace(&randn([4, 1], 1, DType::F64), 2, BinaryOp::Sub));
    assert!(e.contains("MARGIN"), "{e}");
    let e = error_of(h.gemm_inplace(
        &randn([6, 3], 1, DType::F64),
        &randn([3, 5], 1, DType::F64),
        1.0,
        0.0,
        false,
        false,
    ));
    assert!(e.contains("product") && e.contains("handle holds"), "{e}");
    // The same count in another shape is refused too: [3, 2] or [6, 1]
    // into a [2, 3] handle.
    let small = resident_handle(&randn([2, 3], 1, DType::F64), "cpu").unwrap();
    for (a, b) in [([3, 4], [4, 2]), ([6, 4], [4, 1])] {
        let e = error_of(small.gemm_inplace(
            &randn(a, 2, DType::F64),
            &randn(b, 3, DType::F64),
            1.0,
            0.0,
            false,
            false,
        ));
        assert!(
            e.contains("product") && e.contains("2, 3") || e.contains("2 x 3"),
            "{e}"
        );
    }
    // A matrix times a vector fills a vector handle.
    let v = resident_handle(&Array::randn([6], 1).unwrap(), "cpu").unwrap();
    let (a, x) = (randn([6, 4], 4, DType::F64), randn([4, 1], 5, DType::F64));
    v.gemm_inplace(&a, &x, 1.0, 0.0, false, false).unwrap();
    let want = a.matmul(&x).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(v.as_array().to_vec::<f64>().unwrap(), want);
    let e = error_of(h.row_sums_into(&h));
    assert!(e.contains("another handle"), "{e}");
    let short = resident_handle(&randn([5, 1], 1, DType::F64), "cpu").unwrap();
    let e = error_of(h.row_sums_into(&short));
    assert!(e.contains("6"), "{e}");
    // A second thread while an operation holds the handle.
    let guard = h.hold().unwrap();
    let e = std::thread::scope(|s| s.spawn(|| error_of(h.fill(0.0))).join().unwrap());
    assert!(e.contains("another thread"), "{e}");
    drop(guard);
    h.fill(0.0).unwrap();
}
