//! The calibration sweep, for any backend: for each class of work and
//! dtype, time the CPU against the backend cold (upload, compute, download)
//! and resident (compute only) over a sweep of sizes, and place each
//! threshold where routing serves the sweep best (see [`thresholds_from`]).
//! [`crate::runtime::calibration`] stores what it finds. Every time is taken through the same
//! Array path that routed user code takes (graph, planner, dispatch,
//! transfers), with the alternatives interleaved, so the thresholds and the
//! routing check measure the same thing.

use std::time::Instant;

use crate::dtype::DType;
use crate::error::Result;
use crate::graph::Array;
use crate::precision::Precision;
use crate::runtime::backend::{Backend, Capabilities, LibraryCall, Threshold, WorkClass};
use crate::runtime::{options, set_options, RuntimeOptions};

/// One size of the sweep: seconds on the CPU and on the GPU, cold and resident.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CurvePoint {
    /// Elements (passes) or flops (GEMM).
    pub size: f64,
    /// CPU seconds.
    pub cpu: f64,
    /// The backend's seconds with upload and download.
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

/// Where a timed evaluation is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The dispatcher decides (calibrated thresholds).
    Router,
    /// The CPU only (GPU backends are left out).
    Cpu,
    /// The backend under calibration whatever the size.
    Gpu(&'static str),
}

/// Runs `f` with its work placed by `route`, restoring the options after.
pub fn routed<T>(route: Route, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let saved = set_options(RuntimeOptions {
        force_backend: match route {
            Route::Gpu(name) => Some(name.to_string()),
            _ => None,
        },
        optional_backends: route != Route::Cpu,
        ..options()
    });
    let out = f();
    set_options(saved);
    out
}

/// One timed alternative: the work it repeats.
pub type Run<'a> = &'a mut dyn FnMut() -> Result<()>;

