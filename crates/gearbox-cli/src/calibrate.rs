//! `gearbox calibrate`: measures where the GPU starts to pay off, stores the
//! thresholds, plots the crossover curves (SVG), and checks that the router
//! then does at least as well as the better fixed choice at every size;
//! then measures the GLM grid strategies' rates for their cost model
//! (`--glm-only`: only that, with or without a GPU).

use std::path::PathBuf;

use clap::Args;
use gearbox::runtime::sweep::{
    chain, input, reps_for, square_inputs, sweep, thresholds_from, trip_times, Curve,
};
use gearbox::runtime::{use_gpu, Backend, UseGpuOptions};
use gearbox::{DType, Error};
use gearbox_stats::glm::calibrate::{calibrate_strategies, rates_path};
use indicatif::{ProgressBar, ProgressStyle};

use crate::output::{CliResult, Out};

/// Options of `gearbox calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Where to write the plot of the crossover curves.
    #[arg(long, default_value = "calibration.svg")]
    pub plot: PathBuf,
    /// Skip the check of the router against always-CPU and always-GPU.
    #[arg(long)]
    pub no_verify: bool,
    /// Only measure the GLM grid strategies' rates (on the CPU, and on the
    /// GPU where one is usable), not the dispatch thresholds.
    #[arg(long)]
    pub glm_only: bool,
    /// The GPU backend to calibrate (`cuda`, `wgpu`, `opencl`).
    #[arg(long, default_value = "cuda")]
    pub backend: String,
}

fn no_gpu(name: &str) -> Error {
    Error::Config {
        name: "--backend".into(),
        value: name.into(),
        why: format!(
            "no usable {} device; see gearbox status",
            name.to_uppercase()
        ),
    }
}

/// The registered backend called `name`, once it passed its probe.
fn usable(name: &str) -> Result<std::sync::Arc<dyn Backend>, Error> {
    // Quiet: the library would print its confirmation with println!.
    use_gpu(UseGpuOptions {
        backend: Some(name.into()),
        quiet: true,
    })
    .ok_or_else(|| no_gpu(name))?;
    gearbox::runtime::registry::candidates(false)
        .into_iter()
        .find(|c| c.status.backend == name)
        .and_then(|c| c.backend)
        .ok_or_else(|| no_gpu(name))
}

/// Runs the sweep with a progress bar, stores and prints the thresholds,
/// writes the plot and verifies the routing.
pub fn run(args: &CalibrateArgs, out: &mut Out) -> CliResult {
    if args.glm_only {
        return glm_strategies(out);
    }
    let name = args.backend.as_str();
    let backend = usable(name)?;
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let curves = sweep(backend.as_ref(), &mut |done, total, label| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(label.to_string());
    })?;
    bar.finish_with_message("sweep done");
    let thresholds = thresholds_from(&curves, &backend.default_thresholds());
    let device = backend.info()?.name;
    let path = gearbox::runtime::calibration::store(name, &device, thresholds.clone())?;
    out.line(format_args!(
        "thresholds for {device} (stored in {}):",
        path.display()
    ))?;
    for t in &thresholds {
        out.line(format_args!(
            "  {:<13} {:<4} cold {:<32} resident {}",
            t.class.name(),
            t.dtype,
            window(t.cold, t.cold_max),
            window(t.resident, t.resident_max)
        ))?;
    }
    std::fs::write(&args.plot, svg(&curves)).map_err(|e| Error::Config {
        name: "--plot".into(),
        value: args.plot.display().to_string(),
        why: e.to_string(),
    })?;
    out.line(format_args!("plot: {}", args.plot.display()))?;
    if !args.no_verify {
        // The check is of this backend's thresholds: the router chooses
        // between it and the CPU alone while it runs.
        let before = gearbox::runtime::options();
        let others = gearbox::runtime::registry::candidates(false)
            .into_iter()
            .map(|c| c.status.backend)
            .filter(|b| b != name);
        gearbox::runtime::set_options(gearbox::runtime::RuntimeOptions {
            disabled: before.disabled.iter().cloned().chain(others).collect(),
            ..before.clone()
        });
        let checked = verify_routing(backend.as_ref(), out);
        gearbox::runtime::set_options(before);
        checked?;
    }
    glm_strategies(out)
}

/// Measures the GLM grid strategies' rates on the CPU and, where one is
/// usable, the GPU, and prints them (the cost model uses them from now on).
fn glm_strategies(out: &mut Out) -> CliResult {
    let gpu = use_gpu(UseGpuOptions {
        backend: Some("cuda".into()),
        quiet: true,
    })
    .is_some();
    let backends: &[&str] = if gpu { &["cpu", "cuda"] } else { &["cpu"] };
    for backend in backends {
        let r = calibrate_strategies(backend)?;
        out.line(format_args!(
            "GLM grid strategies on {backend} (ps per observation-point pair, a + b l2; fixed ms per chunk):"
        ))?;
        let wide = r
            .per_point_wide
            .map(|w| ("per-point, tensor-core widths", w));
        let named = [("gemm", r.gemm), ("per-point", r.per_point)];
        for (name, rate) in named.into_iter().chain(wide) {
            out.line(format_args!(
                "  {name:<9} a {:>9.2}  b {:>7.3}  per chunk {:.3}",
                rate.a * 1e12,
                rate.b * 1e12,
                rate.per_chunk * 1e3
            ))?;
        }
    }
    if let Some(path) = rates_path() {
        out.line(format_args!("stored in {}", path.display()))?;
    }
    Ok(())
}

