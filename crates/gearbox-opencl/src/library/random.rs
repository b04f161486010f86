//! Philox `rand` and `randn` on the OpenCL device (to be written).

use gearbox_core::{DType, Result, Shape};

use super::{declined, Lib};
use crate::buffer::ClBuf;

/// `out.0.numel()` uniform or normal values of the Philox stream `seed`.
pub fn random(_lib: &Lib<'_>, _how: (u64, bool), _out: (&Shape, DType)) -> Result<ClBuf> {
    Err(declined("random", "not yet on OpenCL"))
}
