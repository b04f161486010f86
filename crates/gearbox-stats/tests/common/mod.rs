//! Runs the CUDA device functions on the host: the assembled source of one
//! function (prelude and callees included) is compiled as C++ with g++ and
//! fed rows of arguments, so CI checks the device files against the Rust
//! functions without a GPU.
#![allow(dead_code)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use gearbox_stats::device;

/// The parameter types of device function `name`, parsed from its
/// definition line `__device__ double NAME(double a, int flag, ...)`:
/// `true` for a `double`, `false` for an `int`.
pub fn parameters(name: &str) -> Vec<bool> {
    let src = device::functions()[name].source;
    let start = src
        .find(&format!("double {name}("))
        .unwrap_or_else(|| panic!("{name}: no `double {name}(` definition"));
    let rest = &src[start + name.len() + 8..];
    let params = &rest[..rest.find(')').expect("closing parenthesis")];
    params
        .split(',')
        .map(|p| p.trim())
        .filter(|p| !p.is_empty() && *p != "void")
        .map(|p| p.starts_with("double"))
        .collect()
}

/// Whether g++ is here (else the caller skips, printing why).
pub fn have_gxx() -> bool {
    let ok = Command::new("g++")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: g++ is not available to run the device sources on the host");
    }
    ok
}

/// Evaluates device function `name` on each row of arguments (ints given as
/// whole f64 values) by compiling its assembled source with g++.
pub fn run_on_host(name: &str, rows: &[Vec<f64>]) -> Vec<f64> {
    let params = parameters(name);
    let source = device::assemble(&[name]).unwrap_or_else(|e| panic!("{e}"));
    let mut call = format!("{name}(");
    for (i, is_double) in params.iter().enumerate() {
        if i > 0 {
            call.push_str(", ");
        }
        if *is_double {
            call.push_str(&format!("a[{i}]"));
        } else {
            call.push_str(&format!("(int)a[{i}]"));
        }
    }
    call.push(')');
    let program = format!(
        "{source}\n#include <cstdio>\nint main() {{\n  double a[16];\n  for (;;) {{\n    \
         for (int i = 0; i < {n}; ++i) if (scanf(\"%lf\", &a[i]) != 1) return 0;\n    \
         printf(\"%.17g\\n\", {call});\n  }}\n}}\n",
        n = params.len()
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gearbox-stats-host");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let cpp = dir.join(format!("{name}.cpp"));
    let exe = dir.join(name);
    std::fs::write(&cpp, program).expect("write source");
    let out = Command::new("g++")
        .args([
            "-std=c++17",
            "-O2",
            "-ffp-contract=off",
            "-Wall",
            "-Werror",
            "-Wno-unused-function",
        ])
        .arg(&cpp)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .expect("run g++");
    assert!(
        out.status.success(),
        "{name}: g++ failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run harness");
    let mut input = String::new();
    for r in rows {
        assert_eq!(
            r.len(),
            params.len(),
            "{name} takes {} arguments",
            params.len()
        );
        for v in r {
            // scanf reads "inf", "-inf" and "nan" as C does.
            input.push_str(&format!("{v:e} "));
        }
        input.push('\n');
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("harness output");
    let text = String::from_utf8_lossy(&out.stdout);
    let values: Vec<f64> = text
        .lines()
        .map(|l| match l.trim() {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            s if s.contains("nan") => f64::NAN,
            s => s
                .parse()
                .unwrap_or_else(|_| panic!("{name}: bad output {s}")),
        })
        .collect();
    assert_eq!(values.len(), rows.len(), "{name}: harness stopped early");
    values
}

/// Whether `got` is within `rel` relative error of `want` (NaN matches NaN,
/// infinities must match exactly).
pub fn close(got: f64, want: f64, rel: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return want == got;
    }
    (got - want).abs() <= rel * want.abs().max(f64::MIN_POSITIVE)
}
