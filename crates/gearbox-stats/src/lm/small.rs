//! Small fits on the host: a fit whose work is a few million flops takes
//! less time on one host core than the device's fixed costs (each step a
//! launch, each check a synchronizing read), so inputs that live on a
//! device are read to the host first when that download is small, and the
//! whole fit runs there. Its results are host arrays.

use gearbox_core::{Array, Result};

/// Fits of at most this many flops (`n p (p + k)`: the QR and the effects)
/// run on the host when their inputs can be read there cheaply.
pub const SMALL_FIT_FLOPS: usize = 1 << 21;

/// The most input values a small fit downloads from a device to run on
/// the host (256 KiB of float64: a copy of well under a millisecond).
pub const SMALL_FIT_DOWNLOAD: usize = 1 << 15;

/// `x` and `y` as host-only arrays when the fit (`n` observations, `p`
/// terms, `k` responses) is small and at most [`SMALL_FIT_DOWNLOAD`] of
/// their values live on a device only; `None` otherwise (the fit then runs
/// where its inputs are).
pub(super) fn on_host_if_small(
    x: &Array,
    y: &Array,
    (n, p, k): (usize, usize, usize),
) -> Result<Option<(Array, Array)>> {
    let flops = n.saturating_mul(p).saturating_mul(p.saturating_add(k));
    if flops > SMALL_FIT_FLOPS || (x.device() == "cpu" && y.device() == "cpu") {
        return Ok(None);
    }
    let to_download = [x, y]
        .iter()
        .filter(|a| a.host_value().is_none())
        .map(|a| a.numel())
        .fold(0, usize::saturating_add);
    if to_download > SMALL_FIT_DOWNLOAD {
        return Ok(None);
    }
    Ok(Some((host_only(x)?, host_only(y)?)))
}

/// The values of `a` as an array that lives on the host alone (same shape
/// and precision): downloaded once if they live on a device only, then
/// shared by a host leaf (no copy of host values).
fn host_only(a: &Array) -> Result<Array> {
    a.buffer()?;
    a.with_precision(a.precision())
}
