//! The OpenCL backend's scans (`cumsum`, `cumprod`) on whatever device
//! this machine has (pocl in CI), against a float64 reference on the CPU:
//! every path (chunked for any layout, tiled and the one pass for
//! contiguous lanes) with both accumulations (double, compensated float),
//! the backend's own choice, many contiguous lanes on the one pass (which
//! a GPU takes by itself and a CPU device only when forced), the product's
//! cheaper steps against the rule as first written, bit for bit, what the
//! scans decline, and scans through the runtime (`cumprod` of 1-D, 2-D
//! and 3-D arrays along every axis, with factors that overflow on the way,
//! zeros, NaN and infinities). Without a device the tests print
//! `SKIP: <reason>` and pass, unless `GEARBOX_REQUIRE_OPENCL=1`.

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
use gearbox_core::{DType, HostBuffer, Shape};
use gearbox_opencl::launch::Arg;
use gearbox_opencl::library::scan::{self, Accumulation, Path};
use gearbox_opencl::library::GROUP;
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
    cases: &[(&[usize], Option<usize>)],
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
        if matches!(how, How::Direct(_, Path::Tiled | Path::OnePass)) && layout.0 != 1 {
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
    for path in [Path::Chunked, Path::Tiled, Path::OnePass] {
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

/// `cumsum` and `cumprod` of `len x lanes` arrays along axis 0 (`lanes`
/// contiguous lanes of `len` values), just more lanes than the one pass
/// takes on a GPU of this device's compute units ([`scan::path`]), lanes
/// shorter than a tile, of one f32 tile, just over one and of several,
/// on the one pass with every accumulation and through the backend's call
/// (the one pass on a GPU, the chunked path on a CPU device), f32 and f64,
/// against the CPU's float64 path: sums to rounding, products (factors
/// that wander out of range and back, far out of range, and special ones)
/// within `scan_product::tolerance`.
#[test]
fn many_contiguous_lanes_take_one_pass() {
    let Some((_g, b)) = device() else { return };
    let dev = b.device().unwrap();
    let (fp64, cus) = (dev.fp64, dev.compute_units);
    let lanes = scan::LANE_GROUPS_PER_CU * cus as usize + 1;
    let f32_ulp = f32::EPSILON as f64 / 2.0;
    let double_f32 = (f32_ulp, 1e-13);
    let double_f64 = (0.0, 64.0 * f64::EPSILON / 2.0);
    let kahan = (2.0 * f32_ulp, 2.0 * 9000.0 * f32_ulp * f32_ulp);
    let mut count = 0;
    for len in [257, 4096, 4097, 9000] {
        assert_eq!(scan::path(1, len, lanes, cus, false), Path::OnePass);
        let auto = scan::path(1, len, lanes, cus, dev.cpu);
        assert_eq!(
            auto,
            if dev.cpu {
                Path::Chunked
            } else {
                Path::OnePass
            }
        );
        let dims = [len, lanes];
        let case = [(&dims[..], Some(0))];
        for product in [false, true] {
            let mut runs = vec![(DType::F32, Accumulation::Compensated, kahan)];
            if fp64 {
                runs.push((DType::F32, Accumulation::Double, double_f32));
                runs.push((DType::F64, Accumulation::Double, double_f64));
            }
            for &(dtype, acc, bounds) in &runs {
                let how = How::Direct(acc, Path::OnePass);
                count += scan_cases(&b, &case, (product, dtype), how, bounds).1;
            }
            let own = if fp64 { double_f32 } else { kahan };
            count += scan_cases(&b, &case, (product, DType::F32), How::Call, own).1;
        }
    }
    println!(
        "{count} cases of {lanes} lanes; the backend's own path {:?}",
        { scan::path(1, 9000, lanes, cus, dev.cpu) }
    );
}

/// The rule of the scaled product as first written (every rescale testing
/// zero and non-finite mantissas first, no common case), in OpenCL C after
/// a product's scan source, and a kernel counting, for running values
/// built from each mantissa of `ms` at exponents -5 to 5, the rescales,
/// values and steps (by each factor of `xs`) whose bits differ from the
/// rule's. `BITS_R`, `BITS_E` and `BITS_V` give the bits of a mantissa, an
/// exponent and a value.
const RULE: &str = "
static gb_acc ref_rescale(GB_REAL m, GB_EXP e) {
  gb_acc r;
  r.m = m;
  r.e = e;
  if (m == (GB_REAL)0 || !(fabs(m) <= GB_MAX)) r.e = 0;
  else if (fabs(m) > GB_S) { r.m = m * GB_INV; r.e = e + 1; }
  else if (fabs(m) < GB_INV) { r.m = m * GB_S; r.e = e - 1; }
  return r;
}
static gb_acc ref_of(GB_REAL x) { gb_acc r = ref_rescale(x, 0); return ref_rescale(r.m, r.e); }
static gb_acc ref_join(gb_acc a, gb_acc b) { return ref_rescale(a.m * b.m, a.e + b.e); }
static gb_elem ref_value(gb_acc a) {
  GB_REAL x = a.m;
  if (a.e > 3) return (gb_elem)(x * (GB_REAL)INFINITY);
  if (a.e < -3) return (gb_elem)(x * (GB_REAL)0);
  for (GB_EXP e = a.e; e > 0; e -= 1) x *= GB_S;
  for (GB_EXP e = a.e; e < 0; e += 1) x *= GB_INV;
  return (gb_elem)x;
}
static long differ(gb_acc a, gb_acc b) { return BITS_R(a.m) != BITS_R(b.m) || BITS_E(a.e) != BITS_E(b.e); }
__kernel void check_steps(__global const GB_REAL* ms, long nm, __global const gb_elem* xs, long nx,
                          __global long* bad) {
  long i = get_global_id(0);
  if (i >= nm * 11) return;
  GB_REAL m = ms[i / 11];
  GB_EXP de = (GB_EXP)(i % 11 - 5);
  long n = differ(gb_rescale(m, de), ref_rescale(m, de));
  gb_acc a = ref_of(m);
  if (!(a.m == (GB_REAL)0 || !(fabs(a.m) <= GB_MAX))) a.e += de;
  n += BITS_V(gb_value(a)) != BITS_V(ref_value(a));
  for (long j = 0; j < nx; ++j) n += differ(gb_step(a, xs[j]), ref_join(a, ref_of((GB_REAL)xs[j])));
  bad[i] = n;
}
";

/// Factors of every magnitude of `dtype` (its subnormals to its largest
/// value, mantissas 1, just over 1, 1.75 and just under 2, every
/// `stride`th power of two), the edges of the units `2^±400` and `2^±60`
/// (each side of them), both signs, zeros, infinities and NaN.
fn magnitudes(dtype: DType, stride: usize) -> Vec<f64> {
    let pow2 = |p: i32| 2f64.powi(p / 2) * 2f64.powi(p - p / 2);
    let (lo, hi, ulp) = match dtype {
        DType::F64 => (-1074, 1023, f64::EPSILON),
        _ => (-149, 127, f32::EPSILON as f64),
    };
    let mut xs = vec![0.0, f64::INFINITY, f64::NAN, 1.0, 3.0];
    for k in [400, 60] {
        for s in [pow2(k), pow2(-k)] {
            xs.extend([s, 2.0 * s, 0.5 * s, s * (1.0 + ulp), s * (1.0 - ulp / 2.0)]);
        }
    }
    for p in (lo..=hi).step_by(stride) {
        for f in [1.0, 1.0 + ulp, 1.75, 2.0 - ulp] {
            xs.push(f * pow2(p));
        }
    }
    xs.extend([f64::MAX, f64::from_bits(1), f64::MIN_POSITIVE]);
    xs.extend([
        f32::MAX as f64,
        f32::from_bits(1) as f64,
        f32::MIN_POSITIVE as f64,
    ]);
    let negated: Vec<f64> = xs.iter().map(|x| -x).collect();
    xs.extend(negated);
    xs
}

/// `xs` as a buffer of `dtype` (f32 values rounded from them).
fn buffer(xs: &[f64], dtype: DType) -> HostBuffer {
    match dtype {
        DType::F64 => HostBuffer::from_vec(xs.to_vec()),
        _ => HostBuffer::from_vec(xs.iter().map(|&x| x as f32).collect::<Vec<f32>>()),
    }
}

/// The product's cheaper steps (`gb_rescale` and `gb_value` with their
/// common case first, `gb_step` for f32 and f64 data, with each
/// accumulation) give the bits of the rule as first written ([`RULE`]) for
/// running values and factors of every magnitude, sign and kind, on the
/// device.
#[test]
fn the_cheap_product_steps_keep_the_rules_bits() {
    let Some((_g, b)) = device() else { return };
    let fp64 = b.device().unwrap().fp64;
    let mut combos = vec![(DType::F32, Accumulation::Compensated)];
    if fp64 {
        combos.push((DType::F32, Accumulation::Double));
        combos.push((DType::F64, Accumulation::Double));
    }
    for (elem, acc) in combos {
        // The mantissas' dtype: double for double accumulation.
        let real = if acc == Accumulation::Double {
            DType::F64
        } else {
            DType::F32
        };
        let ms = magnitudes(real, if real == DType::F64 { 7 } else { 3 });
        let xs = magnitudes(elem, if elem == DType::F64 { 7 } else { 3 });
        let bits = |t: DType| {
            if t == DType::F64 {
                "as_ulong"
            } else {
                "as_uint"
            }
        };
        let exp_bits = if real == DType::F64 { "as_ulong" } else { "" };
        let defines = format!(
            "#define BITS_R {}\n#define BITS_E {exp_bits}\n#define BITS_V {}\n",
            bits(real),
            bits(elem)
        );
        let items = ms.len() * 11;
        let bad = with_lib(&b, |lib| {
            let key = format!("scan-steps-{elem}-{}", acc.name());
            let src = || format!("{}{defines}{RULE}", scan::source(elem, acc, true));
            let program = lib.program(&key, src, &["check_steps"]).unwrap();
            let m = lib.dev.upload(&buffer(&ms, real)).unwrap();
            let x = lib.dev.upload(&buffer(&xs, elem)).unwrap();
            let out = lib.dev.alloc(items, DType::I64).unwrap();
            let long = |v: usize| Arg::Long(v as i64);
            let args = [
                Arg::Buf(&m),
                long(ms.len()),
                Arg::Buf(&x),
                long(xs.len()),
                Arg::Buf(&out),
            ];
            let kernel = program.kernel("check_steps").unwrap();
            let global = items.div_ceil(GROUP) * GROUP;
            lib.dev
                .enqueue(&kernel, &args, [global, 1], [GROUP, 1])
                .unwrap();
            drop(kernel);
            lib.dev.download(&out).unwrap().to_vec::<i64>().unwrap()
        });
        let checked = items * (2 + xs.len());
        let bad: i64 = bad.iter().sum();
        println!("{elem} data, {acc:?}: {checked} rescales, values and steps");
        assert!(checked > 1_000_000);
        assert_eq!(
            bad, 0,
            "{elem} {acc:?}: {bad} of {checked} differ from the rule"
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
