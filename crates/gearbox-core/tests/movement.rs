//! Slice and concat as data movement, against a simulated device: a slice
//! or join of device-resident arrays runs on that device with no download
//! and gives the CPU's values, for every axis of 1-D, 2-D and 3-D shapes,
//! every dtype and empty ranges; host inputs stay on the host; mixed inputs
//! go where fewer bytes cross the bus; `explain` says why; `outer` is a
//! broadcast product that runs where its inputs are.
//!
//! The registry and options are process-wide, so every test takes one lock
//! and leaves the runtime as it found it.

mod common;

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use common::TestRng;
use gearbox_core::runtime::registry::{probe_backend, unregister_backend};
use gearbox_core::runtime::testing::SimulatedBackend;
use gearbox_core::runtime::{
    backend_plan, options, set_options, DataPath, Gate, Health, RuntimeOptions, Threshold,
    WorkClass,
};
use gearbox_core::{Array, DType, HostBuffer, Precision, Shape};

static LOCK: Mutex<()> = Mutex::new(());

/// Holds the lock and one registered simulated device; on drop, removes
/// it and restores the options.
struct Fixture {
    _guard: MutexGuard<'static, ()>,
    saved: RuntimeOptions,
    name: &'static str,
    sim: Arc<SimulatedBackend>,
}

impl Fixture {
    fn new(name: &'static str, sim: SimulatedBackend) -> Self {
        let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let saved = options();
        set_options(RuntimeOptions {
            quiet: true,
            ..RuntimeOptions::default()
        });
        let sim = sim.register();
        assert_eq!(probe_backend(name, false), Health::Healthy);
        Fixture {
            _guard: guard,
            saved,
            name,
            sim,
        }
    }

    fn downloads(&self) -> u64 {
        self.sim.counters.downloads.load(Ordering::Relaxed)
    }

    fn uploads(&self) -> u64 {
        self.sim.counters.uploads.load(Ordering::Relaxed)
    }

    fn calls(&self) -> u64 {
        self.sim.counters.library_calls.load(Ordering::Relaxed)
    }

    /// Runs `f` with the device switched off (the CPU reference path).
    fn on_cpu<R>(&self, f: impl FnOnce() -> R) -> R {
        let before = options();
        set_options(RuntimeOptions {
            optional_backends: false,
            ..before.clone()
        });
        let r = f();
        set_options(before);
        r
    }

    /// `host` computed on the device, so that it lives only there (no host copy).
    fn device_only(&self, host: &Array) -> Array {
        let before = options();
        set_options(RuntimeOptions {
            force_backend: Some(self.name.into()),
            ..before.clone()
        });
        let d = host.astype(host.dtype()).unwrap();
        d.eval().unwrap();
        set_options(before);
        assert_eq!(d.device(), self.name);
        assert!(d.host_value().is_none(), "computed on the device only");
        d
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unregister_backend(self.name);
        set_options(self.saved.clone());
    }
}

const DTYPES: [DType; 4] = [DType::F64, DType::F32, DType::I64, DType::Bool];

/// A host array of `dims` with random values of `dtype` (finite; bools mixed).
fn random(dims: &[usize], dtype: DType, rng: &mut TestRng) -> Array {
    let n: usize = dims.iter().product();
    let xs = rng.vec(n, -1000.0, 1000.0);
    let buf = match dtype {
        DType::F64 => HostBuffer::F64(xs),
        DType::F32 => HostBuffer::F32(xs.iter().map(|&x| x as f32).collect()),
        DType::I64 => HostBuffer::I64(xs.iter().map(|&x| x as i64).collect()),
        DType::Bool => HostBuffer::Bool(xs.iter().map(|&x| x > 0.0).collect()),
    };
    Array::from_buffer(Shape::new(dims.to_vec()), buf).unwrap()
}

/// Ranges worth trying along an axis of length `len`: all, none (at each
/// end and inside), a prefix, a suffix and a middle.
fn ranges(len: usize) -> Vec<Range<usize>> {
    let mut r = vec![0..len, 0..0, len..len, 0..len / 2, len / 2..len];
    if len >= 3 {
        r.push(1..len - 1);
        r.push(1..1);
    }
    r
}

