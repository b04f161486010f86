//! The hostile-input table of the statistics API: GLM grids and models,
//! maximum likelihood, `many_lm`, CSV tables and the nmath functions on
//! arrays, given wrong dtypes and shapes, NaN, infinities, negative and
//! empty inputs. Each case names what must happen: an error whose message
//! names the problem (the words listed), or success with R's value. Never a
//! panic.
//!
//! [`cases`] holds the general table; [`reliability_cases`] issue 10 item
//! 8's cases (messages that blame the wrong thing). Both must pass.

use gearbox_core::{Array, DType, Error};
use gearbox_stats::glm::{glm_grid, grid_around, mle, GlmModel, GlmSpec};
use gearbox_stats::io::{write_csv_to, Table};
use gearbox_stats::lm::{many_lm, two_sided_p, LmOptions};

/// What a case must do.
enum Expect {
    /// Fail with a message holding every one of these words.
    Error(&'static [&'static str]),
    /// Succeed (value checks inside the case return an error when wrong).
    Accept,
}

use Expect::{Accept, Error as Fails};

type Case = (&'static str, Box<dyn Fn() -> Result<(), Error>>, Expect);

/// Runs `f` and discards its value, keeping only success or the error.
fn run<T>(f: impl Fn() -> Result<T, Error> + 'static) -> Box<dyn Fn() -> Result<(), Error>> {
    Box::new(move || f().map(|_| ()))
}

/// An error unless `got` is within `tol` (relative) of `want`; NaN must
/// match NaN and an infinity the same infinity.
fn near(what: &'static str, got: f64, want: f64, tol: f64) -> Result<(), Error> {
    let ok = if want.is_nan() {
        got.is_nan()
    } else if want.is_infinite() {
        got == want
    } else {
        (got - want).abs() <= tol * want.abs().max(1e-300)
    };
    if ok {
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

fn vec1(v: &[f64]) -> Array {
    Array::from_vec([v.len()], v.to_vec()).unwrap()
}

fn col_major(rows: usize, cols: usize, v: &[f64]) -> Array {
    Array::from_vec([rows, cols], v.to_vec()).unwrap()
}

/// A small binomial GLM: 4 observations, intercept and one covariate.
struct Glm {
    x: Array,
    y: Array,
    wt: Array,
    alpha: Array,
    mu: Array,
    p: Array,
    b: Array,
    spec: GlmSpec,
}

fn glm() -> Glm {
    Glm {
        x: col_major(4, 2, &[1.0, 1.0, 1.0, 1.0, -1.0, 0.5, 1.5, 3.0]),
        y: vec1(&[0.25, 0.5, 0.75, 1.0]),
        wt: vec1(&[4.0, 2.0, 4.0, 1.0]),
        alpha: vec1(&[0.0; 4]),
        mu: vec1(&[0.0, 0.0]),
        p: Array::eye(2).unwrap(),
        b: col_major(2, 3, &[0.0, 0.0, 0.1, 0.2, -0.3, 0.4]),
        spec: GlmSpec::parse("binomial", Some("logit"), None).unwrap(),
    }
}

impl Glm {
    fn grid(&self) -> Result<(), Error> {
        glm_grid(
            &self.x,
            &self.y,
            &self.wt,
            &self.alpha,
            &self.mu,
            &self.p,
            &self.b,
            &self.spec,
        )
        .map(|_| ())
    }
}

/// [`glm_grid`] of the small GLM after `change`.
fn grid_with(change: impl Fn(&mut Glm) + 'static) -> Box<dyn Fn() -> Result<(), Error>> {
    Box::new(move || {
        let mut g = glm();
        change(&mut g);
        g.grid()
    })
}

fn glm_cases() -> Vec<Case> {
    vec![
        (
            "glm_grid with an f32 design",
            grid_with(|g| g.x = g.x.astype(DType::F32).unwrap()),
            Fails(&["glm_grid", "x", "f32", "f64"]),
        ),
        (
            "glm_grid with a vector design",
            grid_with(|g| g.x = vec1(&[1.0; 4])),
            Fails(&["glm_grid", "x", "matrix"]),
        ),
        (
            "glm_grid with a design of no rows",
            grid_with(|g| {
                g.x = Array::zeros([0, 2], DType::F64).unwrap();
                (g.y, g.wt, g.alpha) = (vec1(&[]), vec1(&[]), vec1(&[]));
            }),
            Fails(&["glm_grid", "[0 x 2]", "at least one observation"]),
        ),
        (
            "glm_grid with y one short",
            grid_with(|g| g.y = vec1(&[0.5; 3])),
            Fails(&["glm_grid", "y", "length 4"]),
        ),
        (
            "glm_grid with NaN in x",
            grid_with(|g| g.x = col_major(4, 2, &[1.0, 1.0, f64::NAN, 1.0, 0.0, 1.0, 2.0, 3.0])),
            Fails(&["glm_grid", "x", "NaN", "index 2"]),
        ),
        (
            "glm_grid with Inf in the weights",
            grid_with(|g| g.wt = vec1(&[1.0, f64::INFINITY, 1.0, 1.0])),
            Fails(&["glm_grid", "wt", "inf"]),
        ),
        (
            "glm_grid with a negative weight",
            grid_with(|g| g.wt = vec1(&[1.0, -2.0, 1.0, 1.0])),
            Fails(&["glm_grid", "wt", "-2", "non-negative"]),
        ),
        (
            "binomial y above 1",
            grid_with(|g| g.y = vec1(&[0.25, 1.5, 0.75, 1.0])),
            Fails(&["glm_grid", "y", "1.5", "[0, 1]"]),
        ),
        (
            "binomial successes that are not whole",
            grid_with(|g| g.y = vec1(&[0.3, 0.5, 0.75, 1.0])),
            Fails(&["glm_grid", "y", "whole number"]),
        ),
        (
            "binomial trials that are not whole",
            grid_with(|g| g.wt = vec1(&[4.5, 2.0, 4.0, 1.0])),
            Fails(&["glm_grid", "wt", "4.5", "whole number"]),
        ),
        (
            "poisson with a negative count",
            grid_with(|g| {
                g.spec = GlmSpec::parse("poisson", None, None).unwrap();
                g.y = vec1(&[1.0, -1.0, 2.0, 0.0]);
            }),
            Fails(&["glm_grid", "y", "-1", "non-negative whole"]),
        ),
        (
            "Gamma with a zero response",
            grid_with(|g| {
                g.spec = GlmSpec::parse("Gamma", None, Some(1.0)).unwrap();
                g.y = vec1(&[1.0, 0.0, 2.0, 3.0]);
            }),
            Fails(&["glm_grid", "y", "positive"]),
        ),
        (
            "gaussian without a dispersion",
            grid_with(|g| {
                g.spec = GlmSpec::parse("gaussian", None, None).unwrap();
            }),
            Fails(&["glm_grid", "dispersion", "gaussian"]),
        ),
        (
            "alpha of the wrong length",
            grid_with(|g| g.alpha = vec1(&[0.0; 5])),
            Fails(&["glm_grid", "alpha", "length 4"]),
        ),
        (
            "mu of the wrong length",
            grid_with(|g| g.mu = vec1(&[0.0; 3])),
            Fails(&["glm_grid", "mu", "length 2"]),
        ),
        (
            "a 3 x 3 prior precision for two coefficients",
            grid_with(|g| g.p = Array::eye(3).unwrap()),
            Fails(&["glm_grid", "P", "2 x 2"]),
        ),
        (
            "an asymmetric prior precision",
            grid_with(|g| g.p = col_major(2, 2, &[1.0, 0.5, 0.0, 1.0])),
            Fails(&["glm_grid", "P", "symmetric"]),
        ),
        (
            "an indefinite prior precision",
            grid_with(|g| g.p = col_major(2, 2, &[1.0, 2.0, 2.0, 1.0])),
            Fails(&["glm_grid", "positive definite"]),
        ),
        (
            "a NaN in the prior precision",
            grid_with(|g| g.p = col_major(2, 2, &[1.0, 0.0, 0.0, f64::NAN])),
            Fails(&["glm_grid", "P", "NaN"]),
        ),
        (
            "a grid of three rows for two coefficients",
            grid_with(|g| g.b = col_major(3, 1, &[0.0; 3])),
            Fails(&["glm_grid", "B", "l2 = 2"]),
        ),
        (
            "a grid point with Inf",
            grid_with(|g| g.b = col_major(2, 2, &[0.0, 0.0, f64::INFINITY, 0.0])),
            Fails(&["glm_grid", "B", "inf"]),
        ),
        (
            "a grid of i64",
            grid_with(|g| g.b = Array::from_vec([2, 1], vec![0i64, 1]).unwrap()),
            Fails(&["glm_grid", "B", "i64"]),
        ),
        (
            "GlmModel::grid with a grid of the wrong rows",
            run(|| {
                let g = glm();
                let model = GlmModel::new(&g.x, &g.y, &g.wt, &g.alpha, &g.mu, &g.p, &g.spec)?;
                model.grid(&col_major(1, 2, &[0.0, 1.0]))
            }),
            Fails(&["glm_grid", "B"]),
        ),
        (
            "GlmModel::new with mismatched rows",
            run(|| {
                let g = glm();
                GlmModel::new(
                    &g.x,
                    &vec1(&[0.5; 2]),
                    &g.wt,
                    &g.alpha,
                    &g.mu,
                    &g.p,
                    &g.spec,
                )
            }),
            Fails(&["y", "length 4"]),
        ),
        (
            "a family with a typo",
            run(|| GlmSpec::parse("binomail", None, None)),
            Fails(&["family", "binomail"]),
        ),
        (
            "an unknown link",
            run(|| GlmSpec::parse("binomial", Some("logistic"), None)),
            Fails(&["link", "logistic"]),
        ),
        (
            "poisson with a logit link",
            run(|| GlmSpec::parse("poisson", Some("logit"), None)),
            Fails(&["link", "poisson", "log"]),
        ),
        (
            "binomial with dispersion 2",
            run(|| GlmSpec::parse("binomial", None, Some(2.0))),
            Fails(&["dispersion", "fixed at 1", "quasibinomial"]),
        ),
        (
            "a NaN dispersion",
            run(|| GlmSpec::parse("gaussian", None, Some(f64::NAN))),
            Fails(&["dispersion", "NaN", "finite and positive"]),
        ),
        (
            "a negative dispersion",
            run(|| GlmSpec::parse("Gamma", None, Some(-1.0))),
            Fails(&["dispersion", "-1", "positive"]),
        ),
        (
            "mle with NaN in y",
            run(|| {
                let g = glm();
                mle(
                    &g.x,
                    &vec1(&[0.5, f64::NAN, 0.5, 0.5]),
                    &g.wt,
                    &g.alpha,
                    &g.spec,
                )
            }),
            Fails(&["y", "NaN"]),
        ),
        (
            "grid_around with a covariance of the wrong size",
            run(|| grid_around(&vec1(&[0.0, 1.0]), &Array::eye(3)?, 4, 1)),
            Fails(&["grid_around", "cov", "2 x 2"]),
        ),
        (
            "grid_around with an empty estimate",
            run(|| grid_around(&vec1(&[]), &Array::eye(0)?, 4, 1)),
            Fails(&["grid_around", "beta_hat", "non-empty"]),
        ),
        (
            "grid_around with a NaN estimate",
            run(|| grid_around(&vec1(&[f64::NAN]), &Array::eye(1)?, 4, 1)),
            Fails(&["grid_around", "beta_hat", "NaN"]),
        ),
    ]
}

/// Five observations of two covariates and two responses.
fn lm_x() -> Array {
    col_major(5, 2, &[0.0, 1.0, 2.0, 3.0, 4.0, 1.0, -1.0, 2.0, 0.5, 3.0])
}

fn lm_y() -> Array {
    col_major(5, 2, &[1.0, 3.2, 4.9, 7.1, 9.0, 0.3, -0.2, 1.1, 0.7, 2.0])
}

/// R's default: an intercept, terms named x1, x2, ...
fn o() -> LmOptions {
    LmOptions::default()
}

fn lm_cases() -> Vec<Case> {
    vec![
        (
            "many_lm with a vector design",
            run(move || many_lm(&vec1(&[1.0; 5]), &lm_y(), &o())),
            Fails(&["many_lm", "[5]", "n x q matrix"]),
        ),
        (
            "many_lm with 3-d responses",
            run(move || many_lm(&lm_x(), &Array::zeros([5, 1, 1], DType::F64)?, &o())),
            Fails(&["many_lm", "[5 x 1 x 1]"]),
        ),
        (
            "many_lm with row counts that differ",
            run(move || many_lm(&lm_x(), &col_major(4, 1, &[1.0; 4]), &o())),
            Fails(&["many_lm", "5 rows", "4"]),
        ),
        (
            "many_lm with as many terms as rows",
            run(move || many_lm(&lm_x().rows(0..3)?, &lm_y().rows(0..3)?, &o())),
            Fails(&["many_lm", "3 rows for 3 terms"]),
        ),
        (
            "many_lm with NaN in the design",
            run(move || {
                let mut x = lm_x();
                x.set(&[2, 1], f64::NAN)?;
                many_lm(&x, &lm_y(), &o())
            }),
            Fails(&["many_lm", "NaN", "row 2", "column 1"]),
        ),
        (
            "many_lm with Inf in a response",
            run(move || {
                let mut y = lm_y();
                y.set(&[4, 1], f64::INFINITY)?;
                many_lm(&lm_x(), &y, &o())
            }),
            Fails(&["many_lm", "inf"]),
        ),
        (
            "many_lm with an i64 design",
            run(move || many_lm(&lm_x().astype(DType::I64)?, &lm_y(), &o())),
            Fails(&["many_lm", "i64"]),
        ),
        (
            "many_lm with one term name for two columns",
            run(|| {
                let opts = LmOptions {
                    intercept: true,
                    term_names: Some(vec!["a".into()]),
                };
                many_lm(&lm_x(), &lm_y(), &opts)
            }),
            Fails(&["many_lm", "name"]),
        ),
        (
            "many_lm with a column repeated",
            run(move || {
                let x = lm_x();
                many_lm(&Array::cbind(&[&x, &x.cols(0..1)?])?, &lm_y(), &o())
            }),
            Fails(&["many_lm", "x3", "x1"]),
        ),
        (
            "many_lm with a column of zeros",
            run(move || {
                let x = Array::cbind(&[&lm_x(), &Array::zeros([5, 1], DType::F64)?])?;
                many_lm(&x, &lm_y(), &o())
            }),
            Fails(&["many_lm", "x3"]),
        ),
        (
            "many_lm with responses of 1e300 overflows, and says so",
            run(move || many_lm(&lm_x(), &(&lm_y() * 1e300)?, &o())),
            Fails(&["many_lm", "overflow"]),
        ),
        (
            "many_lm fits responses scaled by 1e-300 (R does)",
            Box::new(move || {
                let fit = many_lm(&lm_x(), &(&lm_y() * 1e-300)?, &o())?;
                let plain = many_lm(&lm_x(), &lm_y(), &o())?;
                let (a, b) = (
                    fit.coefficients.to_vec::<f64>()?,
                    plain.coefficients.to_vec::<f64>()?,
                );
                near("many_lm", a[1] * 1e300, b[1], 1e-10)
            }),
            Accept,
        ),
        (
            "two_sided_p with NaN and infinite t",
            Box::new(|| {
                let p =
                    two_sided_p(&vec1(&[f64::NAN, f64::INFINITY, 0.0]), 3.0)?.to_vec::<f64>()?;
                near("p(NaN)", p[0], f64::NAN, 0.0)?;
                near("p(Inf)", p[1], 0.0, 0.0)?;
                near("p(0)", p[2], 1.0, 1e-15)
            }),
            Accept,
        ),
    ]
}

fn read(text: &'static str) -> Box<dyn Fn() -> Result<(), Error>> {
    run(move || Table::from_reader(text.as_bytes(), "t.csv"))
}

fn csv_cases() -> Vec<Case> {
    vec![
        (
            "an empty file",
            read(""),
            Fails(&["t.csv", "empty", "header"]),
        ),
        (
            "a row with too many fields",
            read("a,b\n1,2\n3,4,5\n"),
            Fails(&["t.csv", "line 3", "3 field(s)", "2 column(s)"]),
        ),
        (
            "a cell that is not a number",
            read("a,b\n1,2\n3,four\n"),
            Fails(&["t.csv", "line 3", "column 2", "\"four\""]),
        ),
        (
            "an empty cell",
            read("a,b\n1,\n"),
            Fails(&["t.csv", "line 2", "column 2"]),
        ),
        (
            "a name used twice",
            read("a,b,a\n1,2,3\n"),
            Fails(&["t.csv", "\"a\"", "used twice"]),
        ),
        (
            "an empty column name (R's row names)",
            read("\"\",x\n1,2\n"),
            Fails(&["t.csv", "empty column name", "row.names"]),
        ),
        (
            "a hexadecimal cell",
            read("a\n0x10\n"),
            Fails(&["t.csv", "\"0x10\"", "not a number"]),
        ),
        (
            "an unterminated quote",
            read("a,b\n\"1,2\n"),
            Fails(&["t.csv", "line 2"]),
        ),
        (
            "NA, NaN, Inf and 1e999 read as NaN, NaN, Inf and Inf",
            Box::new(|| {
                let t = Table::from_reader("a\nNA\nNaN\n-Inf\n1e999\n".as_bytes(), "t.csv")?;
                let c = t.column("a")?;
                near("NA", c[0], f64::NAN, 0.0)?;
                near("NaN", c[1], f64::NAN, 0.0)?;
                near("-Inf", c[2], f64::NEG_INFINITY, 0.0)?;
                near("1e999", c[3], f64::INFINITY, 0.0)
            }),
            Accept,
        ),
        (
            "CRLF line ends and quoted numbers are read",
            Box::new(|| {
                let t = Table::from_reader("a,b\r\n\"1\",2\r\n".as_bytes(), "t.csv")?;
                near("a", t.column("a")?[0], 1.0, 0.0)
            }),
            Accept,
        ),
        (
            "a missing column names the ones there are",
            run(|| {
                Table::from_reader("a,b\n1,2\n".as_bytes(), "t.csv")?
                    .column("c")
                    .map(|_| ())
            }),
            Fails(&["\"c\"", "\"a\", \"b\""]),
        ),
        (
            "write_csv with columns of two lengths",
            run(|| write_csv_to(Vec::new(), "mem", &["a", "b"], &[&[1.0], &[1.0, 2.0]])),
            Fails(&["write_csv", "\"b\"", "length 2"]),
        ),
        (
            "write_csv with a name short",
            run(|| write_csv_to(Vec::new(), "mem", &["a"], &[&[1.0], &[2.0]])),
            Fails(&["write_csv", "1 name(s)", "2 columns"]),
        ),
    ]
}

fn nmath_cases() -> Vec<Case> {
    use gearbox_stats as s;
    vec![
        (
            "dbinom with a bool argument",
            run(|| {
                s::dbinom(
                    &vec1(&[1.0]),
                    &Array::from_vec([1], vec![true])?,
                    &vec1(&[0.5]),
                    false,
                )
            }),
            Fails(&["dbinom", "bool"]),
        ),
        (
            "pnorm of arguments that do not broadcast",
            run(|| {
                s::pnorm(
                    &vec1(&[0.0; 2]),
                    &vec1(&[0.0; 3]),
                    &vec1(&[1.0]),
                    true,
                    false,
                )
            }),
            Fails(&["pnorm", "[2]", "[3]"]),
        ),
        (
            "dgamma of a 3-d shape against a mismatched matrix",
            run(|| {
                s::dgamma(
                    &Array::zeros([2, 2, 2], DType::F64)?,
                    &Array::ones([3, 2], DType::F64)?,
                    &vec1(&[1.0]),
                    false,
                )
            }),
            Fails(&["dgamma", "[2 x 2 x 2]", "[3 x 2]"]),
        ),
        (
            "R's answers at NaN, Inf and out-of-range arguments",
            Box::new(|| {
                let one = vec1(&[1.0]);
                let zero = vec1(&[0.0]);
                let q = s::qnorm(&vec1(&[2.0, -0.5, 0.0, 1.0]), &zero, &one, true, false)?;
                let q = q.to_vec::<f64>()?;
                near("qnorm(2)", q[0], f64::NAN, 0.0)?;
                near("qnorm(-0.5)", q[1], f64::NAN, 0.0)?;
                near("qnorm(0)", q[2], f64::NEG_INFINITY, 0.0)?;
                near("qnorm(1)", q[3], f64::INFINITY, 0.0)?;
                let p = s::pnorm(&vec1(&[f64::INFINITY, f64::NAN]), &zero, &one, true, false)?;
                let p = p.to_vec::<f64>()?;
                near("pnorm(Inf)", p[0], 1.0, 0.0)?;
                near("pnorm(NaN)", p[1], f64::NAN, 0.0)?;
                let d = s::dnorm(&zero, &zero, &vec1(&[-1.0, 0.0]), false)?.to_vec::<f64>()?;
                near("dnorm(sd = -1)", d[0], f64::NAN, 0.0)?;
                near("dnorm(0, sd = 0)", d[1], f64::INFINITY, 0.0)
            }),
            Accept,
        ),
        (
            "dbinom with negative size or p above 1 is NaN; a fractional x is 0",
            Box::new(|| {
                let d = s::dbinom(
                    &vec1(&[1.0, 1.0, 1.5]),
                    &vec1(&[-1.0, 3.0, 3.0]),
                    &vec1(&[0.5, 1.5, 0.5]),
                    false,
                )?
                .to_vec::<f64>()?;
                near("dbinom(size = -1)", d[0], f64::NAN, 0.0)?;
                near("dbinom(p = 1.5)", d[1], f64::NAN, 0.0)?;
                near("dbinom(x = 1.5)", d[2], 0.0, 0.0)
            }),
            Accept,
        ),
        (
            "lgamma at 0, at a negative integer and at -Inf is Inf",
            Box::new(|| {
                let g =
                    s::lgamma(&vec1(&[0.0, -2.0, f64::NEG_INFINITY, 1e308]))?.to_vec::<f64>()?;
                near("lgamma(0)", g[0], f64::INFINITY, 0.0)?;
                near("lgamma(-2)", g[1], f64::INFINITY, 0.0)?;
                near("lgamma(-Inf)", g[2], f64::INFINITY, 0.0)?;
                near("lgamma(1e308)", g[3], f64::INFINITY, 0.0)
            }),
            Accept,
        ),
        (
            "the nmath functions of empty arrays are empty",
            Box::new(|| {
                let e = vec1(&[]);
                near(
                    "numel",
                    s::pgamma(&e, &vec1(&[2.0]), &vec1(&[1.0]), true, false)?.numel() as f64,
                    0.0,
                    0.0,
                )
            }),
            Accept,
        ),
    ]
}

/// Every case that must pass on this branch.
fn cases() -> Vec<Case> {
    [glm_cases(), lm_cases(), csv_cases(), nmath_cases()]
        .into_iter()
        .flatten()
        .collect()
}

/// Issue 10 item 8: messages that blamed the wrong thing, and the empty
/// inputs they should name.
fn reliability_cases() -> Vec<Case> {
    vec![
        (
            "many_lm fits columns scaled by 1e300 (R does)",
            Box::new(move || {
                let x = (&lm_x() * 1e300)?;
                let fit = many_lm(&x, &lm_y(), &o())?;
                let plain = many_lm(&lm_x(), &lm_y(), &o())?;
                let (a, b) = (
                    fit.coefficients.to_vec::<f64>()?,
                    plain.coefficients.to_vec::<f64>()?,
                );
                near("many_lm", a[1] * 1e300, b[1], 1e-8)
            }),
            Accept,
        ),
        (
            "many_lm fits columns scaled by 1e-300 (R does)",
            Box::new(move || {
                let x = (&lm_x() * 1e-300)?;
                let fit = many_lm(&x, &lm_y(), &o())?;
                let plain = many_lm(&lm_x(), &lm_y(), &o())?;
                let (a, b) = (
                    fit.coefficients.to_vec::<f64>()?,
                    plain.coefficients.to_vec::<f64>()?,
                );
                near("many_lm", a[1] * 1e-300, b[1], 1e-8)
            }),
            Accept,
        ),
        (
            "many_lm with zero responses names y",
            run(move || many_lm(&lm_x(), &Array::zeros([5, 0], DType::F64)?, &o())),
            Fails(&["many_lm", "y"]),
        ),
        (
            "glm_grid with an empty grid names B",
            grid_with(|g| g.b = Array::zeros([2, 0], DType::F64).unwrap()),
            Fails(&["glm_grid", "B"]),
        ),
        (
            "mle with a covariate of 1e308 names the overflow",
            run(|| {
                let g = glm();
                let x = col_major(4, 2, &[1.0, 1.0, 1.0, 1.0, -1.0, 1e308, 1.5, 3.0]);
                mle(&x, &g.y, &g.wt, &g.alpha, &g.spec)
            }),
            Fails(&["overflow"]),
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

/// Fails the test with every failing case listed, if any.
fn assert_none_failed(bad: Vec<String>) {
    assert!(
        bad.is_empty(),
        "{} case(s) failed:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_hostile_input_gets_a_clear_answer() {
    let table = cases();
    assert!(table.len() >= 60, "the table keeps at least 60 cases");
    assert_none_failed(failures(table));
}

/// Issue 10's reliability items; lists every case that fails.
#[test]
fn reliability_cases_get_a_clear_answer() {
    assert_none_failed(failures(reliability_cases()));
}
