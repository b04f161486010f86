//! The wgpu backend's scans (`cumsum`, `cumprod`) on whatever adapter this
//! machine has, against a float64 reference on the CPU: the chunked scan
//! along every axis, the tiled scan of contiguous lanes under several
//! tilings and both accumulations (products with factors that overflow on
//! the way, zeros, NaN and infinities), what the tiled scan declines, and
//! scans through the runtime (`cumprod` of 1-D, 2-D and 3-D arrays along
//! every axis). Without an adapter the tests print
//! `SKIP: <reason>` and pass, unless `GEARBOX_REQUIRE_WGPU=1`.

mod common;
mod library;

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
use gearbox_wgpu::library::scan::{self, tiles, tiles::Tiling, Accumulation};
use gearbox_wgpu::library::Modules;
use gearbox_wgpu::WgpuBackend;
use library::adapter;

const SCANS: [ScanCase; 14] = [
    (&[7, 9, 11], Some(0)),
    (&[7, 9, 11], Some(1)),
    (&[7, 9, 11], Some(2)),
    (&[7, 9, 11], None),
    (&[65, 70, 3], Some(0)),
    (&[65, 70, 3], Some(1)),
    (&[65, 70, 3], None),
    (&[1], None),
    (&[255], Some(0)),
    (&[257], None),
    (&[100_003], None),
    (&[2, 100_003], Some(1)),
    (&[3, 20_000, 2], Some(1)),
    (&[1000, 300], Some(0)),
];

/// Scan cases for the tiled path (contiguous lanes, `inner == 1`): vectors
/// around the tile sizes (256 K values: 1024 to 4096), long ones cut into
/// many pieces, and the first axis of matrices and 3-D arrays, with lanes
/// of every length (1, short ones that tiles hold several of or that
/// straddle tiles, long ones cut into pieces), empty ones too.
const TILED_SCANS: [ScanCase; 24] = [
    (&[1], None),
    (&[255], None),
    (&[256], None),
    (&[257], None),
    (&[1023], None),
    (&[1025], None),
    (&[2047], None),
    (&[2048], None),
    (&[2049], None),
    (&[4095], None),
    (&[4096], None),
    (&[4097], None),
    (&[100_003], None),
    (&[1_000_003], None),
    (&[1000, 7], Some(0)),
    (&[1000, 7], None),
    (&[3, 5000], Some(0)),
    (&[100_003, 2], Some(0)),
    (&[1, 1000], Some(0)),
    (&[7, 1000], Some(0)),
    (&[4099, 3, 2], Some(0)),
    (&[50, 4, 3], Some(0)),
    (&[0, 5], Some(0)),
    (&[5, 0], Some(0)),
];

/// How a scan case runs.
#[derive(Debug, Clone, Copy)]
enum ScanPath {
    /// The backend's call: the path and accumulation it chooses.
    Call,
    /// `scan::scan` (the path it chooses) with this accumulation.
    Direct(Accumulation),
    /// The tiled path with this accumulation and tiling.
    Tiled(Accumulation, Tiling),
}

