//! Hostile inputs to the parts issue 31 named: resident handles (every
//! operation with wrong shapes, dtypes, axes, aliasing and non-finite
//! values, with the right value where the input is fine) and
//! `GEARBOX_MEMORY_LIMIT` values (units, shares, overflow, garbage).

use gearbox_core::resident::{resident_handle, ResidentHandle};
use gearbox_core::runtime::pool::parse_memory_limit;
use gearbox_core::{Array, BinaryOp, DType, Error, UnaryOp};

use crate::Expect::{Accept, Error as Fails};
use crate::{m, run, v, want, Case};

/// A CPU handle of `m(rows, cols)`.
fn h(rows: usize, cols: usize) -> ResidentHandle {
    resident_handle(&m(rows, cols), "cpu").unwrap()
}

/// An error unless the handle holds `expected` (bit for bit).
fn holds(what: &'static str, h: &ResidentHandle, expected: &[f64]) -> Result<(), Error> {
    let got = h.as_array().to_f64_vec()?;
    if got.len() != expected.len() {
        return want(what, got.len() as f64, expected.len() as f64);
    }
    got.iter()
        .zip(expected)
        .try_for_each(|(g, e)| want(what, *g, *e))
}

/// The values of `m(rows, cols)` changed by `f`.
fn m_with(rows: usize, cols: usize, f: impl Fn(usize, f64) -> f64) -> Vec<f64> {
    let base = m(rows, cols).to_vec::<f64>().unwrap();
    base.iter().enumerate().map(|(i, x)| f(i, *x)).collect()
}

