//! GLM log-posterior grids, as glmbayes evaluates them: for a design `X`
//! (`l1 x l2`), response `y`, prior weights `wt`, offsets `alpha` and a
//! normal prior `N(mu, P^-1)` on the coefficients, the negative
//! log-posterior (up to a constant) and its gradient at every column `b_j`
//! of a grid `B` (`l2 x m1`):
//!
//! ```text
//! qf_j   = 0.5 (b_j - mu)' P (b_j - mu) - sum_i loglik(y_i | eta_ij),   eta_j = X b_j + alpha
//! grad_j = P (b_j - mu) - X' dloglik/deta(eta_j)
//! ```
//!
//! - [`glm_grid`] and [`GlmModel`] (check a model once, evaluate many
//!   grids) by one of two strategies ([`strategy`]): `X B` by GEMM, the
//!   terms of [`terms`] with their column sums and eta-slopes in one fused
//!   kernel, `X' slopes` by GEMM; or one grid kernel with a point per
//!   thread ([`gearbox_core::ops::linear_grid`]); on the CPU or the GPU by
//!   the usual dispatch, the strategy by a cost model whose rates
//!   [`calibrate`] can measure;
//! - [`product`]: Cartesian-product grids evaluated from their point sets;
//! - [`family`]: [`Family`], [`Link`], [`GlmSpec`] and the per-observation
//!   [`loglik_term`] / [`dloglik_deta`] (their definitions, and where they
//!   differ from glmbayes, are documented there);
//! - [`validate`]: argument checks ([`GlmProblem`]);
//! - [`reference`](mod@reference): the one-point-at-a-time host evaluation, the oracle;
//! - [`fit`]: maximum likelihood by IRLS and random grids around the MLE;
//! - [`terms`]: the per-observation terms as kernel-callable scalar
//!   functions ([`terms::loglik_fn`], [`terms::slope_fn`]), and the calls a
//!   grid makes ([`terms::grid_calls`]);
//! - [`rows`]: the binomial and poisson constants that depend only on
//!   `(y, wt)`, computed once per model and passed to the kernel as
//!   columns; [`hoisted`]: the terms that read them, R's exact evaluation
//!   bit for bit or a closed form certified within `2^-46` relative (its
//!   accuracy contract); `calls` holds a model's term calls and their
//!   columns as arrays, for both strategies.
//!
//! The gradient layout is `l2 x m1` (one column per grid point); glmbayes's
//! `f3_*` return its transpose.

pub mod calibrate;
mod calls;
mod dense;
pub mod family;
pub mod fit;
pub mod hoisted;
mod link;
pub mod product;
pub mod reference;
pub mod rows;
pub mod runs;
pub mod strategy;
pub mod terms;
pub mod validate;
pub mod vector_math;

use gearbox_core::fusion::ir::FnRef;
use gearbox_core::ops::linear_grid::{GridPoints, LinearGridSpec, RunRef};
use gearbox_core::runtime::explain::planned_backend;
use gearbox_core::{Array, DType, Error, Result};

use calls::{Columns, GridCall};

pub use family::{dloglik_deta, loglik_term, Family, GlmSpec, Link};
pub use fit::{grid_around, mle, MleFit};
pub use product::ProductGrid;
pub use reference::{glm_grid_reference, glm_point_reference};
pub use strategy::{Strategy, StrategyChoice};
pub use validate::{GlmData, GlmProblem};

/// The result of [`glm_grid`].
#[derive(Debug, Clone)]
pub struct GlmGrid {
    /// The negative log-posterior at each grid point (length `m1`).
    pub qf: Array,
    /// Its gradient, one column per grid point (`l2 x m1`).
    pub gradient: Array,
}

