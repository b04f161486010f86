//! The hostile-input table of the core API: inputs a careless or hostile
//! caller gives (wrong shapes, dtypes, axes, indices and values; NaN,
//! infinities, signed zeros, empty and huge arrays), each with what must
//! happen: an error whose message names the problem (the words listed), or
//! success with the right value. Never a panic.
//!
//! [`cases`] must all pass. [`pending_fixes`] holds the cases of issue 10's
//! items that other branches fix (shape counts that overflow, allocations
//! larger than memory, integer overflow, non-finite linear algebra,
//! products whose partial products overflow); it is run by an ignored test
//! until those branches are merged.

use gearbox_core::{Array, DType, Error, HostBuffer, Precision};

/// What a case must do.
enum Expect {
    /// Fail with a message holding every one of these words.
    Error(&'static [&'static str]),
    /// Succeed (value checks inside the case return an error when wrong).
    Accept,
}

type Case = (&'static str, Box<dyn Fn() -> Result<(), Error>>, Expect);

/// Runs `f` and discards its value, keeping only success or the error.
fn run<T>(f: impl Fn() -> Result<T, Error> + 'static) -> Box<dyn Fn() -> Result<(), Error>> {
    Box::new(move || f().map(|_| ()))
}

/// An error unless `got` is `want` (bit for bit; any NaN matches NaN).
fn want(what: &'static str, got: f64, want: f64) -> Result<(), Error> {
    if got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            op: what,
            name: "result",
            value: format!("{got:?}"),
            why: format!("expected {want:?}"),
        })
    }
}

/// An error unless every value of `a` is `want`.
fn all_are(what: &'static str, a: &Array, w: f64) -> Result<(), Error> {
    for v in a.to_f64_vec()? {
        want(what, v, w)?;
    }
    Ok(())
}

fn m(rows: usize, cols: usize) -> Array {
    let v: Vec<f64> = (0..rows * cols)
        .map(|i| (i as f64 * 0.7).sin() + 2.0)
        .collect();
    Array::from_vec([rows, cols], v).unwrap()
}

fn v(n: usize) -> Array {
    Array::from_vec([n], (0..n).map(|i| i as f64 - 1.5).collect::<Vec<_>>()).unwrap()
}

fn ints(values: &[i64]) -> Array {
    Array::from_vec([values.len()], values.to_vec()).unwrap()
}

fn bools(n: usize) -> Array {
    Array::from_vec([n], (0..n).map(|i| i % 3 == 0).collect::<Vec<_>>()).unwrap()
}

fn floats(values: &[f64]) -> Array {
    Array::from_vec([values.len()], values.to_vec()).unwrap()
}

fn empty(dims: &[usize]) -> Array {
    Array::zeros(dims.to_vec(), DType::F64).unwrap()
}

fn matrix(rows: &[&[f64]]) -> Array {
    let rows: Vec<Vec<f64>> = rows.iter().map(|r| r.to_vec()).collect();
    Array::from_rows(&rows).unwrap()
}

use Expect::{Accept, Error as Fails};

