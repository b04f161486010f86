//! `gearbox glm` on the shipped esoph data set (crates/gearbox-stats/data):
//! a given grid against values computed in R, and a random grid around the
//! maximum-likelihood estimate against the library call.
// R prints 17 significant digits; they are kept as printed.
#![allow(clippy::excessive_precision)]

use std::path::PathBuf;
use std::process::Command;

use gearbox::Array;
use gearbox_stats::glm::{glm_grid, GlmSpec};
use gearbox_stats::io::{read_csv, write_csv};

fn esoph() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../gearbox-stats/data/esoph.csv")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gearbox-cli-glm");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn gearbox(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gearbox"))
        .args(args)
        .output()
        .expect("run gearbox");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "gearbox {args:?} failed: {stderr}");
    stderr
}

const MODEL: [&str; 14] = [
    "glm",
    "--formula-columns",
    "age,alcohol,tobacco",
    "--intercept",
    "--response",
    "y",
    "--weights",
    "trials",
    "--family",
    "binomial",
    "--link",
    "logit",
    "--prior-precision",
    "0.01",
];

#[test]
fn given_grid_matches_r() {
    given_grid_matches_r_by(&[]);
}

#[test]
fn both_strategies_match_r_and_verbose_names_the_strategy() {
    for strategy in ["gemm", "per-point"] {
        let stderr = given_grid_matches_r_by(&["--strategy", strategy, "--verbose"]);
        assert!(
            stderr.contains(&format!("GLM grid strategy: {strategy}")),
            "{strategy}: {stderr}"
        );
        assert!(stderr.contains("chosen by the caller"), "{stderr}");
    }
    let stderr = given_grid_matches_r_by(&["-v"]);
    assert!(stderr.contains("chosen by the cost model"), "{stderr}");
}

#[test]
fn an_unknown_strategy_in_the_environment_is_named() {
    let grid = scratch("grid-env.csv");
    write_csv(
        &grid,
        &["intercept", "age", "alcohol", "tobacco"],
        &[&[-7.0], &[0.7], &[1.1], &[0.4]],
    )
    .unwrap();
    let (data, grid_s, out_s) = (
        esoph().display().to_string(),
        grid.display().to_string(),
        scratch("env.csv").display().to_string(),
    );
    let mut args = MODEL.to_vec();
    args.extend(["--data", &data, "--grid", &grid_s, "--out", &out_s]);
    let out = Command::new(env!("CARGO_BIN_EXE_gearbox"))
        .args(&args)
        .env("GEARBOX_GLM_STRATEGY", "fastest")
        .output()
        .expect("run gearbox");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("GEARBOX_GLM_STRATEGY") && stderr.contains("fastest"),
        "{stderr}"
    );
}

