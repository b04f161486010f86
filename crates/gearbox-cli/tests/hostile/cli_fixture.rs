//! The data files of the command-line cases, written to a scratch
//! directory.

use std::path::PathBuf;

use crate::Fx;

/// The data files the cases read, in a directory of their own for each
/// test (`label`), since tests run at the same time.
pub fn fixture(label: &str) -> Fx {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-cli-{}-{label}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let w = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    let table = |names: &str, rows: &dyn Fn(usize) -> String, n: usize| {
        let mut t = format!("{names}\n");
        for i in 0..n {
            t.push_str(&rows(i));
            t.push('\n');
        }
        t
    };
    let dose = |i: usize| i as f64 * 0.5;
    let age = |i: usize| 30.0 + ((i * 7) % 11) as f64;
    let x_row = |scale: f64| move |i: usize| format!("{:e},{:e}", dose(i) * scale, age(i) * scale);
    let y_row = |i: usize| {
        let wobble = ((i * 5) % 7) as f64 * 0.1 - 0.3;
        format!(
            "{},{}",
            1.0 + 2.0 * dose(i) + wobble,
            0.3 * age(i) - dose(i)
        )
    };
    w("x.csv", &table("dose,age", &x_row(1.0), 12));
    w("x_1e300.csv", &table("dose,age", &x_row(1e300), 12));
    w("x_1e-300.csv", &table("dose,age", &x_row(1e-300), 12));
    w("y.csv", &table("liver,heart", &y_row, 12));
    w("empty.csv", "");
    w("header_only.csv", "a,b\n");
    w("ragged.csv", "a,b\n1,2\n3,4\n5,6,7\n");
    w("nonnum.csv", "liver,heart\n1,2\n3,n/a\n");
    w("emptycell.csv", "a,b\n1,2\n3,4\n5,6\n7,\n");
    let edited = |row: usize, text: &str| {
        let t = table("dose,age", &x_row(1.0), 12);
        let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
        lines[row + 1] = text.to_string();
        lines.join("\n") + "\n"
    };
    w("nan_x.csv", &edited(3, "NaN,31"));
    w("big_x.csv", &edited(5, "1e400,31"));
    let y_edited = |row: usize, text: &str| {
        let t = table("liver,heart", &y_row, 12);
        let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
        lines[row + 1] = text.to_string();
        lines.join("\n") + "\n"
    };
    w("na_y.csv", &y_edited(2, "NA,1"));
    w("inf_y.csv", &y_edited(7, "1,-Inf"));
    w(
        "huge_y.csv",
        &table(
            "a",
            &|i| format!("{:e}", 1e308 * (1.0 - 0.1 * (i % 3) as f64)),
            12,
        ),
    );
    w("dup.csv", &table("u,u", &|i| format!("{i},{}", i * i), 12));
    w(
        "rownames.csv",
        &table("\"\",dose", &|i| format!("\"{i}\",{i}"), 12),
    );
    w("short_y.csv", "a\n1\n2\n3\n");
    w(
        "dep_x.csv",
        &table("u,v", &|i| format!("{},{}", i * i, 2 * i * i), 12),
    );
    std::fs::write(
        dir.join("garbage.bin"),
        [0xff, 0xfe, 0x00, 0x81, b'\n', 0xc3, 0x28, b',', 0x00],
    )
    .unwrap();
    w(
        "crlf_x.csv",
        &table("\"dose\",age", &x_row(1.0), 12).replace('\n', "\r\n"),
    );
    w(
        "crlf_y.csv",
        &table(
            "liver,\"heart, left\"",
            &|i| format!("\"{}\",{}", dose(i) + 1.0, age(i) * 0.5 - dose(i)),
            12,
        )
        .replace('\n', "\r\n"),
    );
    // 100,000 distinct names and one row.
    let names: Vec<String> = (0..100_000).map(|j| format!("c{j}")).collect();
    w(
        "wide.csv",
        &format!("{}\n{}\n", names.join(","), vec!["1"; 100_000].join(",")),
    );
    w("one_y.csv", "y\n1\n");
    // GLM data: the esoph table, and copies with a NaN, an infinite offset
    // and a predictor of 1e308.
    let esoph = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../gearbox-stats/data/esoph.csv"),
    )
    .unwrap();
    w("esoph.csv", &esoph);
    let rows: Vec<&str> = esoph.lines().collect();
    let with_first = |first: &str| {
        let mut r: Vec<String> = rows.iter().map(|s| s.to_string()).collect();
        r[1] = first.to_string() + &r[1][r[1].find(',').unwrap()..];
        r.join("\n") + "\n"
    };
    w("esoph_nan.csv", &with_first("NaN"));
    w("esoph_1e308.csv", &with_first("1e308"));
    let with_offset: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| match i {
            0 => format!("{r},off"),
            5 => format!("{r},Inf"),
            _ => format!("{r},0"),
        })
        .collect();
    w("esoph_inf.csv", &(with_offset.join("\n") + "\n"));
    w(
        "grid.csv",
        "intercept,age,alcohol\n-3,0.2,0.5\n-2.5,0.1,0.4\n",
    );
    w("grid2.csv", "a,b\n0.2,0.5\n0.1,0.4\n");
    w("grid_bad.csv", "p,q\n1,2\n");
    w("grid_nan.csv", "intercept,age,alcohol\n-3,NaN,0.5\n");
    w(
        "grid_na5.csv",
        "intercept,age,alcohol\n-3,0.2,0.5\n-3,0.1,0.5\n-2,0.3,0.4\n-3,NA,0.5\n",
    );
    let na_y: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| match i {
            6 => r[..r.rfind(',').unwrap()].to_string() + ",NA",
            _ => r.to_string(),
        })
        .collect();
    w("esoph_na_y.csv", &(na_y.join("\n") + "\n"));
    Fx { dir }
}