/// Creation: data that does not fit the shape, values a dtype cannot hold,
/// non-finite ranges.
fn creation() -> Vec<Case> {
    vec![
        (
            "from_vec i64 with one value short",
            run(|| Array::from_vec([3, 3], vec![1i64; 8])),
            Fails(&["from_vec", "8 values", "[3 x 3]", "9"]),
        ),
        (
            "from_vec two values for a 0-d shape",
            run(|| Array::from_vec(Vec::<usize>::new(), vec![true, false])),
            Fails(&["from_vec", "2 values", "1"]),
        ),
        (
            "from_vec data for a shape with a zero axis",
            run(|| Array::from_vec([0, 3], vec![1.0f32])),
            Fails(&["from_vec", "1 values", "[0 x 3]", "0"]),
        ),
        (
            "from_rows whose third row is short",
            run(|| Array::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0]])),
            Fails(&["from_rows", "row 2", "length 1"]),
        ),
        (
            "from_buffer with a buffer of another length",
            run(|| Array::from_buffer([2, 2], HostBuffer::I64(vec![1, 2, 3]))),
            Fails(&["from_buffer", "3 values", "[2 x 2]", "4"]),
        ),
        (
            "full NaN as i64",
            run(|| Array::full([2], f64::NAN, DType::I64)),
            Fails(&["full", "NaN"]),
        ),
        (
            "full Inf as i64",
            run(|| Array::full([2], f64::INFINITY, DType::I64)),
            Fails(&["full", "inf"]),
        ),
        (
            "full 2 as bool",
            run(|| Array::full([2], 2.0, DType::Bool)),
            Fails(&["full", "2"]),
        ),
        (
            "full 1e300 as f32 (overflows f32)",
            run(|| Array::full([2], 1e300, DType::F32)),
            Fails(&["full", "1e300"]),
        ),
        (
            "full NaN as f64 is a value",
            Box::new(|| all_are("full", &Array::full([3], f64::NAN, DType::F64)?, f64::NAN)),
            Accept,
        ),
        (
            "arange with a NaN start",
            run(|| Array::arange(f64::NAN, 1.0, 0.5)),
            Fails(&["arange", "start", "NaN"]),
        ),
        (
            "arange to infinity",
            run(|| Array::arange(0.0, f64::INFINITY, 1.0)),
            Fails(&["arange", "stop", "inf"]),
        ),
        (
            "arange with a NaN step",
            run(|| Array::arange(0.0, 1.0, f64::NAN)),
            Fails(&["arange", "step", "NaN"]),
        ),
        (
            "linspace from -Inf",
            run(|| Array::linspace(f64::NEG_INFINITY, 0.0, 5)),
            Fails(&["linspace", "start"]),
        ),
        (
            "linspace to NaN",
            run(|| Array::linspace(0.0, f64::NAN, 5)),
            Fails(&["linspace", "stop", "NaN"]),
        ),
        (
            "linspace of 0 points is empty",
            Box::new(|| {
                want(
                    "linspace",
                    Array::linspace(0.0, 1.0, 0)?.numel() as f64,
                    0.0,
                )
            }),
            Accept,
        ),
        (
            "linspace across the whole f64 range stays finite",
            Box::new(|| {
                let x = Array::linspace(-f64::MAX, f64::MAX, 3)?.to_vec::<f64>()?;
                want("linspace", x[1], 0.0)?;
                want("linspace", x[2], f64::MAX)
            }),
            Accept,
        ),
        (
            "eye of size 0 is empty",
            Box::new(|| want("eye", Array::eye(0)?.numel() as f64, 0.0)),
            Accept,
        ),
        (
            "zeros with a zero axis sums to +0",
            Box::new(|| want("sum", empty(&[4, 0]).sum()?.item()?, 0.0)),
            Accept,
        ),
    ]
}

/// Elementwise ops: shapes that do not broadcast, dtypes an op refuses,
/// bad bounds; and values that are answers, not errors.
fn elementwise() -> Vec<Case> {
    vec![
        (
            "sub of 3-d shapes that differ on axis 1",
            run(|| Array::zeros([2, 3, 4], DType::F64)?.sub(&Array::zeros([2, 4, 4], DType::F64)?)),
            Fails(&["sub", "[2 x 3 x 4]", "[2 x 4 x 4]", "axis 1"]),
        ),
        (
            "a [3] vector against [2 x 3] (axes align from the first)",
            run(|| m(2, 3).eq(&v(3))),
            Fails(&["eq", "[2 x 3]", "[3]", "axis 0"]),
        ),
        (
            "minimum of mismatched vectors",
            run(|| v(2).minimum(&v(3))),
            Fails(&["minimum", "[2]", "[3]"]),
        ),
        (
            "atan2 of mismatched matrices",
            run(|| m(2, 2).atan2(&m(3, 3))),
            Fails(&["atan2", "[2 x 2]", "[3 x 3]"]),
        ),
        (
            "pow against an empty axis that does not broadcast",
            run(|| m(2, 3).pow(&empty(&[0, 3]))),
            Fails(&["pow", "[2 x 3]", "[0 x 3]", "axis 0"]),
        ),
        (
            "not of i64",
            run(|| ints(&[1, 0]).not()),
            Fails(&["not", "i64", "bool"]),
        ),
        (
            "and of bools of other lengths",
            run(|| bools(2).and(&bools(3))),
            Fails(&["and", "[2]", "[3]"]),
        ),
        (
            "or of f32",
            run(|| bools(2).or(&v(2).astype(DType::F32)?)),
            Fails(&["or", "f32", "bool"]),
        ),
        (
            "where with an i64 mask",
            run(|| Array::where_(&ints(&[1, 0]), &v(2), &v(2))),
            Fails(&["where", "i64", "mask"]),
        ),
        (
            "where with a mask that does not broadcast",
            run(|| Array::where_(&bools(4), &v(2), &v(2))),
            Fails(&["where", "[4]", "[2]"]),
        ),
        (
            "clamp from Inf down to -Inf",
            run(|| v(3).clamp(f64::INFINITY, f64::NEG_INFINITY)),
            Fails(&["clamp", "lo <= hi"]),
        ),
        (
            "clamp with a NaN upper bound",
            run(|| v(3).clamp(0.0, f64::NAN)),
            Fails(&["clamp", "NaN"]),
        ),
        (
            "NaN, Inf and -0.0 through exp, log and division are values",
            Box::new(|| {
                let x = floats(&[f64::NAN, f64::INFINITY, -0.0]);
                let e = x.exp()?.to_vec::<f64>()?;
                want("exp(NaN)", e[0], f64::NAN)?;
                want("exp(Inf)", e[1], f64::INFINITY)?;
                want("exp(-0)", e[2], 1.0)?;
                let l = x.log()?.to_vec::<f64>()?;
                want("log(-0)", l[2], f64::NEG_INFINITY)?;
                let d = x.rdiv_one()?;
                want("1/-0", d[2], f64::NEG_INFINITY)
            }),
            Accept,
        ),
        (
            "huge values overflow to Inf, as in R",
            Box::new(|| {
                let x = floats(&[1e308, -1e308]);
                let y = (&x * 10.0)?.to_vec::<f64>()?;
                want("1e308 * 10", y[0], f64::INFINITY)?;
                want("-1e308 * 10", y[1], f64::NEG_INFINITY)
            }),
            Accept,
        ),
        (
            "sqrt of a negative number is NaN (R warns, gives NaN)",
            Box::new(|| all_are("sqrt", &floats(&[-1.0, -1e-300]).sqrt()?, f64::NAN)),
            Accept,
        ),
        (
            "an op on empty arrays gives an empty array",
            Box::new(|| {
                let z = empty(&[0, 3]).mul(&m(1, 3))?;
                want("numel", z.numel() as f64, 0.0)?;
                want("rows", z.dims()[0] as f64, 0.0)
            }),
            Accept,
        ),
    ]
}