/// The negative log-posterior and its gradient over a grid (module docs).
///
/// Arguments, all f64 and finite: `x` (`l1 x l2`), `y`, `wt`, `alpha`
/// (length `l1`; shape `[l1]` or `[l1, 1]`), `mu` (length `l2`), `p`
/// (`l2 x l2`, symmetric positive definite), `b` (`l2 x m1`, or a vector
/// of length `l2` for one point). The checks of [`GlmProblem::from_arrays`]
/// apply (response support, non-negative weights, dispersion).
///
/// ```
/// use gearbox_core::Array;
/// use gearbox_stats::glm::{glm_grid, GlmSpec};
/// let x = Array::from_rows(&[vec![1.0, 0.5], vec![1.0, -1.0], vec![1.0, 2.0]])?;
/// let y = Array::from_vec([3], vec![0.5, 0.25, 1.0])?;
/// let wt = Array::from_vec([3], vec![2.0, 4.0, 1.0])?;
/// let alpha = Array::zeros([3], gearbox_core::DType::F64)?;
/// let mu = Array::zeros([2], gearbox_core::DType::F64)?;
/// let p = Array::eye(2)?;
/// let b = Array::from_rows(&[vec![0.0, 0.1, -0.3], vec![0.0, 0.2, 0.4]])?;
/// let spec = GlmSpec::parse("binomial", Some("logit"), None)?;
/// let grid = glm_grid(&x, &y, &wt, &alpha, &mu, &p, &b, &spec)?;
/// assert_eq!(grid.qf.dims(), &[3]);
/// assert_eq!(grid.gradient.dims(), &[2, 3]);
/// # Ok::<(), gearbox_core::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn glm_grid(
    x: &Array,
    y: &Array,
    wt: &Array,
    alpha: &Array,
    mu: &Array,
    p: &Array,
    b: &Array,
    spec: &GlmSpec,
) -> Result<GlmGrid> {
    GlmModel::new(x, y, wt, alpha, mu, p, spec)?.grid(b)
}

/// A GLM with its prior, checked once and held as arrays, for evaluating
/// many grids (glmbayes evaluates the same model at the points of several
/// grids while it builds an envelope). Arrays the caller moved to a device
/// stay there: a resident design is used in place.
#[derive(Debug, Clone)]
pub struct GlmModel {
    x: Array,
    loglik: GridCall,
    slope: GridCall,
    columns: Columns,
    alpha: Array,
    mu: Array,
    p: Array,
    dispersion: Array,
    l1: usize,
    l2: usize,
}