/// Runs every scan of `cases` with `product` in `dtype` as `path` says:
/// sums of [`values`], whose worst error against `bounds` (see
/// [`scan_error`]) must stay below 1 and is returned; or products of every
/// kind of [`Factors`] (overflow on the way, zeros, NaN, infinities), which
/// must keep `scan_product`'s rule ([`cumprod_mismatch`]; `bounds`
/// unused, 0 returned).
fn scan_cases(
    b: &WgpuBackend,
    cases: &[ScanCase],
    (product, dtype): (bool, DType),
    path: ScanPath,
    bounds: (f64, f64),
) -> f64 {
    let dev = b.device().unwrap();
    let modules = Modules::default();
    let mut worst: f64 = 0.0;
    let kinds: &[Factors] = if product {
        &Factors::ALL
    } else {
        &[Factors::Wandering]
    };
    for (c, (dims, axis)) in cases.iter().enumerate() {
        for &kind in kinds {
            let shape = Shape::new(dims.to_vec());
            let n = shape.numel();
            let seed = 7 + c as u64;
            let host = match product {
                true => factors(n, dtype, kind, seed),
                false => values(n, dtype, seed),
            };
            let x = host.to_f64_vec().unwrap();
            let want = scan_reference(&shape, *axis, product, &x);
            let out = scan_out_shape(&shape, *axis);
            let (got, acc) = match path {
                ScanPath::Call => {
                    let call = LibraryCall::Scan {
                        product,
                        axis: *axis,
                    };
                    let acc = Accumulation::of(gearbox_wgpu::device::has_64_bit(dev.features));
                    (
                        run(b, call, &[(&host, &shape)], (&out, dtype)).unwrap(),
                        acc,
                    )
                }
                ScanPath::Direct(acc) => {
                    let buf = dev.upload(&host).unwrap();
                    let y = scan::scan(
                        dev,
                        &modules,
                        (&buf, &shape),
                        (product, *axis),
                        (&out, dtype),
                        acc,
                    )
                    .unwrap();
                    (dev.download(&y).unwrap(), acc)
                }
                ScanPath::Tiled(acc, tiling) => {
                    let buf = dev.upload(&host).unwrap();
                    let y = scan::tiles::scan(
                        dev,
                        &modules,
                        (&buf, &shape),
                        (product, *axis),
                        (&out, dtype),
                        acc,
                        tiling,
                    )
                    .unwrap();
                    (dev.download(&y).unwrap(), acc)
                }
            };
            let layout = lanes(&shape, *axis).unwrap();
            let got = got.to_f64_vec().unwrap();
            let what = format!("{dtype} {dims:?} axis {axis:?} {path:?}");
            if product {
                if let Some(bad) = cumprod_mismatch(&x, layout, &got, &want, acc, dtype) {
                    panic!("cumprod {what} {kind:?}: {bad}");
                }
            } else {
                let err = scan_error(&x, layout, &got, &want, bounds);
                assert!(err <= 1.0, "cumsum {what}: error {err:.2} of the bound");
                worst = worst.max(err);
            }
        }
    }
    worst
}

/// Every scan of `cases` (lanes of at most `longest` values), sums and
/// products, run as `path(accumulation, dtype)` says: f32 and f64 data
/// accumulated in f64 where the adapter has f64 shaders, f32 data
/// compensated everywhere. The worst error of each kind, named.
fn scan_suite(
    b: &WgpuBackend,
    cases: &[ScanCase],
    longest: f64,
    path: &dyn Fn(Accumulation, DType) -> ScanPath,
) -> Vec<(&'static str, f64)> {
    let wide = gearbox_wgpu::device::has_64_bit(b.device().unwrap().features);
    let cpu_adapter = b.device().unwrap().cpu_adapter;
    let f32_ulp = f32::EPSILON as f64 / 2.0;
    let f64_ulp = f64::EPSILON / 2.0;
    let mut report = Vec::new();
    // f32 data: rounded once from a sum kept in f64 (half an ulp of the
    // result, plus the f64 sum's own reassociation error); compensated f32
    // adds the pair's error, at most about 2 u + n u^2 of the mass (Neumaier).
    if wide {
        let d = Accumulation::Double;
        let (f32_path, f64_path) = (path(d, DType::F32), path(d, DType::F64));
        let sum = scan_cases(b, cases, (false, DType::F32), f32_path, (f32_ulp, 1e-13));
        let f64_sum = scan_cases(
            b,
            cases,
            (false, DType::F64),
            f64_path,
            (0.0, 64.0 * f64_ulp),
        );
        // Products keep scan_product's rule (bounds unused); f32 ones only
        // where the backend runs them (software adapters: its capabilities
        // list cumprod of f32 on hardware).
        if cpu_adapter {
            scan_cases(b, cases, (true, DType::F32), f32_path, (0.0, 0.0));
        }
        scan_cases(b, cases, (true, DType::F64), f64_path, (0.0, 0.0));
        report.extend([("f32 sum (f64)", sum), ("f64 sum", f64_sum)]);
    }
    let c = path(Accumulation::Compensated, DType::F32);
    let kahan = (2.0 * f32_ulp, 2.0 * longest * f32_ulp * f32_ulp);
    let sum = scan_cases(b, cases, (false, DType::F32), c, kahan);
    // Scaled f32 products (scan_product's rule with an f32 accumulator).
    if cpu_adapter {
        scan_cases(b, cases, (true, DType::F32), c, (0.0, 0.0));
    }
    report.push(("f32 sum (compensated)", sum));
    report
}

#[test]
fn scans_match_a_f64_cpu_reference_along_every_axis() {
    let Some((_g, b)) = adapter() else { return };
    // The backend's own choices where it accumulates in f64; compensated
    // f32 forced.
    let report = scan_suite(&b, &SCANS, 100_003.0, &|acc, _| match acc {
        Accumulation::Double => ScanPath::Call,
        Accumulation::Compensated => ScanPath::Direct(acc),
    });
    for (name, worst) in report {
        println!("{name}: worst error {worst:.3} of the bound");
    }
}

