//! The bad-input table: every row is an input the API must reject with a clear
//! error (never a panic, never a silently wrong number). Each row names the
//! case, runs it, and lists words the message must contain.

use gearbox_core::{Array, DType, Error, Precision};

type Case = (
    &'static str,
    Box<dyn Fn() -> Result<(), Error>>,
    &'static [&'static str],
);

fn m(rows: usize, cols: usize) -> Array {
    Array::from_vec(
        [rows, cols],
        (0..rows * cols).map(|i| i as f64 + 0.5).collect::<Vec<_>>(),
    )
    .unwrap()
}

fn v(n: usize) -> Array {
    Array::from_vec([n], (0..n).map(|i| i as f64 + 0.5).collect::<Vec<_>>()).unwrap()
}

fn bools(n: usize) -> Array {
    Array::from_vec([n], (0..n).map(|i| i % 2 == 0).collect::<Vec<_>>()).unwrap()
}

fn empty() -> Array {
    Array::from_vec([0], Vec::<f64>::new()).unwrap()
}

/// Runs `f` and discards the array, keeping only success or the error.
fn run<T>(f: impl Fn() -> Result<T, Error> + 'static) -> Box<dyn Fn() -> Result<(), Error>> {
    Box::new(move || f().map(|_| ()))
}

fn cases() -> Vec<Case> {
    vec![
        (
            "from_vec with too few values",
            run(|| Array::from_vec([2, 3], vec![1.0; 5])),
            &["from_vec", "5 values", "[2 x 3]", "6"],
        ),
        (
            "from_vec with too many values",
            run(|| Array::from_vec([2], vec![1.0; 3])),
            &["3 values", "[2]"],
        ),
        (
            "from_rows ragged",
            run(|| Array::from_rows(&[vec![1.0, 2.0], vec![3.0]])),
            &["from_rows", "row 1"],
        ),
        (
            "add shapes that do not broadcast",
            run(|| m(3, 4).add(&m(4, 3))),
            &["add", "[3 x 4]", "[4 x 3]", "axis 0"],
        ),
        (
            "mul row of wrong length",
            run(|| m(3, 4).mul(&Array::from_vec([1, 5], vec![1.0; 5]).unwrap())),
            &["mul", "[1 x 5]", "axis 1"],
        ),
        (
            "operator + shape mismatch",
            run(|| &v(3) + &v(4)),
            &["add", "[3]", "[4]"],
        ),
        (
            "comparison shape mismatch",
            run(|| v(2).lt(&v(5))),
            &["lt", "[2]", "[5]"],
        ),
        (
            "and on f64",
            run(|| v(3).and(&bools(3))),
            &["and", "f64", "bool"],
        ),
        (
            "or on i64",
            run(|| bools(2).or(&Array::from_vec([2], vec![1i64, 0]).unwrap())),
            &["or", "i64", "bool"],
        ),
        ("not on f64", run(|| v(2).not()), &["not", "f64", "bool"]),
        (
            "where with an f64 mask",
            run(|| Array::where_(&v(3), &v(3), &v(3))),
            &["where", "f64", "mask"],
        ),
        (
            "where branches mismatch",
            run(|| Array::where_(&bools(3), &v(3), &v(4))),
            &["where", "[3]", "[4]"],
        ),
        (
            "clamp lo > hi",
            run(|| v(3).clamp(2.0, 1.0)),
            &["clamp", "lo <= hi"],
        ),
        (
            "clamp with NaN bound",
            run(|| v(3).clamp(f64::NAN, 1.0)),
            &["clamp", "NaN"],
        ),
        (
            "reshape to another count",
            run(|| m(2, 3).reshape([4, 2])),
            &["reshape", "6 elements", "8"],
        ),
        (
            "transpose with a bad permutation",
            run(|| m(2, 3).transpose(&[0, 0])),
            &["transpose", "perm", "permutation"],
        ),
        (
            "transpose with too few axes",
            run(|| m(2, 3).transpose(&[0])),
            &["transpose", "[2 x 3]"],
        ),
        (
            "t() on 3-d",
            run(|| Array::from_vec([2, 2, 2], vec![1.0; 8]).unwrap().t()),
            &["t:", "[2 x 2 x 2]", "transpose(perm)"],
        ),
        (
            "slice past the end",
            run(|| m(3, 4).rows(2..5)),
            &["slice", "[3 x 4]", "2..5"],
        ),
        (
            "slice on a missing axis",
            run(|| v(3).slice(1, 0..1)),
            &["slice", "axis 1", "1 dimension"],
        ),
        (
            "cbind row count mismatch",
            run(|| Array::cbind(&[&m(2, 2), &m(3, 1)])),
            &["concat", "[2 x 2]", "[3 x 1]"],
        ),
        (
            "rbind column count mismatch",
            run(|| Array::rbind(&[&m(2, 2), &m(1, 3)])),
            &["concat", "[2 x 2]", "[1 x 3]"],
        ),
        (
            "concat of nothing",
            run(|| Array::concat(&[], 0)),
            &["concat", "at least one"],
        ),
        (
            "sum over a missing axis",
            run(|| m(2, 2).sum_axis(2)),
            &["sum", "axis 2", "2 dimension"],
        ),
        (
            "cumsum over a missing axis",
            run(|| v(4).cumsum_axis(3)),
            &["cumsum", "axis 3"],
        ),
        (
            "min of an empty array",
            run(|| empty().min()),
            &["min", "empty", "[0]"],
        ),
        (
            "argmax of an empty array",
            run(|| empty().argmax()),
            &["argmax", "empty"],
        ),
        (
            "max along an empty axis",
            run(|| {
                Array::from_vec([0, 3], Vec::<f64>::new())
                    .unwrap()
                    .max_axis(0)
            }),
            &["max", "[0 x 3]"],
        ),
        ("any on f64", run(|| v(3).any()), &["any", "f64", "bool"]),
        (
            "all on i64",
            run(|| Array::from_vec([1], vec![1i64]).unwrap().all()),
            &["all", "i64"],
        ),
        (
            "col_means of a vector",
            run(|| v(3).col_means()),
            &["mean", "[3]", "matrix"],
        ),
        (
            "row_sums of a 3-d array",
            run(|| Array::from_vec([1, 1, 2], vec![1.0; 2]).unwrap().row_sums()),
            &["sum", "matrix"],
        ),
        (
            "to_vec with the wrong type",
            run(|| v(3).to_vec::<f32>()),
            &["to_vec", "f64", "f32"],
        ),
        (
            "item of a vector",
            run(|| v(3).item()),
            &["item", "[3]", "exactly one"],
        ),
        (
            "get out of bounds",
            run(|| m(2, 2).get(&[2, 0])),
            &["get", "[2, 0]", "[2 x 2]"],
        ),
        (
            "get with too few indices",
            run(|| m(2, 2).get(&[1])),
            &["get", "[1]"],
        ),
        (
            "set out of bounds",
            run(|| {
                let mut a = m(2, 2);
                a.set(&[0, 5], 1.0)
            }),
            &["set", "[0, 5]"],
        ),
        (
            "set a fraction into i64",
            run(|| {
                let mut a = Array::from_vec([2], vec![1i64, 2]).unwrap();
                a.set(&[0], 2.5)
            }),
            &["set", "2.5", "i64"],
        ),
        (
            "set NaN into i64",
            run(|| {
                let mut a = Array::from_vec([1], vec![1i64]).unwrap();
                a.set(&[0], f64::NAN)
            }),
            &["set", "NaN", "i64"],
        ),
        (
            "bad precision name",
            run(|| "turbo".parse::<Precision>()),
            &["precision", "turbo", "fast, strict or exact"],
        ),
        (
            "astype then bad op",
            run(|| v(2).astype(DType::Bool)?.sqrt()?.and(&bools(2))),
            &["and", "f64"],
        ),
    ]
}

#[test]
fn every_bad_input_gets_a_clear_error() {
    let table = cases();
    assert!(table.len() >= 30, "the table keeps at least 30 rows");
    for (name, case, words) in table {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(case));
        let result =
            outcome.unwrap_or_else(|_| panic!("{name}: panicked instead of returning an error"));
        let err = match result {
            Ok(()) => panic!("{name}: was accepted, expected an error"),
            Err(e) => e.to_string(),
        };
        for w in words {
            assert!(
                err.contains(w),
                "{name}: message {err:?} does not mention {w:?}"
            );
        }
    }
}

#[test]
fn nan_and_infinity_are_values_not_errors() {
    let x = Array::from_vec([3], vec![f64::NAN, f64::INFINITY, -1.0]).unwrap();
    let y = x.sqrt().unwrap().to_vec::<f64>().unwrap();
    assert!(y[0].is_nan() && y[1] == f64::INFINITY && y[2].is_nan());
    let z = (&x * 0.0).unwrap().to_vec::<f64>().unwrap();
    assert!(z[0].is_nan() && z[1].is_nan() && z[2] == 0.0);
}