const SHAPES: [&[usize]; 4] = [&[7], &[5, 6], &[3, 4, 5], &[2, 1, 3]];

#[test]
fn slices_of_resident_arrays_run_on_the_device_and_match_the_cpu() {
    let fx = Fixture::new("simv", SimulatedBackend::new("simv"));
    let mut rng = TestRng::new(1);
    for dims in SHAPES {
        for dtype in DTYPES {
            let host = random(dims, dtype, &mut rng);
            let dev = fx.device_only(&host);
            for axis in 0..dims.len() {
                for range in ranges(dims[axis]) {
                    let what = format!("{dims:?} {dtype} axis {axis} {range:?}");
                    let (downloads, calls) = (fx.downloads(), fx.calls());
                    let s = dev.slice(axis, range.clone()).unwrap();
                    s.eval().unwrap();
                    assert_eq!(s.device(), "simv", "{what}");
                    assert_eq!(fx.downloads(), downloads, "no download: {what}");
                    assert_eq!(fx.calls(), calls + 1, "one device call: {what}");
                    let got = s.buffer().unwrap();
                    assert_eq!(fx.downloads(), downloads + 1, "{what}");
                    let want = fx.on_cpu(|| host.slice(axis, range.clone()).unwrap().buffer());
                    assert_eq!(got, want.unwrap(), "{what}");
                }
            }
        }
    }
}

#[test]
fn joins_of_resident_arrays_run_on_the_device_and_match_the_cpu() {
    let fx = Fixture::new("simj", SimulatedBackend::new("simj"));
    let mut rng = TestRng::new(2);
    for dims in SHAPES {
        for dtype in DTYPES {
            for axis in 0..dims.len() + 1 {
                // Three parts of lengths 2, 0 and 3 along the axis.
                let (hosts, devs): (Vec<Array>, Vec<Array>) = [2usize, 0, 3]
                    .iter()
                    .map(|&len| {
                        let mut d = dims.to_vec();
                        if axis < d.len() {
                            d[axis] = len;
                        } else {
                            d.push(len);
                        }
                        let h = random(&d, dtype, &mut rng);
                        let v = fx.device_only(&h);
                        (h, v)
                    })
                    .unzip();
                let what = format!("{dims:?} {dtype} axis {axis}");
                let (downloads, uploads, calls) = (fx.downloads(), fx.uploads(), fx.calls());
                let j = Array::concat(&devs.iter().collect::<Vec<_>>(), axis).unwrap();
                j.eval().unwrap();
                assert_eq!(j.device(), "simj", "{what}");
                assert_eq!(
                    (fx.downloads(), fx.uploads(), fx.calls()),
                    (downloads, uploads, calls + 1),
                    "one device call, nothing moved: {what}"
                );
                let want = fx.on_cpu(|| {
                    Array::concat(&hosts.iter().collect::<Vec<_>>(), axis)
                        .unwrap()
                        .buffer()
                });
                assert_eq!(j.buffer().unwrap(), want.unwrap(), "{what}");
            }
        }
    }
    // A vector beside a matrix counts as a column (dimensions past its last are 1).
    let m = fx.device_only(&random(&[4, 3], DType::F64, &mut rng));
    let v = fx.device_only(&random(&[4], DType::F64, &mut rng));
    let j = Array::cbind(&[&m, &v]).unwrap();
    j.eval().unwrap();
    assert_eq!((j.device().as_str(), j.dims()), ("simj", &[4, 4][..]));
    let mut want = m.to_vec::<f64>().unwrap();
    want.extend(v.to_vec::<f64>().unwrap());
    assert_eq!(j.to_vec::<f64>().unwrap(), want);
}

