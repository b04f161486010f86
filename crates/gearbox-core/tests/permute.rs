//! Transposes, `t()` and flips as data movement, against a simulated
//! device: on device-resident arrays they run there with no download and
//! give the CPU's values exactly (every dtype, shapes that straddle the
//! tiles, 3-D and 4-D permutations, flips along every axis, empty
//! arrays); host inputs stay on the host; `explain` says why; a failed
//! device permute falls back to the CPU with a log entry; gradients flow
//! through the inverse permutation.
//!
//! The registry and options are process-wide, so every test takes one lock
//! and leaves the runtime as it found it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};

use gearbox_core::ops::permute::{AxisOrder, Permute};
use gearbox_core::runtime::registry::{probe_backend, unregister_backend};
use gearbox_core::runtime::testing::permutes::{
    check_permute_calls, check_permutes_of_resident_arrays, distinct_values,
};
use gearbox_core::runtime::testing::{FailPoint, SimulatedBackend};
use gearbox_core::runtime::{
    backend_plan, fallback_log, fallback_log_reset, options, set_options, DataPath, Health,
    RuntimeOptions, WorkClass,
};
use gearbox_core::{Array, DType, DeviceErrorKind, Shape};

static LOCK: Mutex<()> = Mutex::new(());

const DTYPES: [DType; 4] = [DType::F64, DType::F32, DType::I64, DType::Bool];

/// Holds the lock and one registered simulated device; on drop, removes
/// it and restores the options.
struct Fixture {
    _guard: MutexGuard<'static, ()>,
    saved: RuntimeOptions,
    name: &'static str,
    sim: Arc<SimulatedBackend>,
}

impl Fixture {
    fn new(name: &'static str) -> Self {
        let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let saved = options();
        set_options(RuntimeOptions {
            quiet: true,
            ..RuntimeOptions::default()
        });
        let sim = SimulatedBackend::new(name).register();
        assert_eq!(probe_backend(name, false), Health::Healthy);
        Fixture {
            _guard: guard,
            saved,
            name,
            sim,
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unregister_backend(self.name);
        set_options(self.saved.clone());
    }
}

fn matrix(dims: [usize; 2], seed: u64) -> Array {
    let shape = Shape::new(dims.to_vec());
    Array::from_buffer(
        shape.clone(),
        distinct_values(shape.numel(), DType::F64, seed),
    )
    .unwrap()
}

#[test]
fn permutes_of_resident_arrays_run_on_the_device_and_match_the_cpu() {
    let _fx = Fixture::new("simp");
    check_permutes_of_resident_arrays("simp", &DTYPES);
}

#[test]
fn permute_calls_with_reversals_match_the_host_copy() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let sim = SimulatedBackend::new("simc");
    check_permute_calls(&sim, &DTYPES);
    assert!(sim.counters.library_calls.load(Ordering::Relaxed) > 0);
}

#[test]
fn explain_shows_a_resident_transpose_as_data_movement() {
    let fx = Fixture::new("sime");
    let x = matrix([300, 200], 1).to_device("sime").unwrap();
    for (what, y) in [("transpose", x.t().unwrap()), ("flip", x.flip(1).unwrap())] {
        let plan = backend_plan(&y).unwrap();
        assert_eq!(
            (plan.chosen.as_str(), plan.path),
            ("sime", DataPath::Resident),
            "{plan}"
        );
        assert_eq!(plan.work, Some(WorkClass::DataMovement));
        let text = plan.to_string();
        assert!(text.contains(what), "{text}");
        assert!(text.contains("data movement, 60,000 elements"), "{text}");
        let calls = fx.sim.counters.library_calls.load(Ordering::Relaxed);
        y.eval().unwrap();
        assert_eq!(y.device(), "sime");
        assert_eq!(
            fx.sim.counters.library_calls.load(Ordering::Relaxed),
            calls + 1
        );
    }
    // A host matrix is transposed on the host: nothing is resident there.
    let host = matrix([300, 200], 2);
    let plan = backend_plan(&host.t().unwrap()).unwrap();
    assert_eq!(plan.chosen, "cpu", "{plan}");
    assert!(
        plan.to_string().contains("none is resident on sime"),
        "{plan}"
    );
}

