//! Hostile inputs of data movement, element access, linear algebra,
//! precision names and scalar-function calls.

use gearbox_core::{Array, DType, Precision};

use crate::Expect::{Accept, Error as Fails};
use crate::{all_are, bools, empty, ints, m, matrix, run, v, want, Case};

/// Movement: reshapes to another count, bad permutations and ranges.
pub fn movement() -> Vec<Case> {
    vec![
        (
            "reshape 6 elements to 7",
            run(|| m(2, 3).reshape([7])),
            Fails(&["reshape", "6 elements", "7"]),
        ),
        (
            "reshape 6 elements to a shape with a zero axis",
            run(|| m(2, 3).reshape([0, 6])),
            Fails(&["reshape", "6 elements", "0"]),
        ),
        (
            "reshape a 0-d array to two elements",
            run(|| Array::scalar(1.0).reshape([2])),
            Fails(&["reshape", "1 element", "2"]),
        ),
        (
            "transpose with an axis past the end",
            run(|| m(2, 3).transpose(&[0, 2])),
            Fails(&["transpose", "[0, 2]", "permutation"]),
        ),
        (
            "transpose of a 3-d array with two axes",
            run(|| Array::zeros([2, 2, 2], DType::F64)?.transpose(&[1, 0])),
            Fails(&["transpose", "[2 x 2 x 2]"]),
        ),
        (
            "slice with a reversed range",
            run(|| v(5).slice(0, std::ops::Range { start: 3, end: 1 })),
            Fails(&["slice", "3..1"]),
        ),
        (
            "slice of a 0-d array",
            run(|| Array::scalar(1.0).slice(0, 0..1)),
            Fails(&["slice", "axis 0", "0 dimension"]),
        ),
        (
            "rows past the end of a vector",
            run(|| v(3).rows(1..4)),
            Fails(&["slice", "[3]", "1..4"]),
        ),
        (
            "cols past the end",
            run(|| m(2, 2).cols(0..3)),
            Fails(&["slice", "[2 x 2]", "0..3"]),
        ),
        (
            "cbind of 3-d arrays that differ",
            run(|| {
                Array::cbind(&[
                    &Array::zeros([2, 2, 2], DType::F64)?,
                    &Array::zeros([2, 2, 3], DType::F64)?,
                ])
            }),
            Fails(&["concat", "[2 x 2 x 2]", "[2 x 2 x 3]"]),
        ),
        (
            "rbind of nothing",
            run(|| Array::rbind(&[])),
            Fails(&["concat", "at least one"]),
        ),
        (
            "concat of a matrix and a vector along axis 1",
            run(|| Array::concat(&[&m(3, 2), &v(2)], 1)),
            Fails(&["concat", "[3 x 2]", "[2]"]),
        ),
        (
            "slices of empty ranges are empty, not errors",
            Box::new(|| want("numel", v(4).slice(0, 2..2)?.numel() as f64, 0.0)),
            Accept,
        ),
    ]
}

/// Element access and conversion to Rust values.
pub fn access() -> Vec<Case> {
    vec![
        (
            "get with three indices on a matrix",
            run(|| m(2, 2).get(&[0, 0, 0])),
            Fails(&["get", "[0, 0, 0]", "[2 x 2]"]),
        ),
        (
            "get of an empty vector",
            run(|| empty(&[0]).get(&[0])),
            Fails(&["get", "[0]", "out of bounds"]),
        ),
        (
            "set with one index on a matrix",
            run(|| {
                let mut a = m(2, 2);
                a.set(&[1], 0.0)
            }),
            Fails(&["set", "[1]", "[2 x 2]"]),
        ),
        (
            "set Inf into i64",
            run(|| {
                let mut a = ints(&[1, 2]);
                a.set(&[0], f64::INFINITY)
            }),
            Fails(&["set", "inf", "i64"]),
        ),
        (
            "set 1e300 into i64",
            run(|| {
                let mut a = ints(&[1, 2]);
                a.set(&[0], 1e300)
            }),
            Fails(&["set", "1e300", "i64"]),
        ),
        (
            "set 1e300 into f32 (would become Inf)",
            run(|| {
                let mut a = v(2).astype(DType::F32)?;
                a.set(&[0], 1e300)
            }),
            Fails(&["set", "1e300", "f32"]),
        ),
        (
            "set 0.5 into bool",
            run(|| {
                let mut a = bools(2);
                a.set(&[0], 0.5)
            }),
            Fails(&["set", "0.5", "bool"]),
        ),
        (
            "item of an empty array",
            run(|| empty(&[0, 2]).item()),
            Fails(&["item", "[0 x 2]", "exactly one"]),
        ),
        (
            "to_vec as i64 of an f64 array",
            run(|| v(2).to_vec::<i64>()),
            Fails(&["to_vec", "f64", "i64"]),
        ),
        (
            "to_vec as bool of an i64 array",
            run(|| ints(&[1]).to_vec::<bool>()),
            Fails(&["to_vec", "i64", "bool"]),
        ),
        (
            "set NaN and Inf into f32 keeps them",
            Box::new(|| {
                let mut a = v(2).astype(DType::F32)?;
                a.set(&[0], f64::NAN)?;
                a.set(&[1], f64::NEG_INFINITY)?;
                want("get", a.get(&[0])?, f64::NAN)?;
                want("get", a.get(&[1])?, f64::NEG_INFINITY)
            }),
            Accept,
        ),
    ]
}