#[test]
fn host_inputs_stay_on_the_host_and_mixed_inputs_go_where_fewer_bytes_move() {
    let fx = Fixture::new("simh", SimulatedBackend::new("simh"));
    let mut rng = TestRng::new(3);
    let big = random(&[100, 40], DType::F64, &mut rng);
    let small = random(&[100, 2], DType::F64, &mut rng);

    // All on the host: the host slices and joins.
    let calls = fx.calls();
    let s = big.slice(1, 3..9).unwrap();
    let j = Array::cbind(&[&big, &small]).unwrap();
    Array::eval_all(&[&s, &j]).unwrap();
    assert_eq!((s.device().as_str(), j.device().as_str()), ("cpu", "cpu"));
    assert_eq!(fx.calls(), calls);

    // A resident part beside a small host part: the host part is uploaded.
    let big_dev = fx.device_only(&big);
    let (downloads, uploads) = (fx.downloads(), fx.uploads());
    let j = Array::cbind(&[&big_dev, &small]).unwrap();
    let plan = backend_plan(&j).unwrap();
    assert_eq!((plan.chosen.as_str(), plan.path), ("simh", DataPath::Cold));
    j.eval().unwrap();
    assert_eq!(j.device(), "simh");
    assert_eq!(
        (fx.downloads(), fx.uploads()),
        (downloads, uploads + 1),
        "uploaded the host part only"
    );
    let want = fx.on_cpu(|| Array::cbind(&[&big, &small]).unwrap().buffer());
    assert_eq!(j.buffer().unwrap(), want.unwrap());

    // (Computing big_dev uploaded big, so big is resident now too: take fresh host data.)
    assert_eq!(big.device(), "simh");
    let big = random(&[100, 40], DType::F64, &mut rng);

    // A small resident part beside a big host part: the small part comes home.
    let small_dev = fx.device_only(&small);
    let j = Array::cbind(&[&big, &small_dev]).unwrap();
    let plan = backend_plan(&j).unwrap();
    assert_eq!(plan.chosen, "cpu", "{plan}");
    let calib = plan.candidates[0].gates.last().unwrap();
    assert!(
        calib.gate == Gate::Calibration
            && !calib.passed
            && calib.detail.contains("stays on the host"),
        "{plan}"
    );
    j.eval().unwrap();
    assert_eq!(j.device(), "cpu");

    // A resident part that also has a host copy costs nothing to read on
    // the host, so a join with host data stays there.
    let both = random(&[100, 2], DType::F64, &mut rng)
        .to_device("simh")
        .unwrap();
    assert!(both.host_value().is_some());
    let j = Array::cbind(&[&big, &both]).unwrap();
    assert_eq!(backend_plan(&j).unwrap().chosen, "cpu");
    // ... while its slice stays on the device.
    let s = both.slice(0, 10..20).unwrap();
    let plan = backend_plan(&s).unwrap();
    assert_eq!(
        (plan.chosen.as_str(), plan.path),
        ("simh", DataPath::Resident)
    );
}

#[test]
fn thresholds_and_precision_do_not_pull_a_resident_slice_to_the_host() {
    // Thresholds that never pay, cold or resident, for every class.
    let never: Vec<Threshold> = [
        WorkClass::Elementwise,
        WorkClass::Reduction,
        WorkClass::Gemm,
        WorkClass::Factorization,
        WorkClass::DataMovement,
    ]
    .into_iter()
    .flat_map(|class| {
        DTYPES.map(|dtype| Threshold::from(class, dtype, f64::INFINITY, f64::INFINITY))
    })
    .collect();
    let fx = Fixture::new(
        "simt",
        SimulatedBackend::new("simt")
            .with_thresholds(never)
            .with_full_rate_f64(false),
    );
    let mut rng = TestRng::new(4);
    let host = random(&[50, 8], DType::F64, &mut rng);
    for precision in [Precision::Fast, Precision::Strict, Precision::Exact] {
        // Placed explicitly: no computation of this precision would go there.
        let x = host
            .with_precision(precision)
            .unwrap()
            .to_device("simt")
            .unwrap();
        let s = x.slice(1, 2..5).unwrap();
        let plan = backend_plan(&s).unwrap();
        assert_eq!(
            (plan.chosen.as_str(), plan.path),
            ("simt", DataPath::Resident),
            "{precision}: {plan}"
        );
        assert_eq!(plan.work, Some(WorkClass::DataMovement));
        assert_eq!((plan.size, plan.size_unit), (150.0, "elements"));
        let gates = &plan.candidates[0].gates;
        assert!(gates
            .iter()
            .any(|g| g.gate == Gate::Precision && g.detail.contains("copies values exactly")));
        assert!(gates
            .iter()
            .any(|g| g.gate == Gate::Calibration && g.detail.contains("follows its inputs")));
        let text = plan.to_string();
        assert!(text.contains("work: data movement, 150 elements"), "{text}");
        let downloads = fx.downloads();
        s.eval().unwrap();
        assert_eq!((s.device().as_str(), fx.downloads()), ("simt", downloads));
    }
    // A host slice says why it stays home.
    let plan = backend_plan(&host.slice(0, 0..3).unwrap()).unwrap();
    assert_eq!(plan.chosen, "cpu");
    assert!(plan.candidates[0]
        .gates
        .iter()
        .any(|g| g.gate == Gate::Calibration && g.detail.contains("none is resident on simt")));
}