/// Runs the esoph model over a two-point grid with `extra` options and
/// checks the output against R; returns standard error.
fn given_grid_matches_r_by(extra: &[&str]) -> String {
    let tag = extra.join("").replace('-', "");
    let grid = scratch(&format!("grid{tag}.csv"));
    let out = scratch(&format!("given{tag}.csv"));
    write_csv(
        &grid,
        &["intercept", "age", "alcohol", "tobacco"],
        &[&[-7.0, -6.5], &[0.7, 0.6], &[1.1, 1.0], &[0.4, 0.5]],
    )
    .unwrap();
    let mut args = MODEL.to_vec();
    let (data, grid_s, out_s) = (
        esoph().display().to_string(),
        grid.display().to_string(),
        out.display().to_string(),
    );
    args.extend(["--data", &data, "--grid", &grid_s, "--out", &out_s]);
    args.extend(extra);
    let stderr = gearbox(&args);
    let table = read_csv(&out).unwrap();
    assert_eq!(
        table.names,
        [
            "intercept",
            "age",
            "alcohol",
            "tobacco",
            "qf",
            "grad_intercept",
            "grad_age",
            "grad_alcohol",
            "grad_tobacco"
        ]
    );
    // R: 0.5 * 0.01 * sum(b^2) - sum(dbinom(y * trials, trials, plogis(X b), log = TRUE))
    // and its gradient 0.01 b - t(X) %*% (trials * (y - plogis(X b))).
    let want: [[f64; 5]; 2] = [
        [
            112.63733962972819,
            -8.2094826189427188,
            -37.907256762399562,
            -17.153656064566825,
            -18.228628493844926,
        ],
        [
            114.60259638305877,
            2.430372578650958,
            -15.117984281228079,
            -0.4064993462780897,
            17.651548260201427,
        ],
    ];
    let cols = [
        "qf",
        "grad_intercept",
        "grad_age",
        "grad_alcohol",
        "grad_tobacco",
    ];
    for (j, row) in want.iter().enumerate() {
        let gradient_scale = row[1..].iter().fold(0.0f64, |m, g| m.max(g.abs()));
        for (name, w) in cols.iter().zip(row) {
            let got = table.column(name).unwrap()[j];
            let scale = if *name == "qf" {
                w.abs()
            } else {
                gradient_scale
            };
            let tol = 1e-12 * scale;
            assert!((got - w).abs() <= tol, "{name}[{j}]: {got}, R {w}");
        }
    }
    stderr
}

#[test]
fn random_grid_around_the_mle() {
    let out = scratch("random.csv");
    let mut args = MODEL.to_vec();
    let (data, out_s) = (esoph().display().to_string(), out.display().to_string());
    args.extend([
        "--data",
        &data,
        "--grid-size",
        "250",
        "--seed",
        "9",
        "--out",
        &out_s,
    ]);
    let stderr = gearbox(&args);
    assert!(stderr.contains("-7.163953"), "prints the MLE: {stderr}");
    let table = read_csv(&out).unwrap();
    assert_eq!(table.nrows(), 250);
    // The written points and values are those of the library call.
    let data = read_csv(esoph()).unwrap();
    let n = data.nrows();
    let mut x = vec![1.0; n];
    for c in ["age", "alcohol", "tobacco"] {
        x.extend_from_slice(data.column(c).unwrap());
    }
    let names = ["intercept", "age", "alcohol", "tobacco"];
    let b = table.matrix(&names).unwrap().transpose(&[1, 0]).unwrap();
    let grid = glm_grid(
        &Array::from_vec([n, 4], x).unwrap(),
        &Array::from_vec([n], data.column("y").unwrap().to_vec()).unwrap(),
        &Array::from_vec([n], data.column("trials").unwrap().to_vec()).unwrap(),
        &Array::from_vec([n], vec![0.0; n]).unwrap(),
        &Array::from_vec([4], vec![0.0; 4]).unwrap(),
        &Array::from_vec([4, 4], {
            let mut p = vec![0.0; 16];
            (0..4).for_each(|k| p[k * 5] = 0.01);
            p
        })
        .unwrap(),
        &b,
        &GlmSpec::parse("binomial", Some("logit"), None).unwrap(),
    )
    .unwrap();
    // The same values up to rounding: here the grid reaches the GEMM as a
    // transposed operand (another summation order than the CLI's).
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-13 * a.abs().max(b.abs()).max(1.0);
    let qf = grid.qf.to_vec::<f64>().unwrap();
    for (a, b) in qf.iter().zip(table.column("qf").unwrap()) {
        assert!(near(*a, *b), "qf {a} vs {b}");
    }
    let gradient = grid.gradient.to_vec::<f64>().unwrap();
    for (k, name) in names.iter().enumerate() {
        let col = table.column(&format!("grad_{name}")).unwrap();
        for j in 0..250 {
            assert!(near(col[j], gradient[j * 4 + k]), "{name}[{j}]");
        }
    }
}

