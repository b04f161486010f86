//! The OpenCL backend's scans (`cumsum`, `cumprod`) on whatever device
//! this machine has (pocl in CI), against a float64 reference on the CPU:
//! both paths (chunked for any layout, tiled for contiguous lanes) with
//! both accumulations (double, compensated float), the backend's own
//! choice, what the scans decline, and scans through the runtime
//! (`cumprod` of 1-D, 2-D and 3-D arrays along every axis, with factors
//! that overflow on the way, zeros, NaN and infinities). Without a device
//! the tests print `SKIP: <reason>` and pass, unless
//! `GEARBOX_REQUIRE_OPENCL=1`.

mod common;
mod library;

use std::time::Instant;

use gearbox_core::runtime::backend::LibraryCall;
use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::scan_plan::lanes;
use gearbox_core::runtime::testing::gpu::{
    check_cumsum_through_the_runtime, run, scan_error, scan_out_shape, scan_reference, values,
    ScanCase,
};
use gearbox_core::runtime::testing::scans::{
    check_cumprod_through_the_runtime, cumprod_mismatch, factors, Factors,
};
use gearbox_core::runtime::Health;
use gearbox_core::{DType, Shape};
use gearbox_opencl::library::scan::{self, Accumulation, Path};
use gearbox_opencl::OpenClBackend;
use library::{device, with_lib};

/// Every layout: interleaved lanes (`inner > 1`), contiguous ones of every
/// length around the tile (1024 values) and long ones cut into many
/// pieces (a lane of 1,000,003 values has more pieces than one work-item
/// carries), empty axes.
const SCANS: [ScanCase; 20] = [
    (&[7, 9, 11], Some(0)),
    (&[7, 9, 11], Some(1)),
    (&[7, 9, 11], Some(2)),
    (&[7, 9, 11], None),
    (&[65, 70, 3], Some(1)),
    (&[1], None),
    (&[257], None),
    (&[1023], None),
    (&[1024], None),
    (&[1025], None),
    (&[4097], None),
    (&[100_003], None),
    (&[1_000_003], None),
    (&[2, 100_003], Some(1)),
    (&[3, 20_000, 2], Some(1)),
    (&[1000, 300], Some(0)),
    (&[3000, 7], Some(0)),
    (&[5000, 3], None),
    (&[0, 5], Some(0)),
    (&[5, 0], Some(0)),
];

/// How a scan case runs.
#[derive(Debug, Clone, Copy)]
enum How {
    /// The backend's library call.
    Call,
    /// `scan_with` with this accumulation and path.
    Direct(Accumulation, Path),
}

/// Runs every case of `cases` (those `how` takes) in `dtype`: sums, or
/// products of every kind of [`Factors`] when `product` (`bounds` then
/// unused: products keep `scan_product`'s rule, [`cumprod_mismatch`]);
/// the worst error of the sums against `bounds` (see [`scan_error`]),
/// which must stay below 1, and the number of cases.
fn scan_cases(
    b: &OpenClBackend,
    cases: &[ScanCase],
    (product, dtype): (bool, DType),
    how: How,
    bounds: (f64, f64),
) -> (f64, usize) {
    let mut worst: f64 = 0.0;
    let mut count = 0;
    for (c, (dims, axis)) in cases.iter().enumerate() {
        let shape = Shape::new(dims.to_vec());
        let n = shape.numel();
        let layout = lanes(&shape, *axis).unwrap();
        if matches!(how, How::Direct(_, Path::Tiled)) && layout.0 != 1 {
            continue;
        }
        let kinds: &[Factors] = if product {
            &Factors::ALL
        } else {
            &[Factors::Wandering]
        };
        for &kind in kinds {
            let seed = 7 + c as u64;
            let host = match product {
                true => factors(n, dtype, kind, seed),
                false => values(n, dtype, seed),
            };
            let x = host.to_f64_vec().unwrap();
            let want = scan_reference(&shape, *axis, product, &x);
            let out = scan_out_shape(&shape, *axis);
            let (got, acc) = match how {
                How::Call => {
                    let call = LibraryCall::Scan {
                        product,
                        axis: *axis,
                    };
                    let acc = Accumulation::of(b.device().unwrap().fp64);
                    (
                        run(b, call, &[(&host, &shape)], (&out, dtype)).unwrap(),
                        acc,
                    )
                }
                How::Direct(acc, path) => with_lib(b, |lib| {
                    let buf = lib.dev.upload(&host).unwrap();
                    let y = scan::scan_with(
                        lib,
                        (&buf, &shape),
                        (product, *axis),
                        (&out, dtype),
                        acc,
                        path,
                    )
                    .unwrap_or_else(|e| panic!("{dims:?} {axis:?} {acc:?} {path:?}: {e}"));
                    (lib.dev.download(&y).unwrap(), acc)
                }),
            };
            let got = got.to_f64_vec().unwrap();
            let what = format!("{dtype} {dims:?} axis {axis:?} {how:?}");
            if product {
                if let Some(bad) = cumprod_mismatch(&x, layout, &got, &want, acc, dtype) {
                    panic!("cumprod {what} {kind:?}: {bad}");
                }
            } else {
                let err = scan_error(&x, layout, &got, &want, bounds);
                assert!(err <= 1.0, "{what}: error {err:.2} of the bound");
                worst = worst.max(err);
            }
            count += 1;
        }
    }
    (worst, count)
}

