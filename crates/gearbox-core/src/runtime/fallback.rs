//! The fallback log: every region that failed on a backend and was rerun on
//! the CPU, with when, what, from where to where, and why.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// One fallback.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FallbackEntry {
    /// UTC time, `YYYY-MM-DD HH:MM:SS`.
    pub timestamp: String,
    /// The work that failed (fused op names joined by `+`, or the op).
    pub op: String,
    /// Backend it failed on.
    pub from_backend: String,
    /// Backend that produced the result instead.
    pub to_backend: String,
    /// The error.
    pub reason: String,
}

static LOG: Mutex<Vec<FallbackEntry>> = Mutex::new(Vec::new());

/// Appends an entry.
pub(crate) fn record(op: &str, from: &str, to: &str, reason: &str) {
    tracing::warn!("{op} failed on {from}, rerun on {to}: {reason}");
    crate::runtime::metrics::record_fallback(from);
    LOG.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(FallbackEntry {
            timestamp: utc_now(),
            op: op.to_string(),
            from_backend: from.to_string(),
            to_backend: to.to_string(),
            reason: reason.to_string(),
        });
}

/// Every fallback so far, oldest first.
pub fn fallback_log() -> Vec<FallbackEntry> {
    LOG.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Empties the log.
pub fn fallback_log_reset() {
    LOG.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The current UTC time as `YYYY-MM-DD HH:MM:SS` (civil-from-days, Howard Hinnant).
pub(crate) fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamp_has_the_documented_form() {
        let t = super::utc_now();
        assert_eq!(t.len(), 19, "{t}");
        assert!(t.starts_with("20"), "{t}");
        assert_eq!(&t[4..5], "-");
        assert_eq!(&t[13..14], ":");
    }
}
