//! The command-line cases of issue 31: a bad value located in its file,
//! memory limits the probe cannot work under, plans that probe (or say
//! they did not), and damaged cache files repaired where `status` shows it.

use crate::glm::glm_fails;
use crate::{expect, gearbox, Case, Check, Fx, Out};

/// CPU devices allowed (lavapipe, pocl), so the portable backends probe.
const CPU_DEVICES: [(&str, &str); 2] = [
    ("GEARBOX_WGPU_ALLOW_CPU", "1"),
    ("GEARBOX_OPENCL_ALLOW_CPU", "1"),
];

/// `env` after the variables that allow CPU devices.
fn with_cpu_devices<'a>(env: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    CPU_DEVICES.iter().chain(env).copied().collect()
}

/// `gearbox args` with CPU devices allowed and `env`, ending with `code`
/// and its output (stdout and stderr) holding `words`.
fn run_with(
    a: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    code: i32,
    words: &'static [&'static str],
) -> Check {
    Box::new(move |fx: &Fx| {
        let all = with_cpu_devices(env);
        let args: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        let r = gearbox(fx, &args, Out::Captured, &all)?;
        expect(&r, code, &(r.stdout.clone() + &r.stderr), words)
    })
}

/// `explain` of a product of 1024 x 1024 in fast precision, unprobed.
const EXPLAIN_NO_PROBE: [&str; 8] = [
    "explain",
    "--op",
    "matmul",
    "--shape",
    "1024x1024",
    "--precision",
    "fast",
    "--no-probe",
];

/// The same, probing first.
const EXPLAIN: &[&str] = EXPLAIN_NO_PROBE.split_last().unwrap().1;

pub fn threads_and_caches() -> Vec<Case> {
    vec![
        (
            "glm with NA on line 5 of the grid names line 5",
            glm_fails(
                &[],
                &["--grid", "@grid_na5.csv"],
                &["grid_na5.csv, line 5, column 2", "NaN", "\"age\""],
            ),
        ),
        (
            "glm with NA in the response on line 7 names line 7",
            glm_fails(
                &[("--data", "@esoph_na_y.csv")],
                &["--grid-size", "2"],
                &["esoph_na_y.csv, line 7, column 7", "\"y\""],
            ),
        ),
        (
            "status under a limit of 1e400 says it is too large",
            run_with(
                &["status"],
                &[("GEARBOX_MEMORY_LIMIT", "1e400")],
                0,
                &["too large"],
            ),
        ),
        (
            "status under a limit of NaN says it is not a number",
            run_with(
                &["status"],
                &[("GEARBOX_MEMORY_LIMIT", "NaN")],
                0,
                &["not a number"],
            ),
        ),
        (
            "status under a limit the probe cannot work in says why",
            run_with(
                &["status"],
                &[("GEARBOX_MEMORY_LIMIT", "1KiB")],
                0,
                &["probe failed", "GEARBOX_MEMORY_LIMIT (1024 bytes"],
            ),
        ),
        (
            "explain under a limit the probe cannot work in plans the CPU",
            run_with(
                EXPLAIN,
                &[("GEARBOX_MEMORY_LIMIT", "1KiB")],
                0,
                &[
                    "chosen: cpu",
                    "`gearbox status` shows why",
                    "next `gearbox` run",
                ],
            ),
        ),
        (
            "explain --no-probe says the backend it chose is unprobed",
            run_with(
                &EXPLAIN_NO_PROBE,
                &[],
                0,
                &["has not been probed", "runs on the CPU instead"],
            ),
        ),
        (
            "status --no-probe touches no device and says how to probe",
            run_with(
                &["status", "--no-probe"],
                &[],
                0,
                &["not probed yet", "`gearbox` run"],
            ),
        ),
        (
            "status lists the cache entries it rebuilt",
            Box::new(damaged_cache_is_reported),
        ),
    ]
}

/// `status` fills a cache, every kernel file in it is replaced by
/// garbage, and the next `status` (whose probes read them) lists each
/// one as rebuilt and reports the backends healthy.
fn damaged_cache_is_reported(fx: &Fx) -> Result<(), String> {
    let dir = fx.dir.join("damaged-cache");
    let dir_text = dir.display().to_string();
    let env = with_cpu_devices(&[("GEARBOX_CACHE_DIR", dir_text.as_str())]);
    let args = vec!["status".to_string()];
    let first = gearbox(fx, &args, Out::Captured, &env)?;
    expect(&first, 0, &first.stdout, &["healthy"])?;
    let kernels: Vec<_> = std::fs::read_dir(dir.join("kernels"))
        .map_err(|e| format!("no kernels cached: {e}"))?
        .flatten()
        .map(|e| e.path())
        .collect();
    if kernels.is_empty() {
        return Err("the probes cached no kernels".into());
    }
    for k in &kernels {
        std::fs::write(k, b"\x7fELF garbage, not a program").map_err(|e| e.to_string())?;
    }
    let second = gearbox(fx, &args, Out::Captured, &env)?;
    expect(
        &second,
        0,
        &second.stdout,
        &["healthy", "deleted and rebuilt", "cache "],
    )?;
    if second.stdout.contains("unhealthy") {
        return Err(format!("a backend stayed unhealthy:\n{}", second.stdout));
    }
    Ok(())
}
