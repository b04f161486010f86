//! Calibration: for each class of work and dtype, time the CPU against the
//! GPU cold (upload, compute, download) and resident (compute only) over a
//! sweep of sizes, and place each threshold where routing serves the sweep
//! best (see [`thresholds_from`]).

use std::time::Instant;

use gearbox_core::fusion::ir::{Expr, IrNode, IrReduce, KernelIr};
use gearbox_core::runtime::backend::{Backend, DeviceBuffer, LibraryCall, Threshold, WorkClass};
use gearbox_core::runtime::cpu::host_library_call;
use gearbox_core::{BinaryOp, DType, HostBuffer, ReduceOp, Result, Shape, UnaryOp};

use crate::backend::CudaBackend;

/// One size of the sweep: seconds on the CPU and on the GPU, cold and resident.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CurvePoint {
    /// Elements (passes) or flops (GEMM).
    pub size: f64,
    /// CPU seconds.
    pub cpu: f64,
    /// GPU seconds with upload and download.
    pub gpu_cold: f64,
    /// GPU seconds with inputs already on the device.
    pub gpu_resident: f64,
}

/// The sweep of one class and dtype.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Curve {
    /// Class of work.
    pub class: WorkClass,
    /// dtype.
    pub dtype: DType,
    /// The measurements, by increasing size.
    pub points: Vec<CurvePoint>,
}