#[test]
fn a_failed_device_permute_falls_back_to_the_cpu_with_a_log_entry() {
    let fx = Fixture::new("simf");
    fallback_log_reset();
    let host = matrix([40, 70], 3);
    let want = host.t().unwrap().to_vec::<f64>().unwrap();
    let x = host.to_device("simf").unwrap();
    fx.sim.fail(FailPoint::Library, 1, DeviceErrorKind::Fault);
    let y = x.t().unwrap();
    assert_eq!(y.to_vec::<f64>().unwrap(), want);
    assert_eq!(y.device(), "cpu");
    assert!(
        fallback_log()
            .iter()
            .any(|e| e.op == "transpose" && e.from_backend == "simf" && e.to_backend == "cpu"),
        "{:?}",
        fallback_log()
    );
    fallback_log_reset();
}

#[test]
fn transposes_and_flips_match_the_definition() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // 2 x 3 column-major: rows (1, 3, 5), (2, 4, 6).
    let m = Array::from_vec([2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert_eq!(m.t().unwrap().dims(), &[3, 2]);
    assert_eq!(
        m.t().unwrap().to_vec::<f64>().unwrap(),
        vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]
    );
    assert_eq!(
        m.flip(1).unwrap().to_vec::<f64>().unwrap(),
        vec![5.0, 6.0, 3.0, 4.0, 1.0, 2.0]
    );
    let x = Array::from_vec([2, 3, 4], (1..=24).map(f64::from).collect()).unwrap();
    let y = x.transpose(&[2, 0, 1]).unwrap();
    for (i, j, k) in [(0, 0, 0), (1, 2, 3), (0, 1, 2), (1, 0, 3)] {
        assert_eq!(y.get(&[k, i, j]).unwrap(), x.get(&[i, j, k]).unwrap());
    }
    assert!(x.flip(3).is_err());
    assert!(x.transpose(&[0, 1]).is_err());
    // The general call, permuted and reversed at once, as a primitive.
    let order = AxisOrder::new(&[1, 0], &[true, false]).unwrap();
    let p = Array::from_op(Permute(order), vec![m.clone()]).unwrap();
    assert_eq!(
        p.to_vec::<f64>().unwrap(),
        m.t().unwrap().flip(0).unwrap().to_vec::<f64>().unwrap()
    );
}

#[test]
fn gradients_flow_back_through_transposes_and_flips() {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let x = Array::from_buffer(
        Shape::new(vec![3, 4, 5]),
        distinct_values(60, DType::F64, 9),
    )
    .unwrap();
    let w = distinct_values(60, DType::F64, 10);
    let perm_w = Array::from_buffer(Shape::new(vec![5, 3, 4]), w.clone()).unwrap();
    // d/dx sum(w * transpose(x)) = w permuted back.
    let g = gearbox_core::autodiff::grad(
        |a| a[0].transpose(&[2, 0, 1])?.mul(&perm_w)?.sum(),
        std::slice::from_ref(&x),
    )
    .unwrap();
    let back = perm_w.transpose(&[1, 2, 0]).unwrap();
    assert_eq!(g[0].to_vec::<f64>().unwrap(), back.to_vec::<f64>().unwrap());
    // d/dx sum(w * flip(x, 1)) = flip(w, 1); the permuted-and-reversed
    // call's rule reverses and permutes back.
    let same_w = Array::from_buffer(Shape::new(vec![3, 4, 5]), w).unwrap();
    let g = gearbox_core::autodiff::grad(
        |a| a[0].flip(1)?.mul(&same_w)?.sum(),
        std::slice::from_ref(&x),
    )
    .unwrap();
    assert_eq!(
        g[0].to_vec::<f64>().unwrap(),
        same_w.flip(1).unwrap().to_vec::<f64>().unwrap()
    );
    let order = AxisOrder::new(&[2, 0, 1], &[true, false, true]).unwrap();
    let g = gearbox_core::autodiff::grad(
        |a| {
            Array::from_op(Permute(order), vec![a[0].clone()])?
                .mul(&perm_w)?
                .sum()
        },
        &[x],
    )
    .unwrap();
    // Reverse the output axes flipped, then permute back.
    let want = perm_w
        .flip(0)
        .unwrap()
        .flip(2)
        .unwrap()
        .transpose(&[1, 2, 0])
        .unwrap();
    assert_eq!(g[0].to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
}
