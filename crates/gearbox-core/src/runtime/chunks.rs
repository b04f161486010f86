//! Work too large for a device's memory, taken in pieces on that device.
//!
//! A fused pass whose inputs each have the full iteration shape or a
//! single value computes every position from that position's inputs
//! alone, so it gives the same values on any contiguous range of
//! positions: the pass runs range by range as a one-dimensional kernel
//! with only that range's inputs and outputs on the device, the outputs
//! are gathered on the host, and a full reduction's partial results are
//! combined there by the reduction's monoid (a mean's partial means
//! weighted by their counts). The runtime tries this when a region runs
//! out of device memory (its pool's `GEARBOX_MEMORY_LIMIT`, or the device
//! itself) before it reruns the region on the CPU.

use std::sync::Arc;
use std::time::Instant;

use crate::buffer::HostBuffer;
use crate::error::{Error, Result};
use crate::fusion::ir::{IrReduce, KernelIr};
use crate::fusion::plan::FusedRegion;
use crate::ops::reduce::ReduceOp;
use crate::runtime::backend::Backend;
use crate::runtime::execute::host_of;
use crate::runtime::metrics;
use crate::shape::Shape;

/// Runs `region` on `backend` in ranges that keep its buffers within
/// `budget` bytes; `Ok(false)` when the region cannot be split so (an
/// input that broadcasts along some axes, a reduction along an axis or
/// without a monoid) or the budget holds no element.
pub(crate) fn run_in_chunks(
    region: &FusedRegion,
    backend: &Arc<dyn Backend>,
    budget: u64,
) -> Result<bool> {
    let kernel = &region.kernel;
    let n = kernel.shape().numel();
    let splittable_inputs = kernel
        .inputs()
        .iter()
        .all(|(s, _)| s.numel() == n || s.numel() == 1);
    let reduce = kernel.reduce().copied();
    let monoid = match reduce {
        None => None,
        // A product's pieces would be multiplied in plain f64, which can
        // overflow on the way (`prod` must not).
        Some(IrReduce { axis: None, op, .. }) => match op.monoid() {
            Some(m) if op != ReduceOp::Prod => Some(m),
            _ => return Ok(false),
        },
        Some(_) => return Ok(false),
    };
    if !splittable_inputs || n == 0 {
        return Ok(false);
    }
    let per_element: u64 = kernel
        .inputs()
        .iter()
        .filter(|(s, _)| s.numel() == n)
        .map(|(_, d)| d.size_bytes() as u64)
        .chain(
            kernel
                .outputs()
                .iter()
                .map(|&o| kernel.nodes()[o].dtype.size_bytes() as u64),
        )
        .sum::<u64>()
        .max(1);
    // Half the budget: the pool rounds blocks up to their size class.
    let len = (budget / 2 / per_element) as usize;
    if len == 0 || len >= n {
        return Ok(false);
    }
    let start = Instant::now();
    let host: Vec<Arc<HostBuffer>> = region.inputs.iter().map(host_of).collect::<Result<_>>()?;
    let mut outputs: Vec<HostBuffer> = kernel
        .outputs()
        .iter()
        .map(|&o| HostBuffer::filled("chunked pass", kernel.nodes()[o].dtype, n, 0.0))
        .collect::<Result<_>>()?;
    let mut total: Option<f64> = None;
    let mut begin = 0;
    while begin < n {
        let end = (begin + len).min(n);
        let piece = piece_kernel(kernel, end - begin)?;
        let uploaded = host
            .iter()
            .map(|h| {
                if h.len() == n {
                    backend.upload(&slice(h, begin, end))
                } else {
                    backend.upload(h)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<_> = uploaded.iter().map(|b| b.as_ref()).collect();
        let out = backend.run_kernel(&piece, &refs)?;
        for (whole, part) in outputs.iter_mut().zip(&out.outputs) {
            place(whole, &backend.download(part.as_ref())?, begin)?;
        }
        if let (Some(m), Some(r)) = (monoid, out.reduced.first()) {
            let mut v = backend.download(r.as_ref())?.get_f64(0);
            if m.divides_by_count {
                v *= (end - begin) as f64;
            }
            total = Some(total.map_or(v, |t| m.combine.apply(t, v)));
        }
        begin = end;
    }
    for (a, buf) in region.outputs.iter().zip(outputs) {
        a.set_host(Arc::new(buf));
    }
    if let (Some(a), Some(m), Some(r), Some(t)) = (region.reduced.first(), monoid, reduce, total) {
        let value = if m.divides_by_count { t / n as f64 } else { t };
        a.set_host(Arc::new(HostBuffer::filled(
            "chunked reduction",
            r.dtype,
            1,
            value,
        )?));
    }
    metrics::record_compute(backend.name(), kernel.bytes_moved(), start, || {
        format!("{} (in pieces of {len})", region.ops.join(" + "))
    });
    Ok(true)
}

/// The kernel over `len` positions of a range: the same nodes, one
/// dimension, single-value inputs as scalars.
fn piece_kernel(kernel: &KernelIr, len: usize) -> Result<KernelIr> {
    let n = kernel.shape().numel();
    let shape = Shape::from(vec![len]);
    let inputs = kernel
        .inputs()
        .iter()
        .map(|(s, d)| {
            (
                if s.numel() == n {
                    shape.clone()
                } else {
                    Shape::scalar()
                },
                *d,
            )
        })
        .collect();
    KernelIr::new(
        shape,
        inputs,
        kernel.nodes().to_vec(),
        kernel.outputs().to_vec(),
        kernel.reduce().copied(),
    )
}

/// Positions `begin..end` of `buf`.
fn slice(buf: &HostBuffer, begin: usize, end: usize) -> HostBuffer {
    crate::map_buffer!(buf, v => v[begin..end].to_vec())
}

/// Copies `part` into `whole` from position `at` on (same dtype).
fn place(whole: &mut HostBuffer, part: &HostBuffer, at: usize) -> Result<()> {
    match (whole, part) {
        (HostBuffer::Bool(w), HostBuffer::Bool(p)) => w[at..at + p.len()].copy_from_slice(p),
        (HostBuffer::I64(w), HostBuffer::I64(p)) => w[at..at + p.len()].copy_from_slice(p),
        (HostBuffer::F32(w), HostBuffer::F32(p)) => w[at..at + p.len()].copy_from_slice(p),
        (HostBuffer::F64(w), HostBuffer::F64(p)) => w[at..at + p.len()].copy_from_slice(p),
        (w, p) => {
            return Err(Error::Device {
                backend: "runtime".into(),
                op: "chunked pass".into(),
                reason: format!("a piece of {} values for a {} output", p.dtype(), w.dtype()),
                kind: crate::DeviceErrorKind::Fault,
            })
        }
    }
    Ok(())
}