/// Cases on resident handles (on the CPU backend: the checks are the same
/// on every backend, and the thread-stress and resident suites run the
/// device paths).
pub fn handle_cases() -> Vec<Case> {
    vec![
        (
            "a handle of i64 values",
            run(|| resident_handle(&Array::from_vec([3], vec![1i64, 2, 3])?, "cpu")),
            Fails(&["f32 or f64", "astype"]),
        ),
        (
            "a handle of bools",
            run(|| resident_handle(&Array::from_vec([2], vec![true, false])?, "cpu")),
            Fails(&["f32 or f64"]),
        ),
        (
            "a handle on no such backend",
            run(|| resident_handle(&m(2, 2), "tpu")),
            Fails(&["tpu"]),
        ),
        (
            "full of i64",
            run(|| ResidentHandle::full([2, 2], DType::I64, 1.0, "cpu")),
            Fails(&["f32 or f64"]),
        ),
        (
            "full with an overflowing shape",
            run(|| ResidentHandle::full([usize::MAX, 2], DType::F64, 1.0, "cpu")),
            Fails(&["overflow"]),
        ),
        (
            "full of NaN holds NaN",
            run(|| {
                let h = ResidentHandle::full([3, 2], DType::F64, f64::NAN, "cpu")?;
                holds("full NaN", &h, &[f64::NAN; 6])
            }),
            Accept,
        ),
        (
            "an empty handle fills and sums",
            run(|| {
                let h = ResidentHandle::zeros([0, 3], DType::F64, "cpu")?;
                h.fill(2.0)?;
                let t = ResidentHandle::zeros([3], DType::F64, "cpu")?;
                h.col_sums_into(&t)?;
                holds("empty col sums", &t, &[0.0; 3])
            }),
            Accept,
        ),
        (
            "fill with -0 keeps the sign",
            run(|| {
                let h = h(2, 2);
                h.fill(-0.0)?;
                holds("fill -0", &h, &[-0.0; 4])
            }),
            Accept,
        ),
        (
            "fill with Inf",
            run(|| {
                let h = h(2, 1);
                h.fill(f64::INFINITY)?;
                holds("fill Inf", &h, &[f64::INFINITY; 2])
            }),
            Accept,
        ),
        (
            "assign of another shape with the same count",
            run(|| h(2, 3).assign(&m(3, 2))),
            Fails(&["assign"]),
        ),
        (
            "assign of another dtype",
            run(|| h(2, 2).assign(&m(2, 2).astype(DType::F32)?)),
            Fails(&["f32"]),
        ),
        (
            "assign of fewer values",
            run(|| h(2, 2).assign(&v(3))),
            Fails(&["assign"]),
        ),
        (
            "assign of the handle's own view",
            run(|| {
                let h = h(3, 2);
                h.assign(&h.as_array())?;
                holds("self assign", &h, &m(3, 2).to_vec::<f64>()?)
            }),
            Accept,
        ),
        (
            "copy_from a transposed matrix",
            run(|| h(2, 3).copy_from(&m(2, 3).t()?)),
            Fails(&["keep its shape"]),
        ),
        (
            "copy_from of i64 values",
            run(|| h(1, 3).copy_from(&Array::from_vec([1, 3], vec![1i64, 2, 3])?)),
            Fails(&["i64"]),
        ),
        (
            "ewise_inplace with a non-broadcasting operand",
            run(|| h(6, 4).ewise_inplace(BinaryOp::Add, &m(5, 5))),
            Fails(&["not compatible", "6 and 5"]),
        ),
        (
            "ewise_inplace growing the handle by broadcast",
            run(|| h(1, 4).ewise_inplace(BinaryOp::Add, &m(3, 4))),
            Fails(&["ewise_inplace"]),
        ),
        (
            "ewise_inplace with an f32 operand on an f64 handle",
            run(|| h(2, 2).ewise_inplace(BinaryOp::Mul, &m(2, 2).astype(DType::F32)?)),
            Fails(&["f32", "astype"]),
        ),
        (
            "ewise_inplace with a row that broadcasts",
            run(|| {
                let h = h(3, 2);
                let row = Array::from_vec([1, 2], vec![10.0, 20.0])?;
                h.ewise_inplace(BinaryOp::Add, &row)?;
                holds(
                    "row add",
                    &h,
                    &m_with(3, 2, |i, x| x + if i < 3 { 10.0 } else { 20.0 }),
                )
            }),
            Accept,
        ),
        (
            "ewise_inplace by a scalar NaN",
            run(|| {
                let h = h(2, 2);
                h.ewise_inplace(BinaryOp::Mul, f64::NAN)?;
                holds("times NaN", &h, &[f64::NAN; 4])
            }),
            Accept,
        ),
        (
            "ewise_inplace dividing by zero",
            run(|| {
                let h = h(1, 2);
                h.ewise_inplace(BinaryOp::Div, 0.0)?;
                holds("over 0", &h, &[f64::INFINITY; 2])
            }),
            Accept,
        ),
        (
            "ewise_inplace comparison stores 1 and 0",
            run(|| {
                let h = h(2, 2);
                h.ewise_inplace(BinaryOp::Gt, 2.5)?;
                holds("gt", &h, &m_with(2, 2, |_, x| f64::from(u8::from(x > 2.5))))
            }),
            Accept,
        ),
        (
            "ewise_inplace with its own view",
            run(|| {
                let h = h(2, 3);
                h.ewise_inplace(BinaryOp::Add, &h.as_array())?;
                holds("x + x", &h, &m_with(2, 3, |_, x| x + x))
            }),
            Accept,
        ),
        (
            "map_inplace log of negatives is NaN",
            run(|| {
                let h = resident_handle(&Array::from_vec([2], vec![-1.0, 1.0])?, "cpu")?;
                h.map_inplace(UnaryOp::Log)?;
                holds("log", &h, &[f64::NAN, 0.0])
            }),
            Accept,
        ),
        (
            "map_inplace sqrt",
            run(|| {
                let h = h(2, 2);
                h.map_inplace(UnaryOp::Sqrt)?;
                holds("sqrt", &h, &m_with(2, 2, |_, x| x.sqrt()))
            }),
            Accept,
        ),
        (
            "sweep_inplace with axis 2",
            run(|| h(6, 4).sweep_inplace(&v(4), 2, BinaryOp::Sub)),
            Fails(&["MARGIN"]),
        ),
        (
            "sweep_inplace with too few row values",
            run(|| h(6, 4).sweep_inplace(&v(3), 0, BinaryOp::Sub)),
            Fails(&["takes 6 values, one per row"]),
        ),
        (
            "sweep_inplace with a value per row given for columns",
            run(|| h(6, 4).sweep_inplace(&v(6), 1, BinaryOp::Sub)),
            Fails(&["takes 4 values, one per column"]),
        ),
        (
            "sweep_inplace on a 3-d handle",
            run(|| {
                let h = resident_handle(&Array::zeros([2, 2, 2], DType::F64)?, "cpu")?;
                h.sweep_inplace(&v(2), 0, BinaryOp::Sub)
            }),
            Fails(&["sweep_inplace"]),
        ),
        (
            "sweep_inplace subtracting column means",
            run(|| {
                let h = h(4, 2);
                let means = m(4, 2).mean_axis(0)?.reshape([2])?;
                let mv = means.to_vec::<f64>()?;
                h.sweep_inplace(&means, 1, BinaryOp::Sub)?;
                holds("centred", &h, &m_with(4, 2, |i, x| x - mv[i / 4]))
            }),
            Accept,
        ),
        (
            "axpy with another shape",
            run(|| h(2, 3).axpy(2.0, &m(3, 2))),
            Fails(&["axpy"]),
        ),
        (
            "axpy with alpha NaN",
            run(|| {
                let h = h(2, 1);
                h.axpy(f64::NAN, &m(2, 1))?;
                holds("axpy NaN", &h, &[f64::NAN; 2])
            }),
            Accept,
        ),
        (
            "axpy adds alpha x",
            run(|| {
                let h = h(3, 1);
                h.axpy(-0.5, &m(3, 1))?;
                holds("axpy", &h, &m_with(3, 1, |_, x| x + x * -0.5))
            }),
            Accept,
        ),
        (
            "gemm_inplace with non-conforming operands",
            run(|| h(2, 2).gemm_inplace(&m(2, 3), &m(2, 2), 1.0, 0.0, false, false)),
            Fails(&["matmul"]),
        ),
        (
            "gemm_inplace with a [3, 2] product into [2, 3]",
            run(|| h(2, 3).gemm_inplace(&m(3, 4), &m(4, 2), 1.0, 0.0, false, false)),
            Fails(&["product", "handle holds"]),
        ),
        (
            "gemm_inplace with a [6, 1] product into [2, 3]",
            run(|| h(2, 3).gemm_inplace(&m(6, 4), &m(4, 1), 1.0, 0.0, false, false)),
            Fails(&["product", "handle holds"]),
        ),
        (
            "gemm_inplace with a [1, 6] product into [6]",
            run(|| {
                let h = resident_handle(&v(6), "cpu")?;
                h.gemm_inplace(&m(1, 4), &m(4, 6), 1.0, 0.0, false, false)
            }),
            Fails(&["product", "handle holds"]),
        ),
        (
            "gemm_inplace with f32 operands into an f64 handle",
            run(|| {
                let a = m(2, 2).astype(DType::F32)?;
                h(2, 2).gemm_inplace(&a, &a, 1.0, 0.0, false, false)
            }),
            Fails(&["f32"]),
        ),
        (
            "gemm_inplace of a matrix and a vector into a vector handle",
            run(|| {
                let h = resident_handle(&v(3), "cpu")?;
                let (a, x) = (m(3, 2), m(2, 1));
                h.gemm_inplace(&a, &x, 1.0, 0.0, false, false)?;
                holds("A x", &h, &a.matmul(&x)?.to_vec::<f64>()?)
            }),
            Accept,
        ),
        (
            "gemm_inplace with both transposed",
            run(|| {
                let h = h(2, 3);
                let (a, b) = (m(4, 2), m(3, 4));
                h.gemm_inplace(&a, &b, 1.0, 0.0, true, true)?;
                holds("A'B'", &h, &b.matmul(&a)?.t()?.to_vec::<f64>()?)
            }),
            Accept,
        ),
        (
            "gemm_inplace with beta 0 over NaN",
            run(|| {
                let h = h(2, 2);
                h.fill(f64::NAN)?;
                let a = m(2, 2);
                h.gemm_inplace(&a, &a, 1.0, 0.0, false, false)?;
                holds("beta 0", &h, &a.matmul(&a)?.to_vec::<f64>()?)
            }),
            Accept,
        ),
        (
            "gemm_inplace with an empty inner dimension",
            run(|| {
                let h = h(2, 2);
                let (a, b) = (
                    Array::zeros([2, 0], DType::F64)?,
                    Array::zeros([0, 2], DType::F64)?,
                );
                h.gemm_inplace(&a, &b, 1.0, 0.0, false, false)?;
                holds("k = 0", &h, &[0.0; 4])
            }),
            Accept,
        ),
        (
            "row_sums_into itself",
            run(|| {
                let h = h(3, 3);
                h.row_sums_into(&h)
            }),
            Fails(&["another handle"]),
        ),
        (
            "row_sums_into a target of the wrong length",
            run(|| h(6, 4).row_sums_into(&h(5, 1))),
            Fails(&["6"]),
        ),
        (
            "col_means_into a target of the wrong dtype",
            run(|| {
                let t = resident_handle(&m(1, 4).astype(DType::F32)?, "cpu")?;
                h(6, 4).col_means_into(&t)
            }),
            Fails(&["f32"]),
        ),
        (
            "col_sums_into a target of the right length",
            run(|| {
                let t = resident_handle(&v(2), "cpu")?;
                h(3, 2).col_sums_into(&t)?;
                holds("col sums", &t, &m(3, 2).sum_axis(0)?.to_vec::<f64>()?)
            }),
            Accept,
        ),
        (
            "row_means_into with NaN in a row",
            run(|| {
                let h = resident_handle(
                    &Array::from_vec([2, 2], vec![f64::NAN, 1.0, 2.0, 3.0])?,
                    "cpu",
                )?;
                let t = resident_handle(&v(2), "cpu")?;
                h.row_means_into(&t)?;
                holds("row means", &t, &[f64::NAN, 2.0])
            }),
            Accept,
        ),
        (
            "an operation while another thread holds the handle",
            run(|| {
                let h = h(2, 2);
                let _guard = h.hold()?;
                std::thread::scope(|s| s.spawn(|| h.fill(1.0)).join().unwrap())
            }),
            Fails(&["another thread"]),
        ),
        (
            "a snapshot keeps the values of then",
            run(|| {
                let h = h(2, 2);
                let snap = h.snapshot()?;
                h.fill(7.0)?;
                let s = snap.to_vec::<f64>()?;
                want("snapshot", s[0], m(2, 2).to_vec::<f64>()?[0])
            }),
            Accept,
        ),
        (
            "a view read before a write is read again after it",
            run(|| {
                let h = h(2, 2);
                let view = h.as_array();
                view.to_vec::<f64>()?;
                h.fill(3.0)?;
                let got = view.to_vec::<f64>()?;
                got.iter()
                    .try_for_each(|x| want("view after fill", *x, 3.0))
            }),
            Accept,
        ),
    ]
}

