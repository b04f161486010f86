//! The strategy cost model's rates measured on this machine
//! ([`calibrate_strategies`], run by `gearbox calibrate`), stored in
//! `glm-strategy.json` in the cache directory beside the dispatch
//! thresholds and used in place of the built-in fits for the backend and
//! device they were measured on.
//!
//! Both strategies evaluate a simulated binomial logit model (512
//! observations) at two widths over enough points to fill the backend,
//! and at the narrower width over 256 points: the two large runs give the
//! strategy's `a + b l2` per observation-point pair, the small one its
//! fixed cost per chunk. The widths are 4 and 32; on GPUs the per-point
//! strategy is measured twice, at 2 and 6 coefficients and at 16 and 48
//! (the CUDA backend's two kernels, [`super::strategy::TENSOR_CORE_WIDTHS`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use gearbox_core::runtime::config::{cache_dir, read_cache_json, write_cache_json};
use gearbox_core::runtime::{gpu_status, options, set_options, RuntimeOptions};
use gearbox_core::{Array, Error, Result};
use serde::{Deserialize, Serialize};

use super::strategy::{Rate, Strategy};
use super::{GlmModel, GlmSpec};

/// Both strategies' rates measured on one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeasuredRates {
    /// The GEMM strategy.
    pub gemm: Rate,
    /// The per-point strategy (on GPUs, below the tensor cores' widths).
    pub per_point: Rate,
    /// The per-point strategy at [`super::strategy::TENSOR_CORE_WIDTHS`]
    /// on GPUs (`None` on the CPU, and in rates stored before it was
    /// measured: then `per_point` serves every width).
    #[serde(default)]
    pub per_point_wide: Option<Rate>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Stored {
    /// Backend -> (device name, rates).
    backends: BTreeMap<String, (String, MeasuredRates)>,
}

static LOADED: Mutex<Option<Stored>> = Mutex::new(None);

/// [`measured`]'s answers by backend (a backend's device does not change
/// within a process); cleared when rates are stored.
static ANSWERS: Mutex<BTreeMap<String, Option<MeasuredRates>>> = Mutex::new(BTreeMap::new());

/// Where measured rates are stored.
pub fn rates_path() -> Option<PathBuf> {
    cache_dir().map(|d| d.join(RATES_FILE))
}

/// The rates file's name in the cache directory.
const RATES_FILE: &str = "glm-strategy.json";

fn load() -> Stored {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = loaded.as_ref() {
        return s.clone();
    }
    let stored: Stored = read_cache_json(RATES_FILE).unwrap_or_default();
    *loaded = Some(stored);
    loaded.clone().unwrap_or_default()
}

/// The device `backend` drives now ("host" for the CPU), if known.
fn device_of(backend: &str) -> Option<String> {
    if backend == "cpu" {
        return Some("host".into());
    }
    gpu_status()
        .rows
        .into_iter()
        .find(|r| r.backend == backend)
        .and_then(|r| r.device)
        .map(|d| d.name)
}

/// Rates measured for `backend` on the device it drives now, if stored.
pub fn measured(backend: &str) -> Option<MeasuredRates> {
    let mut answers = ANSWERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(answer) = answers.get(backend) {
        return *answer;
    }
    let answer = load()
        .backends
        .get(backend)
        .cloned()
        .filter(|(device, _)| device_of(backend).as_deref() == Some(device.as_str()))
        .map(|(_, rates)| rates);
    answers.insert(backend.to_string(), answer);
    answer
}

/// Measures both strategies on `backend` ("cpu", or a registered GPU
/// backend, which is used for all the work meanwhile), stores the rates
/// and returns them.
pub fn calibrate_strategies(backend: &str) -> Result<MeasuredRates> {
    calibrate_strategies_with(backend, large_points(backend))
}

/// [`calibrate_strategies`] with `points` grid points in its large runs
/// (fewer for a quick, rougher measurement).
pub fn calibrate_strategies_with(backend: &str, points: usize) -> Result<MeasuredRates> {
    let device = device_of(backend).ok_or_else(|| Error::Config {
        name: "backend".into(),
        value: backend.into(),
        why: "no device known for this backend: probe it first (gearbox status)".into(),
    })?;
    let saved = options();
    set_options(RuntimeOptions {
        quiet: true,
        optional_backends: backend != "cpu" && saved.optional_backends,
        force_backend: (backend != "cpu").then(|| backend.to_string()),
        ..saved.clone()
    });
    let rates = measure(backend, points.max(1));
    set_options(saved);
    let rates = rates?;
    store(backend, &device, rates)?;
    Ok(rates)
}

