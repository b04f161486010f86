//! Hostile command lines of `gearbox status`, `explain`, `demo`, `calibrate`
//! and `lm`.

use crate::{args, expect, fails, gearbox, succeeds, usage, Case, Out};

pub const LM: [&str; 5] = ["lm", "--x", "@x.csv", "--y", "@y.csv"];

pub fn general() -> Vec<Case> {
    vec![
        ("no arguments", usage(&[], &["Usage"])),
        (
            "an unknown subcommand",
            usage(&["frobnicate"], &["frobnicate"]),
        ),
        ("an unknown flag", usage(&["status", "--frob"], &["--frob"])),
        ("--version", succeeds(&["--version"], &["gearbox"])),
        ("help", succeeds(&["help"], &["Usage", "explain"])),
        (
            "help of a subcommand",
            succeeds(&["help", "glm"], &["--family"]),
        ),
        ("status with no GPU to use", succeeds(&["status"], &["cpu"])),
        (
            "calibrate with the GPU turned off",
            Box::new(|fx| {
                let r = gearbox(
                    fx,
                    &args(fx, &["calibrate", "--plot", "@never.svg"]),
                    Out::Captured,
                    &[("GEARBOX_DISABLE_CUDA", "1")],
                )?;
                expect(&r, 1, &r.stderr, &["CUDA"])
            }),
        ),
    ]
}

pub fn explain() -> Vec<Case> {
    vec![
        (
            "explain without --op",
            usage(&["explain", "--shape", "4x4"], &["--op"]),
        ),
        (
            "explain without --shape",
            usage(&["explain", "--op", "add"], &["--shape"]),
        ),
        (
            "an op that does not exist",
            fails(
                &["explain", "--op", "frobnicate", "--shape", "4x4"],
                &["op", "frobnicate"],
            ),
        ),
        (
            "a shape that is not sizes",
            fails(
                &["explain", "--op", "add", "--shape", "abc"],
                &["shape", "abc"],
            ),
        ),
        (
            "an empty shape",
            fails(&["explain", "--op", "add", "--shape", ""], &["shape"]),
        ),
        (
            "a negative size",
            fails(
                &["explain", "--op", "add", "--shape", "3x-1"],
                &["shape", "3x-1"],
            ),
        ),
        (
            "a size past usize",
            fails(
                &[
                    "explain",
                    "--op",
                    "add",
                    "--shape",
                    "99999999999999999999999",
                ],
                &["shape", "99999999999999999999999"],
            ),
        ),
        (
            "a GLM grid shape without the points",
            fails(
                &["explain", "--op", "glm_grid", "--shape", "300x14"],
                &["shape", "observations x coefficients x points"],
            ),
        ),
        (
            "a GLM grid family that does not exist",
            fails(
                &[
                    "explain", "--op", "glm_grid", "--shape", "30x2x10", "--family", "frob",
                ],
                &["family", "frob"],
            ),
        ),
        (
            "a shape with a trailing x",
            fails(
                &["explain", "--op", "add", "--shape", "4x"],
                &["shape", "4x"],
            ),
        ),
        (
            "a precision that does not exist",
            fails(
                &[
                    "explain",
                    "--op",
                    "add",
                    "--shape",
                    "4",
                    "--precision",
                    "turbo",
                ],
                &["precision", "turbo"],
            ),
        ),
        (
            "an integer dtype",
            fails(
                &["explain", "--op", "add", "--shape", "4", "--dtype", "i64"],
                &["dtype", "i64"],
            ),
        ),
        (
            "matmul of 3 x 4 by 3 x 4",
            fails(
                &["explain", "--op", "matmul", "--shape", "3x4"],
                &["matmul", "[3 x 4]"],
            ),
        ),
        (
            "solve with a 2 x 3 matrix",
            fails(
                &["explain", "--op", "solve", "--shape", "2x3"],
                &["solve", "[2 x 3]"],
            ),
        ),
        (
            "inv of a vector",
            fails(&["explain", "--op", "inv", "--shape", "5"], &["inv", "[5]"]),
        ),
        (
            "cholesky of a 3-d array",
            fails(
                &["explain", "--op", "cholesky", "--shape", "2x2x2"],
                &["cholesky", "[2 x 2 x 2]"],
            ),
        ),
        (
            "the sum of an empty matrix is a plan",
            succeeds(&["explain", "--op", "sum", "--shape", "0x0"], &["cpu"]),
        ),
        (
            "a 4-d chain is a plan",
            succeeds(
                &["explain", "--op", "chain", "--shape", "2x1x3x1"],
                &["cpu"],
            ),
        ),
        (
            "sizes with spaces and commas",
            succeeds(&["explain", "--op", "add", "--shape", " 4 , 4 "], &["cpu"]),
        ),
        (
            "a large plan computes nothing",
            succeeds(
                &[
                    "explain",
                    "--op",
                    "exp",
                    "--shape",
                    "65536x65536",
                    "--dtype",
                    "f32",
                    "--precision",
                    "fast",
                ],
                &["cpu"],
            ),
        ),
    ]
}