impl GlmModel {
    /// Checks the model as [`glm_grid`] does (dimensions, finiteness,
    /// response support, weights, dispersion, `P` symmetric positive
    /// definite) and keeps it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        x: &Array,
        y: &Array,
        wt: &Array,
        alpha: &Array,
        mu: &Array,
        p: &Array,
        spec: &GlmSpec,
    ) -> Result<GlmModel> {
        let problem = GlmProblem::from_arrays("glm_grid", x, y, wt, alpha, mu, p, spec)?;
        let (l1, l2) = (problem.data.l1, problem.data.l2);
        let column = |v: &[f64], n: usize| Array::from_vec([n, 1], v.to_vec());
        let (loglik, slope) =
            terms::grid_calls(&problem.spec, &problem.data.y, &problem.data.wt, true);
        let mut columns = Columns::default();
        Ok(GlmModel {
            x: as_matrix(x, l1, l2)?,
            loglik: GridCall::new(loglik, &mut columns)?,
            slope: GridCall::new(slope, &mut columns)?,
            columns,
            alpha: column(&problem.data.alpha, l1)?,
            mu: column(&problem.mu, l2)?,
            p: Array::from_vec([l2, l2], problem.p.clone())?,
            dispersion: Array::scalar(problem.dispersion),
            l1,
            l2,
        })
    }

    /// [`GlmModel::new`] with unit weights, no offset and a standard
    /// normal prior (mean 0, identity precision): the simulated models of
    /// calibration, `explain` and the benchmarks.
    pub fn with_standard_prior(x: &Array, y: &Array, spec: &GlmSpec) -> Result<GlmModel> {
        // A design that is not a matrix is rejected by `new`, by name; its
        // dimensions here only size the defaults.
        let dims = x.shape().dims();
        let (l1, l2) = (
            dims.first().copied().unwrap_or(0),
            dims.get(1).copied().unwrap_or(1),
        );
        GlmModel::new(
            x,
            y,
            &Array::ones([l1], DType::F64)?,
            &Array::zeros([l1], DType::F64)?,
            &Array::zeros([l2], DType::F64)?,
            &Array::eye(l2)?,
            spec,
        )
    }

    /// Observations and coefficients: `(l1, l2)`.
    pub fn dims(&self) -> (usize, usize) {
        (self.l1, self.l2)
    }

    /// The model with the certified closed forms of the binomial logit and
    /// poisson terms on (the default) or off: off, every term is R's exact
    /// evaluation bit for bit; on, a term may instead be a closed form
    /// certified within `2^-46` relative ([`hoisted`]).
    pub fn with_fast_terms(mut self, on: bool) -> GlmModel {
        for call in [&mut self.loglik, &mut self.slope] {
            if call.f.flags >= 2 {
                call.flags = if on {
                    call.flags | terms::FAST
                } else {
                    call.flags & !terms::FAST
                };
            }
        }
        self
    }

    /// qf and the gradient at every column of `b` (`l2 x m1`, finite f64),
    /// by the strategy the cost model picks for this shape and where the
    /// work would run ([`strategy`]): GEMM, fused terms and GEMM, or one
    /// grid kernel with a point per thread. The grid is taken in column
    /// chunks so memory stays bounded (GEMM: at most 2^27 elements of
    /// `l1 x chunk`; per point: at most 2^27 of results). A grid of no
    /// points is [`Error::Empty`].
    pub fn grid(&self, b: &Array) -> Result<GlmGrid> {
        self.grid_with(b, None)
    }

    /// [`GlmModel::grid`] by the given strategy (`None`: the cost model's).
    /// Both give the same values to rounding.
    pub fn grid_with(&self, b: &Array, strategy: Option<Strategy>) -> Result<GlmGrid> {
        let m1 = validate::check_grid_in_place("glm_grid", b, self.l2)?;
        if m1 == 0 {
            return Err(Error::Empty {
                op: "glm_grid",
                shape: b.shape().clone(),
                why: "the grid B has no points (columns); give at least one coefficient vector",
            });
        }
        let b = as_matrix(b, self.l2, m1)?;
        let choice = self.choose_matrix(&b, strategy)?;
        let chunk = self.chunk_points(choice.strategy, m1 as u64);
        self.collect(m1, chunk, choice.strategy, |start, count| {
            dense_points(&b, start, count)
        })
    }

    /// The strategy [`GlmModel::grid_with`] takes for the grid `b` as it
    /// is (on the host or a device), where, and why; nothing is evaluated
    /// (the model's small arrays go beside a device design, as a run puts
    /// them).
    /// `b` must be `l2 x m1` or a vector of length `l2`.
    pub fn choose_grid(&self, b: &Array, forced: Option<Strategy>) -> Result<StrategyChoice> {
        if !validate::grid_shape(b, self.l2) {
            // Names what is wrong with the shape.
            validate::check_grid("glm_grid", b, self.l2)?;
        }
        let m1 = b.numel() / self.l2.max(1);
        self.choose_matrix(&as_matrix(b, self.l2, m1)?, forced)
    }

    /// [`GlmModel::choose_grid`] for an `l2 x m1` matrix.
    fn choose_matrix(&self, b: &Array, forced: Option<Strategy>) -> Result<StrategyChoice> {
        let m1 = b.dims()[1] as u64;
        self.choose_for(m1, |count| dense_points(b, 0, count), forced)
    }

    /// qf and the gradient at every point of a product grid, computed from
    /// the point sets without the grid in memory (the results are). For
    /// grids whose results do not fit, see [`GlmModel::product_grid_chunks`].
    pub fn product_grid(&self, grid: &ProductGrid) -> Result<GlmGrid> {
        self.check_product(grid)?;
        let m1 = self.results_fit(grid)?;
        let (sets, counts) = grid.kernel_inputs()?;
        let points = |first, count| product_points(grid, &sets, &counts, first, count);
        let choice = self.choose_for(grid.len(), |count| points(0, count), None)?;
        let chunk = self.chunk_points(choice.strategy, grid.len());
        self.collect(m1, chunk, choice.strategy, points)
    }

    /// Evaluates a product grid `chunk` points at a time (`None`: the
    /// largest chunk memory allows), handing each chunk's results with the
    /// index of its first point to `visit`: grids of billions of points
    /// (3^20) run in bounded memory. `strategy` as for [`GlmModel::grid_with`].
    pub fn product_grid_chunks(
        &self,
        grid: &ProductGrid,
        chunk: Option<usize>,
        strategy: Option<Strategy>,
        mut visit: impl FnMut(u64, GlmGrid) -> Result<()>,
    ) -> Result<()> {
        self.check_product(grid)?;
        let (sets, counts) = grid.kernel_inputs()?;
        let points = |first, count| product_points(grid, &sets, &counts, first, count);
        let choice = self.choose_for(grid.len(), |count| points(0, count), strategy)?;
        let chunk = chunk.unwrap_or_else(|| self.chunk_points(choice.strategy, grid.len()));
        self.for_each_chunk(
            grid.len(),
            chunk,
            choice.strategy,
            points,
            |first, qf, gradient| {
                let count = gradient.dims()[1];
                visit(
                    first,
                    GlmGrid {
                        qf: qf.reshape([count])?,
                        gradient,
                    },
                )
            },
        )
    }

    /// The strategy a grid of `m1` points held on the host would run by,
    /// where, and why (the cost model's estimates for both); `forced` as
    /// for [`GlmModel::grid_with`]. Nothing is evaluated (the model's small
    /// arrays go beside a device design, as a run puts them).
    pub fn choose(&self, m1: u64, forced: Option<Strategy>) -> Result<StrategyChoice> {
        let first = |count: usize| -> Result<Points<'_>> {
            Ok(Points::Dense(Array::zeros(
                [self.l2, count],
                gearbox_core::DType::F64,
            )?))
        };
        self.choose_for(m1, first, forced)
    }

    /// [`GlmModel::choose`] for a grid whose first `count` points `first`
    /// gives as they are: each strategy's first chunk is planned (nothing
    /// runs), so the dispatcher sees where the points live and how large
    /// a chunk's work is.
    fn choose_for<'a>(
        &self,
        m1: u64,
        first: impl Fn(usize) -> Result<Points<'a>>,
        forced: Option<Strategy>,
    ) -> Result<StrategyChoice> {
        // The small arrays go beside the design first, as the run puts them
        // (otherwise a first call on a device design plans its small
        // per-point work for the CPU, and runs it on the device).
        self.follow_the_design()?;
        let eta = self
            .x
            .matmul(&first(self.chunk_points(Strategy::Gemm, m1))?.planned()?)?;
        let per_point = self.per_point_graph(first(self.chunk_points(Strategy::PerPoint, m1))?)?;
        let on = planned_backend;
        StrategyChoice::decide((self.l1, self.l2, m1), &on(&eta)?, &on(&per_point)?, forced)
    }

    /// Points per chunk: the GEMM strategy holds `l1 x chunk` matrices, the
    /// per-point one only `(1 + l2) x chunk` results; each at most 2^27
    /// elements, and under `GEARBOX_MEMORY_LIMIT` at most a 32nd of the
    /// limit in bytes (a chunk holds a few such matrices of float64 at
    /// once, and the pool rounds blocks up).
    fn chunk_points(&self, strategy: Strategy, m1: u64) -> usize {
        let rows = match strategy {
            Strategy::Gemm => self.l1,
            Strategy::PerPoint => self.l2 + 1,
        };
        let elements = gearbox_core::runtime::pool::tightest_memory_limit()
            .map_or(1usize << 27, |limit| {
                ((limit / 32) as usize).clamp(1, 1 << 27)
            });
        (elements / rows.max(1)).clamp(1, m1.clamp(1, usize::MAX as u64) as usize)
    }

    /// The number of points of `grid` when every result fits in memory
    /// twice over (the chunks and their join); else an error that points
    /// to [`GlmModel::product_grid_chunks`], before any work.
    fn results_fit(&self, grid: &ProductGrid) -> Result<usize> {
        let bytes = (self.l2 as u128 + 1) * u128::from(grid.len()) * 8;
        let available = gearbox_core::memory::available_bytes();
        let fits = available.is_none_or(|a| 2 * bytes <= u128::from(a));
        match usize::try_from(grid.len()) {
            Ok(m1) if fits => Ok(m1),
            _ => Err(Error::InvalidArgument {
                op: "product_grid",
                name: "grid",
                value: format!("{} points", grid.len()),
                why: format!(
                    "qf and the gradient at every point need {} bytes, twice over to join the chunks, and {} are available: evaluate it with product_grid_chunks",
                    bytes,
                    available.map_or("fewer".to_string(), |a| a.to_string())
                ),
            }),
        }
    }

    fn check_product(&self, grid: &ProductGrid) -> Result<()> {
        if grid.coefficients() != self.l2 {
            return Err(Error::InvalidArgument {
                op: "product_grid",
                name: "sets",
                value: format!("{} sets", grid.coefficients()),
                why: format!(
                    "the model has {} coefficients: give one point set each",
                    self.l2
                ),
            });
        }
        Ok(())
    }

    /// Copies the model's small arrays (prior, offsets, dispersion, the
    /// per-observation columns) to the device that holds the design, if it
    /// is on one and they are not yet (idempotent; host copies stay). With
    /// them there, every chunk's work has its inputs resident: otherwise a
    /// small prior GEMM beside a resident grid chunk could go to the CPU
    /// under the thresholds and download the chunk, stalling the device
    /// once per chunk.
    fn follow_the_design(&self) -> Result<()> {
        let device = self.x.device();
        if device == "cpu" {
            return Ok(());
        }
        for a in [&self.alpha, &self.mu, &self.p, &self.dispersion]
            .into_iter()
            .chain(&self.columns.arrays)
        {
            if a.device() != device {
                a.to_device(&device)?;
            }
        }
        Ok(())
    }

    /// Every chunk of `m1` points, `chunk` at a time, evaluated and joined.
    fn collect<'a>(
        &self,
        m1: usize,
        chunk: usize,
        strategy: Strategy,
        points: impl Fn(u64, usize) -> Result<Points<'a>>,
    ) -> Result<GlmGrid> {
        let mut qf = Vec::new();
        let mut gradient = Vec::new();
        self.for_each_chunk(m1 as u64, chunk, strategy, points, |_, q, g| {
            qf.push(q);
            gradient.push(g);
            Ok(())
        })?;
        let (qf, gradient) = if qf.len() == 1 {
            (qf.remove(0), gradient.remove(0))
        } else {
            (
                Array::concat(&qf.iter().collect::<Vec<_>>(), 1)?,
                Array::concat(&gradient.iter().collect::<Vec<_>>(), 1)?,
            )
        };
        Ok(GlmGrid {
            qf: qf.reshape([m1])?,
            gradient,
        })
    }

    /// Evaluates every chunk of `m1` points, `chunk` at a time, and hands
    /// each chunk's qf (`1 x c`) and gradient (`l2 x c`) with the index of
    /// its first point to `visit`.
    fn for_each_chunk<'a>(
        &self,
        m1: u64,
        chunk: usize,
        strategy: Strategy,
        points: impl Fn(u64, usize) -> Result<Points<'a>>,
        mut visit: impl FnMut(u64, Array, Array) -> Result<()>,
    ) -> Result<()> {
        self.follow_the_design()?;
        let chunk = chunk.max(1) as u64;
        let mut first = 0u64;
        while first < m1 {
            let count = (m1 - first).min(chunk) as usize;
            let (q, g) = self.chunk(strategy, points(first, count)?)?;
            Array::eval_all(&[&q, &g])?;
            visit(first, q, g)?;
            first += count as u64;
        }
        Ok(())
    }

    /// qf (`1 x c`) and the gradient (`l2 x c`) of one chunk as a lazy graph.
    fn chunk(&self, strategy: Strategy, points: Points<'_>) -> Result<(Array, Array)> {
        match strategy {
            Strategy::Gemm => self.gemm_graph(&points.dense()?),
            Strategy::PerPoint => {
                let out = self.per_point_graph(points)?;
                Ok((out.slice(0, 0..1)?, out.slice(0, 1..1 + self.l2)?))
            }
        }
    }

    /// The GEMM strategy for grid columns `b`: `eta = X B + alpha` (GEMM),
    /// the per-observation terms summed per column and their eta-slopes
    /// (one fused kernel: one full-size output and one column reduction),
    /// then `X' slopes` (GEMM) and the prior terms.
    fn gemm_graph(&self, b: &Array) -> Result<(Array, Array)> {
        let eta = (self.x.matmul(b)? + &self.alpha)?;
        let loglik = self
            .loglik
            .call(&eta, &self.dispersion, &self.columns)?
            .sum_axis(0)?;
        let slopes = self.slope.call(&eta, &self.dispersion, &self.columns)?;
        let centred = (b - &self.mu)?;
        let prior = self.p.matmul(&centred)?;
        let quad = (&centred * &prior)?.sum_axis(0)?;
        let qf = ((0.5 * &quad)? - &loglik)?;
        let gradient = (&prior - &self.x.crossprod(&slopes)?)?;
        Ok((qf, gradient))
    }

    /// The per-point strategy: one grid kernel giving `(1 + l2) x c`
    /// (qf, then the gradient) with the model's terms, prior and columns.
    fn per_point_graph(&self, points: Points<'_>) -> Result<Array> {
        let pair = terms::pair_of(self.loglik.f, self.slope.f);
        let id = LinearGridSpec {
            value: self.loglik.as_term(&self.columns)?,
            slope: self.slope.as_term(&self.columns)?,
            pair: pair.map(FnRef),
            runs: pair.and_then(runs::runs_of).map(RunRef),
            columns: self.columns.arrays.len() as u8 + 1,
        }
        .intern()?;
        let (form, point_inputs): (GridPoints, Vec<&Array>) = match &points {
            Points::Dense(b) => (GridPoints::Dense, vec![b]),
            Points::Product {
                sets,
                counts,
                first,
                count,
                ..
            } => (
                GridPoints::Product {
                    first: *first,
                    count: *count as u64,
                },
                vec![*sets, *counts],
            ),
        };
        let mut inputs: Vec<&Array> = vec![&self.x];
        inputs.extend(point_inputs);
        inputs.extend([&self.alpha, &self.mu, &self.p]);
        inputs.extend(self.columns.arrays.iter());
        inputs.push(&self.dispersion);
        Array::linear_grid(id, form, &inputs)
    }
}

