//! What the GPU backends' device tests share (the OpenCL and wgpu crates'
//! `tests/`): the setup that forces a backend and skips without a device
//! ([`UnderTest`]), the checks every backend passes the same way (its
//! status row, the conformance suite, products and scans through the
//! runtime), and the helpers of the library-call tests: reproducible
//! values, the CPU as reference, a call run on a backend directly, and the
//! float64 references and error bounds of products and scans.
//!
//! Test support only: nothing here runs outside tests and benches. The
//! helpers panic on a failed check, as assertions do.

use std::sync::{Mutex, MutexGuard};

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::precision::Precision;
use crate::runtime::backend::{Backend, DeviceArc, DeviceBuffer, LibraryCall};
use crate::runtime::registry::probe_backend;
use crate::runtime::{
    fallback_log, fallback_log_reset, gpu_status, metrics, options, set_options, Health,
    RuntimeOptions,
};
use crate::shape::Shape;
use crate::Array;

static LOCK: Mutex<()> = Mutex::new(());

/// The test binary's lock: tests change process-wide options (the forced
/// backend), so a binary's device tests run one at a time.
pub fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A GPU backend under test, and how its tests name what it runs on.
#[derive(Debug, Clone, Copy)]
pub struct UnderTest {
    /// Its registered name (`"opencl"`).
    pub backend: &'static str,
    /// What drives it, in messages (`"OpenCL"`).
    pub kind: &'static str,
    /// What it runs on, in messages (`"device"`, `"adapter"`).
    pub noun: &'static str,
    /// The variable that makes a missing device a failure
    /// (`"GEARBOX_REQUIRE_OPENCL"`; CI and `scripts/gpu.sh` set it to 1).
    pub require: &'static str,
}

impl UnderTest {
    /// Forces the backend (quietly) and probes it: whether it is healthy.
    /// Without a usable device it prints `SKIP: no usable <kind> <noun>:
    /// <why>` and says no, unless [`UnderTest::require`] is set to 1: then
    /// it panics.
    pub fn forced_and_healthy(&self) -> bool {
        set_options(RuntimeOptions {
            quiet: true,
            force_backend: Some(self.backend.into()),
            ..RuntimeOptions::from_env()
        });
        if probe_backend(self.backend, false) == Health::Healthy {
            return true;
        }
        let row = gpu_status()
            .rows
            .into_iter()
            .find(|r| r.backend == self.backend);
        let why = row.map_or(format!("{} not registered", self.backend), |r| r.reason);
        let (kind, noun) = (self.kind, self.noun);
        assert!(
            std::env::var(self.require).as_deref() != Ok("1"),
            "{}=1 but no usable {kind} {noun}: {why}",
            self.require
        );
        println!("SKIP: no usable {kind} {noun}: {why}");
        false
    }

    /// Checks the backend's status row: installed and registered; a usable
    /// device has a name, an unusable one a reason that mentions `driver`
    /// or [`UnderTest::noun`].
    pub fn check_status_row(&self, driver: &str) {
        let row = gpu_status()
            .rows
            .into_iter()
            .find(|r| r.backend == self.backend)
            .unwrap_or_else(|| panic!("a row for {}", self.backend));
        assert!(row.installed && row.registered, "{row:?}");
        if row.available {
            let device = row
                .device
                .as_ref()
                .unwrap_or_else(|| panic!("the {}", self.noun));
            println!("device: {}", device.name);
            assert!(!device.name.is_empty());
        } else {
            println!("no {}: {}", self.noun, row.reason);
            assert!(
                row.reason.contains(driver) || row.reason.contains(self.noun),
                "{}",
                row.reason
            );
        }
    }