pub fn demo() -> Vec<Case> {
    vec![
        (
            "demo with a size that is not a number",
            usage(&["demo", "--size", "abc"], &["--size"]),
        ),
        (
            "demo with a negative size",
            usage(&["demo", "--size", "-3"], &["--size"]),
        ),
        (
            "demo with a negative seed",
            usage(&["demo", "--seed", "-1"], &["--seed"]),
        ),
        (
            "demo of 0 x 0 matrices",
            succeeds(&["demo", "--size", "0"], &["mean(C) = NaN"]),
        ),
        (
            "demo of 2 x 2 matrices",
            succeeds(&["demo", "--size", "2", "--seed", "7"], &["col_means"]),
        ),
    ]
}

pub fn lm() -> Vec<Case> {
    vec![
        ("lm without --y", usage(&["lm", "--x", "@x.csv"], &["--y"])),
        (
            "lm with a missing file",
            fails(
                &["lm", "--x", "@nope.csv", "--y", "@y.csv"],
                &["nope.csv", "cannot open"],
            ),
        ),
        (
            "lm with a directory for a file",
            fails(&["lm", "--x", "@", "--y", "@y.csv"], &["directory"]),
        ),
        (
            "lm with an empty file",
            fails(
                &["lm", "--x", "@empty.csv", "--y", "@y.csv"],
                &["empty.csv", "empty"],
            ),
        ),
        (
            "lm with /dev/null for a table",
            fails(
                &["lm", "--x", "/dev/null", "--y", "@y.csv"],
                &["/dev/null", "empty"],
            ),
        ),
        (
            "lm with a header and no rows",
            fails(
                &["lm", "--x", "@header_only.csv", "--y", "@header_only.csv"],
                &["many_lm", "rows"],
            ),
        ),
        (
            "lm with a ragged row",
            fails(
                &["lm", "--x", "@ragged.csv", "--y", "@y.csv"],
                &["ragged.csv", "line 4", "3 field(s)", "2 column(s)"],
            ),
        ),
        (
            "lm with a word in a number column",
            fails(
                &["lm", "--x", "@x.csv", "--y", "@nonnum.csv"],
                &["nonnum.csv", "line 3", "column 2", "\"n/a\""],
            ),
        ),
        (
            "lm with an empty cell",
            fails(
                &["lm", "--x", "@emptycell.csv", "--y", "@y.csv"],
                &["emptycell.csv", "line 5"],
            ),
        ),
        (
            "lm with NaN in the design",
            fails(
                &["lm", "--x", "@nan_x.csv", "--y", "@y.csv"],
                &["NaN", "row 3", "column"],
            ),
        ),
        (
            "lm with NA in a response",
            fails(&["lm", "--x", "@x.csv", "--y", "@na_y.csv"], &["NaN"]),
        ),
        (
            "lm with Inf in a response",
            fails(&["lm", "--x", "@x.csv", "--y", "@inf_y.csv"], &["inf"]),
        ),
        (
            "lm with 1e400 (read as Inf) in the design",
            fails(&["lm", "--x", "@big_x.csv", "--y", "@y.csv"], &["inf"]),
        ),
        (
            "lm with responses near 1e308 whose squares overflow",
            fails(
                &["lm", "--x", "@x.csv", "--y", "@huge_y.csv"],
                &["overflow"],
            ),
        ),
        (
            "lm with a column name used twice",
            fails(
                &["lm", "--x", "@dup.csv", "--y", "@y.csv"],
                &["dup.csv", "\"u\"", "used twice"],
            ),
        ),
        (
            "lm with R's row-name column",
            fails(
                &["lm", "--x", "@rownames.csv", "--y", "@y.csv"],
                &["empty column name", "row.names"],
            ),
        ),
        (
            "lm with tables of other row counts",
            fails(
                &["lm", "--x", "@x.csv", "--y", "@short_y.csv"],
                &["12 rows", "3"],
            ),
        ),
        (
            "lm with a covariate that doubles another",
            fails(
                &["lm", "--x", "@dep_x.csv", "--y", "@y.csv", "--intercept"],
                &["rank deficient", "v"],
            ),
        ),
        (
            "lm with a binary file",
            fails(
                &["lm", "--x", "@garbage.bin", "--y", "@y.csv"],
                &["garbage.bin"],
            ),
        ),
        (
            "lm writing into a missing directory",
            fails(
                &[
                    LM[0],
                    LM[1],
                    LM[2],
                    LM[3],
                    LM[4],
                    "--out",
                    "@no/such/dir/out.csv",
                ],
                &["cannot create"],
            ),
        ),
        (
            "lm writing to /dev/full",
            fails(
                &[LM[0], LM[1], LM[2], LM[3], LM[4], "--out", "/dev/full"],
                &["/dev/full", "cannot write"],
            ),
        ),
        (
            "lm reads CRLF line ends and quoted numbers",
            succeeds(
                &["lm", "--x", "@crlf_x.csv", "--y", "@crlf_y.csv"],
                &["estimate", "\"heart, left\",dose"],
            ),
        ),
        (
            "lm of the good tables",
            succeeds(
                &["lm", "--x", "@x.csv", "--y", "@y.csv", "--intercept"],
                &["r_squared"],
            ),
        ),
    ]
}
