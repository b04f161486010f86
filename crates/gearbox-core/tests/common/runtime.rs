//! The runtime tests' fixture (`runtime*.rs`): one lock for the
//! process-wide registry and options, simulated backends that go away with
//! it, thresholds, random inputs and a fused chain with its reference.

use std::sync::{Arc, Mutex, MutexGuard};

use gearbox_core::runtime::registry::unregister_backend;
use gearbox_core::runtime::testing::SimulatedBackend;
use gearbox_core::runtime::{
    fallback_log_reset, metrics_reset, options, set_options, RuntimeOptions, Threshold,
};
use gearbox_core::{Array, Precision};

use super::TestRng;

/// Taken by every runtime test: the registry and options are
/// process-wide.
static LOCK: Mutex<()> = Mutex::new(());

/// Holds the lock; on drop, removes test backends and restores options.
pub struct Fixture {
    _guard: MutexGuard<'static, ()>,
    saved: RuntimeOptions,
    names: Vec<&'static str>,
}

impl Fixture {
    /// Takes the lock, quiet default options, empty logs.
    pub fn new() -> Self {
        let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let saved = options();
        set_options(RuntimeOptions {
            quiet: true,
            ..RuntimeOptions::default()
        });
        fallback_log_reset();
        metrics_reset();
        Fixture {
            _guard: guard,
            saved,
            names: Vec::new(),
        }
    }

    /// Unregisters backend `name` when the fixture is dropped.
    pub fn remove_on_drop(&mut self, name: &'static str) {
        self.names.push(name);
    }

    /// Registers `sim` for the test; it is removed on drop.
    pub fn sim(&mut self, sim: SimulatedBackend) -> Arc<SimulatedBackend> {
        let s = sim.register();
        self.names
            .push(gearbox_core::runtime::Backend::name(s.as_ref()));
        s
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for n in &self.names {
            unregister_backend(n);
        }
        set_options(self.saved.clone());
        std::env::remove_var("GEARBOX_PROBE_INJECT");
    }
}

/// Cold and resident thresholds for every class and float dtype.
pub fn thresholds(cold: f64, resident: f64) -> Vec<Threshold> {
    gearbox_core::runtime::testing::uniform_thresholds(cold, resident)
}

/// A random matrix in [-2, 2) (never zeros) at `precision`.
pub fn random(shape: [usize; 2], seed: u64, precision: Precision) -> Array {
    let mut rng = TestRng::new(seed);
    let n = shape[0] * shape[1];
    Array::from_vec(shape, rng.vec(n, -2.0, 2.0))
        .unwrap()
        .with_precision(precision)
        .unwrap()
}

/// A fused elementwise chain of `x` and `y`.
pub fn chain(x: &Array, y: &Array) -> Array {
    (x.exp().unwrap() * y + &x.sin().unwrap() - &(2.0 * y).unwrap()).unwrap()
}

/// [`chain`] computed in f64 on the host.
pub fn reference_chain(x: &Array, y: &Array) -> Vec<f64> {
    let (xv, yv) = (x.to_vec::<f64>().unwrap(), y.to_vec::<f64>().unwrap());
    xv.iter()
        .zip(&yv)
        .map(|(a, b)| a.exp() * b + a.sin() - 2.0 * b)
        .collect()
}
