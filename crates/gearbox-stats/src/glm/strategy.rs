//! How a GLM grid is evaluated, and the cost model that chooses.
//!
//! - [`Strategy::Gemm`]: `eta = X B` by GEMM, the terms and slopes in one
//!   fused pass, `X' slopes` by GEMM. Two `l1 x c` matrices go through
//!   memory per chunk, but the products run at GEMM speed.
//! - [`Strategy::PerPoint`]: one grid kernel ([`gearbox_core::ops::linear_grid`])
//!   in which each point's `eta`, terms and gradient stay in registers and
//!   the design is read from on-chip memory; nothing `l1 x c` exists, but
//!   the products run as plain fused multiply-adds.
//!
//! The model prices both for the backend the dispatcher would place each
//! on (asked through [`gearbox_core::runtime::explain::planned_backend`]):
//! seconds per (observation, point) pair as `a + b l2` for each strategy,
//! the per-point strategy divided by the share of the device its work
//! fills, plus a fixed cost per chunk. On GPUs the per-point strategy has
//! a second rate for [`TENSOR_CORE_WIDTHS`], where the CUDA backend runs
//! it on the float64 tensor cores. The coefficients are measured on
//! this machine by `gearbox calibrate` ([`super::calibrate`]) where it has
//! been run for the backend and device; else the built-in ones, fitted to
//! the shape sweep of `docs/perf/stats.md` (by `scripts/fit_glm_rates.py`
//! on an H100 for GPUs; the device host's 16 cores for `cpu`);
//! `GEARBOX_GLM_STRATEGY=gemm` or `per-point` overrides the choice.

use std::fmt;

/// How a grid is evaluated (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// GEMM, fused terms, GEMM.
    Gemm,
    /// One grid kernel, a point per thread.
    PerPoint,
}

impl Strategy {
    /// Its name, as `explain` and `GEARBOX_GLM_STRATEGY` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Gemm => "gemm",
            Strategy::PerPoint => "per-point",
        }
    }

    /// The strategy `GEARBOX_GLM_STRATEGY` asks for: `None` when it is
    /// unset, empty or `auto`; an error naming the variable for any value
    /// but `gemm` and `per-point`.
    pub fn from_env() -> gearbox_core::Result<Option<Strategy>> {
        let Ok(value) = std::env::var("GEARBOX_GLM_STRATEGY") else {
            return Ok(None);
        };
        match value.trim() {
            "" | "auto" => Ok(None),
            "gemm" => Ok(Some(Strategy::Gemm)),
            "per-point" => Ok(Some(Strategy::PerPoint)),
            other => Err(gearbox_core::Error::Config {
                name: "GEARBOX_GLM_STRATEGY".into(),
                value: other.into(),
                why: "give gemm, per-point or auto".into(),
            }),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The cost of one strategy on one kind of backend: seconds per
/// (observation, point) pair, `a + b l2`, and a fixed cost per chunk
/// (launches, the plan).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rate {
    /// Seconds per pair, whatever the width.
    pub a: f64,
    /// Seconds per pair and coefficient.
    pub b: f64,
    /// Seconds per chunk.
    pub per_chunk: f64,
}

impl Rate {
    fn per_pair(self, l2: usize) -> f64 {
        self.a + self.b * l2 as f64
    }
}

/// The coefficient counts for which the CUDA backend's per-point kernel
/// runs on the float64 tensor cores (gearbox-cuda's `MMA_MIN_L2` and
/// `MMA_MAX_L2`, on devices of compute capability 8.0 and later; a test
/// holds them equal): the per-point strategy's second rate on GPUs.
pub const TENSOR_CORE_WIDTHS: std::ops::RangeInclusive<usize> = 8..=128;

/// The fitted rates of both strategies on a kind of backend, and the
/// number of concurrent (point, observation-slice) work items that fill
/// it (the per-point kernel's parallelism).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rates {
    gemm: Rate,
    per_point: Rate,
    /// The per-point rate for [`TENSOR_CORE_WIDTHS`] (the CPU's is
    /// `per_point`).
    per_point_wide: Rate,
    fill: f64,
}