#[test]
fn bad_arguments_fail_with_a_message() {
    let data = esoph().display().to_string();
    let out = scratch("bad.csv").display().to_string();
    let result = Command::new(env!("CARGO_BIN_EXE_gearbox"))
        .args([
            "glm",
            "--data",
            &data,
            "--formula-columns",
            "age",
            "--response",
            "y",
            "--weights",
            "trials",
            "--family",
            "poisson",
            "--link",
            "logit",
            "--grid-size",
            "3",
            "--out",
            &out,
        ])
        .output()
        .unwrap();
    assert!(!result.status.success());
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("link"), "{stderr}");
}

/// Runs `gearbox glm` (binomial, a random grid of 3 points unless `grid`
/// names a file) on `data` with these formula columns; returns whether it
/// succeeded and its stderr.
fn glm_with_columns(
    data: &str,
    columns: &str,
    (intercept, grid): (bool, Option<&str>),
    out: &str,
) -> (bool, String) {
    let mut args = vec![
        "glm",
        "--data",
        data,
        "--formula-columns",
        columns,
        "--response",
        "y",
        "--weights",
        "trials",
        "--family",
        "binomial",
        "--out",
        out,
    ];
    match grid {
        Some(file) => args.extend(["--grid", file]),
        None => args.extend(["--grid-size", "3"]),
    }
    if intercept {
        args.push("--intercept");
    }
    let result = Command::new(env!("CARGO_BIN_EXE_gearbox"))
        .args(&args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr).to_string();
    (result.status.success(), stderr)
}

