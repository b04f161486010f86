//! Hostile inputs of array creation, elementwise ops and reductions.

use gearbox_core::{Array, DType, Error, HostBuffer};

use crate::Expect::{Accept, Error as Fails};
use crate::{all_are, bools, empty, floats, ints, m, run, v, want, Case};

/// Creation: data that does not fit the shape, values a dtype cannot hold,
/// non-finite ranges.
pub fn creation() -> Vec<Case> {
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
pub fn elementwise() -> Vec<Case> {
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
pub fn reductions() -> Vec<Case> {
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
