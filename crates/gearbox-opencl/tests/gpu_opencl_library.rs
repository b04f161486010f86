//! The OpenCL backend's random streams (`rand`, `randn`) on whatever
//! device this machine has (pocl in CI), compared with the CPU's streams,
//! what the library declines, and library calls through the runtime (takes
//! and permutes of resident arrays among them). Scans
//! are in `gpu_opencl_scan.rs`, products in `gpu_opencl_gemm.rs`. Without a device the
//! tests print `SKIP: <reason>` and pass, unless
//! `GEARBOX_REQUIRE_OPENCL=1`.

mod common;
mod library;

use gearbox_core::runtime::backend::LibraryCall;
use gearbox_core::runtime::registry::probe_backend;
use gearbox_core::runtime::testing::gpu::{
    check_rand_streams, on_cpu, run, ulps, values, RAND_STREAMS,
};
use gearbox_core::runtime::{metrics, Health};
use gearbox_core::{Array, DType, Shape};
use gearbox_opencl::library::random;
use gearbox_opencl::OpenClBackend;
use library::{device, with_lib};

/// Start offsets: small, just below the index's high word (the carry
/// into it), and past it.
const STARTS: [u64; 3] = [5, (1 << 32) - 3, 7 << 32];

/// Ten values of the uniform (or, when `normal`, the normal) stream of
/// `seed` from `start` on: the device's and the CPU's.
fn from_start(b: &OpenClBackend, (seed, normal): (u64, bool), start: u64) -> (Vec<f64>, Vec<f64>) {
    let got = with_lib(b, |lib| {
        let y = random::stream(lib, (seed, normal), start, 10).unwrap();
        lib.dev.download(&y).unwrap().to_f64_vec().unwrap()
    });
    let mut want = vec![0.0; 10];
    match normal {
        true => gearbox_core::random::fill_normal(seed, start, &mut want),
        false => gearbox_core::random::fill_uniform(seed, start, &mut want),
    }
    (got, want)
}

#[test]
fn rand_is_bit_identical_to_the_cpu() {
    let Some((_g, b)) = device() else { return };
    if !b.device().unwrap().fp64 {
        println!("SKIP: the device has no cl_khr_fp64");
        return;
    }
    check_rand_streams(&*b, &RAND_STREAMS);
    for start in STARTS {
        let (got, want) = from_start(&b, (9, false), start);
        assert_eq!(got, want, "start {start}");
    }
}

/// How far (in units in the last place of the CPU's value) the normal
/// stream may be from the CPU's. Both sides compute `sqrt(-2 ln u1) cos(2π
/// u2)` from the same exact `u1`, `u2` and `2π u2`, `sqrt` and the
/// products correctly rounded; OpenCL allows a double `log` 3 ulps and
/// `cos` 4, libm's are within 1: each side is within about 5.5 and 2.5 *
/// 2^-52 relative of the exact value, so the two within 8 * 2^-52 (up to
/// 16 ulps just below a power of two). pocl's and NVIDIA's `log` and `cos`
/// are within about an ulp, which leaves the values a few ulps apart.
const RANDN_ULPS: f64 = 16.0;

#[test]
fn randn_is_within_a_few_ulps_of_the_cpu() {
    let Some((_g, b)) = device() else { return };
    if !b.device().unwrap().fp64 {
        println!("SKIP: the device has no cl_khr_fp64");
        return;
    }
    let mut worst: f64 = 0.0;
    let mut exact = 0;
    let mut total = 0;
    let mut check = |got: &[f64], want: &[f64], case: &str| {
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            let off = ulps(g, w);
            assert!(
                off <= RANDN_ULPS,
                "{case} [{i}]: {g:e} vs {w:e} ({off:.1} ulps)"
            );
            worst = worst.max(off);
            exact += (g == w) as usize;
        }
        total += got.len();
    };
    for (n, seed) in RAND_STREAMS {
        let out = Shape::new(vec![n]);
        let call = LibraryCall::Random { seed, normal: true };
        let got = run(&*b, call, &[], (&out, DType::F64)).unwrap();
        let mut want = vec![0.0; n];
        gearbox_core::random::fill_normal(seed, 0, &mut want);
        check(&got.to_f64_vec().unwrap(), &want, &format!("seed {seed}"));
    }
    for start in STARTS {
        let (got, want) = from_start(&b, (3, true), start);
        check(&got, &want, &format!("start {start}"));
    }
    println!("randn: {exact} of {total} bit-identical, worst {worst:.2} ulps");
}