#[test]
fn mixed_dtypes_promote_before_the_join() {
    let fx = Fixture::new("simp", SimulatedBackend::new("simp"));
    let mut rng = TestRng::new(5);
    let i = random(&[3, 2], DType::I64, &mut rng);
    let f = random(&[3, 1], DType::F32, &mut rng);
    let b = random(&[3, 2], DType::Bool, &mut rng);
    // i64, f32 and bool promote to f32 (DType::promote).
    let want = fx.on_cpu(|| {
        let j = Array::cbind(&[&i, &f, &b]).unwrap();
        assert_eq!(j.dtype(), DType::F32);
        j.to_vec::<f32>().unwrap()
    });
    let mut expect: Vec<f32> = i
        .to_vec::<i64>()
        .unwrap()
        .iter()
        .map(|&v| v as f32)
        .collect();
    expect.extend(f.to_vec::<f32>().unwrap());
    expect.extend(b.to_vec::<bool>().unwrap().iter().map(|&v| v as u8 as f32));
    assert_eq!(want, expect);
    let parts: Vec<Array> = [&i, &f, &b].iter().map(|a| fx.device_only(a)).collect();
    let j = Array::cbind(&parts.iter().collect::<Vec<_>>()).unwrap();
    j.eval().unwrap();
    assert_eq!(j.device(), "simp");
    assert_eq!(j.to_vec::<f32>().unwrap(), want);
}

#[test]
fn outer_is_a_broadcast_product_that_runs_where_its_inputs_are() {
    let fx = Fixture::new("simo", SimulatedBackend::new("simo"));
    let mut rng = TestRng::new(6);
    let u = random(&[6], DType::F64, &mut rng);
    let v = random(&[4], DType::F64, &mut rng);
    let want: Vec<f64> = {
        let (uv, vv) = (u.to_vec::<f64>().unwrap(), v.to_vec::<f64>().unwrap());
        vv.iter()
            .flat_map(|b| uv.iter().map(move |a| a * b))
            .collect()
    };
    let o = u.outer(&v).unwrap();
    assert_eq!(o.op().unwrap().name(), "mul");
    assert_eq!(o.dims(), &[6, 4]);
    let (ud, vd) = (fx.device_only(&u), fx.device_only(&v));
    let od = ud.outer(&vd).unwrap();
    let downloads = fx.downloads();
    od.eval().unwrap();
    assert_eq!((od.device().as_str(), fx.downloads()), ("simo", downloads));
    assert_eq!(od.to_vec::<f64>().unwrap(), want);
    let host = fx.on_cpu(|| o.to_vec::<f64>().unwrap());
    assert_eq!(host, want);
    // Integer vectors compute in f64, as the product always did.
    let k = Array::from_vec([2], vec![3i64, -4]).unwrap();
    let ok = fx.on_cpu(|| k.outer(&k).unwrap());
    assert_eq!(ok.dtype(), DType::F64);
    assert_eq!(ok.to_vec::<f64>().unwrap(), vec![9.0, -12.0, -12.0, 16.0]);
}

#[test]
fn a_new_precision_tag_on_a_resident_array_does_not_download_it() {
    let fx = Fixture::new("simp", SimulatedBackend::new("simp"));
    let mut rng = TestRng::new(9);
    let host = random(&[300, 7], DType::F64, &mut rng);
    let dev = fx.device_only(&host);
    let downloads = fx.downloads();
    let tagged = dev.with_precision(Precision::Fast).unwrap();
    assert_eq!(tagged.precision(), Precision::Fast);
    tagged.eval().unwrap();
    assert_eq!(fx.downloads(), downloads, "retagging must not download");
    assert_eq!(tagged.device(), "simp");
    assert!(tagged.host_value().is_none());
    assert_eq!(
        tagged.to_vec::<f64>().unwrap(),
        host.to_vec::<f64>().unwrap()
    );
}