/// A GPU window `[lo, hi)` as text ("never" when it is empty).
fn window(lo: f64, hi: f64) -> String {
    match (lo.is_finite(), hi.is_finite()) {
        (false, _) => "never".into(),
        (true, false) => format!(">= {}", fmt(lo)),
        (true, true) => format!("[{}, {})", fmt(lo), fmt(hi)),
    }
}

fn fmt(x: f64) -> String {
    if x.is_finite() {
        gearbox::runtime::dispatch::fmt_count(x)
    } else {
        "never".into()
    }
}

/// The router against always-CPU and always-GPU over a size sweep, for the
/// whole trip (host inputs, host result), the three interleaved and timed
/// through the same path as the calibration sweep.
fn verify_routing(backend: &dyn Backend, out: &mut Out) -> CliResult {
    out.line("\nrouting check: seconds for the whole trip (host inputs, host result); ratio = best fixed / router")?;
    out.line(format_args!(
        "{:<22} {:>10} {:>10} {:>10} {:>7}",
        "work", "router", "cpu", "gpu", "ratio"
    ))?;
    let mut worst: f64 = f64::INFINITY;
    let mut report = |out: &mut Out, name: String, [cpu, router, gpu]: [f64; 3]| {
        let ratio = cpu.min(gpu) / router;
        worst = worst.min(ratio);
        out.line(format_args!(
            "{name:<22} {router:>10.6} {cpu:>10.6} {gpu:>10.6} {ratio:>7.2}"
        ))
    };
    for n in [1usize << 12, 1 << 16, 1 << 20, 1 << 22, 1 << 24] {
        let inputs = [input(n, DType::F32, 1)?, input(n, DType::F32, 2)?];
        let times = trip_times(backend, reps_for(n), &inputs, &|v| {
            chain(&v[0], &v[1], false)
        })?;
        report(out, format!("chain f32 n={n}"), times)?;
    }
    // GEMM only where the backend has one (elsewhere every path is the CPU's).
    let gemm = backend
        .capabilities()
        .offers(gearbox::runtime::backend::LibraryCall::Matmul);
    for n in [64usize, 256, 512, 1024, 2048].into_iter().filter(|_| gemm) {
        let inputs = square_inputs(n, DType::F32)?;
        let times = trip_times(backend, reps_for(n * n), &inputs, &|v| v[0].matmul(&v[1]))?;
        report(out, format!("gemm f32 {n}x{n}"), times)?;
    }
    out.line(format_args!("worst ratio {worst:.2} (the router must stay within 1.1x of the better fixed choice: ratio >= {:.2})", 1.0 / 1.1))
}

/// Log-log plot of CPU, GPU cold and GPU resident time against size, one
/// panel per class and dtype.
fn svg(curves: &[Curve]) -> String {
    let (pw, ph, cols) = (360.0, 240.0, 3usize);
    let rows = curves.len().div_ceil(cols);
    let mut s = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-family='sans-serif' font-size='11'>\n<rect width='100%' height='100%' fill='white'/>\n",
        pw * cols as f64,
        ph * rows as f64 + 30.0
    );
    s += "<text x='10' y='18' font-size='13'>gearbox calibrate: seconds vs size (log-log). black: CPU, red: GPU cold, blue: GPU resident</text>\n";
    for (i, c) in curves.iter().enumerate() {
        let (ox, oy) = ((i % cols) as f64 * pw, (i / cols) as f64 * ph + 30.0);
        let all: Vec<f64> = c
            .points
            .iter()
            .flat_map(|p| [p.cpu, p.gpu_cold, p.gpu_resident])
            .filter(|v| *v > 0.0)
            .collect();
        let (tmin, tmax) = all.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| {
            (a.min(v.log10()), b.max(v.log10()))
        });
        let (smin, smax) = c.points.iter().fold((f64::MAX, f64::MIN), |(a, b), p| {
            (a.min(p.size.log10()), b.max(p.size.log10()))
        });
        let x = |v: f64| ox + 40.0 + (v.log10() - smin) / (smax - smin).max(1e-9) * (pw - 60.0);
        let y =
            |v: f64| oy + ph - 30.0 - (v.log10() - tmin) / (tmax - tmin).max(1e-9) * (ph - 60.0);
        s += &format!(
            "<rect x='{}' y='{}' width='{}' height='{}' fill='none' stroke='#ccc'/>\n",
            ox + 40.0,
            oy + 20.0,
            pw - 60.0,
            ph - 50.0
        );
        s += &format!(
            "<text x='{}' y='{}'>{} {} (size {}..{})</text>\n",
            ox + 40.0,
            oy + 14.0,
            c.class.name(),
            c.dtype,
            fmt(10f64.powf(smin)),
            fmt(10f64.powf(smax))
        );
        for (color, get) in [("black", 0usize), ("red", 1), ("blue", 2)] {
            let pts: Vec<String> = c
                .points
                .iter()
                .map(|p| {
                    let t = [p.cpu, p.gpu_cold, p.gpu_resident][get].max(1e-12);
                    format!("{:.1},{:.1}", x(p.size), y(t))
                })
                .collect();
            s += &format!(
                "<polyline fill='none' stroke='{color}' stroke-width='1.5' points='{}'/>\n",
                pts.join(" ")
            );
        }
    }
    s + "</svg>\n"
}