    /// Runs the shared conformance suite on the forced, healthy backend:
    /// no case may differ from the CPU, more than 100 pieces of work must
    /// run on the backend, and none of the work it accepted may fall back
    /// (a failure would fall back to the CPU unseen by the comparison).
    /// `show` prints what the device is, once the counters are read.
    pub fn check_conformance(&self, show: impl FnOnce()) {
        let b = self.backend;
        let before = metrics().of(b).compute.count;
        fallback_log_reset();
        show();
        let report = crate::conformance::check(crate::conformance::Target::Backend(b))
            .expect("the suite runs");
        let ran = metrics().of(b).compute.count - before;
        let shown: Vec<String> = report
            .mismatches
            .iter()
            .take(40)
            .map(|m| format!("{}: {}", m.case, m.detail))
            .collect();
        println!(
            "conformance on {b}: {} cases, {} differ, {ran} kernels ran on the {}",
            report.cases,
            report.mismatches.len(),
            self.noun
        );
        assert!(report.mismatches.is_empty(), "{}", shown.join("\n"));
        assert!(ran > 100, "only {ran} pieces of work ran on {b}");
        let failed: Vec<String> = fallback_log()
            .into_iter()
            .filter(|e| e.from_backend == b)
            .map(|e| format!("{}: {}", e.op, e.reason))
            .collect();
        assert!(
            failed.is_empty(),
            "{} fell back:\n{}",
            failed.len(),
            failed.join("\n")
        );
    }
}

/// Pieces of work `backend` has run in this process.
pub fn work_on(backend: &str) -> u64 {
    metrics().of(backend).compute.count
}

/// Checks that `backend` ran work since its count was `before`
/// ([`work_on`]); else names `what` and the fallbacks.
pub fn assert_ran_on(backend: &str, before: u64, what: &str) {
    assert!(
        work_on(backend) > before,
        "{what} did not run on {backend}: {:?}",
        fallback_log()
    );
}

/// `f` with every piece of work sent to `backend`.
pub fn forced<T>(backend: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let before = options();
    set_options(RuntimeOptions {
        force_backend: Some(backend.into()),
        ..before.clone()
    });
    let out = f();
    set_options(before);
    out
}

/// `f` with the CPU alone (the reference).
pub fn on_cpu<T>(f: impl FnOnce() -> T) -> T {
    let before = options();
    set_options(RuntimeOptions {
        force_backend: None,
        optional_backends: false,
        ..before.clone()
    });
    let out = f();
    set_options(before);
    out
}

/// `n` reproducible values of `dtype` from `seed`, never zero: floats in
/// `[-2, 2)`, integers in `-7..=7`, bools mixed.
pub fn values(n: usize, dtype: DType, seed: u64) -> HostBuffer {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let floats: Vec<f64> = (0..n)
        .map(|_| match 4.0 * next() - 2.0 {
            v if v.abs() < 1e-3 => 0.5,
            v => v,
        })
        .collect();
    match dtype {
        DType::F64 => HostBuffer::F64(floats),
        DType::F32 => HostBuffer::F32(floats.iter().map(|&v| v as f32).collect()),
        DType::I64 => HostBuffer::I64(
            floats
                .iter()
                .map(|&v| match (v * 3.75).round() as i64 {
                    0 => 3,
                    k => k,
                })
                .collect(),
        ),
        DType::Bool => HostBuffer::Bool(floats.iter().map(|&v| v > 0.0).collect()),
    }
}

/// An array of `host` values in `shape`.
pub fn array(shape: &Shape, host: &HostBuffer) -> Array {
    Array::from_buffer(shape.clone(), host.clone()).unwrap()
}

/// `x` converted to `dtype` on `backend` (forced), so that the device
/// holds its only copy: work on it that fell back to the host would have
/// to download it. Panics if a host copy exists.
pub fn device_only(backend: &str, x: &Array, dtype: DType) -> Array {
    let d = forced(backend, || {
        let d = x.astype(dtype)?;
        d.eval()?;
        Ok(d)
    })
    .unwrap();
    assert!(
        d.host_value().is_none(),
        "{} {dtype} on {backend}: a host copy",
        x.shape()
    );
    d
}

/// An f32 array in fast precision of `values` (rounded from f64) in
/// `dims`, evaluated.
pub fn fast_f32(dims: impl Into<Shape>, values: Vec<f64>) -> Array {
    let x = Array::from_vec(dims, values)
        .unwrap()
        .astype(DType::F32)
        .unwrap()
        .with_precision(Precision::Fast)
        .unwrap();
    x.eval().unwrap();
    x
}

