//! The command-line cases of issue 10's reliability items:
//! closed or full standard output (7), messages that blamed the wrong thing
//! (8), a long CSV header (9), duplicate formula columns (10), sizes that
//! overflow or exceed memory (2, 3).

use std::time::Duration;

use crate::commands::LM;
use crate::glm::{glm_fails, GLM};
use crate::{args, expect, fails, gearbox, sane, succeeds, with_output, Case, Out};

/// Cases of issue 10's reliability items: the behaviour the issue asks for.
pub fn reliability_cases() -> Vec<Case> {
    vec![
        // Item 7: closed or full standard output.
        (
            "status to a closed pipe",
            with_output(&["status"], Out::ClosedPipe, 0, &[]),
        ),
        (
            "explain to a closed pipe",
            with_output(
                &["explain", "--op", "add", "--shape", "4"],
                Out::ClosedPipe,
                0,
                &[],
            ),
        ),
        (
            "demo to a closed pipe",
            with_output(&["demo", "--size", "2"], Out::ClosedPipe, 0, &[]),
        ),
        (
            "help to a closed pipe",
            with_output(&["help"], Out::ClosedPipe, 0, &[]),
        ),
        (
            "lm to a closed pipe",
            with_output(&LM, Out::ClosedPipe, 0, &[]),
        ),
        (
            "status to /dev/full",
            with_output(&["status"], Out::DevFull, 1, &["cannot write"]),
        ),
        (
            "explain to /dev/full",
            with_output(
                &["explain", "--op", "add", "--shape", "4"],
                Out::DevFull,
                1,
                &["cannot write"],
            ),
        ),
        // Item 8: messages that blamed the wrong thing.
        (
            "glm with a predictor of 1e308 names the overflow",
            glm_fails(
                &[("--data", "@esoph_1e308.csv")],
                &["--grid-size", "3"],
                &["overflow"],
            ),
        ),
        (
            "lm fits a design scaled by 1e300",
            succeeds(
                &["lm", "--x", "@x_1e300.csv", "--y", "@y.csv"],
                &["estimate"],
            ),
        ),
        (
            "lm fits a design scaled by 1e-300",
            succeeds(
                &["lm", "--x", "@x_1e-300.csv", "--y", "@y.csv"],
                &["estimate"],
            ),
        ),
        // Item 9: a header of 100,000 names is read in linear time.
        (
            "lm with a 100,000-column header answers in seconds",
            Box::new(|fx| {
                let r = gearbox(
                    fx,
                    &args(fx, &["lm", "--x", "@wide.csv", "--y", "@one_y.csv"]),
                    Out::Captured,
                    &[],
                )?;
                expect(&r, 1, &r.stderr, &["rows"])?;
                if r.elapsed > Duration::from_secs(10) {
                    return Err(format!("took {:?}", r.elapsed));
                }
                Ok(())
            }),
        ),
        // Item 10: a header the reader rejects.
        (
            "glm with a predictor named twice",
            Box::new(|fx| {
                let mut a: Vec<&str> = GLM.to_vec();
                a[4] = "age,age";
                a.retain(|x| *x != "--intercept");
                a.extend(["--grid", "@grid2.csv"]);
                let r = gearbox(fx, &args(fx, &a), Out::Captured, &[])?;
                sane(&r)?;
                match r.code {
                    Some(0) => gearbox_stats::io::read_csv(fx.f("glm_out.csv"))
                        .map(|_| ())
                        .map_err(|e| format!("wrote a table it cannot read: {e}")),
                    _ => expect(&r, 1, &r.stderr, &["age"]),
                }
            }),
        ),
        // Items 2 and 3: sizes that overflow, results larger than memory.
        (
            "explain of a 2^32 x 2^32 x 2^32 shape",
            fails(
                &[
                    "explain",
                    "--op",
                    "add",
                    "--shape",
                    "4294967296x4294967296x4294967296",
                ],
                &["overflow"],
            ),
        ),
        (
            "demo of 2^28 x 2^28 matrices (2^59 bytes each)",
            fails(&["demo", "--size", "268435456"], &["memory", "bytes"]),
        ),
    ]
}
