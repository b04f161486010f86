//! The op speed suite (issue 32): every case of `scripts/ops_cases.json`
//! (unary, binary and broadcast ops, reductions, scans, `take`, copies and
//! transposes, composites such as standardization and softmax; f32 and
//! f64; tall, square, wide and 3-d shapes and a size sweep) on each usable
//! backend, with the inputs resident there. Each cell is the median of
//! `reps` synchronized evaluations into a new array after a warm one.
//!
//! Beside each time the cell records where the work ran (the metrics'
//! compute steps per evaluation on the backend and on the host, downloads
//! and the fallback log: `ran` is `host` when any step of a cell forced
//! onto a GPU ran on the CPU), the plan's backend, and the bytes the op
//! must move (inputs read plus output written), so the table can give the
//! fraction of the backend's copy bandwidth, which the same run measures
//! (`x + 0` of a resident f32 buffer of `copy_bytes`). An op that fails
//! records its error in its cell; the suite goes on.
//!
//! Prints one JSON object: `{"suite", "scale", "reps", "quick", "copy":
//! {backend: {ms, bytes, gbs}}, "cells": {backend: {"op/shape/dtype":
//! {ms, bytes, ran, plan, steps, ...} or {error} or {skipped}}}}`.
//!
//! Arguments (each also an environment variable):
//! `--backends cpu,cuda` (`GEARBOX_OPS_BACKENDS`; default cpu, cuda, wgpu,
//! opencl, each skipped when not usable), `--only SUB,SUB` (`GEARBOX_OPS_ONLY`:
//! cells whose key contains one of the substrings), `--quick`
//! (`GEARBOX_OPS_QUICK=1`: the smoke-test subset), `--scale S`
//! (`GEARBOX_OPS_SCALE`: shapes shrunk to about S of their elements, for
//! tests), `--reps N` (`GEARBOX_OPS_REPS`), `--deadline SECONDS`
//! (`GEARBOX_OPS_DEADLINE_S`: cells not started by then are marked
//! skipped), `--cases PATH` (`GEARBOX_OPS_CASES`; default the list built
//! into the binary). PyTorch's and NumPy's side:
//! `scripts/bench_ops_torch.py`; the table: `scripts/ops_table.py`.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use gearbox::runtime::bench::{force, healthy, host_randn, median_ms, resident};
use gearbox::runtime::{
    fallback_log, fallback_log_reset, metrics, metrics_reset, options, planned_backend,
    set_options, Backend, RuntimeOptions,
};
use gearbox::{Array, BinaryOp, DType, Error, ReduceOp, Result, UnaryOp};
use serde_json::{json, Map, Value};

/// The case list built into the binary (`GEARBOX_OPS_CASES` overrides it).
const CASES_JSON: &str = include_str!("../../../scripts/ops_cases.json");

/// One cell to time: an op on a shape in a dtype.
#[derive(Debug, Clone)]
struct Cell {
    /// The op's id (`unary.exp`, `reduce.var.0`, ...).
    op: String,
    /// The shape's name (`square`, `sweep2^20`, ...).
    shape: String,
    /// The (scaled) dimensions.
    dims: Vec<usize>,
    /// `f32` or `f64`.
    dtype: DType,
}

impl Cell {
    fn key(&self) -> String {
        format!("{}/{}/{}", self.op, self.shape, self.dtype.name())
    }
}

/// The settings: from arguments, else the environment, else defaults.
struct Settings {
    backends: Vec<String>,
    only: Vec<String>,
    quick: bool,
    scale: f64,
    reps: Option<usize>,
    deadline_s: Option<f64>,
    cases: Option<String>,
}