/// Runs `call` on backend `b` directly with `inputs` uploaded; the result,
/// downloaded (after checking that it is `b`'s and of `out`'s size and
/// dtype).
pub fn run(
    b: &dyn Backend,
    call: LibraryCall,
    inputs: &[(&HostBuffer, &Shape)],
    out: (&Shape, DType),
) -> Result<HostBuffer> {
    let bufs: Vec<DeviceArc> = inputs
        .iter()
        .map(|(h, _)| b.upload(h))
        .collect::<Result<_>>()?;
    let args: Vec<(&dyn DeviceBuffer, &Shape)> = bufs
        .iter()
        .zip(inputs)
        .map(|(d, (_, s))| (d.as_ref(), *s))
        .collect();
    let y = b.library_call(call, &args, out)?;
    assert_eq!(y.backend(), b.name());
    assert_eq!((y.len(), y.dtype()), (out.0.numel(), out.1));
    b.download(y.as_ref())
}

/// Lengths and seeds of the random streams the tests check.
pub const RAND_STREAMS: [(usize, u64); 3] = [(1, 41), (1000, 7), (100_003, 0x0123_4567_89ab_cdef)];

/// Checks that `rand` on backend `b` is the CPU's stream, bit for bit, for
/// every length and seed of `streams`.
pub fn check_rand_streams(b: &dyn Backend, streams: &[(usize, u64)]) {
    for &(n, seed) in streams {
        let out = Shape::new(vec![n]);
        let call = LibraryCall::Random {
            seed,
            normal: false,
        };
        let got = run(b, call, &[], (&out, DType::F64)).unwrap();
        let mut want = vec![0.0; n];
        crate::random::fill_uniform(seed, 0, &mut want);
        assert_eq!(got, HostBuffer::F64(want), "rand n={n} seed {seed}");
    }
}

/// How many units in the last place of `want` `got` is off by.
pub fn ulps(got: f64, want: f64) -> f64 {
    if got == want {
        return 0.0;
    }
    let scale = want.abs().max(f64::MIN_POSITIVE).log2().floor();
    (got - want).abs() / (f64::EPSILON * scale.exp2())
}

/// The three GEMM library calls.
pub const GEMM_CALLS: [LibraryCall; 3] = [
    LibraryCall::Matmul,
    LibraryCall::Crossprod,
    LibraryCall::Tcrossprod,
];

/// Operand shapes of `call` for an `m x n` result with inner dimension `k`.
pub fn gemm_shapes(call: LibraryCall, m: usize, k: usize, n: usize) -> (Shape, Shape) {
    let a = match call {
        LibraryCall::Crossprod => vec![k, m],
        _ => vec![m, k],
    };
    let b = match call {
        LibraryCall::Tcrossprod => vec![n, k],
        _ => vec![k, n],
    };
    (Shape::new(a), Shape::new(b))
}

/// The f64 product of `call` on column-major `a` and `b` (`m x n` result,
/// inner dimension `k`), and per element `Σ_p |a_p b_p|`.
pub fn gemm_reference<T: Copy + Into<f64>>(
    call: LibraryCall,
    (m, k, n): (usize, usize, usize),
    a: &[T],
    b: &[T],
) -> (Vec<f64>, Vec<f64>) {
    let at = |i: usize, p: usize| -> f64 {
        match call {
            LibraryCall::Crossprod => a[p + i * k],
            _ => a[i + p * m],
        }
        .into()
    };
    let bt = |p: usize, j: usize| -> f64 {
        match call {
            LibraryCall::Tcrossprod => b[j + p * n],
            _ => b[p + j * k],
        }
        .into()
    };
    let mut c = vec![0.0; m * n];
    let mut size = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            let (mut s, mut t) = (0.0, 0.0);
            for p in 0..k {
                let x = at(i, p) * bt(p, j);
                s += x;
                t += x.abs();
            }
            c[i + j * m] = s;
            size[i + j * m] = t;
        }
    }
    (c, size)
}

