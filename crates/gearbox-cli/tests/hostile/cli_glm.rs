//! Hostile command lines of `gearbox glm`, on R's esoph data.

use crate::{args, expect, gearbox, usage, Case, Check, Out};

pub const GLM: [&str; 14] = [
    "glm",
    "--data",
    "@esoph.csv",
    "--formula-columns",
    "age,alcohol",
    "--intercept",
    "--response",
    "y",
    "--weights",
    "trials",
    "--family",
    "binomial",
    "--out",
    "@glm_out.csv",
];

/// `gearbox glm` on esoph with the model's flags in `swap` given other
/// values and `extra` arguments after them, ending with `code` and standard
/// error holding `words`.
pub fn glm_run(
    swap: &'static [(&'static str, &'static str)],
    extra: &'static [&'static str],
    code: i32,
    words: &'static [&'static str],
) -> Check {
    Box::new(move |fx| {
        let mut a: Vec<&str> = GLM.to_vec();
        for (flag, value) in swap {
            let at = a.iter().position(|x| x == flag).expect("a flag of GLM");
            a[at + 1] = value;
        }
        a.extend(extra);
        let r = gearbox(fx, &args(fx, &a), Out::Captured, &[])?;
        expect(&r, code, &r.stderr, words)
    })
}

/// A refused `gearbox glm` (status 1).
pub fn glm_fails(
    swap: &'static [(&'static str, &'static str)],
    extra: &'static [&'static str],
    words: &'static [&'static str],
) -> Check {
    glm_run(swap, extra, 1, words)
}

