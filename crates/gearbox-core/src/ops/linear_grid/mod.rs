//! Penalized sums of a linear-predictor model over a grid of coefficient
//! vectors, evaluated one grid point at a time: the "per-point" strategy of
//! a GLM grid (nmathopencl's kernel design), where nothing of size
//! `observations x points` is ever stored.
//!
//! For a design `X` (`l1 x l2`), an offset `o` (length `l1`), a prior mean
//! `mu` (length `l2`), a penalty matrix `P` (`l2 x l2`), two float64 scalar
//! functions `value` and `slope` whose arguments are `eta` and
//! per-observation columns, and every grid point `b_j`:
//!
//! ```text
//! eta_ij    = o_i + sum_k X_ik b_kj,     c_j = b_j - mu
//! out[0, j] = 0.5 c_j' P c_j - sum_i value(eta_ij, columns_i)
//! out[1+k, j] = (P c_j)_k - sum_i X_ik slope(eta_ij, columns_i)
//! ```
//!
//! The result is one `(1 + l2) x m` float64 matrix (the value row, then
//! the gradient). Grid points come either as a dense `l2 x m` matrix or as
//! a Cartesian product of per-coefficient point sets ([`GridPoints`]), in
//! which case point `j` is computed from its index and the grid never
//! exists in memory: with `n_k` points for coefficient `k`, the index's
//! mixed-radix digits (coefficient 0 fastest, as R's `expand.grid`) pick
//! each coefficient's point.
//!
//! The op is a library call ([`LibraryCall::LinearGrid`]): the CPU reference
//! below runs blocks of points in parallel, reading each run of the design
//! once for a whole block, each point's sums over the observations in
//! order (in a few partial sums); a GPU backend renders the two functions' device source into a
//! kernel of its own. The term functions and their argument layout are
//! interned ([`LinearGridSpec::intern`]) so the call stays a small `Copy`
//! value.

use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use crate::buffer::HostBuffer;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fusion::ir::{FnRef, ScalarFn, MAX_CALL_ARGS};
use crate::graph::{Array, Operand, Primitive, Spec};
use crate::ops::library::LibraryCall;
use crate::shape::Shape;

/// Where one argument of a term function comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TermArg {
    /// The linear predictor `eta_ij`.
    Eta,
    /// Column input `c` (after the fixed inputs), read at observation `i`
    /// (or at 0 when the column holds one value).
    Column(u8),
}

/// The most arguments a grid term's function takes: a term's own (at most
/// [`MAX_CALL_ARGS`]) or a pair's, a term's and a slope's together.
pub const MAX_TERM_ARGS: usize = 2 * MAX_CALL_ARGS;

/// A term function and where its arguments come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GridTerm {
    /// The function.
    pub f: FnRef,
    /// Its flag bits.
    pub flags: u8,
    /// Its arguments' sources (the first `f.arity` are used).
    pub args: [TermArg; MAX_TERM_ARGS],
}

impl GridTerm {
    /// A term from its function, flags and argument sources; fails when the
    /// count of sources is not the function's arity.
    pub fn new(f: &'static ScalarFn, flags: u8, args: &[TermArg]) -> Result<GridTerm> {
        if args.len() != f.arity || f.arity > MAX_TERM_ARGS {
            return Err(Error::InvalidArgument {
                op: "linear_grid",
                name: "args",
                value: args.len().to_string(),
                why: format!("{} takes {} arguments", f.name, f.arity),
            });
        }
        let mut a = [TermArg::Eta; MAX_TERM_ARGS];
        a[..args.len()].copy_from_slice(args);
        Ok(GridTerm {
            f: FnRef(f),
            flags,
            args: a,
        })
    }

    /// The argument sources in use.
    pub fn sources(&self) -> &[TermArg] {
        &self.args[..self.f.get().arity]
    }

    /// The term at one observation: `eta` and the observation's column values.
    fn eval(&self, eta: f64, columns: &[f64]) -> f64 {
        let mut a = [0.0; MAX_TERM_ARGS];
        for (slot, src) in a.iter_mut().zip(self.sources()) {
            *slot = match *src {
                TermArg::Eta => eta,
                TermArg::Column(c) => columns[c as usize],
            };
        }
        (self.f.get().eval)(&a[..self.f.get().arity], self.flags)
    }
}