#[test]
fn the_output_table_always_reads_back() {
    // age,age with a grid file (no fit needed) used to write the header
    // "age,age,qf,grad_age,grad_age", which the reader (rightly) rejects:
    // such names are refused before any work.
    let data = esoph().display().to_string();
    let grid = scratch("twice_grid.csv");
    write_csv(&grid, &["b1", "b2"], &[&[0.1, 0.2], &[0.3, -0.1]]).unwrap();
    let out = scratch("twice.csv");
    let _ = std::fs::remove_file(&out);
    let grid = Some(grid.to_str().unwrap());
    let (ok, stderr) = glm_with_columns(&data, "age,age", (false, grid), out.to_str().unwrap());
    assert!(!ok);
    assert!(
        stderr.contains("coefficients 1 and 2 are both named \"age\""),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");

    // Names that collide with the output's own columns.
    let odd = scratch("odd.csv");
    let mut text = String::from("intercept,qf,grad_u,u,y,trials\n");
    for i in 0..12 {
        let f = i as f64;
        text.push_str(&format!(
            "{},{},{},{},{},{}\n",
            f * 0.3,
            (f * 1.7) % 3.0,
            (f * 0.9) % 2.0,
            f.sin(),
            (i % 4) as f64 / 4.0,
            4
        ));
    }
    std::fs::write(&odd, text).unwrap();
    let odd = odd.display().to_string();
    for (columns, intercept, clash) in [
        ("intercept,u", true, "both named \"intercept\""),
        ("u,qf", false, "two columns named \"qf\""),
        ("u,grad_u", false, "two columns named \"grad_u\""),
    ] {
        let (ok, stderr) =
            glm_with_columns(&odd, columns, (intercept, None), out.to_str().unwrap());
        assert!(!ok, "{columns}");
        assert!(stderr.contains(clash), "{columns}: {stderr}");
    }

    // Distinct names round-trip: the table reads back with its header.
    let (ok, stderr) = glm_with_columns(&odd, "u,intercept", (false, None), out.to_str().unwrap());
    assert!(ok, "{stderr}");
    let table = read_csv(&out).unwrap();
    assert_eq!(
        table.names,
        ["u", "intercept", "qf", "grad_u", "grad_intercept"]
    );
    assert_eq!(table.nrows(), 3);
}

#[test]
fn empty_grids_and_overflow_are_named() {
    let data = scratch("huge.csv");
    let mut text = String::from("u,big,y,trials\n");
    for i in 0..12 {
        let f = i as f64;
        let y = ((i * 3) % 5).min(4) as f64 / 4.0;
        text.push_str(&format!(
            "{},{:e},{y},4\n",
            f.sin(),
            1e308 * (f / 12.0 - 0.4)
        ));
    }
    std::fs::write(&data, text).unwrap();
    let data = data.display().to_string();
    let out = scratch("empty_out.csv").display().to_string();
    let grid = scratch("empty_grid.csv");
    std::fs::write(&grid, "b1,b2\n").unwrap();
    let grid = grid.display().to_string();
    // The overflowing column is named as the command line names it, not
    // only by its index in the design (which counts the intercept).
    let cases: [(&str, Option<&str>, &[&str]); 3] = [
        (
            "u,big",
            None,
            &[
                "overflows float64",
                "column \"big\" (index 2, counting from 0)",
            ],
        ),
        ("u", Some(&grid), &["has no rows"]),
        ("u", Some("0"), &["at least one grid point"]),
    ];
    for (columns, grid, wants) in cases {
        let mut args = vec![
            "glm",
            "--data",
            &data,
            "--formula-columns",
            columns,
            "--intercept",
            "--response",
            "y",
            "--weights",
            "trials",
            "--family",
            "binomial",
            "--out",
            &out,
        ];
        match grid {
            Some("0") => args.extend(["--grid-size", "0"]),
            Some(file) => args.extend(["--grid", file]),
            None => args.extend(["--grid-size", "3"]),
        }
        let result = Command::new(env!("CARGO_BIN_EXE_gearbox"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(!result.status.success(), "{columns} {grid:?}");
        for want in wants {
            assert!(stderr.contains(want), "{columns} {grid:?}: {stderr}");
        }
        assert!(!stderr.contains("collinear"), "{stderr}");
    }
}

#[test]
fn an_exact_gaussian_fit_names_the_dispersion() {
    // y = 1 + 2 u exactly: the Pearson dispersion is 0 and a grid around
    // the fit would have no spread (it blamed a covariance "not positive
    // definite" before).
    let data = scratch("exact.csv");
    let mut text = String::from("u,y\n");
    for i in 0..10 {
        let u = (i as f64 * 0.7).sin();
        text.push_str(&format!("{u},{}\n", 1.0 + 2.0 * u));
    }
    std::fs::write(&data, text).unwrap();
    let out = scratch("exact_out.csv");
    let run = Command::new(env!("CARGO_BIN_EXE_gearbox"))
        .args(["glm", "--data", &data.display().to_string()])
        .args(["--formula-columns", "u", "--intercept", "--response", "y"])
        .args(["--family", "gaussian", "--grid-size", "5"])
        .args(["--out", &out.display().to_string()])
        .output()
        .expect("run gearbox");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("dispersion")
            && stderr.contains("exact")
            && stderr.contains("--dispersion"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn explain_names_the_grid_strategy_and_both_estimates() {
    let run = |env: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gearbox"));
        cmd.args([
            "explain",
            "--op",
            "glm_grid",
            "--shape",
            "300x14x100000",
            "--family",
            "poisson",
        ]);
        match env {
            Some(s) => cmd.env("GEARBOX_GLM_STRATEGY", s),
            None => cmd.env_remove("GEARBOX_GLM_STRATEGY"),
        };
        let out = cmd.output().expect("run gearbox");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let text = run(None);
    assert!(
        text.contains("GLM grid strategy: ")
            && text.contains("300 observations x 14 coefficients x 100000 points"),
        "{text}"
    );
    for line in ["gemm      on ", "per-point on ", "chosen by the cost model"] {
        assert!(text.contains(line), "{line}: {text}");
    }
    let forced = run(Some("per-point"));
    assert!(forced.contains("GLM grid strategy: per-point"), "{forced}");
    assert!(
        forced.contains("GEARBOX_GLM_STRATEGY, not the model"),
        "{forced}"
    );
}
