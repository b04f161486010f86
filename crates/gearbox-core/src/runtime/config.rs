//! Runtime options, settable in code and overridable by `GEARBOX_*`
//! environment variables (listed in the README's configuration table).
//!
//! | variable | meaning |
//! | --- | --- |
//! | `GEARBOX_AUTO_PROBE=0` | never probe a backend on first use; only `use_gpu()` probes |
//! | `GEARBOX_QUIET=1` | no confirmation line from `use_gpu()` |
//! | `GEARBOX_OPTIONAL_BACKENDS=0` | turn every optional (GPU) backend off |
//! | `GEARBOX_DISABLE_<NAME>=1` | turn one backend off, e.g. `GEARBOX_DISABLE_CUDA=1` |
//! | `GEARBOX_PROBE_TIMEOUT_S` | seconds a probe may take before it counts as hung (default 60) |
//! | `GEARBOX_PROBE_INJECT` | test hook: `crash`, `hang` or `wrong` makes the probe child do that |
//! | `GEARBOX_CACHE_DIR` | where calibration and kernel caches live (default `$XDG_CACHE_HOME/gearbox` or `~/.cache/gearbox`) |
//! | `GEARBOX_FUSION=0` | evaluate op by op, without fusion (for debugging and comparisons) |
//! | `GEARBOX_FORCE_BACKEND=<name>` | send work to that backend whatever its size (other gates still apply) |

use std::path::PathBuf;
use std::sync::RwLock;
use std::time::Duration;

/// Options of the acceleration runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeOptions {
    /// Probe a backend automatically the first time work could go to it.
    pub auto_probe: bool,
    /// Silence the `use_gpu()` confirmation line.
    pub quiet: bool,
    /// Allow optional (GPU) backends at all.
    pub optional_backends: bool,
    /// Backends turned off by name.
    pub disabled: Vec<String>,
    /// How long a probe may run.
    pub probe_timeout: Duration,
    /// Fuse elementwise chains and trailing reductions.
    pub fusion: bool,
    /// Send work to this backend whatever its size (the calibration gate
    /// passes; every other gate still applies).
    pub force_backend: Option<String>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            auto_probe: true,
            quiet: false,
            optional_backends: true,
            disabled: Vec::new(),
            probe_timeout: Duration::from_secs(60),
            fusion: true,
            force_backend: None,
        }
    }
}

/// Where the library is called from: advice in messages names the calls
/// the user has there (`gpu_status()` in Rust, `gearbox status` on the
/// command line, `gb_gpu_status()` in R).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Rust code calling the library (the default).
    Rust,
    /// The `gearbox` command.
    Cli,
    /// The R package.
    R,
}

static SURFACE: RwLock<Surface> = RwLock::new(Surface::Rust);

/// Sets where the library is called from (the `gearbox` command and the R
/// package set theirs when they start).
pub fn set_surface(surface: Surface) {
    *SURFACE.write().unwrap_or_else(|e| e.into_inner()) = surface;
}

/// Where the library is called from ([`set_surface`]).
pub fn surface() -> Surface {
    *SURFACE.read().unwrap_or_else(|e| e.into_inner())
}

impl Surface {
    /// What shows the backends' status and why one is off, here.
    pub fn status_call(self) -> &'static str {
        match self {
            Surface::Rust => "gpu_status()",
            Surface::Cli => "`gearbox status`",
            Surface::R => "gb_gpu_status()",
        }
    }

    /// What makes a plan that probes first, here.
    pub fn probed_plan_call(self) -> &'static str {
        match self {
            Surface::Rust => "backend_plan_probed()",
            Surface::Cli => "`gearbox explain` without --no-probe",
            Surface::R => "gb_use_gpu() before gb_explain()",
        }
    }

    /// What probes a backend again once its cause is fixed, here.
    pub fn use_gpu_call(self) -> &'static str {
        match self {
            Surface::Rust => "use_gpu()",
            Surface::Cli => "the next `gearbox` run (each run probes afresh)",
            Surface::R => "gb_use_gpu()",
        }
    }
}

/// The value of environment variable `var` parsed (surrounding spaces
/// ignored), when it is set and `allowed` accepts it: how backends read
/// their knobs.
pub fn env_value<T: std::str::FromStr>(var: &str, allowed: impl Fn(&T) -> bool) -> Option<T> {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(allowed)
}

/// Environment variable `var` set to `1` (true) or `0` (false).
pub fn env_switch(var: &str) -> Option<bool> {
    env_value::<u8>(var, |v| *v <= 1).map(|v| v == 1)
}

fn env_flag(name: &str) -> Option<bool> {
    let v = std::env::var(name).ok()?;
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        other => {
            tracing::warn!("ignoring {name}={other:?}: expected 0 or 1");
            None
        }
    }
}