/// A CPU evaluator of a grid's pair term over a run of observations:
/// term functions whose fast forms compile to vector instructions supply
/// one, and the CPU reference calls it instead of the two terms one
/// observation at a time.
#[derive(Debug)]
pub struct RunEval {
    /// Its name (two evaluators are the same when their names are).
    pub name: &'static str,
    /// `eval(args, flags, slopes)`: `args[a]` holds the pair's argument
    /// `a` (`eta` included, in [`LinearGridSpec::pair_term`]'s order) at
    /// each observation of the run and `flags` the pair's flags; writes
    /// each observation's slope to `slopes` and returns the sum of the
    /// values in observation order, or `None` where it does not apply to
    /// these flags (the terms are then evaluated one by one).
    pub eval: RunFn,
}

/// [`RunEval::eval`]'s type.
pub type RunFn = fn(&[&[f64]], u8, &mut [f64]) -> Option<f64>;

/// A reference to a [`RunEval`], compared and hashed by name so that a
/// [`LinearGridSpec`] stays a plain value.
#[derive(Debug, Clone, Copy)]
pub struct RunRef(pub &'static RunEval);

impl PartialEq for RunRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for RunRef {}

impl std::hash::Hash for RunRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

/// The two term functions of a grid and the number of column inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinearGridSpec {
    /// Summed into the value row (subtracted from the penalty).
    pub value: GridTerm,
    /// Its derivative in `eta`, contracted with `X` into the gradient.
    pub slope: GridTerm,
    /// Optionally, one function evaluating `value` and `slope` at once
    /// (sharing their common work, such as one `exp(eta)`), for device
    /// kernels: its arguments are `value`'s then `slope`'s, its flags
    /// `value`'s then `slope`'s ([`LinearGridSpec::pair_term`]); its device
    /// function returns the value and writes the slope through one more,
    /// pointer, parameter, both bit for bit what the two give. The CPU
    /// reference evaluates `value` and `slope` themselves, or `runs`.
    pub pair: Option<FnRef>,
    /// Optionally, the pair over runs of observations on the CPU (needs
    /// `pair`; [`RunEval`]).
    pub runs: Option<RunRef>,
    /// How many column inputs follow the fixed ones.
    pub columns: u8,
}

/// An interned [`LinearGridSpec`]: a small handle a [`LibraryCall`] can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct LinearGridId(pub u32);

fn interned() -> &'static Mutex<Vec<&'static LinearGridSpec>> {
    static TABLE: OnceLock<Mutex<Vec<&'static LinearGridSpec>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(Vec::new()))
}

impl LinearGridSpec {
    /// Checks the spec (every column index below `columns`) and returns its
    /// handle; equal specs share one (the table holds each distinct spec
    /// once, and there are as many as (family, link, flags) combinations).
    pub fn intern(self) -> Result<LinearGridId> {
        let pair = self.pair_term()?;
        if let (Some(runs), None) = (self.runs, self.pair) {
            return Err(Error::InvalidArgument {
                op: "linear_grid",
                name: "runs",
                value: runs.0.name.to_string(),
                why: "a run evaluator evaluates a pair: give the pair too".into(),
            });
        }
        for term in [&self.value, &self.slope].into_iter().chain(pair.as_ref()) {
            for src in term.sources() {
                if let TermArg::Column(c) = *src {
                    if c >= self.columns {
                        return Err(Error::InvalidArgument {
                            op: "linear_grid",
                            name: "args",
                            value: format!("column {c}"),
                            why: format!(
                                "{} reads a column beyond the {} given",
                                term.f.get().name,
                                self.columns
                            ),
                        });
                    }
                }
            }
        }
        let mut table = interned().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = table.iter().position(|s| **s == self) {
            return Ok(LinearGridId(i as u32));
        }
        table.push(Box::leak(Box::new(self)));
        Ok(LinearGridId((table.len() - 1) as u32))
    }

