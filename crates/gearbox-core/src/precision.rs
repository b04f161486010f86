//! The precision contract and the session default.
//!
//! Precision is per array and says where its work may run and at what width:
//! - [`Precision::Fast`]: float32 arithmetic is acceptable (about 1e-4 relative
//!   to float64); eligible for any GPU backend.
//! - [`Precision::Strict`]: float64 results to about 1e-12; eligible for a GPU
//!   only where the device runs float64 at full rate and passes a float64 probe.
//! - [`Precision::Exact`]: float64 on the CPU reference backend, reproducible
//!   bit for bit.
//!
//! The dtype of an array is its storage type and is independent of precision.
//! An operation on arrays of different precisions takes the strictest one.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::Error;

/// How exact a result must be, which decides where its work may run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Precision {
    /// float32 is acceptable; GPU-eligible.
    Fast,
    /// float64 to about 1e-12; GPU-eligible only with full-rate float64.
    Strict,
    /// float64 on the CPU reference, bit for bit reproducible.
    Exact,
}

impl Precision {
    /// The lower-case name (`fast`, `strict`, `exact`).
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fast => "fast",
            Precision::Strict => "strict",
            Precision::Exact => "exact",
        }
    }

    /// The strictest of two precisions; used for the result of a binary op.
    pub fn strictest(a: Precision, b: Precision) -> Precision {
        a.max(b)
    }

    fn to_u8(self) -> u8 {
        self as u8
    }

    fn from_u8(v: u8) -> Precision {
        match v {
            0 => Precision::Fast,
            2 => Precision::Exact,
            _ => Precision::Strict,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "fast" => Ok(Precision::Fast),
            "strict" => Ok(Precision::Strict),
            "exact" => Ok(Precision::Exact),
            other => Err(Error::Config {
                name: "precision".into(),
                value: other.into(),
                why: "expected fast, strict or exact".into(),
            }),
        }
    }
}

const UNSET: u8 = u8::MAX;
static SESSION_DEFAULT: AtomicU8 = AtomicU8::new(UNSET);

/// The precision new arrays get: the last [`set_default_precision`], else
/// `GEARBOX_PRECISION`, else [`Precision::Strict`].
pub fn default_precision() -> Precision {
    let v = SESSION_DEFAULT.load(Ordering::Relaxed);
    if v != UNSET {
        return Precision::from_u8(v);
    }
    let from_env = std::env::var("GEARBOX_PRECISION")
        .ok()
        .and_then(|s| match s.parse() {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!("ignoring GEARBOX_PRECISION: {e}");
                None
            }
        });
    let p = from_env.unwrap_or(Precision::Strict);
    SESSION_DEFAULT.store(p.to_u8(), Ordering::Relaxed);
    p
}

/// Sets the session default precision; returns the previous one.
///
/// ```
/// use gearbox_core::{set_default_precision, default_precision, Precision};
/// let before = set_default_precision(Precision::Fast);
/// assert_eq!(default_precision(), Precision::Fast);
/// set_default_precision(before);
/// ```
pub fn set_default_precision(p: Precision) -> Precision {
    let before = default_precision();
    SESSION_DEFAULT.store(p.to_u8(), Ordering::Relaxed);
    before
}