#[test]
fn scans_match_a_f64_cpu_reference_on_every_path() {
    let Some((_g, b)) = device() else { return };
    let fp64 = b.device().unwrap().fp64;
    let f32_ulp = f32::EPSILON as f64 / 2.0;
    let f64_ulp = f64::EPSILON / 2.0;
    // f32 data summed in double: rounded once (half an ulp of the result)
    // plus the double sum's reassociation error; f64 data: reassociation
    // within 64 ulps of the mass; compensated f32: about 2 u + n u^2 of the
    // mass (Neumaier).
    let double_f32 = (f32_ulp, 1e-13);
    let double_f64 = (0.0, 64.0 * f64_ulp);
    let kahan = (2.0 * f32_ulp, 2.0 * 1_000_003.0 * f32_ulp * f32_ulp);
    let mut runs: Vec<(String, DType, How, (f64, f64))> = Vec::new();
    for path in [Path::Chunked, Path::Tiled] {
        if fp64 {
            let d = How::Direct(Accumulation::Double, path);
            runs.push((format!("{path:?} f32 (double)"), DType::F32, d, double_f32));
            runs.push((format!("{path:?} f64"), DType::F64, d, double_f64));
        }
        let c = How::Direct(Accumulation::Compensated, path);
        runs.push((format!("{path:?} f32 (compensated)"), DType::F32, c, kahan));
    }
    let own = if fp64 { double_f32 } else { kahan };
    runs.push(("backend's f32".into(), DType::F32, How::Call, own));
    if fp64 {
        runs.push(("backend's f64".into(), DType::F64, How::Call, double_f64));
    }
    for (name, dtype, how, bounds) in runs {
        let start = Instant::now();
        let (worst, count) = scan_cases(&b, &SCANS, (false, dtype), how, bounds);
        println!(
            "{name}: {count} cases, worst error {worst:.3} of the bound, {:.2?}",
            start.elapsed()
        );
        let start = Instant::now();
        let (_, count) = scan_cases(&b, &SCANS, (true, dtype), how, bounds);
        println!(
            "{name} cumprod: {count} cases within scan_product's bound, {:.2?}",
            start.elapsed()
        );
    }
}

#[test]
fn scans_decline_what_they_do_not_take() {
    let Some((_g, b)) = device() else { return };
    let shape = Shape::new(vec![3, 4]);
    let host = values(12, DType::F32, 1);
    let flat = Shape::new(vec![12]);
    let scan = |product, axis| LibraryCall::Scan { product, axis };
    // An axis past the shape, a result dtype not the input's.
    let cases = [
        (scan(true, Some(2)), &shape, DType::F32, "axis 2"),
        (scan(false, Some(2)), &shape, DType::F32, "axis 2"),
        (
            scan(false, None),
            &flat,
            DType::F64,
            "float data of the result dtype",
        ),
    ];
    for (call, out, dtype, why) in cases {
        let err = run(&*b, call, &[(&host, &shape)], (out, dtype))
            .expect_err(&format!("{call:?} into {out} {dtype}"))
            .to_string();
        assert!(err.contains(why), "{call:?}: {err}");
    }
    // i64 sums (the CPU's are exact, with an overflow check).
    let ints = values(12, DType::I64, 2);
    let err = run(
        &*b,
        scan(false, None),
        &[(&ints, &shape)],
        (&flat, DType::I64),
    )
    .unwrap_err();
    assert!(err.to_string().contains("float data"), "{err}");
    // A buffer shorter than its shape says.
    let long = Shape::new(vec![3, 5]);
    let err = run(
        &*b,
        scan(false, Some(0)),
        &[(&host, &long)],
        (&long, DType::F32),
    )
    .unwrap_err();
    assert!(err.to_string().contains("a buffer of 12"), "{err}");
    // The tiled path on interleaved lanes.
    let err = with_lib(&b, |lib| {
        let buf = lib.dev.upload(&host).unwrap();
        let acc = Accumulation::of(lib.dev.fp64);
        scan::scan_with(
            lib,
            (&buf, &shape),
            (false, Some(1)),
            (&shape, DType::F32),
            acc,
            Path::Tiled,
        )
        .map(|_| ())
        .unwrap_err()
    });
    assert!(err.to_string().contains("contiguous lanes"), "{err}");
    assert_eq!(probe_backend("opencl", false), Health::Healthy);
}

#[test]
fn cumsum_runs_on_opencl_through_the_runtime() {
    let Some((_g, _b)) = device() else { return };
    check_cumsum_through_the_runtime("opencl");
}

#[test]
fn cumprod_never_overflows_on_the_way_on_opencl() {
    let Some((_g, b)) = device() else { return };
    use gearbox_core::runtime::Backend;
    let fp64 = b.device().unwrap().fp64;
    check_cumprod_through_the_runtime("opencl", &b.capabilities().dtypes, Accumulation::of(fp64));
}