    /// The pair function's call, if the spec has one: `value`'s argument
    /// sources then `slope`'s, `value`'s flag bits then `slope`'s (shifted
    /// past `value`'s flags). Fails when the pair's arity or flag count is
    /// not the two terms' together.
    pub fn pair_term(&self) -> Result<Option<GridTerm>> {
        let Some(pair) = self.pair else {
            return Ok(None);
        };
        let (v, s) = (self.value.f.get(), self.slope.f.get());
        if pair.get().flags != v.flags + s.flags {
            return Err(Error::InvalidArgument {
                op: "linear_grid",
                name: "pair",
                value: pair.get().name.to_string(),
                why: format!(
                    "a pair takes the flags of {} and {} ({}), not {}",
                    v.name,
                    s.name,
                    v.flags + s.flags,
                    pair.get().flags
                ),
            });
        }
        let sources: Vec<TermArg> = self
            .value
            .sources()
            .iter()
            .chain(self.slope.sources())
            .copied()
            .collect();
        let flags = self.value.flags | (self.slope.flags << v.flags);
        GridTerm::new(pair.get(), flags, &sources).map(Some)
    }
}

impl LinearGridId {
    /// The spec behind the handle, or an error for a handle this process
    /// never made.
    pub fn spec(self) -> Result<&'static LinearGridSpec> {
        interned()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(self.0 as usize)
            .copied()
            .ok_or_else(|| Error::InvalidArgument {
                op: "linear_grid",
                name: "spec",
                value: self.0.to_string(),
                why: "no grid spec was interned under this handle".into(),
            })
    }
}

/// How the grid's points are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum GridPoints {
    /// A dense `l2 x m` matrix, one column per point.
    Dense,
    /// Points `first .. first + count` of the Cartesian product of the
    /// per-coefficient point sets, given as two inputs: the sets one after
    /// another (length `sum n_k`) and the counts `n_k` (length `l2`, float64
    /// holding whole numbers).
    Product {
        /// Index of the first point computed.
        first: u64,
        /// Number of points computed.
        count: u64,
    },
}

impl GridPoints {
    /// How many inputs give the points (1 for dense, 2 for a product).
    pub fn inputs(self) -> usize {
        match self {
            GridPoints::Dense => 1,
            GridPoints::Product { .. } => 2,
        }
    }
}

/// Positions of the fixed inputs: `X`, the point input(s), then the offset,
/// `mu` and `P`; the columns follow.
#[derive(Debug, Clone, Copy)]
pub struct InputLayout {
    /// Index of the offset.
    pub offset: usize,
    /// Index of `mu`.
    pub mu: usize,
    /// Index of `P`.
    pub p: usize,
    /// Index of the first column.
    pub columns: usize,
}

impl InputLayout {
    /// The layout for grid points given as `points`.
    pub fn of(points: GridPoints) -> InputLayout {
        let offset = 1 + points.inputs();
        InputLayout {
            offset,
            mu: offset + 1,
            p: offset + 2,
            columns: offset + 3,
        }
    }
}

/// The primitive: a [`LinearGridSpec`] and how the points are given.
#[derive(Debug, Clone, Copy)]
pub struct LinearGrid {
    /// The interned spec.
    pub id: LinearGridId,
    /// The spec it names.
    pub spec: &'static LinearGridSpec,
    /// How the points are given.
    pub points: GridPoints,
}

impl LinearGrid {
    /// The primitive for a library call's parameters.
    pub fn new(id: LinearGridId, points: GridPoints) -> Result<LinearGrid> {
        Ok(LinearGrid {
            id,
            spec: id.spec()?,
            points,
        })
    }
}

fn bad_input(shape: &Shape, why: String) -> Error {
    Error::BadShape {
        op: "linear_grid",
        shape: shape.clone(),
        why,
    }
}

/// `(rows, cols)` of a matrix or `(n, 1)` of a vector.
fn as_matrix(s: &Shape) -> Option<(usize, usize)> {
    match s.dims() {
        [n] => Some((*n, 1)),
        [r, c] => Some((*r, *c)),
        _ => None,
    }
}