fn settings() -> Settings {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let list = |v: String| -> Vec<String> {
        v.split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    let mut s = Settings {
        backends: env("GEARBOX_OPS_BACKENDS")
            .map(list)
            .unwrap_or_else(|| list("cpu,cuda,wgpu,opencl".into())),
        only: env("GEARBOX_OPS_ONLY").map(list).unwrap_or_default(),
        quick: env("GEARBOX_OPS_QUICK").is_some_and(|v| v != "0"),
        scale: env("GEARBOX_OPS_SCALE")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1.0),
        reps: env("GEARBOX_OPS_REPS").and_then(|v| v.parse().ok()),
        deadline_s: env("GEARBOX_OPS_DEADLINE_S").and_then(|v| v.parse().ok()),
        cases: env("GEARBOX_OPS_CASES"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--backends" | "--backend" => s.backends = list(value()),
            "--only" => s.only = list(value()),
            "--quick" => s.quick = true,
            "--scale" => s.scale = value().parse().unwrap_or(1.0),
            "--reps" => s.reps = value().parse().ok(),
            "--deadline" => s.deadline_s = value().parse().ok(),
            "--cases" => s.cases = Some(value()),
            other => eprintln!("ops_bench: unknown argument {other} (ignored)"),
        }
    }
    s.scale = s.scale.clamp(1e-12, 1.0);
    s
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len())
                .filter(|&i| rest.is_char_boundary(i))
                .any(|i| glob(tail, &rest[i..]))
        }
    }
}