/// Checks `got` against the reference within `2 k u Σ|a b|`, `u` the unit
/// roundoff of the dtype computed in; the worst error as a fraction of
/// that bound.
pub fn assert_gemm_close(
    case: &str,
    got: &[f64],
    want: &[f64],
    size: &[f64],
    k: usize,
    u: f64,
) -> f64 {
    assert_eq!(got.len(), want.len(), "{case}: length");
    let mut worst: f64 = 0.0;
    for (i, ((&g, &w), &s)) in got.iter().zip(want).zip(size).enumerate() {
        let tol = 2.0 * k.max(1) as f64 * u * s;
        let err = (g - w).abs();
        assert!(
            err <= tol,
            "{case}: element {i}: {g} vs {w} (tolerance {tol:e})"
        );
        if tol > 0.0 {
            worst = worst.max(err / tol);
        }
    }
    worst
}

/// Checks `crossprod(x, x)` on backend `b` as the runtime sends it, one
/// buffer bound to both operands: `x` holds the values (f32 ones) of a
/// 300 x 130 matrix.
pub fn check_crossprod_of_one_buffer<T: Copy + Into<f64>>(b: &dyn Backend, x: &[T]) {
    let values: Vec<f64> = x.iter().map(|&v| v.into()).collect();
    let host = HostBuffer::F64(values).cast(DType::F32).unwrap();
    let dx = b.upload(&host).unwrap();
    let shape = Shape::new(vec![300, 130]);
    let out = Shape::new(vec![130, 130]);
    let c = b
        .library_call(
            LibraryCall::Crossprod,
            &[(&*dx, &shape), (&*dx, &shape)],
            (&out, DType::F32),
        )
        .unwrap();
    let got = b.download(&*c).unwrap().to_f64_vec().unwrap();
    let (want, size) = gemm_reference(LibraryCall::Crossprod, (130, 300, 130), x, x);
    let u = f32::EPSILON as f64 / 2.0;
    assert_gemm_close("crossprod(x, x)", &got, &want, &size, 300, u);
}

/// The products the runtime sends to the forced `backend`: `matmul`,
/// `crossprod`, `tcrossprod` and a matrix times a column, of operands made
/// by `f32_array` (dims and seed), evaluated. Checks that none fell back
/// and that they ran on the backend.
pub fn runtime_products(backend: &str, f32_array: impl Fn([usize; 2], u64) -> Array) -> [Array; 4] {
    let (a, b) = (f32_array([70, 40], 1), f32_array([40, 90], 2));
    let v = a.matmul(&f32_array([40, 1], 3)).unwrap();
    fallback_log_reset();
    let ran = work_on(backend);
    let results = [
        a.matmul(&b).unwrap(),
        a.crossprod(&a).unwrap(),
        b.tcrossprod(&b).unwrap(),
        v,
    ];
    for r in &results {
        r.eval().unwrap();
    }
    let fallbacks: Vec<_> = fallback_log()
        .into_iter()
        .filter(|e| e.op.contains("prod") || e.op.contains("matmul"))
        .collect();
    assert!(fallbacks.is_empty(), "{fallbacks:?}");
    assert!(
        work_on(backend) >= ran + 4,
        "the products did not run on {backend}"
    );
    results
}