/// Cases of `GEARBOX_MEMORY_LIMIT` values: what each reads as, or the
/// error naming why it is refused.
pub fn memory_limit_cases() -> Vec<Case> {
    const GIB: u64 = 1 << 30;
    type Read = fn(&str) -> Result<u64, Error>;
    let bytes: Read = |v| parse_memory_limit(v, None);
    let device: Read = |v| parse_memory_limit(v, Some(80 * GIB));
    let accepted: [(&'static str, &'static str, u64, Read); 12] = [
        ("a plain count", "2000000000", 2_000_000_000, bytes),
        ("scientific notation", "2e9", 2_000_000_000, bytes),
        ("KiB", "4KiB", 4096, bytes),
        ("MiB with spaces", " 512 MiB ", 512 << 20, bytes),
        ("GiB", "4GiB", 4 * GIB, bytes),
        ("TiB", "1TiB", 1 << 40, bytes),
        ("KB", "3KB", 3000, bytes),
        ("GB with a fraction", "1.5GB", 1_500_000_000, bytes),
        ("a share of the device", "0.25", 20 * GIB, device),
        ("a percentage", "50%", 40 * GIB, device),
        ("100%", "100%", 80 * GIB, device),
        (
            "the largest count",
            "1.8e19",
            18_000_000_000_000_000_000,
            bytes,
        ),
    ];
    let refused: [(&'static str, &'static str, &'static [&'static str], Read); 14] = [
        ("1e400", "1e400", &["too large"], bytes),
        ("1e30 bytes", "1e30", &["too large"], bytes),
        ("1e20 GiB", "1e20GiB", &["too large"], bytes),
        ("inf", "inf", &["too large"], bytes),
        ("NaN", "NaN", &["not a number"], bytes),
        ("zero", "0", &["positive"], bytes),
        ("negative", "-5MiB", &["positive"], bytes),
        ("minus infinity", "-inf", &["positive"], bytes),
        ("a word", "lots", &["byte count"], bytes),
        ("a unit alone", "MiB", &["byte count"], bytes),
        ("two numbers", "1 2", &["byte count"], bytes),
        ("150%", "150%", &["at most 100%"], device),
        (
            "a share without a device size",
            "0.5",
            &["give bytes"],
            bytes,
        ),
        ("an unknown unit", "4PiB", &["byte count"], bytes),
    ];
    let mut cases: Vec<Case> = Vec::new();
    for (name, value, expected, read) in accepted {
        cases.push((
            name,
            Box::new(move || {
                let got = read(value)?;
                want("GEARBOX_MEMORY_LIMIT", got as f64, expected as f64)
            }),
            Accept,
        ));
    }
    for (name, value, words, read) in refused {
        cases.push((
            name,
            Box::new(move || read(value).map(|_| ())),
            Fails(words),
        ));
    }
    // Every refusal names the variable.
    cases.push((
        "errors name the variable",
        run(|| parse_memory_limit("1e400", None)),
        Fails(&["GEARBOX_MEMORY_LIMIT", "1e400"]),
    ));
    cases
}