impl Primitive for LinearGrid {
    fn name(&self) -> &'static str {
        "linear_grid"
    }

    fn output_spec(&self, inputs: &[&Spec]) -> Result<Spec> {
        let layout = InputLayout::of(self.points);
        let want = layout.columns + self.spec.columns as usize;
        if inputs.len() != want {
            return Err(Error::InvalidArgument {
                op: "linear_grid",
                name: "inputs",
                value: inputs.len().to_string(),
                why: format!("the grid call takes {want} arrays"),
            });
        }
        if let Some(s) = inputs.iter().find(|s| s.dtype != DType::F64) {
            return Err(Error::DType {
                op: "linear_grid",
                got: s.dtype,
                expected: "f64",
            });
        }
        let (l1, l2) = as_matrix(&inputs[0].shape)
            .ok_or_else(|| bad_input(&inputs[0].shape, "X must be a matrix".into()))?;
        let m = match self.points {
            GridPoints::Dense => match as_matrix(&inputs[1].shape) {
                Some((r, c)) if r == l2 => c,
                _ => {
                    return Err(bad_input(
                        &inputs[1].shape,
                        format!("the grid must have {l2} rows, one per column of X"),
                    ))
                }
            },
            GridPoints::Product { count, .. } => {
                if inputs[2].shape.numel() != l2 {
                    return Err(bad_input(
                        &inputs[2].shape,
                        format!("a product grid needs {l2} point counts"),
                    ));
                }
                count as usize
            }
        };
        let check = |i: usize, n: usize, what: &str| {
            if inputs[i].shape.numel() == n {
                Ok(())
            } else {
                Err(bad_input(
                    &inputs[i].shape,
                    format!("{what} must have {n} values"),
                ))
            }
        };
        check(layout.offset, l1, "the offset")?;
        check(layout.mu, l2, "mu")?;
        check(layout.p, l2 * l2, "P")?;
        for c in 0..self.spec.columns as usize {
            let n = inputs[layout.columns + c].shape.numel();
            if n != l1 && n != 1 {
                return Err(bad_input(
                    &inputs[layout.columns + c].shape,
                    format!("column {c} must have {l1} values (one per observation) or one"),
                ));
            }
        }
        Ok(Spec::new(Shape::new(vec![1 + l2, m]), DType::F64))
    }

    fn eval_cpu(&self, inputs: &[Operand<'_>], out: &Spec) -> Result<Arc<HostBuffer>> {
        let layout = InputLayout::of(self.points);
        let (l1, l2) = as_matrix(&inputs[0].spec.shape).unwrap_or((0, 0));
        let m = out.shape.dim(1);
        let x = f64s(&inputs[0])?;
        let offset = f64s(&inputs[layout.offset])?;
        let mu = f64s(&inputs[layout.mu])?;
        let p = f64s(&inputs[layout.p])?;
        // Every column at full length (a one-value column repeated), one
        // after the other, so a run of observations reads each as a slice.
        let nc = self.spec.columns as usize;
        let mut columns = crate::memory::zeroed::<f64>("linear_grid", l1 * nc)?;
        for (c, dst) in columns.chunks_mut(l1.max(1)).enumerate().take(nc) {
            let col = f64s(&inputs[layout.columns + c])?;
            if col.len() == 1 {
                dst.fill(col[0]);
            } else {
                dst.copy_from_slice(&col[..l1]);
            }
        }
        let points = match self.points {
            GridPoints::Dense => PointSource::Dense(f64s(&inputs[1])?),
            GridPoints::Product { first, .. } => {
                PointSource::product(f64s(&inputs[1])?, f64s(&inputs[2])?, first)?
            }
        };
        let runs = match (self.spec.runs, self.spec.pair_term()?) {
            (Some(runs), Some(pair)) => Some((runs.0, pair)),
            _ => None,
        };
        let grid = CpuGrid {
            spec: self.spec,
            runs,
            x,
            offset,
            mu,
            p,
            columns: &columns,
            l1,
            l2,
        };
        let mut result = crate::memory::zeroed::<f64>("linear_grid", (1 + l2) * m)?;
        result
            .par_chunks_mut((1 + l2) * BLOCK)
            .enumerate()
            .with_min_len(2)
            .for_each_init(
                || Scratch::new(l2, nc),
                |scratch, (block, out)| grid.block(&points, block * BLOCK, out, scratch),
            );
        Ok(Arc::new(HostBuffer::from_vec(result)))
    }

    fn library_call(&self) -> Option<LibraryCall> {
        Some(LibraryCall::LinearGrid {
            spec: self.id,
            points: self.points,
        })
    }
}

