//! One conformance suite for every backend: each elementwise op of
//! [`UnaryOp::ALL`] and [`BinaryOp::ALL`] in every dtype, at sizes that
//! straddle block and vector boundaries; fused chains; every reduction of
//! [`ReduceOp::ALL`] over all elements and along each axis; reductions
//! whose results the same kernel reads back (softmax, standardization:
//! epilogues) along each axis; scans; library
//! calls (products, factorizations, solves); transposes and flips (data
//! movement that follows its input to the backend); random streams. Each case is
//! computed on the backend under test and by the CPU reference op by op
//! (fusion off), and compared: integers and bools exactly, floats within a
//! tolerance for their dtype.
//!
//! The CPU itself is checked the same way (fused and tiled against op by
//! op), and so is every GPU backend on its device: `check("cuda")` in
//! gearbox-cuda's GPU tests, `check("sim")` on the simulated device. Work a
//! backend declines (its capabilities, thresholds aside: the backend is
//! forced) runs on the CPU and is still compared. An op added to the lists
//! is in the suite at once; one the suite cannot build fails it.

use crate::dtype::DType;
use crate::error::Result;
use crate::graph::Array;
use crate::ops::binary::BinaryOp;
use crate::ops::reduce::ReduceOp;
use crate::ops::unary::UnaryOp;
use crate::precision::Precision;
use crate::runtime::{options, set_options, RuntimeOptions};

/// Sizes straddling warp, block, tile and vector-width boundaries.
pub const SIZES: [usize; 11] = [1, 2, 3, 127, 128, 129, 255, 256, 257, 4097, 100_003];

/// Every dtype an elementwise op is tried in.
const DTYPES: [DType; 4] = [DType::F32, DType::F64, DType::I64, DType::Bool];

/// One case whose result differed from the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The case, e.g. `exp f32 n=4097`.
    pub case: String,
    /// What differed.
    pub detail: String,
}

/// What a run of the suite found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Cases compared.
    pub cases: usize,
    /// Cases that differed from the reference.
    pub mismatches: Vec<Mismatch>,
}

/// Where the suite runs the work under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// The CPU with fusion on (checked against itself op by op).
    Cpu,
    /// A registered backend, forced for every piece of work it supports.
    Backend(&'a str),
}

/// Runs the whole suite on `target`.
pub fn check(target: Target<'_>) -> Result<Report> {
    let mut s = Suite {
        target,
        report: Report::default(),
    };
    s.elementwise()?;
    s.chains()?;
    s.reductions()?;
    s.epilogues()?;
    s.scans()?;
    s.library()?;
    s.permutes()?;
    s.random()?;
    Ok(s.report)
}

struct Suite<'a> {
    target: Target<'a>,
    report: Report,
}

/// `n` values of `dtype` in [-2, 2) without zeros (ints in -7..=7, bools
/// alternating), reproducible from `seed`.
fn input(shape: &[usize], dtype: DType, seed: u64) -> Result<Array> {
    let n: usize = shape.iter().product();
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let values: Vec<f64> = (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            match dtype {
                DType::I64 => ((u * 15.0).floor() - 7.0).max(-7.0),
                DType::Bool => (i % 3 != 0) as u8 as f64,
                _ => {
                    let v = 4.0 * u - 2.0;
                    if v.abs() < 1e-3 {
                        0.5
                    } else {
                        v
                    }
                }
            }
        })
        .collect();
    let a = Array::from_vec(shape.to_vec(), values)?.astype(dtype)?;
    let a = a.with_precision(Precision::Fast)?;
    a.eval()?;
    Ok(a)
}

/// The tolerance of a float result of `dtype`: relative, with an absolute
/// floor near zero.
fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 2e-5,
        _ => 2e-12,
    }
}