/// The points of one chunk.
enum Points<'a> {
    /// An `l2 x c` matrix.
    Dense(Array),
    /// Points `first .. first + count` of a product grid, with the grid's
    /// kernel inputs.
    Product {
        grid: &'a ProductGrid,
        sets: &'a Array,
        counts: &'a Array,
        first: u64,
        count: usize,
    },
}

impl Points<'_> {
    /// The points as the GEMM strategy would read them, for planning only:
    /// a product chunk stands as a lazy host matrix of its shape, which is
    /// what materializing it would give, without the work.
    fn planned(&self) -> Result<Array> {
        match self {
            Points::Dense(b) => Ok(b.clone()),
            Points::Product { grid, count, .. } => {
                Array::zeros([grid.coefficients(), *count], gearbox_core::DType::F64)
            }
        }
    }

    /// The points as an `l2 x c` matrix (a product chunk is materialized).
    fn dense(&self) -> Result<Array> {
        match self {
            Points::Dense(b) => Ok(b.clone()),
            Points::Product {
                grid, first, count, ..
            } => grid.materialize(*first, *count),
        }
    }
}

/// Columns `start .. start + count` of the grid `b` (`l2 x m1`), without a
/// new node when they are all of it.
fn dense_points(b: &Array, start: u64, count: usize) -> Result<Points<'static>> {
    let m1 = b.dims()[1];
    let count = count.min(m1 - start as usize);
    Ok(Points::Dense(if count == m1 {
        b.clone()
    } else {
        b.slice(1, start as usize..start as usize + count)?
    }))
}