/// Pairs of the large runs: enough to fill the backend for tens of
/// milliseconds.
fn large_points(backend: &str) -> usize {
    if backend == "cpu" {
        8192
    } else {
        1 << 19
    }
}

fn measure(backend: &str, big: usize) -> Result<MeasuredRates> {
    const L1: usize = 512;
    const SMALL: usize = 256;
    let time = |l2: usize, m: usize, strategy: Strategy| -> Result<f64> {
        let (model, b) = simulated(backend, L1, l2, m)?;
        let run = || -> Result<f64> {
            let start = Instant::now();
            // Reading one value waits for the work wherever it ran.
            model.grid_with(&b, Some(strategy))?.qf.sum()?.item()?;
            Ok(start.elapsed().as_secs_f64())
        };
        run()?;
        let mut t = [run()?, run()?, run()?];
        t.sort_by(f64::total_cmp);
        Ok(t[1])
    };
    let rate = |strategy: Strategy, (lo, hi): (usize, usize)| -> Result<Rate> {
        let pairs = (L1 * big) as f64;
        let (r_lo, r_hi) = (
            time(lo, big, strategy)? / pairs,
            time(hi, big, strategy)? / pairs,
        );
        let b = ((r_hi - r_lo) / (hi - lo) as f64).max(0.0);
        let a = (r_lo - lo as f64 * b).max(0.0);
        let small = time(lo, SMALL, strategy)?;
        let per_chunk = (small - (L1 * SMALL) as f64 * (a + lo as f64 * b)).max(0.0);
        Ok(Rate { a, b, per_chunk })
    };
    let gpu = backend != "cpu";
    Ok(MeasuredRates {
        gemm: rate(Strategy::Gemm, (4, 32))?,
        per_point: rate(Strategy::PerPoint, if gpu { (2, 6) } else { (4, 32) })?,
        per_point_wide: if gpu {
            Some(rate(Strategy::PerPoint, (16, 48))?)
        } else {
            None
        },
    })
}

/// A binomial logit model and a grid of `m` points, on `backend`'s device.
fn simulated(backend: &str, l1: usize, l2: usize, m: usize) -> Result<(GlmModel, Array)> {
    let x = (Array::randn([l1, l2], 11)? * (1.0 / (l2 as f64).sqrt()))?;
    let u = Array::rand([l1], 12)?.to_vec::<f64>()?;
    let y: Vec<f64> = u.iter().map(|u| f64::from(*u < 0.4)).collect();
    let b = (Array::randn([l2, m], 13)? * 0.3)?;
    let (x, b) = if backend == "cpu" {
        (x.gather()?, b.gather()?)
    } else {
        (x.to_device(backend)?, b.to_device(backend)?)
    };
    let spec = GlmSpec::parse("binomial", Some("logit"), None)?;
    let model = GlmModel::with_standard_prior(&x, &Array::from_vec([l1], y)?, &spec)?;
    Ok((model, b))
}

fn store(backend: &str, device: &str, rates: MeasuredRates) -> Result<()> {
    // Without a cache directory the rates serve this process only.
    let mut stored = load();
    stored
        .backends
        .insert(backend.to_string(), (device.to_string(), rates));
    if cache_dir().is_some() {
        write_cache_json(RATES_FILE, &stored)?;
    }
    *LOADED.lock().unwrap_or_else(|e| e.into_inner()) = Some(stored);
    ANSWERS.lock().unwrap_or_else(|e| e.into_inner()).clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rates stored before the wide per-point rate existed still load,
    /// without it.
    #[test]
    fn rates_stored_without_the_wide_rate_still_load() {
        let text = r#"{"gemm": {"a": 1e-11, "b": 1e-14, "per_chunk": 1e-4},
                       "per_point": {"a": 2e-11, "b": 1e-12, "per_chunk": 2e-4}}"#;
        let rates: MeasuredRates = serde_json::from_str(text).unwrap();
        assert_eq!(rates.per_point_wide, None);
        assert_eq!(rates.per_point.b, 1e-12);
    }
}