pub fn glm() -> Vec<Case> {
    const GRID: [&str; 2] = ["--grid", "@grid.csv"];
    const RANDOM: [&str; 2] = ["--grid-size", "3"];
    vec![
        (
            "glm without --formula-columns",
            usage(
                &[
                    "glm",
                    "--data",
                    "@esoph.csv",
                    "--response",
                    "y",
                    "--family",
                    "binomial",
                    "--out",
                    "@o.csv",
                    "--grid-size",
                    "2",
                ],
                &["--formula-columns"],
            ),
        ),
        (
            "glm with neither --grid nor --grid-size",
            glm_run(&[], &[], 2, &["--grid"]),
        ),
        (
            "glm with both --grid and --grid-size",
            glm_run(
                &[],
                &["--grid", "@grid.csv", "--grid-size", "3"],
                2,
                &["--grid-size"],
            ),
        ),
        (
            "glm with a negative grid size",
            glm_run(&[], &["--grid-size", "-1"], 2, &["--grid-size"]),
        ),
        (
            "glm with a grid size past u64",
            glm_run(
                &[],
                &["--grid-size", "99999999999999999999999"],
                2,
                &["--grid-size"],
            ),
        ),
        (
            "glm with a seed that is a word",
            glm_run(&[], &["--grid-size", "2", "--seed", "x"], 2, &["--seed"]),
        ),
        (
            "glm with a dispersion that is a word",
            glm_run(
                &[],
                &["--grid-size", "2", "--dispersion", "one"],
                2,
                &["--dispersion"],
            ),
        ),
        (
            "glm with a prior mean that is a word",
            glm_run(
                &[],
                &["--grid-size", "2", "--prior-mean", "zero"],
                2,
                &["--prior-mean"],
            ),
        ),
        (
            "glm with the family given twice",
            glm_run(
                &[],
                &["--grid-size", "2", "--family", "poisson"],
                2,
                &["--family"],
            ),
        ),
        (
            "glm with a family typo",
            glm_fails(
                &[("--family", "binomail")],
                &RANDOM,
                &["family", "binomail"],
            ),
        ),
        (
            "glm with an unknown link",
            glm_fails(
                &[],
                &["--grid-size", "2", "--link", "logistic"],
                &["link", "logistic"],
            ),
        ),
        (
            "glm poisson with the logit link",
            glm_fails(
                &[("--family", "poisson"), ("--response", "ncases")],
                &["--grid-size", "2", "--link", "logit"],
                &["poisson", "log"],
            ),
        ),
        (
            "glm binomial with dispersion 2",
            glm_fails(
                &[],
                &["--grid-size", "2", "--dispersion", "2"],
                &["dispersion", "quasibinomial"],
            ),
        ),
        (
            "glm gaussian with a negative dispersion",
            glm_fails(
                &[("--family", "gaussian")],
                &["--grid-size", "2", "--dispersion", "-1"],
                &["dispersion", "-1"],
            ),
        ),
        (
            "glm with a NaN dispersion",
            glm_fails(
                &[("--family", "quasibinomial")],
                &["--grid-size", "2", "--dispersion", "NaN"],
                &["dispersion", "NaN"],
            ),
        ),
        (
            "glm with a missing predictor",
            glm_fails(
                &[("--formula-columns", "age,nosuch")],
                &RANDOM,
                &["\"nosuch\"", "no such column"],
            ),
        ),
        (
            "glm with an empty predictor name",
            glm_fails(&[("--formula-columns", "")], &RANDOM, &["no such column"]),
        ),
        (
            "glm with a missing response",
            glm_fails(
                &[("--response", "z")],
                &RANDOM,
                &["\"z\"", "no such column"],
            ),
        ),
        (
            "glm with missing weights",
            glm_fails(&[("--weights", "w")], &RANDOM, &["\"w\"", "no such column"]),
        ),
        (
            "glm binomial with proportions above 1",
            glm_fails(&[("--response", "ncontrols")], &RANDOM, &["y", "[0, 1]"]),
        ),
        (
            "glm with a NaN predictor value",
            glm_fails(
                &[("--data", "@esoph_nan.csv")],
                &RANDOM,
                &["esoph_nan.csv, line 2, column 1", "NaN", "\"age\""],
            ),
        ),
        (
            "glm with an infinite offset",
            glm_fails(
                &[("--data", "@esoph_inf.csv")],
                &["--grid-size", "2", "--offset", "off"],
                &["esoph_inf.csv, line 6, column 8", "Inf", "\"off\""],
            ),
        ),
        (
            "glm with two prior precisions for three coefficients",
            glm_fails(
                &[],
                &["--grid-size", "2", "--prior-precision", "1,2"],
                &["prior-precision", "2 values", "3"],
            ),
        ),
        (
            "glm with a zero prior precision",
            glm_fails(
                &[],
                &["--grid", "@grid.csv", "--prior-precision", "0"],
                &["positive definite"],
            ),
        ),
        (
            "glm with a negative prior precision",
            glm_fails(
                &[],
                &["--grid", "@grid.csv", "--prior-precision", "-1"],
                &["positive definite"],
            ),
        ),
        (
            "glm with a NaN prior mean",
            glm_fails(
                &[],
                &["--grid", "@grid.csv", "--prior-mean", "NaN"],
                &["mu", "NaN"],
            ),
        ),
        (
            "glm with a grid of the wrong columns",
            glm_fails(
                &[],
                &["--grid", "@grid_bad.csv"],
                &["grid", "intercept, age, alcohol"],
            ),
        ),
        (
            "glm with a NaN grid point",
            glm_fails(
                &[],
                &["--grid", "@grid_nan.csv"],
                &["grid_nan.csv, line 2, column 2", "NaN", "\"age\""],
            ),
        ),
        (
            "glm with a missing grid file",
            glm_fails(&[], &["--grid", "@nope.csv"], &["nope.csv", "cannot open"]),
        ),
        (
            "glm with an empty grid file",
            glm_fails(&[], &["--grid", "@empty.csv"], &["empty.csv", "empty"]),
        ),
        (
            "glm with a missing data file",
            glm_fails(
                &[("--data", "@nope.csv")],
                &RANDOM,
                &["nope.csv", "cannot open"],
            ),
        ),
        (
            "glm writing into a missing directory",
            glm_fails(
                &[("--out", "@no/such/dir/o.csv")],
                &GRID,
                &["cannot create"],
            ),
        ),
        (
            "glm with a given grid",
            glm_run(&[], &GRID, 0, &["wrote 2 grid points"]),
        ),
        (
            "glm with negative prior means",
            glm_run(
                &[],
                &["--grid", "@grid.csv", "--prior-mean", "-1,-0.5,2"],
                0,
                &["wrote 2"],
            ),
        ),
        (
            "glm with a negative seed",
            glm_run(
                &[],
                &["--grid-size", "2", "--seed", "-4"],
                2,
                &["--seed", "-4"],
            ),
        ),
        (
            "glm with a random grid",
            glm_run(
                &[],
                &["--grid-size", "5"],
                0,
                &["maximum likelihood", "wrote 5"],
            ),
        ),
    ]
}