#[test]
fn tiled_scans_match_a_f64_cpu_reference() {
    let Some((_g, b)) = adapter() else { return };
    let dev = b.device().unwrap();
    let limit = dev.limits.max_compute_workgroup_storage_size;
    // The adapter's tiling; WebGPU's minimum workgroup memory (K = 8 for
    // f32, 4 for f64), whose small tiles cut a long lane into more pieces
    // than one invocation per lane carries (the carry by workgroups);
    // three pieces in all, so pieces span many tiles (carried ones within
    // a lane, uncarried ones across lanes, which then straddle tiles).
    let tilings: [(&str, &dyn Fn(DType) -> Tiling); 3] = [
        ("adapter's", &|dtype| Tiling::of(dev, dtype).unwrap()),
        ("16 KiB", &|dtype| Tiling {
            items: tiles::items_for(dtype, 16 << 10).unwrap(),
            target_pieces: tiles::TARGET_PIECES,
        }),
        ("3 pieces", &|dtype| Tiling {
            target_pieces: 3,
            ..Tiling::of(dev, dtype).unwrap()
        }),
    ];
    for (name, tiling) in tilings {
        let k32 = tiling(DType::F32).items;
        let k64 = tiling(DType::F64).items;
        println!("{name} tiling (K = {k32} f32, {k64} f64; {limit} bytes of workgroup memory):");
        let report = scan_suite(&b, &TILED_SCANS, 1_000_003.0, &|acc, dtype| {
            ScanPath::Tiled(acc, tiling(dtype))
        });
        for (kind, worst) in report {
            println!("  {kind}: worst error {worst:.3} of the bound");
        }
    }
    // And through the backend (its own path: the tiled one on a GPU).
    let report = scan_suite(&b, &TILED_SCANS, 1_000_003.0, &|acc, _| match acc {
        Accumulation::Double => ScanPath::Call,
        Accumulation::Compensated => ScanPath::Direct(acc),
    });
    for (kind, worst) in report {
        println!("backend's path: {kind}: worst error {worst:.3} of the bound");
    }
}

#[test]
fn tiled_scans_decline_what_they_do_not_take() {
    let Some((_g, b)) = adapter() else { return };
    let dev = b.device().unwrap();
    let modules = Modules::default();
    let shape = Shape::new(vec![3, 4]);
    let buf = dev.upload(&values(12, DType::F32, 1)).unwrap();
    let acc = Accumulation::Compensated;
    let good = Tiling::of(dev, DType::F32).unwrap();
    let cases = [
        // Interleaved lanes (inner = 3).
        (Some(1), good),
        (Some(2), good),
        (None, Tiling { items: 3, ..good }),
        (None, Tiling { items: 32, ..good }),
        (None, Tiling { items: 0, ..good }),
        (
            None,
            Tiling {
                target_pieces: 0,
                ..good
            },
        ),
    ];
    for (axis, tiling) in cases {
        let out = scan_out_shape(&shape, axis);
        let got = scan::tiles::scan(
            dev,
            &modules,
            (&buf, &shape),
            (false, axis),
            (&out, DType::F32),
            acc,
            tiling,
        );
        let err = got.err().unwrap_or_else(|| panic!("{axis:?} {tiling:?}"));
        println!("{axis:?} {tiling:?}: {err}");
    }
    assert_eq!(probe_backend("wgpu", false), Health::Healthy);
}

#[test]
fn cumsum_runs_on_wgpu_through_the_runtime() {
    let Some((_g, _b)) = adapter() else { return };
    check_cumsum_through_the_runtime("wgpu");
}

#[test]
fn cumprod_never_overflows_on_the_way_on_wgpu() {
    let Some((_g, b)) = adapter() else { return };
    use gearbox_core::runtime::Backend;
    let dev = b.device().unwrap();
    let wide = gearbox_wgpu::device::has_64_bit(dev.features);
    // f32 products stay with the CPU on hardware adapters (the backend's
    // unsupported list).
    let dtypes: Vec<DType> = b
        .capabilities()
        .dtypes
        .iter()
        .copied()
        .filter(|&d| dev.cpu_adapter || d != DType::F32)
        .collect();
    check_cumprod_through_the_runtime("wgpu", &dtypes, Accumulation::of(wide));
}