/// `1 / x` for the elementwise cases.
trait RDivOne {
    fn rdiv_one(&self) -> Result<Vec<f64>, Error>;
}

impl RDivOne for Array {
    fn rdiv_one(&self) -> Result<Vec<f64>, Error> {
        self.scalar_like(1.0).div(self)?.to_vec::<f64>()
    }
}

/// Reductions: missing axes, empty inputs where there is no answer, dtypes
/// a reduction refuses; and R's answers on empty and special inputs.
fn reductions() -> Vec<Case> {
    vec![
        (
            "sum along axis 5 of a 0-d array",
            run(|| Array::scalar(1.0).sum_axis(5)),
            Fails(&["sum", "axis 5", "0 dimension"]),
        ),
        (
            "mean along axis 2 of a matrix",
            run(|| m(2, 2).mean_axis(2)),
            Fails(&["mean", "axis 2", "[2 x 2]"]),
        ),
        (
            "var along axis 3",
            run(|| m(2, 2).var_axis(3)),
            Fails(&["var", "axis 3"]),
        ),
        (
            "max of a [0 x 3] array",
            run(|| empty(&[0, 3]).max()),
            Fails(&["max", "empty", "[0 x 3]"]),
        ),
        (
            "argmin along an empty axis",
            run(|| empty(&[3, 0]).argmin_axis(1)),
            Fails(&["argmin", "[3 x 0]"]),
        ),
        (
            "min of an empty i64 vector",
            run(|| Array::from_vec([0], Vec::<i64>::new())?.min()),
            Fails(&["min", "empty"]),
        ),
        (
            "any of i64",
            run(|| ints(&[1]).any()),
            Fails(&["any", "i64", "bool"]),
        ),
        (
            "all along an axis of f32",
            run(|| m(2, 2).astype(DType::F32)?.all_axis(0)),
            Fails(&["all", "f32", "bool"]),
        ),
        (
            "cumsum along axis 2 of a matrix",
            run(|| m(2, 2).cumsum_axis(2)),
            Fails(&["cumsum", "axis 2"]),
        ),
        (
            "cumprod along axis 1 of a vector",
            run(|| v(3).cumprod_axis(1)),
            Fails(&["cumprod", "axis 1"]),
        ),
        (
            "row_means of a vector",
            run(|| v(4).row_means()),
            Fails(&["mean", "[4]", "matrix"]),
        ),
        (
            "col_sums of a 0-d array",
            run(|| Array::scalar(2.0).col_sums()),
            Fails(&["sum", "matrix"]),
        ),
        (
            "sum, prod, mean and sd of nothing are R's 0, 1, NaN, NaN",
            Box::new(|| {
                let e = empty(&[0]);
                want("sum", e.sum()?.item()?, 0.0)?;
                want("prod", e.prod()?.item()?, 1.0)?;
                want("mean", e.mean()?.item()?, f64::NAN)?;
                want("sd", e.sd()?.item()?, f64::NAN)
            }),
            Accept,
        ),
        (
            "any and all of nothing are false and true",
            Box::new(|| {
                let e = Array::from_vec([0], Vec::<bool>::new())?;
                want("any", e.any()?.item()?, 0.0)?;
                want("all", e.all()?.item()?, 1.0)
            }),
            Accept,
        ),
        (
            "var of one value is NaN, as in R",
            Box::new(|| want("var", v(1).var()?.item()?, f64::NAN)),
            Accept,
        ),
        (
            "a NaN wins min, max and sum; argmax points at it",
            Box::new(|| {
                let x = floats(&[3.0, f64::NAN, f64::INFINITY]);
                want("min", x.min()?.item()?, f64::NAN)?;
                want("max", x.max()?.item()?, f64::NAN)?;
                want("sum", x.sum()?.item()?, f64::NAN)?;
                want("argmax", x.argmax()?.item()?, 1.0)
            }),
            Accept,
        ),
        (
            "Inf - Inf in a sum is NaN",
            Box::new(|| {
                let x = floats(&[f64::INFINITY, 1.0, f64::NEG_INFINITY]);
                want("sum", x.sum()?.item()?, f64::NAN)
            }),
            Accept,
        ),
        (
            "the mean of huge values of one sign overflows to Inf, not NaN",
            Box::new(|| {
                want(
                    "mean",
                    floats(&[1e308, 1e308]).mean()?.item()?,
                    f64::INFINITY,
                )
            }),
            Accept,
        ),
        (
            "min and max of signed zeros: -0 below +0",
            Box::new(|| {
                let x = floats(&[0.0, -0.0, 0.0]);
                want("min", x.min()?.item()?, -0.0)?;
                want("max", x.max()?.item()?, 0.0)
            }),
            Accept,
        ),
    ]
}