/// A shape shrunk by `scale` (the rule in `ops_cases.json`'s `about`).
fn scaled(dims: &[usize], scale: f64) -> Vec<usize> {
    let big = dims.iter().filter(|&&d| d >= 256).count();
    if big == 0 || scale >= 1.0 {
        return dims.to_vec();
    }
    let f = scale.powf(1.0 / big as f64);
    dims.iter()
        .map(|&d| {
            if d >= 256 {
                ((d as f64 * f).round() as usize).max(2)
            } else {
                d
            }
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn dtype_of(name: &str) -> Option<DType> {
    match name {
        "f32" => Some(DType::F32),
        "f64" => Some(DType::F64),
        _ => None,
    }
}

/// The cells of the case list (all, or the quick subset), in the list's
/// order grouped by shape and dtype so inputs are made once per group.
fn expand(spec: &Value, quick: bool, scale: f64) -> Vec<Cell> {
    let shapes = &spec["shapes"];
    let dims_of = |name: &str| -> Option<Vec<usize>> {
        shapes[name].as_array().map(|a| {
            a.iter()
                .filter_map(|d| d.as_u64().map(|d| d as usize))
                .collect()
        })
    };
    let excluded = |op: &str, shape: &str, dtype: &str| {
        spec["exclude"].as_array().into_iter().flatten().any(|e| {
            let m = |field: &str, v: &str| e[field].as_str().is_none_or(|p| glob(p, v));
            m("op", op) && m("shape", shape) && m("dtype", dtype)
        })
    };
    let mut raw: Vec<(String, String, Vec<usize>, String)> = Vec::new();
    for g in spec["groups"].as_array().into_iter().flatten() {
        let axes = strings(&g["axes"]);
        let mut ops = Vec::new();
        for op in strings(&g["ops"]) {
            if axes.is_empty() || !op.contains('*') {
                ops.push(op);
            } else {
                ops.extend(axes.iter().map(|a| op.replace('*', a)));
            }
        }
        for shape in strings(&g["shapes"]) {
            let Some(dims) = dims_of(&shape) else {
                eprintln!("ops_bench: unknown shape {shape}");
                continue;
            };
            for dtype in strings(&g["dtypes"]) {
                for op in &ops {
                    if !excluded(op, &shape, &dtype) {
                        raw.push((op.clone(), shape.clone(), dims.clone(), dtype.clone()));
                    }
                }
            }
        }
    }
    let sweep = &spec["sweep"];
    let log2: Vec<u64> = if quick {
        spec["quick"]["sweep_log2"].as_array()
    } else {
        sweep["log2"].as_array()
    }
    .into_iter()
    .flatten()
    .filter_map(Value::as_u64)
    .collect();
    for k in log2 {
        let n = ((1u64 << k) as f64 * scale).round().max(4.0) as u64;
        let bits = 64 - n.leading_zeros() as u64 - 1;
        let rows = 1usize << bits.div_ceil(2);
        let cols = (n as usize / rows).max(1);
        for dtype in strings(&sweep["dtypes"]) {
            for op in strings(&sweep["ops"]) {
                let shape = format!("sweep2^{k}");
                raw.push((op, shape, vec![rows, cols], dtype.clone()));
            }
        }
    }
    if quick {
        let q = &spec["quick"];
        let (ops, shapes, dtypes) = (
            strings(&q["ops"]),
            strings(&q["shapes"]),
            strings(&q["dtypes"]),
        );
        raw.retain(|(op, shape, _, dtype)| {
            ops.contains(op)
                && (shapes.contains(shape) || shape.starts_with("sweep"))
                && dtypes.contains(dtype)
        });
    }
    // Group by shape and dtype, keeping the list's order otherwise.
    let mut order: Vec<(String, String)> = Vec::new();
    for (_, s, _, d) in &raw {
        if !order.contains(&(s.clone(), d.clone())) {
            order.push((s.clone(), d.clone()));
        }
    }
    let mut cells = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (s, d) in order {
        for (op, shape, dims, dtype) in &raw {
            if *shape == s && *dtype == d && seen.insert((op.clone(), s.clone(), d.clone())) {
                let dims = if shape.starts_with("sweep") {
                    dims.clone()
                } else {
                    scaled(dims, scale)
                };
                if let Some(dtype) = dtype_of(dtype) {
                    cells.push(Cell {
                        op: op.clone(),
                        shape: shape.clone(),
                        dims,
                        dtype,
                    });
                }
            }
        }
    }
    cells
}

/// Inputs of one shape and dtype on one backend, made on first use.
struct Inputs {
    on: String,
    dims: Vec<usize>,
    dtype: DType,
    made: HashMap<&'static str, Array>,
}

impl Inputs {
    fn new(on: &str, dims: &[usize], dtype: DType) -> Self {
        Inputs {
            on: on.to_string(),
            dims: dims.to_vec(),
            dtype,
            made: HashMap::new(),
        }
    }

    fn random(&self, shape: &[usize], seed: u64) -> Result<Array> {
        if self.on == "cpu" {
            host_randn(shape, seed, self.dtype)
        } else {
            resident(shape, seed, &self.on, self.dtype)
        }
    }

    /// The input called `role`: `x`, `y` (same shape), `pos` (|x| + 0.5),
    /// `mask`, `ymask` (x > 0, y > 0), `row` (1 x C), `col` (R x 1), `u`
    /// (an R-vector), `v` (a C-vector); derived ones computed where `x` is.
    fn get(&mut self, role: &'static str) -> Result<Array> {
        if let Some(a) = self.made.get(role) {
            return Ok(a.clone());
        }
        let d = self.dims.clone();
        let (r, c) = (d[0], d.get(1).copied().unwrap_or(1));
        let a = match role {
            "x" => self.random(&d, 5)?,
            "y" => self.random(&d, 6)?,
            "row" => self.random(&[1, c], 7)?,
            "col" => self.random(&[r, 1], 8)?,
            "u" => self.random(&[r], 7)?,
            "v" => self.random(&[c], 8)?,
            "pos" => self.get("x")?.abs()?.add_scalar(0.5)?,
            "mask" => self.get("x")?.gt_scalar(0.0)?,
            "ymask" => self.get("y")?.gt_scalar(0.0)?,
            _ => return Err(bad("input", role.to_string())),
        };
        a.eval()?;
        self.made.insert(role, a.clone());
        Ok(a)
    }
}

/// An error naming a case, input or setting the suite does not know.
fn bad(name: &'static str, value: String) -> Error {
    Error::InvalidArgument {
        op: "ops_bench",
        name,
        value,
        why: "see scripts/ops_cases.json".into(),
    }
}

fn axis_of(s: Option<&str>) -> Result<Option<usize>> {
    match s {
        None | Some("all") => Ok(None),
        Some(k) => k.parse().map(Some).map_err(|_| bad("axis", k.to_string())),
    }
}

fn unary_op(name: &str) -> Option<UnaryOp> {
    UnaryOp::ALL.iter().copied().find(|o| o.name() == name)
}

fn binary_op(name: &str) -> Option<BinaryOp> {
    BinaryOp::ALL.iter().copied().find(|o| o.name() == name)
}

fn reduce_op(name: &str) -> Option<ReduceOp> {
    ReduceOp::ALL.iter().copied().find(|o| o.name() == name)
}

/// What a case computes: the lazy result and the arrays it reads, plus
/// any other bytes it moves (take's positions). The positions of a take
/// are made once per cell (`at`).
type Built = (Array, Vec<Array>, usize);

fn build(op: &str, inp: &mut Inputs, at: Option<&Array>) -> Result<Built> {
    let parts: Vec<&str> = op.split('.').collect();
    let unsupported = || bad("case", op.to_string());
    let family = parts[0];
    let name = parts.get(1).copied().unwrap_or("");
    let x = inp.get("x")?;
    Ok(match family {
        "unary" => {
            let u = unary_op(name).ok_or_else(unsupported)?;
            let a = match name {
                "sqrt" | "log" | "log1p" => inp.get("pos")?,
                "not" => inp.get("mask")?,
                _ => x,
            };
            (a.unary(u)?, vec![a], 0)
        }
        "binary" => {
            let b = binary_op(name).ok_or_else(unsupported)?;
            let (a, c) = match name {
                "and" | "or" => (inp.get("mask")?, inp.get("ymask")?),
                "pow" => (inp.get("pos")?, inp.get("y")?),
                _ => (x, inp.get("y")?),
            };
            (a.binary(b, &c)?, vec![a, c], 0)
        }
        "binary_row" | "binary_col" => {
            let b = binary_op(name).ok_or_else(unsupported)?;
            let v = inp.get(if family == "binary_row" { "row" } else { "col" })?;
            (x.binary(b, &v)?, vec![x, v], 0)
        }
        "reduce" => {
            let r = reduce_op(name).ok_or_else(unsupported)?;
            let a = if matches!(r, ReduceOp::Any | ReduceOp::All) {
                inp.get("mask")?
            } else {
                x
            };
            (a.reduce(r, axis_of(parts.get(2).copied())?)?, vec![a], 0)
        }
        "scan" => {
            let k = axis_of(parts.get(2).copied())?.ok_or_else(unsupported)?;
            let y = match name {
                "cumsum" => x.cumsum_axis(k)?,
                "cumprod" => x.cumprod_axis(k)?,
                _ => return Err(unsupported()),
            };
            (y, vec![x], 0)
        }
        "take" => {
            // The positions live in host memory and are sent with every
            // run, as the peer's NumPy int64 array is: their device copy
            // from the run before is dropped first.
            let at = at.ok_or_else(unsupported)?;
            at.gather()?;
            (
                x.take_at(name.parse().map_err(|_| unsupported())?, at)?,
                vec![x],
                at.numel() * 8,
            )
        }
        "copy" => {
            let arg = parts.get(2).copied();
            let y = match name {
                "clone" => x.add_scalar(0.0)?,
                "t" => x.t()?,
                "transpose" => {
                    let perm: Vec<usize> = arg
                        .unwrap_or("")
                        .chars()
                        .filter_map(|c| c.to_digit(10).map(|d| d as usize))
                        .collect();
                    x.transpose(&perm)?
                }
                "flip" => x.flip(axis_of(arg)?.ok_or_else(unsupported)?)?,
                "broadcast" => {
                    let v = inp.get(if arg == Some("row") { "row" } else { "col" })?;
                    return Ok((v.broadcast_to(x.dims().to_vec())?, vec![v], 0));
                }
                "slice" => {
                    let k = usize::from(arg == Some("cols"));
                    let n = x.dims()[k];
                    x.slice(k, 1.min(n)..n.saturating_sub(1).max(1))?
                }
                _ => return Err(unsupported()),
            };
            // A slice reads only what it keeps.
            let read = if name == "slice" { y.clone() } else { x };
            (y, vec![read], 0)
        }
        "comp" => {
            let k = axis_of(parts.get(2).copied())?;
            let k_or = || k.ok_or_else(unsupported);
            let y = match name {
                "center" => x.sub(&x.mean_axis(k_or()?)?)?,
                "standardize" => {
                    let k = k_or()?;
                    x.sub(&x.mean_axis(k)?)?.div(&x.sd_axis(k)?)?
                }
                "softmax" => x.softmax_axis(k_or()?)?,
                "log_softmax" => x.log_softmax_axis(k_or()?)?,
                "logsumexp" => x.logsumexp_axis(k_or()?)?,
                "masked_sum" => {
                    Array::where_(&x.gt_scalar(0.0)?, &x, &x.scalar_like(0.0))?.sum()?
                }
                "outer" => {
                    let (u, v) = (inp.get("u")?, inp.get("v")?);
                    return Ok((u.outer(&v)?, vec![u, v], 0));
                }
                "pdist" => {
                    let sq = x.mul(&x)?.sum_axis(1)?;
                    let g = x.matmul(&x.t()?)?;
                    sq.add(&sq.t()?)?.sub(&g.mul_scalar(2.0)?)?
                }
                _ => return Err(unsupported()),
            };
            (y, vec![x], 0)
        }
        _ => return Err(unsupported()),
    })
}

/// `n` positions below `len` drawn with replacement from `seed`.
fn positions(len: usize, n: usize, seed: u64) -> Vec<i64> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % len.max(1) as u64) as i64
        })
        .collect()
}

