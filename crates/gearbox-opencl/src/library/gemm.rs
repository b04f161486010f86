//! GEMM on the OpenCL device (to be written).

use gearbox_core::runtime::backend::LibraryCall;
use gearbox_core::{DType, Result, Shape};

use super::{declined, Lib};
use crate::buffer::ClBuf;

/// Runs a matrix product.
pub fn call(
    _lib: &Lib<'_>,
    call: LibraryCall,
    _inputs: &[(&ClBuf, &Shape)],
    _out: (&Shape, DType),
) -> Result<ClBuf> {
    Err(declined(call.name(), "not yet on OpenCL"))
}
