//! Calibrated size thresholds: each backend's built-in defaults, replaced by
//! measured ones stored in `calibration.json` in the cache directory
//! ([`crate::runtime::config::cache_dir`]). A stored entry applies only to the
//! device it was measured on.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::dtype::DType;
use crate::error::Result;
use crate::runtime::backend::{Backend, Threshold, WorkClass};
use crate::runtime::config::{cache_dir, read_cache_json, write_cache_json};

/// Thresholds measured for one backend on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCalibration {
    /// The device they were measured on.
    pub device: String,
    /// The thresholds.
    pub thresholds: Vec<Threshold>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct CalibrationFile {
    version: u32,
    backends: BTreeMap<String, StoredCalibration>,
}

static LOADED: Mutex<Option<Arc<CalibrationFile>>> = Mutex::new(None);

/// Where calibration results are stored.
pub fn calibration_path() -> Option<PathBuf> {
    cache_dir().map(|d| d.join(CALIBRATION_FILE))
}

/// The calibration file's name in the cache directory.
const CALIBRATION_FILE: &str = "calibration.json";

fn load() -> Arc<CalibrationFile> {
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = loaded.as_ref() {
        return Arc::clone(f);
    }
    let file = Arc::new(read_cache_json::<CalibrationFile>(CALIBRATION_FILE).unwrap_or_default());
    *loaded = Some(Arc::clone(&file));
    file
}

/// The built-in thresholds of fused work in `dtype` on a GPU, until
/// `gearbox calibrate` measures the device: elementwise work from 4,096
/// elements on resident data (4e6 cold), reductions from 16,384 (4e6
/// cold). These are what calibration measured for the CUDA backend on an
/// H100 and an H200 (`docs/perf/calibrate-*.txt`); backends without
/// measurements of their own start from them too.
pub fn builtin_kernel_thresholds(dtype: DType) -> [Threshold; 2] {
    [
        Threshold::from(WorkClass::Elementwise, dtype, 4.0e6, 4096.0),
        Threshold::from(WorkClass::Reduction, dtype, 4.0e6, 16384.0),
    ]
}

/// Forgets the loaded file, so the next lookup reads it again.
pub fn reload() {
    *LOADED.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The threshold in force for one class and dtype on `backend`, whose
/// device is called `device` (as its status row says): the stored one when
/// the file holds thresholds for that device, else the backend's default;
/// with where it came from (`"calibrated"` or `"built-in"`). The backend is
/// not asked for its device: the dispatcher reads this for every region.
pub fn threshold(
    backend: &dyn Backend,
    device: &str,
    class: WorkClass,
    dtype: DType,
) -> Option<(Threshold, &'static str)> {
    let wanted = |t: &Threshold| t.class == class && t.dtype == dtype;
    let file = load();
    match file.backends.get(backend.name()) {
        Some(stored) if stored.device == device => stored
            .thresholds
            .iter()
            .find(|t| wanted(t))
            .map(|t| (*t, "calibrated")),
        _ => backend
            .default_thresholds()
            .into_iter()
            .find(wanted)
            .map(|t| (t, "built-in")),
    }
}

/// Stores measured thresholds for `backend` on `device`; returns the file written.
pub fn store(backend: &str, device: &str, thresholds: Vec<Threshold>) -> Result<PathBuf> {
    let mut file = (*load()).clone();
    file.version = 1;
    file.backends.insert(
        backend.to_string(),
        StoredCalibration {
            device: device.to_string(),
            thresholds,
        },
    );
    let path = write_cache_json(CALIBRATION_FILE, &file)?;
    reload();
    Ok(path)
}

/// Runs every healthy backend's calibration and stores the results.
/// Returns, per backend, the thresholds stored.
pub fn calibrate() -> Result<Vec<(String, Vec<Threshold>)>> {
    let mut out = Vec::new();
    for c in crate::runtime::registry::candidates(true) {
        let Some(b) = c.backend else { continue };
        if c.status.health != crate::runtime::registry::Health::Healthy {
            continue;
        }
        let measured = b.calibrate()?;
        let device = b.info().map(|i| i.name).unwrap_or_default();
        store(b.name(), &device, measured.clone())?;
        out.push((b.name().to_string(), measured));
    }
    Ok(out)
}