impl RuntimeOptions {
    /// The defaults with every `GEARBOX_*` override applied.
    pub fn from_env() -> Self {
        let mut o = RuntimeOptions::default();
        if let Some(v) = env_flag("GEARBOX_AUTO_PROBE") {
            o.auto_probe = v;
        }
        if let Some(v) = env_flag("GEARBOX_QUIET") {
            o.quiet = v;
        }
        if let Some(v) = env_flag("GEARBOX_OPTIONAL_BACKENDS") {
            o.optional_backends = v;
        }
        if let Some(v) = env_flag("GEARBOX_FUSION") {
            o.fusion = v;
        }
        if let Ok(s) = std::env::var("GEARBOX_PROBE_TIMEOUT_S") {
            match s.trim().parse::<f64>() {
                Ok(secs) if secs > 0.0 && secs.is_finite() => {
                    o.probe_timeout = Duration::from_secs_f64(secs)
                }
                _ => tracing::warn!("ignoring GEARBOX_PROBE_TIMEOUT_S={s:?}: expected seconds > 0"),
            }
        }
        if let Ok(b) = std::env::var("GEARBOX_FORCE_BACKEND") {
            o.force_backend = Some(b.trim().to_ascii_lowercase()).filter(|b| !b.is_empty());
        }
        for (k, v) in std::env::vars() {
            if let Some(name) = k.strip_prefix("GEARBOX_DISABLE_") {
                if matches!(v.trim(), "1" | "true" | "yes" | "on") {
                    o.disabled.push(name.to_ascii_lowercase());
                }
            }
        }
        o
    }

    /// Whether backend `name` is turned off by these options (the CPU never is).
    pub fn is_disabled(&self, name: &str) -> bool {
        name != "cpu" && (!self.optional_backends || self.disabled.iter().any(|d| d == name))
    }
}

static OPTIONS: RwLock<Option<RuntimeOptions>> = RwLock::new(None);

/// The options in force (read from the environment the first time).
pub fn options() -> RuntimeOptions {
    if let Some(o) = OPTIONS.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return o.clone();
    }
    let mut w = OPTIONS.write().unwrap_or_else(|e| e.into_inner());
    w.get_or_insert_with(RuntimeOptions::from_env).clone()
}

/// Replaces the options in force; returns the previous ones.
pub fn set_options(o: RuntimeOptions) -> RuntimeOptions {
    let previous = options();
    *OPTIONS.write().unwrap_or_else(|e| e.into_inner()) = Some(o);
    previous
}

/// Where Gearbox keeps caches: `GEARBOX_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/gearbox`, else `$HOME/.cache/gearbox`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("GEARBOX_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Ok(d) = std::env::var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("gearbox"));
    }
    std::env::var("HOME")
        .ok()
        .map(|h| PathBuf::from(h).join(".cache").join("gearbox"))
}

/// The JSON file `name` of the cache directory, read as `T`: `None` when
/// there is no cache directory or no such file, and when it does not parse
/// (the file is then deleted with a repair entry,
/// [`crate::runtime::cache_file::repairs`], so the next write starts it
/// afresh rather than every process tripping over it).
pub fn read_cache_json<T: serde::de::DeserializeOwned>(name: &str) -> Option<T> {
    let path = cache_dir()?.join(name);
    let bytes = std::fs::read(&path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            crate::runtime::cache_file::discard(
                &path,
                &format!("not valid JSON of this build ({e})"),
            );
            None
        }
    }
}

/// Writes `value` as JSON to the file `name` of the cache directory
/// (created if missing; written to a temporary file and renamed, so a
/// reader never sees half of it); returns the file's path. No cache directory, or a
/// failed write, is an [`crate::Error::Config`] naming the file.
pub fn write_cache_json<T: serde::Serialize>(name: &str, value: &T) -> crate::Result<PathBuf> {
    let config = |value: String, why: String| crate::Error::Config {
        name: name.into(),
        value,
        why,
    };
    let Some(dir) = cache_dir() else {
        return Err(config(
            String::new(),
            "no cache directory: set GEARBOX_CACHE_DIR or HOME".into(),
        ));
    };
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| config(path.display().to_string(), e.to_string()))?;
    std::fs::create_dir_all(&dir)
        .and_then(|_| crate::runtime::cache_file::write_atomically(&path, text.as_bytes()))
        .map_err(|e| config(path.display().to_string(), e.to_string()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::{env_switch, env_value};

    #[test]
    fn switches_take_zero_or_one_only() {
        std::env::set_var("GEARBOX_TEST_SWITCH_A", "1");
        std::env::set_var("GEARBOX_TEST_SWITCH_B", " 0 ");
        std::env::set_var("GEARBOX_TEST_SWITCH_C", "yes");
        assert_eq!(env_switch("GEARBOX_TEST_SWITCH_A"), Some(true));
        assert_eq!(env_switch("GEARBOX_TEST_SWITCH_B"), Some(false));
        assert_eq!(env_switch("GEARBOX_TEST_SWITCH_C"), None);
        assert_eq!(env_switch("GEARBOX_TEST_SWITCH_UNSET"), None);
        assert_eq!(env_value("GEARBOX_TEST_SWITCH_A", |v: &u32| *v > 1), None);
    }
}
