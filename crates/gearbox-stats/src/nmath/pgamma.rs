//! The gamma distribution function (R's `pgamma.c`, Morten Welinder's
//! algorithm) and the log-space sums it defines.

use super::density_scale::fmax2;

/// `log(exp(logx) + exp(logy))` without overflow or needless loss of
/// accuracy (R's `logspace_add`).
pub fn logspace_add(logx: f64, logy: f64) -> f64 {
    fmax2(logx, logy) + (-(logx - logy).abs()).exp().ln_1p()
}