impl Rates {
    /// The per-point strategy's rate at `l2` coefficients.
    fn per_point_at(&self, l2: usize) -> Rate {
        if TENSOR_CORE_WIDTHS.contains(&l2) {
            self.per_point_wide
        } else {
            self.per_point
        }
    }
}

/// The rates of `backend`'s kind. On the CPU the per-point loop evaluates
/// the fast binomial logit and poisson log terms a run of observations at
/// a time in vector instructions, and the GEMM strategy evaluates its
/// terms one by one and streams `eta` and the slopes through memory
/// (rates per core, divided by the threads). On a GPU the
/// per-point kernel saves the memory traffic of `eta` and the slopes; on
/// the CUDA cores (narrow designs) its products cost more per coefficient
/// than on the tensor cores (wide ones). Measured rates from before the
/// wide rate was measured serve every width.
fn rates(backend: &str) -> Rates {
    let built_in = built_in_rates(backend);
    match super::calibrate::measured(backend) {
        Some(m) => Rates {
            gemm: m.gemm,
            per_point: m.per_point,
            per_point_wide: m.per_point_wide.unwrap_or(m.per_point),
            ..built_in
        },
        None => built_in,
    }
}

/// Where `backend`'s rates come from, for the explanation.
fn rates_source(backend: &str) -> &'static str {
    if super::calibrate::measured(backend).is_some() {
        "measured by gearbox calibrate"
    } else if backend == "cpu" {
        "built-in, fitted on host cores"
    } else {
        "built-in, fitted on an H100"
    }
}

/// The rates fitted to the shape sweeps of `docs/perf/stats.md`.
fn built_in_rates(backend: &str) -> Rates {
    match backend {
        "cpu" => {
            let cores = rayon::current_num_threads().max(1) as f64;
            // Fitted on this development machine's 2 cores: the runs of
            // observations with vector terms, points in blocks of four.
            let per_point = Rate {
                a: 7e-9 / cores,
                b: 0.1e-9 / cores,
                per_chunk: 20e-6,
            };
            Rates {
                gemm: Rate {
                    a: 56e-9 / cores,
                    b: 0.14e-9 / cores,
                    per_chunk: 50e-6,
                },
                per_point,
                per_point_wide: per_point,
                // Points go to the cores in runs of at least 16.
                fill: 16.0 * cores,
            }
        }
        // GPUs: fitted on an H100 (scripts/fit_glm_rates.py --wide 8:128
        // --fill 32768 on docs/perf/sweep/sweep-gearbox.jsonl, its l2 = 64
        // rows replaced by l64-two-blocks-gearbox.jsonl): the GEMM and
        // tensor-core per-point rates, and the CUDA-core per-point rate at
        // l2 = 4; that rate's growth with l2 from
        // session6-sweep-gearbox.jsonl, which timed that kernel at every
        // width (the newer sweeps only at l2 = 4).
        _ => Rates {
            gemm: Rate {
                a: 20.1e-12,
                b: 0.0273e-12,
                per_chunk: 0.17e-3,
            },
            per_point: Rate {
                a: 2.81e-12,
                b: 0.81e-12,
                per_chunk: 0.14e-3,
            },
            per_point_wide: Rate {
                a: 6.11e-12,
                b: 0.208e-12,
                per_chunk: 0.155e-3,
            },
            fill: 32768.0,
        },
    }
}

/// The cost model's verdict for one grid.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyChoice {
    /// The strategy that runs.
    pub strategy: Strategy,
    /// Where the GEMM strategy's products would run.
    pub gemm_backend: String,
    /// Where the per-point kernel would run.
    pub per_point_backend: String,
    /// The model's estimate for the GEMM strategy, in seconds.
    pub gemm_seconds: f64,
    /// The model's estimate for the per-point strategy, in seconds.
    pub per_point_seconds: f64,
    /// Set when `GEARBOX_GLM_STRATEGY` or the caller chose, not the model.
    pub forced: bool,
    /// Where the model's rates for each backend come from.
    pub rates: String,
    /// Observations, coefficients and points.
    pub shape: (usize, usize, u64),
}