#[test]
fn small_work_on_device_only_data_stays_on_the_device() {
    // Thresholds that never pay: only the inputs' residency keeps the work
    // on the device, since the CPU would have to download them first.
    let never: Vec<Threshold> = [WorkClass::Elementwise, WorkClass::Reduction]
        .into_iter()
        .flat_map(|class| {
            DTYPES.map(|dtype| Threshold::from(class, dtype, f64::INFINITY, f64::INFINITY))
        })
        .collect();
    let fx = Fixture::new("simo", SimulatedBackend::new("simo").with_thresholds(never));
    let mut rng = TestRng::new(12);
    let a = random(&[1, 37], DType::F64, &mut rng);
    let b = random(&[1, 37], DType::F64, &mut rng);
    let (da, db) = (fx.device_only(&a), fx.device_only(&b));
    let downloads = fx.downloads();
    // 0.5 a - b with a host scalar, then its sum: both on the device.
    let c = ((&da * 0.5).unwrap() - &db).unwrap();
    let s = c.sum().unwrap();
    Array::eval_all(&[&c, &s]).unwrap();
    assert_eq!(
        fx.downloads(),
        downloads,
        "device-only inputs were downloaded"
    );
    assert_eq!((c.device().as_str(), s.device().as_str()), ("simo", "simo"));
    let want: Vec<f64> = a
        .to_vec::<f64>()
        .unwrap()
        .iter()
        .zip(b.to_vec::<f64>().unwrap())
        .map(|(x, y)| 0.5 * x - y)
        .collect();
    assert_eq!(c.to_vec::<f64>().unwrap(), want);
    // With a host copy beside the device one, the threshold decides again.
    let h = random(&[1, 37], DType::F64, &mut rng);
    h.to_device("simo").unwrap();
    let d = (&h * 2.0).unwrap();
    d.eval().unwrap();
    assert_eq!(d.device(), "cpu");
}

#[test]
fn small_host_inputs_beside_device_only_data_go_to_the_device() {
    // A host row beside a device-only matrix 64 times its size: the CPU
    // would download the matrix, so the device takes the work and uploads
    // the row. Beside a matrix less than 64 times its size the threshold
    // decides (here: never the device).
    let never: Vec<Threshold> = DTYPES
        .map(|dtype| Threshold::from(WorkClass::Elementwise, dtype, f64::INFINITY, f64::INFINITY))
        .to_vec();
    let fx = Fixture::new("simh", SimulatedBackend::new("simh").with_thresholds(never));
    let mut rng = TestRng::new(13);
    for (rows, want) in [(64, "simh"), (63, "cpu")] {
        let row = random(&[1, 37], DType::F64, &mut rng);
        let m = random(&[rows, 37], DType::F64, &mut rng);
        let dm = fx.device_only(&m);
        let d = (&dm - &row).unwrap();
        d.eval().unwrap();
        assert_eq!(d.device(), want, "{rows} x 37 beside a 1 x 37 row");
        let (mv, rv) = (m.to_vec::<f64>().unwrap(), row.to_vec::<f64>().unwrap());
        let expected: Vec<f64> = (0..rows * 37).map(|at| mv[at] - rv[at / rows]).collect();
        assert_eq!(d.to_vec::<f64>().unwrap(), expected);
    }
}

#[test]
fn work_on_device_only_scalars_stays_on_the_device() {
    // The sum of two scalars that live on the device alone: downloading
    // them would cost two synchronizations.
    let never: Vec<Threshold> = DTYPES
        .map(|dtype| Threshold::from(WorkClass::Elementwise, dtype, f64::INFINITY, f64::INFINITY))
        .to_vec();
    let fx = Fixture::new("sims", SimulatedBackend::new("sims").with_thresholds(never));
    let (a, b) = (Array::scalar(1.25), Array::scalar(-3.5));
    let (da, db) = (fx.device_only(&a), fx.device_only(&b));
    let downloads = fx.downloads();
    let s = (&da + &db).unwrap();
    s.eval().unwrap();
    assert_eq!(
        fx.downloads(),
        downloads,
        "device-only scalars were downloaded"
    );
    assert_eq!(s.device(), "sims");
    assert_eq!(s.item().unwrap(), -2.25);
}