/// The best time of each run over `reps` interleaved rounds, after one
/// warm-up round (kernels compiled, pool filled). Interleaving makes a slow
/// phase of a shared host hit every alternative alike, and each round starts
/// at the next alternative, so each follows every other equally often (a
/// run right after a CPU run that woke every core measured systematically
/// slower than one after a GPU run).
pub fn interleaved(reps: usize, runs: &mut [Run<'_>]) -> Result<Vec<f64>> {
    for r in runs.iter_mut() {
        r()?;
    }
    let n = runs.len();
    let mut best = vec![f64::INFINITY; n];
    for round in 0..reps {
        for k in 0..n {
            let i = (round + k) % n;
            let t = Instant::now();
            runs[i]()?;
            best[i] = best[i].min(t.elapsed().as_secs_f64());
        }
    }
    Ok(best)
}

/// Rounds to time at a size: 31 up to 2^22 elements, where a trip takes
/// at most a few milliseconds and the host's run-to-run noise (about 15%
/// on a shared 16-core host) is as large as the gap between CPU and GPU
/// near a crossover; 9 for larger work.
pub fn reps_for(elements: usize) -> usize {
    match elements {
        0..=4_194_304 => 31,
        _ => 9,
    }
}

/// `n` reproducible values in [-0.5, 0.5) of `dtype` under `Fast`, evaluated on the host.
pub fn input(n: usize, dtype: DType, seed: u64) -> Result<Array> {
    let values: Vec<f64> = (0..n)
        .map(|i| (((i as u64 * 2654435761 + seed) % 1000) as f64) / 1000.0 - 0.5)
        .collect();
    let a = Array::from_vec([n], values)?
        .astype(dtype)?
        .with_precision(Precision::Fast)?;
    a.eval()?;
    Ok(a)
}

/// The calibration and routing-check chain `exp(x)*y + sin(x) - 2*y`,
/// optionally summed.
pub fn chain(x: &Array, y: &Array, reduce: bool) -> Result<Array> {
    let c = (((x.exp()? * y)? + &x.sin()?)? - &(2.0 * y)?)?;
    if reduce {
        c.sum()
    } else {
        Ok(c)
    }
}

/// Builds the measured work from its inputs.
pub type Build<'a> = &'a dyn Fn(&[Array]) -> Result<Array>;

/// The whole trip (host inputs, host result) of `build` under `route`:
/// the same Array path that user code takes.
fn trip(route: Route, inputs: &[Array], build: Build<'_>) -> Result<()> {
    // Inputs are gathered first, so no upload is remembered between runs.
    let host: Vec<Array> = inputs.iter().map(|a| a.gather()).collect::<Result<_>>()?;
    routed(route, || build(&host)?.buffer().map(|_| ()))
}

/// Seconds for the whole trip on the CPU, through the router and on
/// backend `b`.
pub fn trip_times(
    b: &dyn Backend,
    reps: usize,
    inputs: &[Array],
    build: Build<'_>,
) -> Result<[f64; 3]> {
    let t = interleaved(
        reps,
        &mut [
            &mut || trip(Route::Cpu, inputs, build),
            &mut || trip(Route::Router, inputs, build),
            &mut || trip(Route::Gpu(b.name()), inputs, build),
        ],
    )?;
    Ok([t[0], t[1], t[2]])
}

/// One sweep point: the CPU and GPU trips, and the GPU with resident inputs
/// and result.
fn point(
    b: &dyn Backend,
    size: f64,
    reps: usize,
    inputs: &[Array],
    build: Build<'_>,
) -> Result<CurvePoint> {
    let resident: Vec<Array> = inputs
        .iter()
        .map(|a| a.with_precision(Precision::Fast)?.to_device(b.name()))
        .collect::<Result<_>>()?;
    let t = interleaved(
        reps,
        &mut [
            &mut || trip(Route::Cpu, inputs, build),
            &mut || trip(Route::Gpu(b.name()), inputs, build),
            &mut || {
                routed(Route::Gpu(b.name()), || {
                    build(&resident)?.eval()?;
                    b.synchronize()
                })
            },
        ],
    )?;
    Ok(CurvePoint {
        size,
        cpu: t[0],
        gpu_cold: t[1],
        gpu_resident: t[2],
    })
}

/// Two `n x n` inputs for the GEMM sweep and check.
pub fn square_inputs(n: usize, dtype: DType) -> Result<[Array; 2]> {
    let a = input(n * n, dtype, 3)?.reshape([n, n])?;
    let b = input(n * n, dtype, 4)?.reshape([n, n])?;
    a.eval()?;
    b.eval()?;
    Ok([a, b])
}

fn pass_point(b: &dyn Backend, n: usize, dtype: DType, reduce: bool) -> Result<CurvePoint> {
    let inputs = [input(n, dtype, 1)?, input(n, dtype, 2)?];
    point(b, n as f64, reps_for(n), &inputs, &|v| {
        chain(&v[0], &v[1], reduce)
    })
}

fn gemm_point(b: &dyn Backend, n: usize, dtype: DType) -> Result<CurvePoint> {
    let flops = 2.0 * (n as f64).powi(3);
    point(b, flops, reps_for(n * n), &square_inputs(n, dtype)?, &|v| {
        v[0].matmul(&v[1])
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

/// The curves a backend with capabilities `caps` is swept for, in order:
/// per float dtype it computes, the fused passes (elementwise, then
/// reduction) if it runs fused kernels, then GEMM if it offers one.
pub fn curves_for(caps: &Capabilities) -> Vec<(WorkClass, DType)> {
    let gemm = caps.offers(LibraryCall::Matmul);
    let mut out = Vec::new();
    for dtype in [DType::F32, DType::F64] {
        if !caps.dtypes.contains(&dtype) {
            continue;
        }
        if caps.fused_kernels {
            out.push((WorkClass::Elementwise, dtype));
            out.push((WorkClass::Reduction, dtype));
        }
        if gemm {
            out.push((WorkClass::Gemm, dtype));
        }
    }
    out
}

/// Runs the sweep over the curves of [`curves_for`] `b`'s capabilities,
/// calling `progress(done, total, label)` after each point.
pub fn sweep(b: &dyn Backend, progress: &mut dyn FnMut(usize, usize, &str)) -> Result<Vec<Curve>> {
    let plan = curves_for(&b.capabilities());
    let sizes_of = |class: WorkClass| -> &'static [usize] {
        if class == WorkClass::Gemm {
            &GEMM_ORDERS
        } else {
            &PASS_SIZES
        }
    };
    let total = plan.iter().map(|&(c, _)| sizes_of(c).len()).sum();
    let mut done = 0;
    let mut step = |label: String| {
        done += 1;
        progress(done, total, &label);
    };
    let mut curves = Vec::new();
    for (class, dtype) in plan {
        let points = largest_first(sizes_of(class), |n| {
            let (p, label) = match class {
                WorkClass::Gemm => (gemm_point(b, n, dtype)?, format!("gemm {dtype} {n}x{n}")),
                _ => {
                    let reduce = class == WorkClass::Reduction;
                    let p = pass_point(b, n, dtype, reduce)?;
                    (p, format!("{} {dtype} n={n}", class.name()))
                }
            };
            step(label);
            Ok(p)
        })?;
        curves.push(Curve {
            class,
            dtype,
            points,
        });
    }
    Ok(curves)
}

/// The points at `sizes` (ascending), measured largest first: the small
/// sizes, where CPU and GPU are closest, are then timed with the device at
/// its working clocks and the host's caches warm, as the work routed by
/// them will meet them (timed first, an idle device looks slower there
/// than it is in use, and the router then keeps work from it that it
/// would win).
fn largest_first(
    sizes: &[usize],
    mut measure: impl FnMut(usize) -> Result<CurvePoint>,
) -> Result<Vec<CurvePoint>> {
    let mut points = sizes
        .iter()
        .rev()
        .map(|&n| measure(n))
        .collect::<Result<Vec<_>>>()?;
    points.reverse();
    Ok(points)
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

/// Thresholds at the crossovers of each curve; factorizations from GEMM's,
/// never below the backend's `defaults` for them.
pub fn thresholds_from(curves: &[Curve], defaults: &[Threshold]) -> Vec<Threshold> {
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
    // Factorizations follow GEMM's crossover scaled to their flop count (n^3/3
    // vs 2n^3), but never below the built-in thresholds: cuSOLVER's fixed
    // costs (workspace queries, info checks, several launches) are not in
    // the GEMM sweep, and a 2000 x 10 QR took milliseconds on the device
    // against microseconds on the host.
    let gemm: Vec<Threshold> = out
        .iter()
        .filter(|t| t.class == WorkClass::Gemm)
        .copied()
        .collect();
    let builtin = defaults;
    for g in gemm {
        let floor = builtin
            .iter()
            .find(|t| t.class == WorkClass::Factorization && t.dtype == g.dtype)
            .copied()
            .unwrap_or(g);
        out.push(Threshold {
            class: WorkClass::Factorization,
            dtype: g.dtype,
            cold: (g.cold / 6.0).max(floor.cold),
            resident: (g.resident / 6.0).max(floor.resident),
            cold_max: g.cold_max / 6.0,
            resident_max: g.resident_max / 6.0,
        });
    }
    out
}

/// Sweeps and returns the thresholds (what `calibrate()` stores).
pub fn measure(b: &dyn Backend) -> Result<Vec<Threshold>> {
    Ok(thresholds_from(
        &sweep(b, &mut |_, _, _| {})?,
        &b.default_thresholds(),
    ))
}

#[cfg(test)]
mod tests {
    use super::{crossover, curves_for, Capabilities, CurvePoint, DType, LibraryCall, WorkClass};

    #[test]
    fn a_backend_is_swept_for_what_it_computes() {
        let all = curves_for(&Capabilities::everything());
        assert_eq!(all.len(), 6);
        assert_eq!(all[2], (WorkClass::Gemm, DType::F32));
        let f32_kernels = Capabilities {
            dtypes: vec![DType::Bool, DType::F32],
            fused_kernels: true,
            fused_reductions: true,
            library: Vec::new(),
            ..Capabilities::everything()
        };
        assert_eq!(
            curves_for(&f32_kernels),
            [
                (WorkClass::Elementwise, DType::F32),
                (WorkClass::Reduction, DType::F32)
            ]
        );
        let gemm_only = Capabilities {
            fused_kernels: false,
            library: vec![LibraryCall::Matmul],
            ..Capabilities::everything()
        };
        assert_eq!(
            curves_for(&gemm_only),
            [(WorkClass::Gemm, DType::F32), (WorkClass::Gemm, DType::F64)]
        );
    }

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