fn bytes_of(a: &Array) -> usize {
    a.numel() * a.dtype().size_bytes()
}

/// Times one cell on backend `on` (`b`): its JSON.
fn run_cell(cell: &Cell, inp: &mut Inputs, on: &str, b: &dyn Backend, reps: usize) -> Value {
    let at = match cell.op.strip_prefix("take.").map(str::parse::<usize>) {
        Some(Ok(k)) if k < cell.dims.len() => {
            let at = positions(cell.dims[k], cell.dims[k], 9);
            match Array::from_vec([at.len()], at) {
                Ok(at) => Some(at),
                Err(e) => return json!({ "error": e.to_string() }),
            }
        }
        _ => None,
    };
    let mut plan = String::new();
    let mut bytes = 0usize;
    let timed = (|| -> Result<f64> {
        let (r, reads, extra) = build(&cell.op, inp, at.as_ref())?;
        bytes = reads.iter().map(bytes_of).sum::<usize>() + bytes_of(&r) + extra;
        plan = planned_backend(&r).unwrap_or_else(|e| format!("({e})"));
        metrics_reset();
        fallback_log_reset();
        median_ms(b, reps, || build(&cell.op, inp, at.as_ref())?.0.eval())
    })();
    let ms = match timed {
        Ok(ms) => ms,
        Err(e) => return json!({ "error": e.to_string() }),
    };
    let evals = (reps + 1) as f64;
    let m = metrics();
    let host_steps = m.of("cpu").compute.count as f64 / evals;
    let here = m.of(on);
    let fallbacks: Vec<String> = fallback_log()
        .into_iter()
        .map(|f| format!("{}: {}", f.op, f.reason))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let ran = if on == "cpu" {
        "cpu"
    } else if host_steps > 0.0 || !fallbacks.is_empty() {
        "host"
    } else {
        "device"
    };
    json!({
        "ms": ms,
        "bytes": bytes,
        "gbs": bytes as f64 / ms / 1e6,
        "dims": cell.dims,
        "ran": ran,
        "plan": plan,
        "steps": {
            "device": if on == "cpu" { 0.0 } else { here.compute.count as f64 / evals },
            "host": host_steps,
            "downloads": here.downloads.count as f64 / evals,
            "uploads": here.uploads.count as f64 / evals,
        },
        "fallbacks": fallbacks,
    })
}