#[test]
fn reductions_of_resident_arrays_run_on_the_device_and_match_the_cpu() {
    let _fx = Fixture::new("simr", SimulatedBackend::new("simr"));
    gearbox_core::runtime::testing::reductions::check_reductions_of_resident_arrays(
        "simr",
        &[DType::F64, DType::F32, DType::Bool],
    );
}

#[test]
fn no_op_leaves_the_device_without_a_declared_reason() {
    let _fx = Fixture::new("simn", SimulatedBackend::new("simn"));
    let declined = gearbox_core::runtime::testing::host_trips::check_no_silent_host_trips(
        "simn",
        &[DType::F64, DType::F32, DType::Bool],
    );
    // The simulated device offers everything: it declines nothing.
    assert!(declined.is_empty(), "{declined:?}");
}

#[test]
fn takes_of_resident_arrays_run_on_the_device_and_match_the_cpu() {
    let _fx = Fixture::new("simt", SimulatedBackend::new("simt"));
    gearbox_core::runtime::testing::gpu::check_take_of_resident_arrays("simt", &DTYPES);
}

#[test]
fn take_picks_positions_in_order_and_names_a_bad_one() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // 3 x 2, column-major: rows (1, 4), (2, 5), (3, 6).
    let m = Array::from_vec([3, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let rows = m.take(0, &[2, 0, 2, 1]).unwrap();
    assert_eq!(rows.dims(), &[4, 2]);
    assert_eq!(
        rows.to_vec::<f64>().unwrap(),
        vec![3.0, 1.0, 3.0, 2.0, 6.0, 4.0, 6.0, 5.0]
    );
    let cols = m.take(1, &[1, 1]).unwrap();
    assert_eq!(
        cols.to_vec::<f64>().unwrap(),
        vec![4.0, 5.0, 6.0, 4.0, 5.0, 6.0]
    );
    assert_eq!(m.take(0, &[]).unwrap().dims(), &[0, 2]);
    let bad = m.take(0, &[1, 3]).unwrap_err().to_string();
    assert!(bad.contains('3') && bad.contains("take"), "{bad}");
    assert!(m.take(2, &[0]).is_err(), "no axis 2");
}

#[test]
fn take_at_reads_positions_from_an_array_and_names_a_bad_one() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let m = Array::from_vec([3, 2], vec![1.5, -2.0, 3.25, 4.0, 5.5, -6.0]).unwrap();
    let at = |v: Vec<i64>| Array::from_vec([v.len()], v).unwrap();
    let rows = m.take_at(0, &at(vec![2, 0, 2, 1])).unwrap();
    assert_eq!(
        rows.buffer().unwrap(),
        m.take(0, &[2, 0, 2, 1]).unwrap().buffer().unwrap()
    );
    // Positions computed lazily (evaluated for the check first).
    let lazy = at(vec![0, 1])
        .binary_scalar(gearbox_core::BinaryOp::Add, 0.0)
        .unwrap();
    let cols = m.take_at(1, &lazy.astype(DType::I64).unwrap()).unwrap();
    assert_eq!(
        cols.buffer().unwrap(),
        m.take(1, &[0, 1]).unwrap().buffer().unwrap()
    );
    for bad in [vec![1, 3], vec![-1], vec![0, 1, 2, i64::MAX]] {
        let want = bad
            .iter()
            .find(|&&p| !(0..3).contains(&p))
            .unwrap()
            .to_string();
        let e = m.take_at(0, &at(bad)).unwrap_err().to_string();
        assert!(e.contains(&want) && e.contains("take"), "{e}");
    }
    let e = m
        .take_at(0, &Array::from_vec([2], vec![0.0, 1.0]).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("i64"), "{e}");
    let square = Array::from_vec([2, 2], vec![0i64, 1, 1, 0]).unwrap();
    let e = m.take_at(0, &square).unwrap_err();
    assert!(e.to_string().contains("vector"), "{e}");
    assert!(m.take_at(2, &at(vec![0])).is_err(), "no axis 2");
}