#[test]
fn random_calls_decline_what_they_do_not_take() {
    let Some((_g, b)) = device() else { return };
    let shape = Shape::new(vec![3, 4]);
    for normal in [false, true] {
        let call = LibraryCall::Random { seed: 1, normal };
        let err = run(&*b, call, &[], (&shape, DType::F32)).unwrap_err();
        assert!(err.to_string().contains("random arrays are f64"), "{err}");
    }
    // A call the backend does not offer.
    let host = values(9, DType::F64, 1);
    let square = Shape::new(vec![3, 3]);
    let err = run(
        &*b,
        LibraryCall::Cholesky,
        &[(&host, &square)],
        (&square, DType::F64),
    );
    assert!(err.unwrap_err().to_string().contains("offers no cholesky"));
    assert_eq!(probe_backend("opencl", false), Health::Healthy);
}

#[test]
fn library_calls_run_on_opencl_through_the_runtime() {
    let Some((_g, b)) = device() else { return };
    if !b.device().unwrap().fp64 {
        println!("SKIP: the device has no cl_khr_fp64");
        return;
    }
    gearbox_core::runtime::fallback_log_reset();
    let before = metrics().of("opencl").compute.count;
    let u = Array::rand([5000], 11).unwrap();
    let z = Array::randn([300, 20], 12).unwrap();
    let sums = z.cumsum_axis(0).unwrap();
    let (got_u, got_s) = (u.to_f64_vec().unwrap(), sums.to_f64_vec().unwrap());
    let ran = metrics().of("opencl").compute.count - before;
    assert!(
        ran >= 3,
        "only {ran} pieces of work ran on opencl: {:?}",
        gearbox_core::runtime::fallback_log()
    );
    let want_u = on_cpu(|| Array::rand([5000], 11)?.to_f64_vec()).unwrap();
    assert_eq!(got_u, want_u);
    let want_s = on_cpu(|| Array::randn([300, 20], 12)?.cumsum_axis(0)?.to_f64_vec()).unwrap();
    for (i, (g, w)) in got_s.iter().zip(&want_s).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "[{i}]: {g} vs {w}"
        );
    }
}

#[test]
fn takes_of_resident_arrays_gather_on_the_device() {
    let Some((_g, b)) = device() else { return };
    use gearbox_core::runtime::Backend;
    let dtypes = b.capabilities().dtypes;
    gearbox_core::runtime::testing::gpu::check_take_of_resident_arrays("opencl", &dtypes);
}

#[test]
fn reductions_of_resident_arrays_run_on_the_device() {
    let Some((_g, b)) = device() else { return };
    use gearbox_core::runtime::Backend;
    let dtypes = b.capabilities().dtypes;
    gearbox_core::runtime::testing::reductions::check_reductions_of_resident_arrays(
        "opencl", &dtypes,
    );
}

#[test]
fn permutes_of_resident_arrays_copy_on_the_device() {
    let Some((_g, b)) = device() else { return };
    use gearbox_core::runtime::Backend;
    let dtypes = b.capabilities().dtypes;
    gearbox_core::runtime::testing::permutes::check_permutes_of_resident_arrays("opencl", &dtypes);
    gearbox_core::runtime::testing::permutes::check_permute_calls(b.as_ref(), &dtypes);
}

#[test]
fn no_op_leaves_the_device_without_a_declared_reason() {
    let Some((_g, b)) = device() else { return };
    use gearbox_core::runtime::Backend;
    let dtypes = b.capabilities().dtypes;
    gearbox_core::runtime::testing::host_trips::check_no_silent_host_trips("opencl", &dtypes);
}