/// One scan case: a shape and an axis (`None`: the flattening).
pub type ScanCase = (&'static [usize], Option<usize>);

/// The shape of a scan's result: the input's, or a vector for the
/// flattening.
pub fn scan_out_shape(shape: &Shape, axis: Option<usize>) -> Shape {
    match axis {
        None => Shape::new(vec![shape.numel()]),
        Some(_) => shape.clone(),
    }
}

/// The CPU's cumulative sum (or product, when `product`) of `x` in
/// `shape` along `axis`, in f64.
pub fn scan_reference(shape: &Shape, axis: Option<usize>, product: bool, x: &[f64]) -> Vec<f64> {
    let reference = array(shape, &HostBuffer::F64(x.to_vec()));
    on_cpu(|| {
        match (product, axis) {
            (false, None) => reference.cumsum(),
            (false, Some(a)) => reference.cumsum_axis(a),
            (true, None) => reference.cumprod(),
            (true, Some(a)) => reference.cumprod_axis(a),
        }?
        .to_f64_vec()
    })
    .unwrap()
}

/// The worst of `|got - want| / bound` over a scan's results, where the
/// bound for each position is `rel * |want| + abs * mass`, `mass` being the
/// running sum of `|x|` of its lane (the scale of a sum's rounding errors).
pub fn scan_error(
    x: &[f64],
    (inner, len, outer): (usize, usize, usize),
    got: &[f64],
    want: &[f64],
    (rel, abs): (f64, f64),
) -> f64 {
    let mut worst: f64 = 0.0;
    for o in 0..outer {
        for i in 0..inner {
            let mut mass = 0.0;
            for k in 0..len {
                let at = i + inner * (k + len * o);
                mass += x[at].abs();
                let bound = rel * want[at].abs() + abs * mass;
                worst = worst.max((got[at] - want[at]).abs() / bound);
            }
        }
    }
    worst
}

/// Checks that `cumsum` of a 257 x 5 f32 array, flattened and along each
/// axis, runs on the forced `backend` through the runtime and matches the
/// CPU's to `1e-6` relative.
pub fn check_cumsum_through_the_runtime(backend: &str) {
    let shape = Shape::new(vec![257, 5]);
    let host = values(shape.numel(), DType::F32, 3);
    let x = array(&shape, &host);
    for axis in [None, Some(0), Some(1)] {
        let scan = |x: &Array| match axis {
            None => x.cumsum(),
            Some(a) => x.cumsum_axis(a),
        };
        let before = work_on(backend);
        let got: Vec<f32> = scan(&x).unwrap().to_vec().unwrap();
        assert_ran_on(backend, before, &format!("cumsum {axis:?}"));
        let want: Vec<f32> = on_cpu(|| scan(&x)?.to_vec()).unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-6 * w.abs().max(1.0),
                "axis {axis:?} [{i}]: {g} vs {w}"
            );
        }
    }
}

/// Positions for a take along an axis of `len`: every position twice in a
/// scrambled order, the axis reversed, none, and the last alone (none
/// when the axis is empty).
pub fn take_positions(len: usize, seed: u64) -> Vec<Vec<usize>> {
    if len == 0 {
        return vec![Vec::new()];
    }
    let mut state = seed | 1;
    let scrambled = (0..2 * len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % len
        })
        .collect();
    vec![
        scrambled,
        (0..len).rev().collect(),
        Vec::new(),
        vec![len - 1],
    ]
}