/// Points `first .. first + count` of a product grid with its kernel inputs.
fn product_points<'a>(
    grid: &'a ProductGrid,
    sets: &'a Array,
    counts: &'a Array,
    first: u64,
    count: usize,
) -> Result<Points<'a>> {
    Ok(Points::Product {
        grid,
        sets,
        counts,
        first,
        count: (count as u64).min(grid.len() - first) as usize,
    })
}

/// `a` (checked to hold `rows * cols` float64 values) as a `rows x cols`
/// matrix, without a new node when it already is one (so a device-resident
/// design stays on the device).
fn as_matrix(a: &Array, rows: usize, cols: usize) -> Result<Array> {
    if a.dims() == [rows, cols] {
        Ok(a.clone())
    } else {
        a.reshape([rows, cols])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_grids_equal_one_pass() {
        let (l1, l2, m1) = (40, 3, 23);
        let x: Vec<f64> = (0..l1 * l2)
            .map(|k| ((k * 37) % 17) as f64 / 17.0 - 0.5)
            .collect();
        let y: Vec<f64> = (0..l1).map(|i| (i % 5) as f64).collect();
        let b: Vec<f64> = (0..l2 * m1)
            .map(|k| ((k * 11) % 13) as f64 / 40.0 - 0.15)
            .collect();
        let arr = |shape: &[usize], v: Vec<f64>| Array::from_vec(shape.to_vec(), v).unwrap();
        let model = GlmModel::new(
            &arr(&[l1, l2], x),
            &arr(&[l1], y),
            &arr(&[l1], vec![1.0; l1]),
            &arr(&[l1], vec![0.0; l1]),
            &arr(&[l2], vec![0.0; l2]),
            &Array::eye(l2).unwrap(),
            &GlmSpec::parse("poisson", Some("log"), None).unwrap(),
        )
        .unwrap();
        let b = arr(&[l2, m1], b);
        // Each strategy chunked gives its one-pass values bit for bit.
        for strategy in [Strategy::Gemm, Strategy::PerPoint] {
            let whole = model.grid_with(&b, Some(strategy)).unwrap();
            let chunked = model
                .collect(m1, 7, strategy, |s, c| {
                    Ok(Points::Dense(b.slice(1, s as usize..s as usize + c)?))
                })
                .unwrap();
            assert_eq!(chunked.qf.dims(), &[m1]);
            assert_eq!(chunked.gradient.dims(), &[l2, m1]);
            assert_eq!(
                whole.qf.to_vec::<f64>().unwrap(),
                chunked.qf.to_vec::<f64>().unwrap()
            );
            assert_eq!(
                whole.gradient.to_vec::<f64>().unwrap(),
                chunked.gradient.to_vec::<f64>().unwrap()
            );
        }
    }
}
