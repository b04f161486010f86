//! `cumsum` and `cumprod` on the OpenCL device (to be written).

use gearbox_core::{DType, Result, Shape};

use super::{declined, Lib};
use crate::buffer::ClBuf;

/// Scans `x` along `axis` (all elements when `None`).
pub fn scan(
    _lib: &Lib<'_>,
    _x: (&ClBuf, &Shape),
    _how: (bool, Option<usize>),
    _out: (&Shape, DType),
) -> Result<ClBuf> {
    Err(declined("scan", "not yet on OpenCL"))
}
