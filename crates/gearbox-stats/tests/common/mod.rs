//! Runs the device functions without a GPU: the assembled source of the
//! functions a test checks (prelude and callees included) is compiled and
//! fed rows of arguments, so CI checks the device files against the Rust
//! functions. The engine depends on the test binary: `device_opencl` builds
//! one OpenCL C program of every function ([`opencl`], on pocl in CI),
//! every other binary compiles C++ with g++.
#![allow(dead_code)]

pub mod opencl;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use gearbox_stats::device;

/// The parameter types of device function `name`, parsed from its
/// definition line `GB_FN double NAME(double a, int flag, ...)`:
/// `true` for a `double`, `false` for an `int`; a `double*` (a second
/// result, see [`has_output`]) is not an argument.
pub fn parameters(name: &str) -> Vec<bool> {
    signature(name)
        .into_iter()
        .filter(|p| !p.contains('*'))
        .map(|p| p.starts_with("double"))
        .collect()
}

/// Whether device function `name` writes a second result through a
/// `double*` parameter (a pair of a GLM term and its slope).
pub fn has_output(name: &str) -> bool {
    signature(name).iter().any(|p| p.contains('*'))
}

/// The parameters of device function `name` as written.
fn signature(name: &str) -> Vec<&'static str> {
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
        .collect()
}

/// Whether this test binary runs the device sources as OpenCL C (the
/// `device_opencl` binary) rather than as C++ under g++.
pub fn on_opencl() -> bool {
    env!("CARGO_CRATE_NAME") == "device_opencl"
}

/// Whether the engine honours the g++ floating-point options that
/// [`run_batch`] takes (OpenCL builds every program without contraction).
pub fn takes_compiler_flags() -> bool {
    !on_opencl()
}

/// Whether the engine's `exp`, `log` and the like are the ones the Rust
/// functions call (g++ links the same libm; OpenCL brings its own, which
/// may round an ulp apart).
pub fn shares_rusts_libm() -> bool {
    !on_opencl()
}