#[test]
fn large_takes_along_every_axis_match_a_reference() {
    // The device tests here count downloads process-wide: one at a time.
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // Shapes whose results span many of the parallel chunks (runs of one
    // value along axis 0; runs of rows and of slabs along the others),
    // a lane of one, and position lists of one, as many as the axis, and
    // more, drawn with repeats.
    let mut rng = TestRng::new(32);
    for dims in [
        vec![37, 29, 41],
        vec![1, 50_000],
        vec![50_000, 1],
        vec![3, 7, 1601],
    ] {
        let n: usize = dims.iter().product();
        let v: Vec<f64> = rng
            .vec(n, -1.0, 1.0)
            .into_iter()
            .enumerate()
            .map(|(i, x)| if i % 97 == 5 { f64::NAN } else { x })
            .collect();
        let x = Array::from_vec(dims.clone(), v.clone()).unwrap();
        for axis in 0..dims.len() {
            let len = dims[axis];
            let inner: usize = dims[..axis].iter().product();
            let outer: usize = dims[axis + 1..].iter().product();
            for count in [1, len, 2 * len + 3] {
                let at: Vec<usize> = (0..count)
                    .map(|_| (rng.next_u64() % len as u64) as usize)
                    .collect();
                let mut want = Vec::with_capacity(inner * count * outer);
                for k in 0..outer {
                    for &p in &at {
                        want.extend_from_slice(&v[(k * len + p) * inner..][..inner]);
                    }
                }
                let positions =
                    Array::from_vec([count], at.iter().map(|&p| p as i64).collect::<Vec<_>>())
                        .unwrap();
                for dtype in [DType::F64, DType::F32] {
                    let typed = x.astype(dtype).unwrap();
                    let want: Vec<f64> = want
                        .iter()
                        .map(|&w| {
                            if dtype == DType::F32 {
                                w as f32 as f64
                            } else {
                                w
                            }
                        })
                        .collect();
                    let takes = [
                        ("take", typed.take(axis, &at).unwrap()),
                        ("take_at", typed.take_at(axis, &positions).unwrap()),
                    ];
                    for (how, got) in takes {
                        let got = got.to_f64_vec().unwrap();
                        assert_eq!(got.len(), want.len());
                        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                            assert!(
                                g.to_bits() == w.to_bits(),
                                "{how}({axis}) of {dims:?}, {count} positions, {dtype:?}: [{i}] {g} != {w}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_gradient_of_a_take_adds_the_cotangent_back_at_each_position() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = TestRng::new(7);
    let x = Array::from_vec([4, 3], rng.vec(12, -1.0, 1.0)).unwrap();
    let w = rng.vec(5 * 3, -1.0, 1.0);
    let weights = Array::from_vec([5, 3], w.clone()).unwrap();
    let at = [3, 0, 3, 3, 1];
    let g =
        gearbox_core::autodiff::grad(|a| a[0].take(0, &at)?.mul(&weights)?.sum(), &[x]).unwrap();
    // d/dx[r, c] = the sum of the weights of the picks of row r.
    let mut want = vec![0.0; 12];
    for c in 0..3 {
        for (j, &r) in at.iter().enumerate() {
            want[r + 4 * c] += w[j + 5 * c];
        }
    }
    let got = g[0].to_vec::<f64>().unwrap();
    for (k, (a, b)) in got.iter().zip(&want).enumerate() {
        assert!((a - b).abs() < 1e-15, "[{k}] {a} vs {b}");
    }
    assert_eq!(got[2], 0.0, "row 2 is never picked");
}

#[test]
fn a_take_keeps_its_arrays_precision() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for precision in [Precision::Fast, Precision::Strict, Precision::Exact] {
        let x = Array::from_vec([4, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
            .unwrap()
            .with_precision(precision)
            .unwrap();
        assert_eq!(x.take(0, &[3, 1]).unwrap().precision(), precision);
    }
}
