//! The cases of issue 10's reliability items (see the table's module docs): sizes that overflow, integer overflow, non-finite linear
//! algebra, products, and results larger than memory.

use gearbox_core::{Array, DType};

use crate::Expect::{Accept, Error as Fails};
use crate::{floats, ints, m, matrix, run, v, want, Case};

/// Cases of issue 10's reliability items: the behaviour the issue asks for.
pub fn reliability_cases() -> Vec<Case> {
    const HUGE: usize = 1 << 32;
    vec![
        // Item 2: element counts that overflow usize.
        (
            "from_vec with 2^63 x 2 elements and no data",
            run(|| Array::from_vec([1usize << 63, 2], Vec::<f64>::new())),
            Fails(&["from_vec", "overflow"]),
        ),
        (
            "reshape to a shape whose count overflows",
            run(|| v(4).reshape([1usize << 62, 4, 4])),
            Fails(&["reshape", "overflow"]),
        ),
        (
            "[2^32 x 1] + [1 x 2^32] has 2^64 elements",
            run(|| {
                Array::zeros([HUGE, 1], DType::Bool)?.add(&Array::zeros([1, HUGE], DType::Bool)?)
            }),
            Fails(&["add", "overflow"]),
        ),
        (
            "zeros of [usize::MAX x 2]",
            run(|| Array::zeros([usize::MAX, 2], DType::F64)),
            Fails(&["zeros", "overflow"]),
        ),
        (
            "eye of 2^33 (2^66 elements)",
            run(|| Array::eye(1 << 33)),
            Fails(&["overflow"]),
        ),
        // Item 4: integer results that would wrap.
        (
            "sum of [i64::MAX, 1]",
            run(|| ints(&[i64::MAX, 1]).sum()?.eval()),
            Fails(&["sum", "overflow"]),
        ),
        (
            "[i64::MAX] * 2",
            run(|| (&ints(&[i64::MAX]) * 2.0)?.eval()),
            Fails(&["mul", "overflow"]),
        ),
        (
            "neg of i64::MIN",
            run(|| ints(&[i64::MIN]).neg()?.eval()),
            Fails(&["neg", "overflow"]),
        ),
        (
            "abs of i64::MIN",
            run(|| ints(&[i64::MIN]).abs()?.eval()),
            Fails(&["abs", "overflow"]),
        ),
        (
            "i64::MIN - 1",
            run(|| ints(&[i64::MIN]).sub_scalar(1.0)?.eval()),
            Fails(&["sub", "overflow"]),
        ),
        (
            "cumsum past i64::MAX",
            run(|| ints(&[i64::MAX - 1, 1, 1]).cumsum()?.eval()),
            Fails(&["cumsum", "overflow"]),
        ),
        (
            "astype(I64) of NaN",
            run(|| floats(&[f64::NAN]).astype(DType::I64)?.eval()),
            Fails(&["NaN"]),
        ),
        (
            "astype(I64) of 1e300",
            run(|| floats(&[1e300]).astype(DType::I64)?.eval()),
            Fails(&["1e300"]),
        ),
        (
            "astype(I64) of -Inf",
            run(|| floats(&[f64::NEG_INFINITY]).astype(DType::I64)?.eval()),
            Fails(&["inf"]),
        ),
        (
            "max of [2^60 + 1, 2^60] is exact",
            Box::new(|| {
                let got = ints(&[(1 << 60) + 1, 1 << 60]).max()?.to_vec::<i64>()?[0];
                want("max", got as f64, ((1i64 << 60) + 1) as f64)?;
                if got != (1 << 60) + 1 {
                    return want("max (as i64)", 0.0, 1.0);
                }
                Ok(())
            }),
            Accept,
        ),
        // Item 5: non-finite linear algebra.
        (
            "solve with an Inf in A",
            run(|| {
                matrix(&[&[f64::INFINITY, 1.0], &[1.0, 1.0]])
                    .solve(&floats(&[1.0, 1.0]))?
                    .eval()
            }),
            Fails(&["solve", "Inf", "finite"]),
        ),
        (
            "inv of a matrix holding Inf",
            run(|| matrix(&[&[1.0, f64::INFINITY], &[1.0, 1.0]]).inv()?.eval()),
            Fails(&["inv", "Inf"]),
        ),
        (
            "qr of a matrix holding NaN",
            run(|| {
                let (q, r) = matrix(&[&[1.0, 2.0], &[f64::NAN, 1.0], &[3.0, 1.0]]).qr()?;
                Array::eval_all(&[&q, &r])
            }),
            Fails(&["qr", "NaN"]),
        ),
        (
            "det of a matrix holding NaN",
            run(|| matrix(&[&[f64::NAN, 1.0], &[1.0, 1.0]]).det()?.eval()),
            Fails(&["det", "NaN"]),
        ),
        (
            "cholesky of a matrix holding -Inf",
            run(|| {
                matrix(&[&[f64::NEG_INFINITY, 0.0], &[0.0, 1.0]])
                    .cholesky()?
                    .eval()
            }),
            Fails(&["cholesky", "-Inf"]),
        ),
        (
            "solve with a NaN right-hand side",
            run(|| {
                m(2, 2)
                    .add(&Array::eye(2)?)?
                    .solve(&floats(&[f64::NAN, 1.0]))?
                    .eval()
            }),
            Fails(&["solve", "NaN"]),
        ),
        // Item 6: products whose partial products overflow.
        (
            "prod of [1e300, 1e300, 0] is 0, as in R",
            Box::new(|| want("prod", floats(&[1e300, 1e300, 0.0]).prod()?.item()?, 0.0)),
            Accept,
        ),
        (
            "prod of [1e200, 1e200, 1e-200] is 1e200",
            Box::new(|| {
                let p = floats(&[1e200, 1e200, 1e-200]).prod()?.item()?;
                want("prod", (p / 1e200 - 1.0).abs().min(1.0).round(), 0.0)
            }),
            Accept,
        ),
        (
            "fused prod of exp(x) with an overflowing pair and a zero is 0",
            Box::new(|| {
                let x = floats(&[690.0, 690.0, f64::NEG_INFINITY, 0.0, 0.0, 0.0, 0.0, 0.0]);
                want("prod", x.exp()?.prod()?.item()?, 0.0)
            }),
            Accept,
        ),
    ]
}

/// Item 3: results larger than memory. Run in a child process: before the
/// fix, the failed allocation aborts the whole process.
pub fn allocation_cases() -> Vec<Case> {
    const WORDS: &[&str] = &["memory", "bytes", "available"];
    vec![
        (
            "the sum of 2^57 f64 zeros (2^60 bytes)",
            run(|| Array::zeros([1usize << 57], DType::F64)?.sum()?.eval()),
            Fails(WORDS),
        ),
        (
            "randn of [2^28 x 2^29] (2^60 bytes)",
            run(|| Array::randn([1usize << 28, 1 << 29], 1)?.eval()),
            Fails(WORDS),
        ),
        (
            "exp of a [2^56 x 2] f64 array",
            run(|| Array::ones([1usize << 56, 2], DType::F64)?.exp()?.eval()),
            Fails(WORDS),
        ),
    ]
}
