//! The checks of a first-use probe, for any backend (the runtime runs the
//! probe in a child process, [`crate::runtime::probe`]): a small fused
//! kernel in float32 and float64 and 64 x 64 GEMMs in both precisions,
//! every number checked against a host reference.

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::Result;
use crate::fusion::ir::probe_kernel;
use crate::runtime::backend::{Backend, DeviceBuffer, LibraryCall, ProbeCheck};
use crate::shape::Shape;

/// `float32` or `float64`.
fn float_name(dtype: DType) -> &'static str {
    if dtype == DType::F32 {
        "float32"
    } else {
        "float64"
    }
}

fn check(name: String, err: f64, tol: f64) -> ProbeCheck {
    ProbeCheck {
        name,
        passed: err <= tol,
        detail: format!("max relative error {err:.1e} (limit {tol:.0e})"),
    }
}

/// A small fused kernel (`x * x + 1` over 1,000 values) in `dtype`, built
/// by `compiler`, against the host.
pub fn kernel_check(b: &dyn Backend, compiler: &str, dtype: DType) -> Result<ProbeCheck> {
    let n = 1000;
    let xs: Vec<f64> = (0..n).map(|i| (i as f64) * 0.01 - 5.0).collect();
    let ir = probe_kernel(n, dtype)?;
    let x = b.upload(&HostBuffer::F64(xs.clone()).cast(dtype)?)?;
    let one = b.upload(&HostBuffer::F64(vec![1.0]).cast(dtype)?)?;
    let out = b.run_kernel(&ir, &[x.as_ref(), one.as_ref()])?;
    let got = b.download(out.outputs[0].as_ref())?.to_f64_vec()?;
    let err = xs
        .iter()
        .zip(&got)
        .map(|(x, g)| ((x * x + 1.0) - g).abs() / (x * x + 1.0))
        .fold(0.0, f64::max);
    let tol = if dtype == DType::F32 { 1e-6 } else { 1e-15 };
    Ok(check(
        format!("{} kernel x*x+1 ({compiler})", float_name(dtype)),
        err,
        tol,
    ))
}

fn gemm_check(b: &dyn Backend, blas: &str, dtype: DType) -> Result<ProbeCheck> {
    let n = 64;
    let a: Vec<f64> = (0..n * n)
        .map(|i| ((i * 37 % 101) as f64) / 101.0 - 0.5)
        .collect();
    let c: Vec<f64> = (0..n * n)
        .map(|i| ((i * 53 % 97) as f64) / 97.0 - 0.5)
        .collect();
    let mut want = vec![0.0; n * n];
    for j in 0..n {
        for k in 0..n {
            for i in 0..n {
                want[i + n * j] += a[i + n * k] * c[k + n * j];
            }
        }
    }
    let shape = Shape::new(vec![n, n]);
    let da = b.upload(&HostBuffer::F64(a).cast(dtype)?)?;
    let dc = b.upload(&HostBuffer::F64(c).cast(dtype)?)?;
    let inputs: [(&dyn DeviceBuffer, &Shape); 2] = [(da.as_ref(), &shape), (dc.as_ref(), &shape)];
    let out = b.library_call(LibraryCall::Matmul, &inputs, (&shape, dtype))?;
    let got = b.download(out.as_ref())?.to_f64_vec()?;
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let err = want
        .iter()
        .zip(&got)
        .map(|(w, g)| (w - g).abs() / scale)
        .fold(0.0, f64::max);
    let tol = if dtype == DType::F32 { 1e-5 } else { 1e-13 };
    Ok(check(
        format!("{} GEMM 64x64 ({blas})", float_name(dtype)),
        err,
        tol,
    ))
}

/// The fused-kernel checks of a backend whose kernels `compiler` builds:
/// f32 always, f64 too where the device has it (`f64`).
pub fn kernel_checks(b: &dyn Backend, compiler: &str, f64: bool) -> Result<Vec<ProbeCheck>> {
    let mut checks = vec![kernel_check(b, compiler, DType::F32)?];
    if f64 {
        checks.push(kernel_check(b, compiler, DType::F64)?);
    }
    Ok(checks)
}

/// Runs every check on `b`, naming its kernel compiler and its GEMM
/// library in the checks' names; an error (no device, a library failing)
/// fails the probe.
pub fn standard_checks(b: &dyn Backend, compiler: &str, blas: &str) -> Result<Vec<ProbeCheck>> {
    Ok(vec![
        kernel_check(b, compiler, DType::F32)?,
        kernel_check(b, compiler, DType::F64)?,
        gemm_check(b, blas, DType::F32)?,
        gemm_check(b, blas, DType::F64)?,
    ])
}
