//! `gearbox lm` run as a process on small CSV files, its table checked
//! against `many_lm` called directly.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gearbox::Array;
use gearbox_stats::lm::{many_lm, LmOptions};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gearbox-lm-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn gearbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gearbox"))
        .args(args)
        .output()
        .expect("the gearbox binary runs")
}

/// 12 observations of two covariates and three responses (one with a
/// quoted name holding a comma).
fn write_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let mut x = String::from("dose,age\n");
    let mut y = String::from("liver,\"kidney, left\",heart\n");
    for i in 0..12 {
        let (dose, age) = (i as f64 * 0.5, 30.0 + ((i * 7) % 11) as f64);
        x.push_str(&format!("{dose},{age}\n"));
        let wobble = ((i * 5) % 7) as f64 * 0.1 - 0.3;
        y.push_str(&format!(
            "{},{},{}\n",
            1.0 + 2.0 * dose + wobble,
            0.3 * age - dose + wobble * wobble,
            -wobble + 0.01 * age
        ));
    }
    let (xp, yp) = (dir.join("x.csv"), dir.join("y.csv"));
    std::fs::write(&xp, x).unwrap();
    std::fs::write(&yp, y).unwrap();
    (xp, yp)
}

fn check_table(text: &str, x: &Path, y: &Path, intercept: bool) {
    let xt = gearbox_stats::io::read_csv(x).unwrap();
    let yt = gearbox_stats::io::read_csv(y).unwrap();
    let fit = many_lm(
        &xt.to_matrix().unwrap(),
        &yt.to_matrix().unwrap(),
        &LmOptions {
            intercept,
            term_names: Some(xt.names.clone()),
        },
    )
    .unwrap();
    let p = fit.term_names.len();
    let values = |a: &Array| a.to_vec::<f64>().unwrap();
    let stats = [
        values(&fit.coefficients),
        values(&fit.std_errors),
        values(&fit.t_values),
        values(&fit.p_values),
    ];
    let (sigma, r_squared) = (values(&fit.sigma), values(&fit.r_squared));

    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, COLS);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3 * p);
    for (r, row) in rows.iter().enumerate() {
        let (j, i) = (r / p, r % p);
        assert_eq!(&row[0], yt.names[j].as_str());
        assert_eq!(&row[1], fit.term_names[i].as_str());
        let num = |c: usize| row[c].parse::<f64>().unwrap();
        for (s, stat) in stats.iter().enumerate() {
            // Written at full precision: the values read back exactly.
            assert_eq!(
                num(2 + s),
                stat[i + j * p],
                "row {r} column {}",
                COLS[2 + s]
            );
        }
        assert_eq!(num(6), sigma[j]);
        assert_eq!(num(7), r_squared[j]);
        assert_eq!(&row[8], (12 - p).to_string().as_str());
    }
}

const COLS: [&str; 9] = [
    "response",
    "term",
    "estimate",
    "std_error",
    "t_value",
    "p_value",
    "sigma",
    "r_squared",
    "df",
];