/// Checks that `take` of arrays resident on `backend` (each dtype of
/// `dtypes`, along every axis of vectors, matrices and 3-D arrays) gathers
/// there, with no download, and gives the CPU's values exactly.
pub fn check_take_of_resident_arrays(backend: &str, dtypes: &[DType]) {
    fallback_log_reset();
    // Runs of values one position selects of 1 to 4096 values: moved
    // value by value and in words of 4, 8 and 16 bytes (`take_launch`).
    let shapes: [&[usize]; 8] = [
        &[100_003],
        &[7, 5, 300],
        &[4096, 3],
        &[3, 4096],
        &[12, 5, 7],
        &[2, 9, 5],
        &[5, 0, 3],
        &[1, 1, 1],
    ];
    for (s, dims) in shapes.iter().enumerate() {
        let shape = Shape::new(dims.to_vec());
        for &dtype in dtypes {
            let host = values(shape.numel(), dtype, 70 + s as u64);
            let x = array(&shape, &host);
            let resident = device_only(backend, &x, dtype);
            for axis in 0..dims.len() {
                for at in take_positions(dims[axis], 90 + axis as u64) {
                    let what = format!("take {} of {dims:?} {dtype} along {axis}", at.len());
                    let downloads = metrics().of(backend).downloads.count;
                    let got = resident.take(axis, &at).unwrap();
                    got.eval().unwrap();
                    assert_eq!(got.device(), backend, "{what}");
                    assert_eq!(
                        metrics().of(backend).downloads.count,
                        downloads,
                        "{what}: no download"
                    );
                    let want = on_cpu(|| x.take(axis, &at)?.buffer()).unwrap();
                    assert_eq!(got.buffer().unwrap(), want, "{what}");
                    // Positions only the device holds (where it holds
                    // i64 arrays; an empty list is never made there):
                    // checked there, with one value read back.
                    if at.is_empty() || !dtypes.contains(&DType::I64) {
                        continue;
                    }
                    let positions = device_positions(backend, &at);
                    let downloads = metrics().of(backend).downloads.count;
                    let got = resident.take_at(axis, &positions).unwrap();
                    got.eval().unwrap();
                    assert_eq!(got.device(), backend, "{what} at device positions");
                    let read = metrics().of(backend).downloads.count - downloads;
                    assert!(read <= 1, "{what} at device positions: {read} downloads");
                    assert_eq!(got.buffer().unwrap(), want, "{what} at device positions");
                }
            }
        }
    }
    // A position outside the axis, only the device holding it: an error
    // naming it; inside, a result.
    if dtypes.contains(&DType::I64) {
        let x = device_only(
            backend,
            &array(&Shape::new(vec![5, 3]), &values(15, DType::I64, 7)),
            DType::I64,
        );
        let e = x.take_at(0, &device_positions(backend, &[0, 5, 1]));
        let e = e.unwrap_err().to_string();
        assert!(e.contains('5') && e.contains("take"), "{e}");
        let got = x
            .take_at(0, &device_positions(backend, &[2, 0, 0]))
            .unwrap();
        let want = on_cpu(|| x.take(0, &[2, 0, 0])?.buffer()).unwrap();
        assert_eq!(got.buffer().unwrap(), want);
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

/// `at` as an `i64` vector that only `backend`'s device holds.
fn device_positions(backend: &str, at: &[usize]) -> Array {
    let v: Vec<i64> = at.iter().map(|&p| p as i64).collect();
    device_only(
        backend,
        &Array::from_vec([at.len()], v).unwrap(),
        DType::I64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_what_they_say() {
        // [[1, 2], [3, 4]] column-major times the identity, transposed.
        let a = [1.0f32, 3.0, 2.0, 4.0];
        let id = [1.0f64, 0.0, 0.0, 1.0];
        let (c, size) = gemm_reference(LibraryCall::Crossprod, (2, 2, 2), &a.map(f64::from), &id);
        assert_eq!(c, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(size, c);
        assert_eq!(
            gemm_reference(LibraryCall::Matmul, (2, 2, 2), &a, &a).0,
            [7.0, 15.0, 10.0, 22.0]
        );
        let (sa, sb) = gemm_shapes(LibraryCall::Tcrossprod, 3, 4, 5);
        assert_eq!((sa.dims(), sb.dims()), (&[3, 4][..], &[5, 4][..]));
        assert_eq!(assert_gemm_close("exact", &c, &c, &size, 2, 1e-16), 0.0);
        assert_eq!(ulps(1.0 + f64::EPSILON, 1.0), 1.0);
        let x = [1.0, -2.0, 3.0];
        let got = [1.0, -1.0, 2.0 + 1e-9];
        let err = scan_error(&x, (1, 3, 1), &got, &[1.0, -1.0, 2.0], (0.0, 1e-9));
        assert!((err - 1.0 / 6.0).abs() < 1e-6, "{err}");
        let shape = Shape::new(vec![2, 3]);
        assert_eq!(scan_out_shape(&shape, None).dims(), &[6]);
        assert_eq!(values(5, DType::I64, 1), values(5, DType::I64, 1));
        assert!(values(100, DType::F64, 2)
            .to_f64_vec()
            .unwrap()
            .iter()
            .all(|v| *v != 0.0 && v.abs() <= 2.0));
    }
}