/// An operand's float64 values.
fn f64s<'a>(o: &Operand<'a>) -> Result<&'a [f64]> {
    o.buf.as_slice::<f64>().ok_or(Error::DType {
        op: "linear_grid",
        got: o.buf.dtype(),
        expected: "f64",
    })
}

mod vector;

/// Observations per run of the CPU loop: `eta` and the slopes of a block's
/// run stay in the first-level cache.
const RUN: usize = 256;

/// Grid points per block of the CPU loop: each run of the design is read
/// once for this many points. Four points by two design vectors (or two
/// columns) fill the kernels' eight accumulator registers; a wider block
/// takes a narrower tile, which loads more per multiply.
const BLOCK: usize = 4;

/// One thread's buffers for a block of points: one point's coefficients;
/// the block's coefficients and their distances from the prior mean
/// (coefficient by coefficient); the block's `P c`, gradient sums, run of
/// `eta` and run of slopes (point by point); zeros to start `P c` from;
/// one observation's columns.
struct Scratch {
    b: Vec<f64>,
    coefs: Vec<f64>,
    centred: Vec<f64>,
    pc: Vec<f64>,
    grad: Vec<f64>,
    eta: Vec<[f64; RUN]>,
    slopes: Vec<[f64; RUN]>,
    zeros: Vec<f64>,
    cols: Vec<f64>,
}

impl Scratch {
    /// Buffers for `l2` coefficients and `columns` column inputs.
    fn new(l2: usize, columns: usize) -> Scratch {
        Scratch {
            b: vec![0.0; l2],
            coefs: vec![0.0; BLOCK * l2],
            centred: vec![0.0; BLOCK * l2],
            pc: vec![0.0; BLOCK * l2],
            grad: vec![0.0; BLOCK * l2],
            eta: vec![[0.0; RUN]; BLOCK],
            slopes: vec![[0.0; RUN]; BLOCK],
            zeros: vec![0.0; l2],
            cols: vec![0.0; columns],
        }
    }
}

/// The CPU loop's inputs: the design column by column, the offset, the
/// prior mean, the penalty and the columns at full length.
struct CpuGrid<'a> {
    spec: &'static LinearGridSpec,
    runs: Option<(&'static RunEval, GridTerm)>,
    x: &'a [f64],
    offset: &'a [f64],
    mu: &'a [f64],
    p: &'a [f64],
    columns: &'a [f64],
    l1: usize,
    l2: usize,
}