/// The model's estimates `(gemm, per_point)` in seconds for `l1`
/// observations, `l2` coefficients and `m` points on the given backends.
pub fn estimate(
    (l1, l2, m): (usize, usize, u64),
    gemm_backend: &str,
    per_point_backend: &str,
) -> (f64, f64) {
    let pairs = l1 as f64 * m as f64;
    let g = rates(gemm_backend);
    let p = rates(per_point_backend);
    // Chunks as GlmModel takes them: l1 x chunk (GEMM) or (1 + l2) x chunk
    // (per point) elements of at most 2^27.
    let chunks = |rows: usize| (m as f64 * rows as f64 / 2f64.powi(27)).ceil().max(1.0);
    // The per-point kernel runs a thread per point and cuts long designs
    // into slices of at least 128 observations: that many items in flight.
    // The CPU loop runs whole points.
    let slices = if per_point_backend == "cpu" {
        1.0
    } else {
        (l1 as f64 / 128.0).ceil().max(1.0)
    };
    let items = m as f64 * slices;
    let fill = (items / p.fill).min(1.0);
    (
        pairs * g.gemm.per_pair(l2) + chunks(l1) * g.gemm.per_chunk,
        pairs * p.per_point_at(l2).per_pair(l2) / fill
            + chunks(l2 + 1) * p.per_point_at(l2).per_chunk,
    )
}

impl StrategyChoice {
    /// The choice for this shape and these backends: the cheaper estimate,
    /// unless `forced` (or `GEARBOX_GLM_STRATEGY`) names a strategy; an
    /// unknown `GEARBOX_GLM_STRATEGY` is an error.
    pub fn decide(
        shape: (usize, usize, u64),
        gemm_backend: &str,
        per_point_backend: &str,
        forced: Option<Strategy>,
    ) -> gearbox_core::Result<StrategyChoice> {
        let (gemm_seconds, per_point_seconds) = estimate(shape, gemm_backend, per_point_backend);
        let forced = match forced {
            Some(s) => Some(s),
            None => Strategy::from_env()?,
        };
        let strategy = forced.unwrap_or(if per_point_seconds <= gemm_seconds {
            Strategy::PerPoint
        } else {
            Strategy::Gemm
        });
        Ok(StrategyChoice {
            strategy,
            gemm_backend: gemm_backend.to_string(),
            per_point_backend: per_point_backend.to_string(),
            gemm_seconds,
            per_point_seconds,
            forced: forced.is_some(),
            rates: if gemm_backend == per_point_backend {
                format!("{gemm_backend}: {}", rates_source(gemm_backend))
            } else {
                format!(
                    "{gemm_backend}: {}; {per_point_backend}: {}",
                    rates_source(gemm_backend),
                    rates_source(per_point_backend)
                )
            },
            shape,
        })
    }
}

impl fmt::Display for StrategyChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (l1, l2, m) = self.shape;
        let ms = |s: f64| format!("{:.3} ms", s * 1e3);
        writeln!(
            f,
            "GLM grid strategy: {} ({l1} observations x {l2} coefficients x {m} points)",
            self.strategy
        )?;
        writeln!(
            f,
            "  gemm      on {:<6} est. {}  (X B, fused terms, X' slopes: two l1 x chunk matrices through memory)",
            self.gemm_backend,
            ms(self.gemm_seconds)
        )?;
        let kernel = match self.per_point_backend.as_str() {
            "cuda" if TENSOR_CORE_WIDTHS.contains(&l2) => "8 points a warp on the tensor cores",
            "cuda" => "a point per thread",
            _ => "point by point",
        };
        writeln!(
            f,
            "  per-point on {:<6} est. {}  ({kernel}, design tiles on chip, nothing l1 x chunk stored)",
            self.per_point_backend,
            ms(self.per_point_seconds)
        )?;
        writeln!(f, "  rates: {}", self.rates)?;
        if self.forced {
            writeln!(
                f,
                "  chosen by the caller or GEARBOX_GLM_STRATEGY, not the model"
            )
        } else {
            let (lo, hi) = if self.strategy == Strategy::Gemm {
                (self.gemm_seconds, self.per_point_seconds)
            } else {
                (self.per_point_seconds, self.gemm_seconds)
            };
            writeln!(
                f,
                "  chosen by the cost model: {:.2}x cheaper than the other strategy",
                hi / lo.max(f64::MIN_POSITIVE)
            )
        }
    }
}