/// Whether this binary's engine is here: g++, or an OpenCL device with
/// `cl_khr_fp64` (see [`opencl::ready`]); else the caller skips, printing
/// why.
pub fn have_engine() -> bool {
    if on_opencl() {
        opencl::ready()
    } else {
        have_gxx()
    }
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

/// The call of device function `name` on the argument array `a` of the
/// harness (the host program's or the OpenCL kernel's): `name(a[0], (int)a[1], ...)`, ints for its `int`
/// parameters, and `&w` for a second result.
pub fn call_expr(name: &str) -> String {
    let args: Vec<String> = parameters(name)
        .iter()
        .enumerate()
        .map(|(i, &is_double)| {
            if is_double {
                format!("a[{i}]")
            } else {
                format!("(int)a[{i}]")
            }
        })
        .chain(has_output(name).then(|| "&w".to_string()))
        .collect();
    format!("{name}({})", args.join(", "))
}

/// [`run_batch`] for functions with a second result ([`has_output`]): each
/// row gives the returned value and the one written through the pointer.
pub fn run_batch_with_outputs(
    tag: &str,
    names: &[&str],
    rows: &[Vec<Vec<f64>>],
    fp_flags: &[&str],
) -> Vec<Vec<(f64, f64)>> {
    run_program(tag, names, rows, fp_flags)
}

/// Runs device functions `names` on their rows (ints as whole f64) and
/// returns the results, one vector per function. Under g++ their assembled
/// source (callees once) becomes one host program (floating-point options
/// `fp_flags`; `tag` names its files); under OpenCL each runs as its kernel
/// of the one program of every function, which takes no options.
pub fn run_batch(
    tag: &str,
    names: &[&str],
    rows: &[Vec<Vec<f64>>],
    fp_flags: &[&str],
) -> Vec<Vec<f64>> {
    run_program(tag, names, rows, fp_flags)
        .into_iter()
        .map(|r| r.into_iter().map(|(v, _)| v).collect())
        .collect()
}

/// [`run_batch`] on this binary's engine: each row's returned value and
/// second result (0 where the function has none).
fn run_program(
    tag: &str,
    names: &[&str],
    rows: &[Vec<Vec<f64>>],
    fp_flags: &[&str],
) -> Vec<Vec<(f64, f64)>> {
    if on_opencl() {
        assert!(
            fp_flags.iter().all(|&f| f == "-ffp-contract=off"),
            "{tag}: OpenCL builds without contraction and takes no {fp_flags:?}"
        );
        return names
            .iter()
            .zip(rows)
            .map(|(name, rows)| opencl::run(name, rows))
            .collect();
    }
    run_gxx(tag, names, rows, fp_flags)
}

/// The host program of [`run_batch`], compiled with g++.
fn run_gxx(
    tag: &str,
    names: &[&str],
    rows: &[Vec<Vec<f64>>],
    fp_flags: &[&str],
) -> Vec<Vec<(f64, f64)>> {
    let source = device::assemble(names).unwrap_or_else(|e| panic!("{e}"));
    let mut dispatch = String::new();
    for (k, name) in names.iter().enumerate() {
        dispatch.push_str(&format!(
            "      case {k}: v = {}; break;\n",
            call_expr(name)
        ));
    }
    let program = format!(
        "{source}\n#include <cstdio>\nint main() {{\n  int k, m;\n  double a[16], v = 0, w = 0;\n  \
         while (scanf(\"%d %d\", &k, &m) == 2) {{\n    \
         for (int i = 0; i < m; ++i) if (scanf(\"%lf\", &a[i]) != 1) return 1;\n    \
         switch (k) {{\n{dispatch}    }}\n    printf(\"%.17g %.17g\\n\", v, w);\n  }}\n}}\n"
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gearbox-stats-host");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let cpp = dir.join(format!("batch_{tag}.cpp"));
    let exe = dir.join(format!("batch_{tag}"));
    std::fs::write(&cpp, program).expect("write source");
    let out = Command::new("g++")
        .args(["-std=c++17", "-O2", "-Wall", "-Werror"])
        .args(fp_flags)
        .arg(&cpp)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .expect("run g++");
    assert!(
        out.status.success(),
        "{tag}: g++ failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut input = String::new();
    for (k, (name, rows)) in names.iter().zip(rows).enumerate() {
        let arity = parameters(name).len();
        for r in rows {
            assert_eq!(r.len(), arity, "{name} takes {arity} arguments");
            input.push_str(&format!("{k} {arity}"));
            for v in r {
                // scanf reads "inf", "-inf" and "nan" as C does.
                input.push_str(&format!(" {v:e}"));
            }
            input.push('\n');
        }
    }
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the host program");
    // Written from another thread: the output fills its pipe long before
    // the input is all read.
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("host program output");
    writer.join().unwrap().expect("write the rows");
    let text = String::from_utf8_lossy(&out.stdout);
    let number = |s: &str| match s {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        s if s.contains("nan") => f64::NAN,
        s => s
            .parse()
            .unwrap_or_else(|_| panic!("{tag}: bad output {s}")),
    };
    let mut values = text.lines().map(|l| {
        let mut two = l.split_whitespace().map(number);
        match (two.next(), two.next()) {
            (Some(v), Some(w)) => (v, w),
            _ => panic!("{tag}: bad output line {l}"),
        }
    });
    let results = rows
        .iter()
        .map(|r| {
            (0..r.len())
                .map(|_| {
                    values
                        .next()
                        .unwrap_or_else(|| panic!("{tag}: output stopped early"))
                })
                .collect()
        })
        .collect();
    assert!(values.next().is_none(), "{tag}: more output than rows");
    results
}

/// Evaluates device function `name` on each row of arguments (ints as
/// whole f64 values), compiled without contraction on this binary's engine.
pub fn run_one(name: &str, rows: &[Vec<f64>]) -> Vec<f64> {
    run_batch(
        &format!("one_{name}"),
        &[name],
        &[rows.to_vec()],
        &["-ffp-contract=off"],
    )
    .remove(0)
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

/// A small reproducible generator (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    /// Uniform on [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-uniform on [lo, hi] (both positive).
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.uniform() * (hi.ln() - lo.ln())).exp()
    }

    /// A whole number in [0, hi].
    pub fn count(&mut self, hi: f64) -> f64 {
        (self.uniform() * (hi + 1.0)).floor().min(hi)
    }
}

/// Argument rows for nmath function `name`: random values over the
/// function's domain (several magnitudes, tails included) and R's edge
/// cases (NaN, infinities, zero, out-of-domain parameters).
pub fn argument_rows(name: &str, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut r = Rng(seed);
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let mut rows: Vec<Vec<f64>> = Vec::new();
    for _ in 0..n {
        let sign = if r.uniform() < 0.5 { -1.0 } else { 1.0 };
        let row = match name {
            "dbinom" => {
                let big = r.uniform() >= 0.8;
                let size = r.count(if big { 1e6 } else { 50.0 });
                vec![r.count(size), size, r.uniform()]
            }
            "dpois" => {
                let lambda = r.log_uniform(1e-3, 1e5);
                vec![r.count(3.0 * lambda + 5.0), lambda]
            }
            "dnbinom" => vec![r.count(200.0), r.log_uniform(0.01, 1e3), r.uniform()],
            "dnorm" | "pnorm" | "dlogis" | "plogis" => vec![
                sign * r.log_uniform(1e-3, 40.0),
                r.uniform() * 4.0 - 2.0,
                r.log_uniform(0.1, 10.0),
            ],
            "qnorm" | "qlogis" => vec![
                r.log_uniform(1e-300, 1.0),
                r.uniform() - 0.5,
                r.log_uniform(0.1, 10.0),
            ],
            "dgamma" | "pgamma" => vec![
                r.log_uniform(1e-4, 1e4),
                r.log_uniform(1e-2, 1e4),
                r.log_uniform(0.1, 10.0),
            ],
            "dbeta" | "pbeta" => vec![
                r.uniform(),
                r.log_uniform(0.05, 500.0),
                r.log_uniform(0.05, 500.0),
            ],
            "dt" | "pt" => vec![sign * r.log_uniform(1e-3, 1e3), r.log_uniform(0.1, 1e6)],
            "lgamma" | "digamma" => vec![sign * r.log_uniform(1e-3, 1e5)],
            "lbeta" => vec![r.log_uniform(1e-3, 1e5), r.log_uniform(1e-3, 1e5)],
            "lgamma1p" => vec![r.uniform() * 2.0 - 0.5],
            "log1pmx" => vec![r.uniform() * 4.0 - 0.99],
            "log1pexp" => vec![sign * r.log_uniform(1e-3, 800.0)],
            "log1mexp" => vec![r.log_uniform(1e-10, 800.0)],
            "stirlerr" => {
                let half_integer = r.uniform() < 0.3;
                vec![if half_integer {
                    r.count(15.0) * 0.5
                } else {
                    r.log_uniform(0.1, 1e8)
                }]
            }
            "bd0" => {
                let np = r.log_uniform(1e-3, 1e6);
                vec![np * r.log_uniform(0.01, 100.0), np]
            }
            other => panic!("no argument rows for {other}"),
        };
        rows.push(row);
    }
    // Edge cases: each argument in turn NaN, +-Inf and 0, the rest from the first row.
    let base = rows[0].clone();
    for i in 0..base.len() {
        for v in [nan, inf, -inf, 0.0, -1.0] {
            let mut row = base.clone();
            row[i] = v;
            rows.push(row);
        }
    }
    // Non-integer counts for the discrete densities.
    if matches!(name, "dbinom" | "dpois" | "dnbinom") {
        let mut row = base.clone();
        row[0] += 0.5;
        rows.push(row);
    }
    rows
}

/// The lock of a test binary whose tests force backends (a process-wide
/// option): each such test holds it while it runs.
#[allow(dead_code)]
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers the CUDA backend, forces work onto it and probes it; `false`
/// (after printing `SKIP: <reason>`) where no usable CUDA device is present.
pub fn gpu() -> bool {
    gearbox_cuda::register();
    use_backend("cuda", "CUDA")
}

/// Registers the OpenCL backend (CPU devices allowed: pocl in CI), forces
/// work onto it and probes it; `false` (after printing `SKIP: <reason>`)
/// where no usable device is present, unless `GEARBOX_REQUIRE_OPENCL=1`
/// (CI and `scripts/gpu.sh` set it), where that fails the test.
#[allow(dead_code)]
pub fn opencl() -> bool {
    gearbox_opencl::allow_cpu_devices(true);
    gearbox_opencl::register();
    let usable = use_backend("opencl", "OpenCL");
    assert!(
        usable || std::env::var("GEARBOX_REQUIRE_OPENCL").as_deref() != Ok("1"),
        "GEARBOX_REQUIRE_OPENCL=1 but no usable OpenCL device"
    );
    usable
}

/// Forces work onto registered backend `name` and probes it; `false` (after
/// printing `SKIP: <reason>`) when it is not healthy.
fn use_backend(name: &str, what: &str) -> bool {
    use gearbox_core::runtime::registry::probe_backend;
    use gearbox_core::runtime::{gpu_status, set_options, Health, RuntimeOptions};
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: Some(name.into()),
        ..RuntimeOptions::from_env()
    });
    if probe_backend(name, false) != Health::Healthy {
        let row = gpu_status().rows.into_iter().find(|r| r.backend == name);
        println!(
            "SKIP: no usable {what} device: {}",
            row.map_or(format!("{name} not registered"), |r| r.reason)
        );
        return false;
    }
    true
}