impl CpuGrid<'_> {
    /// Points `first ..` written to `out` (`1 + l2` values each, as many
    /// points as it holds, at most [`BLOCK`]): a whole block at once, a
    /// partial one in pieces of the kernels' narrower widths (every width
    /// from `BLOCK` down is a sum of them).
    fn block(&self, points: &PointSource, first: usize, out: &mut [f64], s: &mut Scratch) {
        let per = 1 + self.l2;
        let n = out.len() / per;
        let mut done = 0;
        while done < n {
            let (j, out) = (first + done, &mut out[done * per..]);
            done += match n - done {
                BLOCK.. => self.piece::<BLOCK, 2, 2>(points, j, out, s),
                2.. => self.piece::<2, 4, 4>(points, j, out, s),
                _ => self.piece::<1, 4, 8>(points, j, out, s),
            };
        }
    }

    /// The `W` points from `first` on, written to the start of `out`;
    /// returns `W`. `V` and `K` size the tiles of [`vector::combine`] and
    /// [`vector::contract`] for `W` points: at most eight vector registers,
    /// which leaves AVX2's sixteen room for the design and the
    /// coefficients.
    fn piece<const W: usize, const V: usize, const K: usize>(
        &self,
        points: &PointSource,
        first: usize,
        out: &mut [f64],
        s: &mut Scratch,
    ) -> usize {
        let l2 = self.l2;
        for q in 0..W {
            points.point(first + q, &mut s.b);
            for (k, &b) in s.b.iter().enumerate() {
                s.coefs[k * W + q] = b;
            }
        }
        let sums = self.sums::<W, V, K>(s);
        self.penalize::<W, V>(s, sums, &mut out[..W * (1 + l2)]);
        W
    }

    /// For the `W` points in `s.coefs`: each point's sum of the values over
    /// the observations, returned, and its sums of `X_ik slope_i`, in
    /// `s.grad`. A run at a time: `eta` for all the points, the terms point
    /// by point (by the run evaluator where the spec has one that applies),
    /// then the gradient for all the points.
    fn sums<const W: usize, const V: usize, const K: usize>(&self, s: &mut Scratch) -> [f64; W] {
        let (l1, l2) = (self.l1, self.l2);
        let coefs = &s.coefs[..W * l2];
        let grad = &mut s.grad[..W * l2];
        grad.fill(0.0);
        let mut sums = [0.0; W];
        for start in (0..l1).step_by(RUN) {
            let n = RUN.min(l1 - start);
            let (eta, slopes) = (&mut s.eta[..W], &mut s.slopes[..W]);
            let x = &self.x[start..];
            let offset = &self.offset[start..start + n];
            vector::combine::<W, V>(x, l1, offset, coefs, eta.as_flattened_mut(), RUN);
            for (sum, (eta, slopes)) in sums.iter_mut().zip(eta.iter().zip(slopes.iter_mut())) {
                *sum += self.terms(start, &eta[..n], &mut slopes[..n], &mut s.cols);
            }
            vector::contract::<W, K>(x, l1, slopes, n, grad);
        }
        sums
    }

    /// One point's terms over the run of observations from `start`: writes
    /// the slopes and returns the sum of the values, by the run evaluator
    /// where it applies, else one observation at a time.
    fn terms(&self, start: usize, eta: &[f64], slopes: &mut [f64], cols: &mut [f64]) -> f64 {
        let (l1, n) = (self.l1, eta.len());
        let input = |c: usize| &self.columns[c * l1 + start..c * l1 + start + n];
        let by_run = self.runs.and_then(|(runs, pair)| {
            let mut args: [&[f64]; MAX_TERM_ARGS] = [&[]; MAX_TERM_ARGS];
            for (slot, src) in args.iter_mut().zip(pair.sources()) {
                *slot = match *src {
                    TermArg::Eta => eta,
                    TermArg::Column(c) => input(c as usize),
                };
            }
            (runs.eval)(&args[..pair.sources().len()], pair.flags, slopes)
        });
        by_run.unwrap_or_else(|| {
            let mut sum = 0.0;
            for (i, (&eta, slope)) in eta.iter().zip(slopes).enumerate() {
                for (c, v) in cols.iter_mut().enumerate() {
                    *v = self.columns[c * l1 + start + i];
                }
                sum += self.spec.value.eval(eta, cols);
                *slope = self.spec.slope.eval(eta, cols);
            }
            sum
        })
    }

    /// The `W` points' outputs from their sums (`sums` and `s.grad`) and
    /// the penalty: with `c = b - mu`, the value `0.5 c' P c - sum` and the
    /// gradient `P c - grad`, `P c` for all the points at once (the
    /// penalty read once).
    fn penalize<const W: usize, const V: usize>(
        &self,
        s: &mut Scratch,
        sums: [f64; W],
        out: &mut [f64],
    ) {
        let l2 = self.l2;
        let centred = &mut s.centred[..W * l2];
        let coefs = s.coefs.chunks_exact(W);
        for ((ck, bk), mu) in centred.chunks_exact_mut(W).zip(coefs).zip(self.mu) {
            for (c, b) in ck.iter_mut().zip(bk) {
                *c = b - mu;
            }
        }
        let pc = &mut s.pc[..W * l2];
        vector::combine::<W, V>(self.p, l2, &s.zeros, centred, pc, l2);
        for (q, (out, sum)) in out.chunks_exact_mut(1 + l2).zip(sums).enumerate() {
            let (pc, grad) = (&pc[q * l2..][..l2], &s.grad[q * l2..][..l2]);
            let (value, out_grad) = out.split_at_mut(1);
            let mut quad = 0.0;
            for (k, ((o, &pc), g)) in out_grad.iter_mut().zip(pc).zip(grad).enumerate() {
                quad += centred[k * W + q] * pc;
                *o = pc - g;
            }
            value[0] = 0.5 * quad - sum;
        }
    }
}