fn best_of<F: FnMut() -> Result<()>>(reps: usize, mut f: F) -> Result<f64> {
    f()?; // warm-up (compiles kernels, fills the pool)
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

fn data(n: usize, dtype: DType, seed: u64) -> HostBuffer {
    HostBuffer::F64(
        (0..n)
            .map(|i| (((i as u64 * 2654435761 + seed) % 1000) as f64) / 1000.0 - 0.5)
            .collect(),
    )
    .cast(dtype)
}

/// `exp(x)*y + sin(x) - 2*y`, optionally summed.
fn chain_ir(n: usize, dtype: DType, reduce: bool) -> Result<KernelIr> {
    let s = Shape::new(vec![n]);
    let node = |expr| IrNode { expr, dtype };
    let nodes = vec![
        node(Expr::Load(0)),
        node(Expr::Load(1)),
        node(Expr::Load(2)),
        node(Expr::Unary(UnaryOp::Exp, 0)),
        node(Expr::Binary(BinaryOp::Mul, 3, 1)),
        node(Expr::Unary(UnaryOp::Sin, 0)),
        node(Expr::Binary(BinaryOp::Add, 4, 5)),
        node(Expr::Binary(BinaryOp::Mul, 2, 1)),
        node(Expr::Binary(BinaryOp::Sub, 6, 7)),
    ];
    let (outputs, red) = if reduce {
        (
            vec![],
            Some(IrReduce {
                op: ReduceOp::Sum,
                axis: None,
                node: 8,
                dtype,
            }),
        )
    } else {
        (vec![8], None)
    };
    KernelIr::new(
        s.clone(),
        vec![(s.clone(), dtype), (s, dtype), (Shape::scalar(), dtype)],
        nodes,
        outputs,
        red,
    )
}

fn pass_point(b: &CudaBackend, n: usize, dtype: DType, reduce: bool) -> Result<CurvePoint> {
    let ir = chain_ir(n, dtype, reduce)?;
    let (x, y, two) = (
        data(n, dtype, 1),
        data(n, dtype, 2),
        HostBuffer::F64(vec![2.0]).cast(dtype),
    );
    let reps = if n < 1 << 20 { 5 } else { 2 };
    let cpu = best_of(reps, || {
        gearbox_core::fusion::cpu::run(&ir, &[&x, &y, &two]).map(|_| ())
    })?;
    let gpu_cold = best_of(reps, || {
        let (dx, dy, dt) = (b.upload(&x)?, b.upload(&y)?, b.upload(&two)?);
        let out = b.run_kernel(&ir, &[dx.as_ref(), dy.as_ref(), dt.as_ref()])?;
        let result = out
            .reduced
            .or_else(|| out.outputs.into_iter().next())
            .expect("one result");
        b.download(result.as_ref()).map(|_| ())
    })?;
    let (dx, dy, dt) = (b.upload(&x)?, b.upload(&y)?, b.upload(&two)?);
    let gpu_resident = best_of(reps, || {
        b.run_kernel(&ir, &[dx.as_ref(), dy.as_ref(), dt.as_ref()])?;
        b.synchronize()
    })?;
    Ok(CurvePoint {
        size: n as f64,
        cpu,
        gpu_cold,
        gpu_resident,
    })
}

fn gemm_point(b: &CudaBackend, n: usize, dtype: DType) -> Result<CurvePoint> {
    let shape = Shape::new(vec![n, n]);
    let (x, y) = (
        std::sync::Arc::new(data(n * n, dtype, 3)),
        std::sync::Arc::new(data(n * n, dtype, 4)),
    );
    let reps = if n <= 512 { 5 } else { 2 };
    let cpu = best_of(reps, || {
        host_library_call(LibraryCall::Matmul, &[(&x, &shape), (&y, &shape)], &shape).map(|_| ())
    })?;
    let gpu_cold = best_of(reps, || {
        let (dx, dy) = (b.upload(&x)?, b.upload(&y)?);
        let ins: [(&dyn DeviceBuffer, &Shape); 2] = [(dx.as_ref(), &shape), (dy.as_ref(), &shape)];
        let out = b.library_call(LibraryCall::Matmul, &ins, (&shape, dtype))?;
        b.download(out.as_ref()).map(|_| ())
    })?;
    let (dx, dy) = (b.upload(&x)?, b.upload(&y)?);
    let gpu_resident = best_of(reps, || {
        let ins: [(&dyn DeviceBuffer, &Shape); 2] = [(dx.as_ref(), &shape), (dy.as_ref(), &shape)];
        b.library_call(LibraryCall::Matmul, &ins, (&shape, dtype))?;
        b.synchronize()
    })?;
    Ok(CurvePoint {
        size: 2.0 * (n as f64).powi(3),
        cpu,
        gpu_cold,
        gpu_resident,
    })
}

/// The sizes swept: elements for passes, matrix orders for GEMM.
const PASS_SIZES: [usize; 8] = [
    1 << 10,
    1 << 12,
    1 << 14,
    1 << 16,
    1 << 18,
    1 << 20,
    1 << 22,
    1 << 24,
];
const GEMM_ORDERS: [usize; 7] = [32, 64, 128, 256, 512, 1024, 2048];

/// Runs the sweep, calling `progress(done, total, label)` after each point.
pub fn sweep(b: &CudaBackend, progress: &mut dyn FnMut(usize, usize, &str)) -> Result<Vec<Curve>> {
    let total = 2 * (2 * PASS_SIZES.len() + GEMM_ORDERS.len());
    let mut done = 0;
    let mut curves = Vec::new();
    for dtype in [DType::F32, DType::F64] {
        for (class, reduce) in [
            (WorkClass::Elementwise, false),
            (WorkClass::Reduction, true),
        ] {
            let mut points = Vec::new();
            for n in PASS_SIZES {
                points.push(pass_point(b, n, dtype, reduce)?);
                done += 1;
                progress(done, total, &format!("{} {dtype} n={n}", class.name()));
            }
            curves.push(Curve {
                class,
                dtype,
                points,
            });
        }
        let mut points = Vec::new();
        for n in GEMM_ORDERS {
            points.push(gemm_point(b, n, dtype)?);
            done += 1;
            progress(done, total, &format!("gemm {dtype} {n}x{n}"));
        }
        curves.push(Curve {
            class: WorkClass::Gemm,
            dtype,
            points,
        });
    }
    Ok(curves)
}

/// The window `[lo, hi)` of sizes to send to the GPU that serves the sweep
/// best: among the swept sizes (and infinity) for both ends, the one whose
/// routing (GPU inside the window, CPU outside) has the smallest worst ratio
/// to the better fixed choice at any size. Ties go to the window that uses
/// the GPU least (larger `lo`, then smaller `hi`). This is the criterion the
/// router is judged by; a window expresses curves that cross twice (a cold
/// GPU path that wins at middle sizes but loses to many host cores later).
fn crossover(points: &[CurvePoint], gpu: impl Fn(&CurvePoint) -> f64) -> (f64, f64) {
    let ends: Vec<f64> = points
        .iter()
        .map(|p| p.size)
        .chain(std::iter::once(f64::INFINITY))
        .collect();
    let worst = |lo: f64, hi: f64| {
        points
            .iter()
            .map(|p| {
                let routed = if lo <= p.size && p.size < hi {
                    gpu(p)
                } else {
                    p.cpu
                };
                routed / gpu(p).min(p.cpu).max(1e-12)
            })
            .fold(1.0, f64::max)
    };
    let mut best = (
        (f64::INFINITY, f64::INFINITY),
        worst(f64::INFINITY, f64::INFINITY),
    );
    for &lo in &ends {
        for &hi in ends.iter().filter(|&&h| h > lo) {
            let w = worst(lo, hi);
            let ((blo, bhi), bw) = best;
            let better = w < bw * (1.0 - 1e-9);
            let tie_uses_less = w <= bw && (lo > blo || (lo == blo && hi < bhi));
            if better || tie_uses_less {
                best = ((lo, hi), w);
            }
        }
    }
    best.0
}

/// Thresholds at the crossovers of each curve.
pub fn thresholds_from(curves: &[Curve]) -> Vec<Threshold> {
    let mut out: Vec<Threshold> = curves
        .iter()
        .map(|c| {
            let (cold, cold_max) = crossover(&c.points, |p| p.gpu_cold);
            let (resident, resident_max) = crossover(&c.points, |p| p.gpu_resident);
            Threshold {
                class: c.class,
                dtype: c.dtype,
                cold,
                resident,
                cold_max,
                resident_max,
            }
        })
        .collect();
    // Factorizations follow GEMM's crossover scaled to their flop count (n^3/3 vs 2n^3).
    let gemm: Vec<Threshold> = out
        .iter()
        .filter(|t| t.class == WorkClass::Gemm)
        .copied()
        .collect();
    for g in gemm {
        out.push(Threshold {
            class: WorkClass::Factorization,
            dtype: g.dtype,
            cold: g.cold / 6.0,
            resident: g.resident / 6.0,
            cold_max: g.cold_max / 6.0,
            resident_max: g.resident_max / 6.0,
        });
    }
    out
}

/// Sweeps and returns the thresholds (what `calibrate()` stores).
pub fn measure(b: &CudaBackend) -> Result<Vec<Threshold>> {
    Ok(thresholds_from(&sweep(b, &mut |_, _, _| {})?))
}

#[cfg(test)]
mod tests {
    use super::{crossover, CurvePoint};

    fn pt(size: f64, cpu: f64, gpu: f64) -> CurvePoint {
        CurvePoint {
            size,
            cpu,
            gpu_cold: gpu,
            gpu_resident: gpu,
        }
    }

    #[test]
    fn a_clean_crossover_is_found() {
        let pts = [
            pt(1.0, 1.0, 5.0),
            pt(10.0, 10.0, 6.0),
            pt(100.0, 100.0, 20.0),
        ];
        assert_eq!(crossover(&pts, |p| p.gpu_cold), (10.0, f64::INFINITY));
    }

    #[test]
    fn a_gpu_that_never_wins_is_never_chosen() {
        let pts = [pt(1.0, 1.0, 5.0), pt(10.0, 10.0, 60.0)];
        assert_eq!(crossover(&pts, |p| p.gpu_cold).0, f64::INFINITY);
    }

    #[test]
    fn curves_that_cross_twice_get_a_window() {
        // GPU wins in the middle by 3x and loses at the end by 1.5x: the
        // window [10, 100) routes every size to its faster side.
        let pts = [
            pt(1.0, 1.0, 2.0),
            pt(10.0, 30.0, 10.0),
            pt(100.0, 100.0, 150.0),
        ];
        assert_eq!(crossover(&pts, |p| p.gpu_cold), (10.0, 100.0));
    }
}