#[test]
fn writes_the_long_table_to_a_file_and_to_stdout() {
    let dir = scratch("ok");
    let (x, y) = write_inputs(&dir);
    let out = dir.join("fit.csv");
    let run = gearbox(&[
        "lm",
        "--x",
        x.to_str().unwrap(),
        "--y",
        y.to_str().unwrap(),
        "--intercept",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.stdout.is_empty());
    let text = std::fs::read_to_string(&out).unwrap();
    check_table(&text, &x, &y, true);
    assert!(text
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("liver,(Intercept),"));
    assert!(text.contains("\"kidney, left\",dose,"));

    let run = gearbox(&["lm", "--x", x.to_str().unwrap(), "--y", y.to_str().unwrap()]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    check_table(&String::from_utf8(run.stdout).unwrap(), &x, &y, false);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_inputs_fail_with_a_message_naming_the_problem() {
    let dir = scratch("bad");
    let (x, y) = write_inputs(&dir);
    let missing = dir.join("missing.csv");
    let run = gearbox(&[
        "lm",
        "--x",
        missing.to_str().unwrap(),
        "--y",
        y.to_str().unwrap(),
    ]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("missing.csv") && err.contains("cannot open"),
        "{err}"
    );

    let bad_y = dir.join("bad_y.csv");
    std::fs::write(&bad_y, "a,b\n1,2\n3,oops\n").unwrap();
    let run = gearbox(&[
        "lm",
        "--x",
        x.to_str().unwrap(),
        "--y",
        bad_y.to_str().unwrap(),
    ]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("bad_y.csv, line 3, column 2"), "{err}");

    // Rows of x and y differ.
    let short_y = dir.join("short_y.csv");
    std::fs::write(&short_y, "a\n1\n2\n3\n").unwrap();
    let run = gearbox(&[
        "lm",
        "--x",
        x.to_str().unwrap(),
        "--y",
        short_y.to_str().unwrap(),
    ]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("x has 12 rows") && err.contains("y has 3"),
        "{err}"
    );

    // A covariate that is the other one doubled.
    let dep_x = dir.join("dep_x.csv");
    let mut text = String::from("u,v\n");
    for i in 0..12 {
        text.push_str(&format!("{},{}\n", i * i, 2 * i * i));
    }
    std::fs::write(&dep_x, text).unwrap();
    let run = gearbox(&[
        "lm",
        "--x",
        dep_x.to_str().unwrap(),
        "--y",
        y.to_str().unwrap(),
        "--intercept",
    ]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("rank deficient") && err.contains("linear combination"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_column_named_as_the_intercept_is_rejected_with_intercept() {
    // With --intercept, a column named "(Intercept)" once gave two terms of
    // that name in the table; without it, the column is an ordinary term.
    let dir = scratch("intercept_name");
    let (x, y) = write_inputs(&dir);
    let text = std::fs::read_to_string(&x).unwrap();
    let renamed = dir.join("renamed.csv");
    std::fs::write(&renamed, text.replacen("age", "\"(Intercept)\"", 1)).unwrap();
    let (renamed, y) = (renamed.to_str().unwrap(), y.to_str().unwrap());
    let run = gearbox(&["lm", "--x", renamed, "--y", y, "--intercept"]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("renamed.csv, column 2 (\"(Intercept)\")")
            && err.contains("two terms of that name"),
        "{err}"
    );
    assert!(run.stdout.is_empty(), "no table is written");
    let run = gearbox(&["lm", "--x", renamed, "--y", y]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let table = String::from_utf8(run.stdout).unwrap();
    assert_eq!(table.matches(",(Intercept),").count(), 3, "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_header_of_100000_names_is_handled_in_linear_time() {
    // Checking each name against every earlier one, and looking every
    // column up by a scan of the names, took 27 s for 100,000 names in a
    // release build (many minutes in a debug one).
    let dir = scratch("wide");
    let n = 100_000;
    let names: Vec<String> = (0..n).map(|j| format!("c{j}")).collect();
    let mut text = names.join(",");
    for r in 0..3 {
        text.push('\n');
        let row: Vec<String> = (0..n).map(|j| ((j * 7 + r) % 13).to_string()).collect();
        text.push_str(&row.join(","));
    }
    text.push('\n');
    let (x, y) = (dir.join("wide.csv"), dir.join("y.csv"));
    std::fs::write(&x, &text).unwrap();
    std::fs::write(&y, "y\n1\n2\n4\n").unwrap();
    let run = gearbox(&["lm", "--x", x.to_str().unwrap(), "--y", y.to_str().unwrap()]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("3 rows for 100000 terms"), "{err}");
    // A missing column among 100,000: the message lists a few names only.
    let run = gearbox(&[
        "glm",
        "--data",
        x.to_str().unwrap(),
        "--formula-columns",
        "c99999,nope",
        "--response",
        "c5",
        "--family",
        "gaussian",
        "--grid-size",
        "3",
        "--out",
        dir.join("out.csv").to_str().unwrap(),
    ]);
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("\"nope\"") && err.contains("and 99980 more"),
        "{err}"
    );
    assert!(err.len() < 1000, "{} bytes of message", err.len());
    std::fs::remove_dir_all(&dir).unwrap();
}