/// Where point `j`'s coefficients come from on the host.
enum PointSource<'a> {
    Dense(&'a [f64]),
    Product {
        sets: &'a [f64],
        /// `(start, count)` of each coefficient's set in `sets`.
        ranges: Vec<(usize, usize)>,
        first: u64,
    },
}

impl<'a> PointSource<'a> {
    /// A product source from the concatenated sets and their counts.
    fn product(sets: &'a [f64], counts: &[f64], first: u64) -> Result<PointSource<'a>> {
        let ranges = product_ranges(sets.len(), counts)?;
        Ok(PointSource::Product {
            sets,
            ranges,
            first,
        })
    }

    fn point(&self, j: usize, b: &mut [f64]) {
        match self {
            PointSource::Dense(v) => b.copy_from_slice(&v[j * b.len()..(j + 1) * b.len()]),
            PointSource::Product {
                sets,
                ranges,
                first,
            } => product_point(sets, ranges, first + j as u64, b),
        }
    }
}

/// Point `index` of the Cartesian product whose per-coefficient point sets
/// lie one after another in `sets` at `ranges` (`(start, count)` each, as
/// [`product_ranges`] gives them), written to `b`: the index's mixed-radix
/// digits, coefficient 0 fastest (R's `expand.grid`), pick each
/// coefficient's point.
pub fn product_point(sets: &[f64], ranges: &[(usize, usize)], index: u64, b: &mut [f64]) {
    let mut idx = index;
    for (bk, &(start, n)) in b.iter_mut().zip(ranges) {
        *bk = sets[start + (idx % n as u64) as usize];
        idx /= n as u64;
    }
}

/// `(start, count)` of each set of a product grid from the counts, checked
/// against the length of the concatenated sets (whole, positive counts).
pub fn product_ranges(total: usize, counts: &[f64]) -> Result<Vec<(usize, usize)>> {
    let mut start = 0usize;
    let mut ranges = Vec::with_capacity(counts.len());
    for (k, &c) in counts.iter().enumerate() {
        if !(c >= 1.0 && c.fract() == 0.0 && c <= total as f64) {
            return Err(Error::InvalidArgument {
                op: "linear_grid",
                name: "counts",
                value: c.to_string(),
                why: format!("coefficient {k}'s point count must be a whole number of at least 1"),
            });
        }
        ranges.push((start, c as usize));
        start += c as usize;
    }
    if start != total {
        return Err(Error::InvalidArgument {
            op: "linear_grid",
            name: "counts",
            value: start.to_string(),
            why: format!("the counts add up to {start}, but {total} points were given"),
        });
    }
    Ok(ranges)
}

impl Array {
    /// The penalized sums of [`crate::ops::linear_grid`] over a grid, lazily:
    /// `inputs` are `X`, the point input(s) of `points`, the offset, `mu`,
    /// `P` and the spec's columns, all float64. The result is `(1 + l2) x m`.
    pub fn linear_grid(id: LinearGridId, points: GridPoints, inputs: &[&Array]) -> Result<Array> {
        Array::from_op(
            LinearGrid::new(id, points)?,
            inputs.iter().map(|a| (*a).clone()).collect(),
        )
    }
}