/// Movement: reshapes to another count, bad permutations and ranges.
fn movement() -> Vec<Case> {
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
            run(|| v(5).slice(0, 3..1)),
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
fn access() -> Vec<Case> {
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
fn linalg() -> Vec<Case> {
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
fn other() -> Vec<Case> {
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

/// Every case that must pass on this branch.
fn cases() -> Vec<Case> {
    [
        creation(),
        elementwise(),
        reductions(),
        movement(),
        access(),
        linalg(),
        other(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Cases of issue 10's items fixed on other branches: the behaviour the
/// issue asks for.
fn pending_fixes() -> Vec<Case> {
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
fn allocation_cases() -> Vec<Case> {
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

/// Runs every case, collecting what went wrong instead of stopping at the
/// first.
fn failures(table: Vec<Case>) -> Vec<String> {
    let mut bad = vec![];
    for (name, case, expect) in table {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(case));
        let problem = match (outcome, expect) {
            (Err(_), _) => Some("panicked".to_string()),
            (Ok(Ok(())), Fails(_)) => Some("was accepted, expected an error".to_string()),
            (Ok(Err(e)), Accept) => Some(format!("failed: {e}")),
            (Ok(Ok(())), Accept) => None,
            (Ok(Err(e)), Fails(words)) => {
                let msg = e.to_string();
                let missing: Vec<&&str> = words.iter().filter(|w| !msg.contains(*w)).collect();
                (!missing.is_empty()).then(|| format!("message {msg:?} lacks {missing:?}"))
            }
        };
        if let Some(p) = problem {
            bad.push(format!("{name}: {p}"));
        }
    }
    bad
}

#[test]
fn every_hostile_input_gets_a_clear_answer() {
    let table = cases();
    assert!(table.len() >= 90, "the table keeps at least 90 cases");
    let bad = failures(table);
    assert!(
        bad.is_empty(),
        "{} case(s) failed:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Run after merging the branches of issue 10 (`cargo test --test
/// hostile_api -- --ignored`); lists every case that still fails.
#[test]
#[ignore = "pending issue 10 items 2, 4, 5, 6 (other branches); run with --ignored after merging"]
fn pending_fixes_get_a_clear_answer() {
    let bad = failures(pending_fixes());
    assert!(
        bad.is_empty(),
        "{} case(s) failed:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The child of [`pending_allocations_larger_than_memory_are_errors`].
#[test]
#[ignore = "run by pending_allocations_larger_than_memory_are_errors in a child process"]
fn allocation_child() {
    if std::env::var_os("GEARBOX_HOSTILE_CHILD").is_none() {
        return;
    }
    let bad = failures(allocation_cases());
    assert!(
        bad.is_empty(),
        "{} case(s) failed:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
#[ignore = "pending issue 10 item 3 (another branch); run with --ignored after merging"]
fn pending_allocations_larger_than_memory_are_errors() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["allocation_child", "--exact", "--ignored", "--nocapture"])
        .env("GEARBOX_HOSTILE_CHILD", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed ({}):\n{text}",
        out.status
    );
}