/// Linear algebra: shapes that do not multiply or factor, singular and
/// indefinite matrices.
pub fn linalg() -> Vec<Case> {
    vec![
        (
            "matmul of a 3-d array",
            run(|| Array::zeros([2, 2, 2], DType::F64)?.matmul(&m(2, 2))),
            Fails(&["matmul", "[2 x 2 x 2]"]),
        ),
        (
            "matmul of a matrix and a vector of the wrong length",
            run(|| m(2, 3).matmul(&v(2))),
            Fails(&["matmul", "[2 x 3]", "[2]"]),
        ),
        (
            "crossprod of a vector and a matrix with other rows",
            run(|| v(3).crossprod(&m(4, 2))),
            Fails(&["crossprod", "[3]", "[4 x 2]"]),
        ),
        (
            "dot of matrices",
            run(|| m(2, 2).dot(&m(2, 2))),
            Fails(&["dot", "[2 x 2]"]),
        ),
        (
            "outer of matrices",
            run(|| m(2, 2).outer(&v(2))),
            Fails(&["outer", "[2 x 2]"]),
        ),
        (
            "solve with a 1 x 1 zero matrix",
            run(|| Array::zeros([1, 1], DType::F64)?.solve(&v(1))?.eval()),
            Fails(&["solve", "singular"]),
        ),
        (
            "solve with a right-hand side of other rows",
            run(|| m(3, 3).solve(&m(2, 2))),
            Fails(&["solve", "[2 x 2]"]),
        ),
        (
            "inv of a 2 x 3 matrix",
            run(|| m(2, 3).inv()),
            Fails(&["inv", "[2 x 3]"]),
        ),
        (
            "det of a 3-d array",
            run(|| Array::zeros([2, 2, 2], DType::F64)?.det()),
            Fails(&["det", "[2 x 2 x 2]"]),
        ),
        (
            "cholesky of a 2 x 3 matrix",
            run(|| m(2, 3).cholesky()),
            Fails(&["cholesky", "[2 x 3]"]),
        ),
        (
            "cholesky with a negative diagonal",
            run(|| matrix(&[&[-1.0, 0.0], &[0.0, 1.0]]).cholesky()?.eval()),
            Fails(&["cholesky", "not positive definite"]),
        ),
        (
            "qr of a 3-d array",
            run(|| Array::zeros([2, 2, 2], DType::F64)?.qr()),
            Fails(&["qr"]),
        ),
        (
            "inv of a rank-one 3 x 3 matrix",
            run(|| {
                let r = matrix(&[&[1.0, 2.0, 3.0]]);
                r.crossprod(&r)?.inv()?.eval()
            }),
            Fails(&["inv", "singular"]),
        ),
        (
            "NaN in a product propagates, as in R and BLAS",
            Box::new(|| {
                let a = matrix(&[&[f64::NAN, 1.0], &[1.0, 1.0]]);
                let p = a.matmul(&m(2, 2))?.to_vec::<f64>()?;
                want("matmul", p[0], f64::NAN)?;
                want(
                    "matmul",
                    p[1],
                    m(2, 2).get(&[0, 0])? + m(2, 2).get(&[1, 0])?,
                )
            }),
            Accept,
        ),
        (
            "the product of empty matrices is zeros",
            Box::new(|| all_are("matmul", &empty(&[2, 0]).matmul(&empty(&[0, 3]))?, 0.0)),
            Accept,
        ),
    ]
}

/// Precision names and scalar-function calls.
pub fn other() -> Vec<Case> {
    use gearbox_core::fusion::ir::{DeviceLibrary, ScalarFn};
    static LIB: DeviceLibrary = DeviceLibrary {
        name: "hostile",
        assemble: |names| Ok(names.iter().map(|n| format!("// {n}\n")).collect()),
    };
    static ADD2: ScalarFn = ScalarFn {
        name: "add2",
        device_name: "gb_add2",
        arity: 2,
        flags: 0,
        eval: |a, _| a[0] + a[1],
        library: &LIB,
        partials: None,
    };
    vec![
        (
            "an empty precision name",
            run(|| "".parse::<Precision>()),
            Fails(&["precision", "fast, strict or exact"]),
        ),
        (
            "precision named with a typo",
            run(|| "stirct".parse::<Precision>()),
            Fails(&["precision", "stirct"]),
        ),
        (
            "precision names ignore case and spaces",
            Box::new(|| {
                let p: Precision = " STRICT ".parse()?;
                want("parse", (p == Precision::Strict) as u8 as f64, 1.0)
            }),
            Accept,
        ),
        (
            "a call with three arguments to a function of two",
            run(|| Array::call_fn(&ADD2, &[&v(2), &v(2), &v(2)], 0)),
            Fails(&["add2", "takes 2 array arguments"]),
        ),
        (
            "a call with a flag the function does not take",
            run(|| Array::call_fn(&ADD2, &[&v(2), &v(2)], 1)),
            Fails(&["add2", "takes 0 flags"]),
        ),
        (
            "a call with operands that do not broadcast",
            run(|| Array::call_fn(&ADD2, &[&v(2), &m(3, 2)], 0)),
            Fails(&["add2", "[2]", "[3 x 2]"]),
        ),
        (
            "a call with no arguments",
            run(|| Array::call_fn(&ADD2, &[], 0)),
            Fails(&["add2", "args"]),
        ),
    ]
}