/// The copy bandwidth of backend `on`: `x + 0` of a resident f32 buffer
/// of `bytes`, read and written; on a device, also the host-to-device and
/// device-to-host rates of the same buffer from and into ordinary
/// (pageable) host memory (`upload_gbs`, `download_gbs`).
fn copy_bandwidth(on: &str, b: &dyn Backend, bytes: usize, reps: usize) -> Value {
    let n = (bytes / 4).max(1);
    let mut inp = Inputs::new(on, &[n], DType::F32);
    let r = inp
        .get("x")
        .and_then(|x| median_ms(b, reps, || x.add_scalar(0.0)?.eval()));
    let mut out = match r {
        Ok(ms) => {
            let moved = 2 * n * 4;
            json!({ "ms": ms, "bytes": moved, "gbs": moved as f64 / ms / 1e6 })
        }
        Err(e) => return json!({ "error": e.to_string() }),
    };
    if on != "cpu" {
        let host = gearbox::HostBuffer::F32(vec![1.5; n]);
        let gbs = |ms: f64| (n * 4) as f64 / ms / 1e6;
        let mut on_device = None;
        if let Ok(ms) = median_ms(b, reps, || {
            on_device = Some(b.upload(&host)?);
            Ok(())
        }) {
            out["upload_gbs"] = json!(gbs(ms));
        }
        if let Some(d) = on_device {
            if let Ok(ms) = median_ms(b, reps, || b.download(d.as_ref()).map(drop)) {
                out["download_gbs"] = json!(gbs(ms));
            }
        }
    }
    out
}

