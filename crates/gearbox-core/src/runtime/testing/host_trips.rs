//! The no-silent-host-trip check every GPU backend's device tests run:
//! each op of the catalog ([`UnaryOp::ALL`], [`BinaryOp::ALL`] with
//! full-size, row, column and scalar operands, [`ReduceOp::ALL`] over
//! everything and along each axis, scans along each axis, `take`,
//! transposes, flips, slices, concatenation, products) on inputs that live
//! only on the device must run there: no download, no fallback. A step
//! that runs on the host anyway must be one the backend declines for a
//! reason its capabilities state (a dtype it does not compute, an op on
//! its unsupported list, i64 work it cannot check for overflow, a library
//! call it does not offer), which the plan names; every such decline is
//! printed, none is skipped silently. A host trip with any other reason
//! fails the check, and so does any decline of a scan: every GPU backend
//! runs `cumsum` and `cumprod` of its float dtypes (i64 and bool data of
//! `cumprod` as their f64 values), save `cumsum` into i64 (of i64 and
//! bool data), which can overflow, and `cumprod` of f32 where a backend
//! lists it (wgpu on hardware adapters).
//!
//! Test support only; the helpers panic on a failed check.

use crate::dtype::DType;
use crate::ops::binary::BinaryOp;
use crate::ops::reduce::ReduceOp;
use crate::ops::unary::UnaryOp;
use crate::runtime::dispatch::Gate;
use crate::runtime::testing::gpu::{array, device_only, forced, values};
use crate::runtime::{backend_plan, fallback_log, fallback_log_reset, metrics};
use crate::shape::Shape;
use crate::{Array, Result};

/// Phrases of the gate details that name a capability of the backend.
const DECLARED: [&str; 5] = [
    "unsupported list",
    "does not compute",
    "neither detects i64 overflow",
    "offers no",
    "no device source",
];

/// One op of the catalog applied to resident inputs.
type Case<'a> = (String, Box<dyn Fn() -> Result<Array> + 'a>);

/// `n` values of `dtype` in `dims`, computed on `backend` so that they
/// live only there.
fn resident(backend: &str, dims: &[usize], dtype: DType, seed: u64) -> Array {
    let shape = Shape::new(dims.to_vec());
    device_only(
        backend,
        &array(&shape, &values(shape.numel(), dtype, seed)),
        dtype,
    )
}

/// The catalog's cases for `dtype` on matrices `m` (5 x 129), its column
/// `col`, row `row`, a one-element `one`, and `sq` (33 x 33).
fn cases<'a>(
    m: &'a Array,
    col: &'a Array,
    row: &'a Array,
    one: &'a Array,
    sq: &'a Array,
) -> Vec<Case<'a>> {
    let mut out: Vec<Case<'a>> = Vec::new();
    for &op in UnaryOp::ALL {
        out.push((op.name().into(), Box::new(move || m.unary(op))));
    }
    for &op in BinaryOp::ALL {
        for (what, other) in [("full", m), ("column", col), ("row", row), ("scalar", one)] {
            out.push((
                format!("{} by {what}", op.name()),
                Box::new(move || m.binary(op, other)),
            ));
        }
    }
    for &op in ReduceOp::ALL {
        for axis in [None, Some(0), Some(1)] {
            out.push((
                format!("{} axis {axis:?}", op.name()),
                Box::new(move || m.reduce(op, axis)),
            ));
        }
    }
    for axis in [0, 1] {
        out.push((
            format!("cumsum axis {axis}"),
            Box::new(move || m.cumsum_axis(axis)),
        ));
        out.push((
            format!("cumprod axis {axis}"),
            Box::new(move || m.cumprod_axis(axis)),
        ));
        out.push((format!("flip axis {axis}"), Box::new(move || m.flip(axis))));
        out.push((
            format!("take axis {axis}"),
            Box::new(move || m.take(axis, &[2, 0, 1, 2])),
        ));
        out.push((
            format!("slice axis {axis}"),
            Box::new(move || m.slice(axis, 1..3)),
        ));
    }
    out.push(("t".into(), Box::new(move || m.t())));
    out.push(("concat".into(), Box::new(move || Array::concat(&[m, m], 1))));
    out.push(("matmul".into(), Box::new(move || sq.matmul(sq))));
    out.push(("crossprod".into(), Box::new(move || m.crossprod(m))));
    out
}

/// Runs the check on `backend` for `dtypes`; returns the declines it
/// printed (`case: reason`).
pub fn check_no_silent_host_trips(backend: &str, dtypes: &[DType]) -> Vec<String> {
    fallback_log_reset();
    let mut declined = Vec::new();
    let mut silent: Vec<String> = Vec::new();
    let mut on_device = 0;
    for (s, &dtype) in dtypes.iter().enumerate() {
        let seed = 500 + 10 * s as u64;
        let m = resident(backend, &[5, 129], dtype, seed);
        let col = resident(backend, &[5, 1], dtype, seed + 1);
        let row = resident(backend, &[1, 129], dtype, seed + 2);
        let one = resident(backend, &[1], dtype, seed + 3);
        let sq = resident(backend, &[33, 33], dtype, seed + 4);
        for (name, build) in cases(&m, &col, &row, &one, &sq) {
            let what = format!("{name} {dtype}");
            // An op the dtype does not have is no case.
            let Ok(r) = forced(backend, &build) else {
                continue;
            };
            let plan = forced(backend, || backend_plan(&r)).unwrap();
            let downloads = metrics().of(backend).downloads.count;
            forced(backend, || r.eval()).unwrap();
            let stayed =
                r.device() == backend && metrics().of(backend).downloads.count == downloads;
            if stayed {
                on_device += 1;
                continue;
            }
            let reason = plan
                .candidates
                .iter()
                .filter(|c| c.backend == backend)
                .flat_map(|c| c.gates.iter())
                .find(|g| {
                    !g.passed
                        && g.gate == Gate::Supports
                        && DECLARED.iter().any(|p| g.detail.contains(p))
                })
                .map(|g| g.detail.clone());
            match reason {
                Some(why) => declined.push(format!("{what}: {why}")),
                None => silent.push(format!(
                    "{what} (result on {}; plan: {:?}; fallbacks: {:?})",
                    r.device(),
                    plan.candidates
                        .iter()
                        .flat_map(|c| {
                            c.gates
                                .iter()
                                .filter(|g| !g.passed)
                                .map(move |g| format!("{}: {}", c.backend, g.detail))
                        })
                        .collect::<Vec<_>>(),
                    fallback_log().last().map(|e| e.reason.clone())
                )),
            }
        }
    }
    println!("host trips on {backend}: {on_device} cases on the device; {} declined by its capabilities:", declined.len());
    for d in &declined {
        println!("  {d}");
    }
    assert!(
        silent.is_empty(),
        "{} ops ran on the host with no reason in {backend}'s capabilities:\n{}",
        silent.len(),
        silent.join("\n")
    );
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
    let scans: Vec<&String> = declined
        .iter()
        .filter(|d| {
            (d.starts_with("cumprod") && !d.contains("cumprod of f32 is on"))
                || (d.starts_with("cumsum") && !d.contains("i64 cumsum can overflow"))
        })
        .collect();
    assert!(scans.is_empty(), "scans declined on {backend}: {scans:?}");
    declined
}
