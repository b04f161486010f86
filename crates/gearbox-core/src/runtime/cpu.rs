//! The CPU reference backend behind the [`Backend`] trait, and the host
//! helpers it shares with host-memory test backends: fused kernels run on the
//! fused-kernel interpreter, library calls on the same primitives (faer) that
//! the op-by-op path uses.
//!
//! The executor runs CPU work directly on host buffers; this type exists so
//! that the CPU is a backend like any other for tools that walk backends
//! (calibration, conformance suites) and so that it documents the contract.

use std::any::Any;
use std::sync::Arc;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{DeviceErrorKind, Error, Result};
use crate::fusion::ir::KernelIr;
use crate::graph::{Operand, Primitive, Spec};
use crate::ops::creation::{Distribution, Random};
use crate::ops::linalg::factor::{Factor, FactorOp, Solve};
use crate::ops::linalg::{Product, ProductKind};
use crate::ops::reduce::Cumulative;
use crate::ops::shape_ops::{Concat, Slice};
use crate::runtime::backend::{
    Backend, Capabilities, DeviceArc, DeviceBuffer, DeviceInfo, DeviceOutputs, LibraryCall,
    ProbeCheck, ProbeReport,
};
use crate::shape::Shape;

/// Host memory presented as a device buffer of backend `backend`.
#[derive(Debug, Clone)]
pub struct HostResident {
    /// The owning backend's name.
    pub backend: &'static str,
    /// The values.
    pub data: Arc<HostBuffer>,
}

impl DeviceBuffer for HostResident {
    fn backend(&self) -> &'static str {
        self.backend
    }
    fn len(&self) -> usize {
        self.data.len()
    }
    fn dtype(&self) -> DType {
        self.data.dtype()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The host values of a buffer that must belong to `backend`.
pub fn host_data<'a>(
    backend: &'static str,
    buf: &'a dyn DeviceBuffer,
) -> Result<&'a Arc<HostBuffer>> {
    match buf.as_any().downcast_ref::<HostResident>() {
        Some(h) if h.backend == backend => Ok(&h.data),
        _ => Err(Error::Device {
            backend: backend.into(),
            op: "buffer".into(),
            reason: format!(
                "a buffer of backend {} was passed to {backend}",
                buf.backend()
            ),
            kind: DeviceErrorKind::Fault,
        }),
    }
}

/// The primitive that computes a library call on the host (`out` is the
/// result's shape, which a generator needs).
fn primitive_for(call: LibraryCall, out: &Shape) -> Result<Arc<dyn Primitive>> {
    Ok(match call {
        LibraryCall::Scan { product, axis } => Arc::new(Cumulative { product, axis }),
        LibraryCall::Random { seed, normal } => Arc::new(Random::new(
            out.clone(),
            seed,
            if normal {
                Distribution::Normal
            } else {
                Distribution::Uniform
            },
        )),
        LibraryCall::Slice { axis, start, end } => Arc::new(Slice {
            axis,
            range: start..end,
        }),
        LibraryCall::Concat { axis } => Arc::new(Concat(axis)),
        LibraryCall::Take { axis } => Arc::new(crate::ops::take::Take::new(axis)),
        LibraryCall::Permute { order } => Arc::new(crate::ops::permute::Permute(order)),
        LibraryCall::Matmul => Arc::new(Product(ProductKind::MatMul)),
        LibraryCall::Crossprod => Arc::new(Product(ProductKind::CrossProd)),
        LibraryCall::Tcrossprod => Arc::new(Product(ProductKind::TCrossProd)),
        LibraryCall::Solve => Arc::new(Solve),
        LibraryCall::Cholesky => Arc::new(Factor(FactorOp::Cholesky)),
        LibraryCall::Inv => Arc::new(Factor(FactorOp::Inv)),
        LibraryCall::InvUpper => Arc::new(Factor(FactorOp::InvUpper)),
        LibraryCall::Qr => Arc::new(Factor(FactorOp::QrPacked)),
        LibraryCall::LinearGrid { spec, points } => {
            Arc::new(crate::ops::linear_grid::LinearGrid::new(spec, points)?)
        }
    })
}

/// Runs a library call on host values with the reference primitives.
pub fn host_library_call(
    call: LibraryCall,
    inputs: &[(&Arc<HostBuffer>, &Shape)],
    out: &Shape,
) -> Result<Arc<HostBuffer>> {
    let prim = primitive_for(call, out)?;
    let specs: Vec<Spec> = inputs
        .iter()
        .map(|(b, s)| Spec::new((*s).clone(), b.dtype()))
        .collect();
    let spec = prim.output_spec(&specs.iter().collect::<Vec<_>>())?;
    let operands: Vec<Operand<'_>> = inputs
        .iter()
        .zip(&specs)
        .map(|((buf, _), spec)| Operand { spec, buf })
        .collect();
    prim.eval_cpu(&operands, &spec)
}

/// Runs a fused kernel on host values, wrapping results for `backend`.
pub fn host_kernel(
    backend: &'static str,
    kernel: &KernelIr,
    inputs: &[&dyn DeviceBuffer],
) -> Result<DeviceOutputs> {
    let data: Vec<&HostBuffer> = inputs
        .iter()
        .map(|b| host_data(backend, *b).map(|d| d.as_ref()))
        .collect::<Result<_>>()?;
    let out = crate::fusion::cpu::run(kernel, &data)?;
    let wrap = |h: HostBuffer| -> DeviceArc {
        Arc::new(HostResident {
            backend,
            data: Arc::new(h),
        })
    };
    Ok(DeviceOutputs {
        outputs: out.outputs.into_iter().map(wrap).collect(),
        reduced: out.reduced.into_iter().map(wrap).collect(),
    })
}

/// The CPU reference backend.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn is_host(&self) -> bool {
        true
    }
    fn info(&self) -> Result<DeviceInfo> {
        Ok(DeviceInfo {
            name: format!("host CPU ({} threads)", rayon::current_num_threads()),
            memory_bytes: 0,
            full_rate_f64: true,
            compute_capability: None,
            driver: None,
        })
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::everything()
    }
    fn upload(&self, buf: &HostBuffer) -> Result<DeviceArc> {
        Ok(Arc::new(HostResident {
            backend: "cpu",
            data: Arc::new(buf.try_clone("upload")?),
        }))
    }
    fn download(&self, buf: &dyn DeviceBuffer) -> Result<HostBuffer> {
        host_data("cpu", buf)?.try_clone("download")
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn run_kernel(&self, kernel: &KernelIr, inputs: &[&dyn DeviceBuffer]) -> Result<DeviceOutputs> {
        host_kernel("cpu", kernel, inputs)
    }
    fn library_call(
        &self,
        call: LibraryCall,
        inputs: &[(&dyn DeviceBuffer, &Shape)],
        out: (&Shape, DType),
    ) -> Result<DeviceArc> {
        let data: Vec<(&Arc<HostBuffer>, &Shape)> = inputs
            .iter()
            .map(|(b, s)| host_data("cpu", *b).map(|d| (d, *s)))
            .collect::<Result<_>>()?;
        Ok(Arc::new(HostResident {
            backend: "cpu",
            data: host_library_call(call, &data, out.0)?,
        }))
    }
    fn probe(&self) -> Result<ProbeReport> {
        Ok(ProbeReport {
            info: self.info()?,
            checks: vec![ProbeCheck {
                name: "float64 reference".into(),
                passed: true,
                detail: "the CPU is the reference".into(),
            }],
        })
    }
}