fn main() -> Result<()> {
    gearbox::init();
    let s = settings();
    let text = match &s.cases {
        Some(p) => std::fs::read_to_string(p).map_err(|e| bad("cases", format!("{p}: {e}")))?,
        None => CASES_JSON.to_string(),
    };
    let spec: Value = serde_json::from_str(&text).map_err(|e| bad("cases", e.to_string()))?;
    let reps = s
        .reps
        .or(spec["reps"].as_u64().map(|r| r as usize))
        .unwrap_or(10);
    let copy_bytes =
        ((spec["copy_bytes"].as_u64().unwrap_or(1 << 28) as f64 * s.scale) as usize).max(1 << 12);
    let cells: Vec<Cell> = expand(&spec, s.quick, s.scale)
        .into_iter()
        .filter(|c| s.only.is_empty() || s.only.iter().any(|o| c.key().contains(o.as_str())))
        .collect();
    eprintln!("ops_bench: {} cells per backend, {reps} reps", cells.len());
    let start = Instant::now();
    let mut copies = Map::new();
    let mut all = Map::new();
    for backend in &s.backends {
        let backend = backend.as_str();
        let b: Arc<dyn Backend> = if backend == "cpu" {
            // The CPU backend: every optional backend off, arrays in host memory.
            set_options(RuntimeOptions {
                optional_backends: false,
                force_backend: None,
                quiet: true,
                ..options()
            });
            Arc::new(gearbox::runtime::cpu::CpuBackend)
        } else {
            set_options(RuntimeOptions {
                optional_backends: true,
                ..options()
            });
            let Some(b) = healthy(backend) else {
                eprintln!("{backend}: not usable, skipped");
                continue;
            };
            force(Some(backend), true);
            b
        };
        let copy = copy_bandwidth(backend, b.as_ref(), copy_bytes, reps);
        eprintln!("copy/{backend}: {copy}");
        copies.insert(backend.to_string(), copy);
        let mut out = Map::new();
        let mut inp: Option<Inputs> = None;
        for cell in &cells {
            let key = cell.key();
            if s.deadline_s
                .is_some_and(|d| start.elapsed().as_secs_f64() > d)
            {
                out.insert(key, json!({ "skipped": "deadline" }));
                continue;
            }
            if inp
                .as_ref()
                .is_none_or(|i| i.dims != cell.dims || i.dtype != cell.dtype)
            {
                // The last group's arrays go before the next are made.
                drop(inp.take());
                inp = Some(Inputs::new(backend, &cell.dims, cell.dtype));
            }
            let Some(inputs) = inp.as_mut() else { continue };
            let v = catch_unwind(AssertUnwindSafe(|| {
                run_cell(cell, inputs, backend, b.as_ref(), reps)
            }))
            .unwrap_or_else(|p| {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                json!({ "error": format!("panicked: {why}") })
            });
            match (v["ms"].as_f64(), v["error"].as_str()) {
                (Some(ms), _) => eprintln!(
                    "{backend}/{key}: {ms:.3} ms, {} ({})",
                    v["ran"].as_str().unwrap_or(""),
                    v["plan"].as_str().unwrap_or("")
                ),
                (_, Some(e)) => eprintln!("{backend}/{key}: error: {e}"),
                _ => {}
            }
            out.insert(key, v);
        }
        all.insert(backend.to_string(), Value::Object(out));
    }
    force(None, true);
    println!(
        "{}",
        json!({
            "suite": "ops",
            "scale": s.scale,
            "reps": reps,
            "quick": s.quick,
            "seconds": start.elapsed().as_secs_f64(),
            "copy": copies,
            "cells": all,
        })
    );
    Ok(())
}