impl Suite<'_> {
    /// Evaluates `build` on the target and by the CPU reference op by op,
    /// and compares; a build that the reference rejects is not a case.
    fn compare(&mut self, case: &str, build: &dyn Fn() -> Result<Array>) -> Result<()> {
        let reference = with_options(
            |o| RuntimeOptions {
                optional_backends: false,
                fusion: false,
                ..o
            },
            || build().and_then(|a| a.to_f64_vec().map(|v| (a.dtype(), v))),
        );
        let Ok((dtype, want)) = reference else {
            return Ok(());
        };
        self.report.cases += 1;
        crate::runtime::testing::trace(case);
        let target = self.target;
        let got = with_options(
            |o| match target {
                Target::Cpu => RuntimeOptions {
                    optional_backends: false,
                    fusion: true,
                    ..o
                },
                Target::Backend(name) => RuntimeOptions {
                    force_backend: Some(name.to_string()),
                    ..o
                },
            },
            || build().and_then(|a| a.to_f64_vec().map(|v| (a.dtype(), v))),
        );
        let detail = match got {
            Err(e) => Some(format!("failed where the reference did not: {e}")),
            Ok((d, _)) if d != dtype => Some(format!("dtype {d}, reference {dtype}")),
            Ok((_, got)) if got.len() != want.len() => {
                Some(format!("{} values, reference {}", got.len(), want.len()))
            }
            Ok((_, got)) => first_difference(&got, &want, dtype),
        };
        if let Some(detail) = detail {
            self.report.mismatches.push(Mismatch {
                case: case.to_string(),
                detail,
            });
        }
        Ok(())
    }

    fn elementwise(&mut self) -> Result<()> {
        for &dtype in &DTYPES {
            for &n in &SIZES {
                let x = input(&[n], dtype, n as u64)?;
                let y = input(&[n], dtype, n as u64 + 7)?;
                for &op in UnaryOp::ALL {
                    let case = format!("{} {dtype} n={n}", op.name());
                    self.compare(&case, &|| x.unary(op))?;
                }
                for &op in BinaryOp::ALL {
                    let case = format!("{} {dtype} n={n}", op.name());
                    self.compare(&case, &|| x.binary(op, &y))?;
                }
            }
            // Broadcasting: a column against a matrix, a row, a scalar.
            let m = input(&[129, 5], dtype, 3)?;
            let col = input(&[129, 1], dtype, 4)?;
            let row = input(&[1, 5], dtype, 5)?;
            let one = input(&[1], dtype, 6)?;
            for &op in BinaryOp::ALL {
                for (what, other) in [("column", &col), ("row", &row), ("scalar", &one)] {
                    let case = format!("{} {dtype} 129x5 by {what}", op.name());
                    self.compare(&case, &|| m.binary(op, other))?;
                }
            }
        }
        Ok(())
    }

    fn chains(&mut self) -> Result<()> {
        for dtype in [DType::F32, DType::F64] {
            for &n in &SIZES {
                let x = input(&[n], dtype, 11 + n as u64)?;
                let y = input(&[n], dtype, 12 + n as u64)?;
                let chain = || ((x.exp()? * &y)? + &x.sin()?)? - &(2.0 * &y)?;
                self.compare(&format!("chain {dtype} n={n}"), &chain)?;
                self.compare(&format!("chain sum {dtype} n={n}"), &|| chain()?.sum())?;
                self.compare(&format!("softplus chain {dtype} n={n}"), &|| {
                    (x.softplus()? * &y.sigmoid()?)?.reduce(ReduceOp::Max, None)
                })?;
            }
        }
        Ok(())
    }

    fn reductions(&mut self) -> Result<()> {
        let shapes: [&[usize]; 5] = [&[1, 1], &[3, 129], &[257, 5], &[4097, 3], &[2, 3, 129]];
        for dtype in DTYPES {
            for shape in shapes {
                let x = input(shape, dtype, shape.iter().product::<usize>() as u64)?;
                for &op in ReduceOp::ALL {
                    let axes = std::iter::once(None).chain((0..shape.len()).map(Some));
                    for axis in axes {
                        let case = format!("{} {dtype} {shape:?} axis {axis:?}", op.name());
                        self.compare(&case, &|| x.reduce(op, axis))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Reductions whose results the elementwise work after them reads
    /// (one kernel with an epilogue where the backend writes it so, two
    /// passes elsewhere), along lanes a thread, a warp and a block reduce
    /// and along strided lanes.
    fn epilogues(&mut self) -> Result<()> {
        let shapes: [&[usize]; 5] = [&[6, 5], &[300, 7], &[4099, 3], &[3, 4097], &[2, 70, 3]];
        for dtype in [DType::F32, DType::F64] {
            for shape in shapes {
                let x = input(shape, dtype, 60 + shape.iter().product::<usize>() as u64)?;
                let gain = input(&[1, 1], dtype, 61)?;
                for axis in 0..shape.len() {
                    let at = format!("{dtype} {shape:?} axis {axis}");
                    self.compare(&format!("softmax {at}"), &|| x.softmax_axis(axis))?;
                    self.compare(&format!("log_softmax {at}"), &|| x.log_softmax_axis(axis))?;
                    self.compare(&format!("standardize {at}"), &|| {
                        (&x - &x.mean_axis(axis)?)? / &x.sd_axis(axis)?
                    })?;
                    self.compare(&format!("scaled center {at}"), &|| {
                        let y = (&x * &gain)?;
                        (&y - &y.mean_axis(axis)?)?.exp()
                    })?;
                }
            }
        }
        Ok(())
    }

    fn scans(&mut self) -> Result<()> {
        for dtype in [DType::F32, DType::F64, DType::I64] {
            for &n in &SIZES {
                let x = input(&[n], dtype, 21 + n as u64)?;
                self.compare(&format!("cumsum {dtype} n={n}"), &|| x.cumsum())?;
            }
            let m = input(&[257, 5], dtype, 22)?;
            for axis in [0, 1] {
                let case = format!("cumsum {dtype} 257x5 axis {axis}");
                self.compare(&case, &|| m.cumsum_axis(axis))?;
            }
        }
        Ok(())
    }

    fn library(&mut self) -> Result<()> {
        for dtype in [DType::F32, DType::F64] {
            for (m, k, n) in [(1, 1, 1), (3, 129, 5), (129, 64, 257), (257, 257, 257)] {
                let a = input(&[m, k], dtype, (m * k) as u64)?;
                let b = input(&[k, n], dtype, (k * n) as u64 + 1)?;
                self.compare(&format!("matmul {dtype} {m}x{k}x{n}"), &|| a.matmul(&b))?;
                self.compare(&format!("crossprod {dtype} {m}x{k}"), &|| a.crossprod(&a))?;
            }
        }
        for n in [1, 3, 64, 129] {
            let a = input(&[n, n], DType::F64, 31 + n as u64)?;
            // Symmetric positive definite: A'A + n I.
            let spd = || a.crossprod(&a)? + &(Array::eye(n)? * n as f64)?;
            let b = input(&[n, 2], DType::F64, 32)?;
            self.compare(&format!("cholesky f64 {n}"), &|| spd()?.cholesky())?;
            self.compare(&format!("solve f64 {n}"), &|| spd()?.solve(&b))?;
        }
        Ok(())
    }

    fn permutes(&mut self) -> Result<()> {
        let shapes: [&[usize]; 5] = [&[1, 1], &[33, 31], &[129, 127], &[1000, 3], &[5, 33, 40]];
        for dtype in DTYPES {
            for (s, dims) in shapes.into_iter().enumerate() {
                let x = input(dims, dtype, 50 + s as u64)?;
                // Computed first, so that the copy follows it to the backend.
                let on = || x.astype(dtype);
                let n = dims.len();
                let mut perms = vec![(0..n).rev().collect::<Vec<usize>>()];
                if n == 3 {
                    perms.push(vec![1, 2, 0]);
                }
                for perm in perms {
                    let case = format!("transpose {perm:?} {dtype} {dims:?}");
                    self.compare(&case, &|| on()?.transpose(&perm))?;
                }
                for axis in 0..n {
                    let case = format!("flip({axis}) {dtype} {dims:?}");
                    self.compare(&case, &|| on()?.flip(axis))?;
                }
            }
        }
        Ok(())
    }

    fn random(&mut self) -> Result<()> {
        for &n in &SIZES {
            self.compare(&format!("rand n={n}"), &|| Array::rand([n], 41))?;
            self.compare(&format!("randn n={n}"), &|| Array::randn([n], 42))?;
        }
        Ok(())
    }
}

/// `f` under options changed by `change`, restoring them after.
fn with_options<T>(
    change: impl FnOnce(RuntimeOptions) -> RuntimeOptions,
    f: impl FnOnce() -> T,
) -> T {
    let saved = set_options(change(options()));
    let out = f();
    set_options(saved);
    out
}

/// The first position where `got` differs from `want` beyond the tolerance
/// of `dtype` (NaN matches NaN, infinities match exactly), if any.
fn first_difference(got: &[f64], want: &[f64], dtype: DType) -> Option<String> {
    let tol = if dtype.is_float() {
        tolerance(dtype)
    } else {
        0.0
    };
    // Errors are judged against the result's largest magnitude too: a
    // running sum near zero carries the rounding of the large sums before it.
    let scale = want
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1.0);
    got.iter().zip(want).enumerate().find_map(|(i, (&g, &w))| {
        let same = (g.is_nan() && w.is_nan())
            || g == w
            || (g.is_finite() && w.is_finite() && (g - w).abs() <= tol * w.abs().max(scale));
        (!same).then(|| format!("at {i}: {g:e}, reference {w:e}"))
    })
}
