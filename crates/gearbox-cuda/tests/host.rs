//! The generated CUDA compiled as host C++ with g++ against a small shim of
//! the CUDA built-ins (`tests/shim/cuda_host_shim.h`): first a strict syntax
//! check of every catalog kernel, then a run of each on the shim (threads,
//! barriers and warp shuffles emulated) compared with gearbox-core's CPU
//! results. Skipped, with a printed reason, where g++ is missing.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use gearbox_core::{DType, HostBuffer, ReduceOp};
use gearbox_cuda::codegen::{render_tuned, KernelKind, Tuning, CUDA};

/// Blocks and threads per block for the emulated launches.
const GRID: u32 = 3;
const BLOCK: u32 = 64;
const FINISH_BLOCK: u32 = 64;

fn gxx() -> Option<&'static str> {
    match Command::new("g++").arg("--version").output() {
        Ok(o) if o.status.success() => Some("g++"),
        _ => {
            eprintln!("skipped: g++ is not available to compile the generated sources on the host");
            None
        }
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gearbox-cuda-host");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

fn shim() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shim/cuda_host_shim.h");
    std::fs::read_to_string(p).expect("shim")
}

/// The kernel's source inside its own namespace, its entry points renamed.
fn wrapped(idx: usize, source: &str) -> String {
    format!(
        "namespace c{idx} {{\n#define gb_main c{idx}_main\n#define gb_finish c{idx}_finish\n{source}#undef gb_main\n#undef gb_finish\n}}  // namespace c{idx}\n\n"
    )
}

fn gxx_run(args: &[&str]) -> Result<(), String> {
    let out = Command::new("g++")
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr)
            .chars()
            .take(6000)
            .collect())
    }
}

#[test]
fn every_generated_source_compiles_as_cxx17() {
    if gxx().is_none() {
        return;
    }
    let cases = catalog();
    let mut tu = shim();
    for (i, c) in cases.iter().enumerate() {
        let k = render_tuned(&CUDA, &c.ir, Tuning::default()).expect("render");
        tu.push_str(&wrapped(i, &k.source));
    }
    for (i, c) in cases.iter().enumerate() {
        let k = render_tuned(&CUDA, &c.ir, ALTERNATIVE).expect("render");
        tu.push_str(&wrapped(cases.len() + i, &k.source));
    }
    let path = scratch("syntax.cpp");
    std::fs::write(&path, &tu).expect("write");
    let flags = [
        "-std=c++17",
        "-fsyntax-only",
        "-Wall",
        "-Wextra",
        "-Wpedantic",
        "-Wshadow",
        "-Werror",
        "-Wno-unknown-pragmas",
        "-Wno-unused-parameter",
        "-Wno-unused-function",
    ];
    let mut args = flags.to_vec();
    let p = path.to_string_lossy().to_string();
    args.push(&p);
    if let Err(e) = gxx_run(&args) {
        panic!("g++ rejected the generated sources ({p}):\n{e}");
    }
}

fn storage(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I64 => "long long",
        DType::Bool => "unsigned char",
    }
}

fn bytes(buf: &HostBuffer) -> Vec<u8> {
    match buf {
        HostBuffer::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostBuffer::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostBuffer::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        HostBuffer::Bool(v) => v.iter().map(|&b| b as u8).collect(),
    }
}

/// Knobs unlike the defaults, so both code shapes of every loop run:
/// groups of 3 packs in reductions (5 for products, moments and
/// log-sum-exp), 2 in elementwise kernels, streaming
/// hints, lanes grouped by 3, compound accumulators' lanes below 512 a
/// thread each, moments not folded by pack, strided lanes split for 512
/// threads (within blocks where few chunks do).
const ALTERNATIVE: Tuning = Tuning {
    reduce_packs: 3,
    compound_packs: 5,
    held_packs: 2,
    elementwise_packs: 2,
    heavy_packs: 3,
    streaming: true,
    axis_group: 3,
    compound_thread_len: 512,
    strided_packs: 3,
    compound_block_len: 100_000,
    fold_moments: false,
    lane_threads: 512,
};

/// The C++ that runs case `idx` and prints its results.
fn runner(idx: usize, c: &Case, data: &[HostBuffer], tuning: Tuning) -> String {
    let ir = &c.ir;
    let k = render_tuned(&CUDA, ir, tuning).expect("render");
    let n = ir.shape().numel();
    let mut s = wrapped(idx, &k.source);
    let _ = writeln!(s, "static void run_c{idx}() {{");
    let mut args = Vec::new();
    for (i, ((_, dt), buf)) in ir.inputs().iter().zip(data).enumerate() {
        let b = bytes(buf);
        let list: Vec<String> = b.iter().map(|x| format!("{x}")).collect();
        let list = if list.is_empty() {
            "0".to_string()
        } else {
            list.join(",")
        };
        let _ = writeln!(s, "  static const unsigned char in{i}_init[] = {{{list}}};");
        let _ = writeln!(
            s,
            "  {t}* in{i} = gb_alloc<{t}>({len}, in{i}_init, {nb});",
            t = storage(*dt),
            len = buf.len(),
            nb = b.len()
        );
        args.push(format!("in{i}"));
    }
    for (m, &o) in ir.outputs().iter().enumerate() {
        let t = storage(ir.nodes()[o].dtype);
        let _ = writeln!(s, "  {t}* out{m} = gb_alloc<{t}>({n}, nullptr, 0);");
        args.push(format!("out{m}"));
    }
    let red = ir.reduce().map(|r| {
        let lanes = ir.reduced_shape().map_or(1, |s| s.numel());
        (r.dtype, lanes)
    });
    // The buffers of the companion result (after the result's, where the
    // result is written), allocated as `red_companion`.
    let companion = ir.reduced_results() > 1;
    let results = |name: &str| {
        if companion {
            format!("{name}, {name}_companion")
        } else {
            name.to_string()
        }
    };
    // Partials: of the accumulator's type, a struct for reductions whose
    // accumulator holds several values.
    let compound = ir
        .reduce()
        .is_some_and(|r| r.op.monoid().is_none() || r.op == ReduceOp::Prod);
    let acc = || match compound {
        true => format!("c{idx}::gb_acc"),
        false => storage(k.partial_dtype.expect("partials")).to_string(),
    };
    match (k.kind, red) {
        (KernelKind::FullReduce, Some(_)) => {
            let acc = acc();
            let _ = writeln!(s, "  {acc}* red = gb_alloc<{acc}>({GRID}, nullptr, 0);");
            args.push("red".into());
        }
        (KernelKind::AxisReduce, Some((_, lanes))) if k.chunks > 1 => {
            let acc = acc();
            let count = lanes * k.chunks;
            let _ = writeln!(s, "  {acc}* red = gb_alloc<{acc}>({count}, nullptr, 0);");
            args.push("red".into());
        }
        (KernelKind::AxisReduce, Some((dt, lanes))) => {
            let t = storage(dt);
            let _ = writeln!(s, "  {t}* red = gb_alloc<{t}>({lanes}, nullptr, 0);");
            if companion {
                let _ = writeln!(
                    s,
                    "  {t}* red_companion = gb_alloc<{t}>({lanes}, nullptr, 0);"
                );
            }
            args.push(results("red"));
        }
        _ => {}
    }
    args.push(format!("{n}LL"));
    let _ = writeln!(
        s,
        "  gb_launch({GRID}, {BLOCK}, [&] {{ c{idx}::c{idx}_main({}); }});",
        args.join(", ")
    );
    match (k.kind, red) {
        (KernelKind::FullReduce, Some((dt, _))) => {
            let t = storage(dt);
            alloc_results(&mut s, t, 1, companion);
            let _ = writeln!(
                s,
                "  gb_launch(1, {FINISH_BLOCK}, [&] {{ c{idx}::c{idx}_finish(red, {}, {GRID}LL, {n}LL); }});",
                results("result")
            );
            print_results(&mut s, idx, "result", 1, companion);
        }
        (KernelKind::AxisReduce, Some((dt, lanes))) if k.chunks > 1 => {
            let t = storage(dt);
            let chunks = k.chunks;
            alloc_results(&mut s, t, lanes, companion);
            let _ = writeln!(
                s,
                "  gb_launch({GRID}, {FINISH_BLOCK}, [&] {{ c{idx}::c{idx}_finish(red, {}, {chunks}LL, {lanes}LL); }});",
                results("result")
            );
            print_results(&mut s, idx, "result", lanes, companion);
        }
        (KernelKind::AxisReduce, Some((_, lanes))) => {
            print_results(&mut s, idx, "red", lanes, companion);
        }
        _ => {}
    }
    for m in 0..ir.outputs().len() {
        let _ = writeln!(s, "  gb_print(\"c{idx}\", \"out{m}\", out{m}, {n});");
    }
    s.push_str("}\n\n");
    s
}

/// Allocates `result` (and `result_companion`) of `len` elements of C type
/// `t`.
fn alloc_results(s: &mut String, t: &str, len: usize, companion: bool) {
    let _ = writeln!(s, "  {t}* result = gb_alloc<{t}>({len}, nullptr, 0);");
    if companion {
        let _ = writeln!(
            s,
            "  {t}* result_companion = gb_alloc<{t}>({len}, nullptr, 0);"
        );
    }
}

/// Prints buffer `name` as case `idx`'s `red` (and `{name}_companion` as
/// its `red_companion`).
fn print_results(s: &mut String, idx: usize, name: &str, len: usize, companion: bool) {
    let _ = writeln!(s, "  gb_print(\"c{idx}\", \"red\", {name}, {len});");
    if companion {
        let _ = writeln!(
            s,
            "  gb_print(\"c{idx}\", \"red_companion\", {name}_companion, {len});"
        );
    }
}

fn parse(dt: DType, hex: &[&str]) -> HostBuffer {
    let bits: Vec<u64> = hex
        .iter()
        .map(|h| u64::from_str_radix(h, 16).expect("hex"))
        .collect();
    match dt {
        DType::F32 => HostBuffer::F32(bits.iter().map(|&b| f32::from_bits(b as u32)).collect()),
        DType::F64 => HostBuffer::F64(bits.iter().map(|&b| f64::from_bits(b)).collect()),
        DType::I64 => HostBuffer::I64(bits.iter().map(|&b| b as i64).collect()),
        DType::Bool => HostBuffer::Bool(
            bits.iter()
                .map(|&b| {
                    assert!(b <= 1, "bool stored as {b}");
                    b == 1
                })
                .collect(),
        ),
    }
}

/// Whether `got` matches `want`: exactly for integers and bools; for floats
/// NaN for NaN, and within 4 ulps (elementwise) or a relative `tol`
/// (reductions, whose summation order differs from the CPU's; f32 at
/// least 1e-6).
fn matches(got: &HostBuffer, want: &HostBuffer, tol: Option<f64>) -> Result<(), String> {
    fn float(i: usize, g: f64, w: f64, ulps: u64, tol: Option<f64>) -> Result<(), String> {
        let ok = (g.is_nan() && w.is_nan())
            || g == w
            || match tol {
                Some(t) => (g - w).abs() <= t * w.abs().max(1.0),
                None => false,
            }
            || ulps <= 4;
        if ok {
            Ok(())
        } else {
            Err(format!("element {i}: got {g:e}, want {w:e}"))
        }
    }
    match (got, want) {
        (HostBuffer::F32(g), HostBuffer::F32(w)) if g.len() == w.len() => {
            g.iter().zip(w).enumerate().try_for_each(|(i, (&a, &b))| {
                let ulps = (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
                let ulps = if a.signum() == b.signum() {
                    ulps
                } else {
                    u64::MAX
                };
                float(i, a as f64, b as f64, ulps, tol.map(|t| t.max(1e-6)))
            })
        }
        (HostBuffer::F64(g), HostBuffer::F64(w)) if g.len() == w.len() => {
            g.iter().zip(w).enumerate().try_for_each(|(i, (&a, &b))| {
                let ulps = (a.to_bits() as i64)
                    .wrapping_sub(b.to_bits() as i64)
                    .unsigned_abs();
                let ulps = if a.signum() == b.signum() {
                    ulps
                } else {
                    u64::MAX
                };
                float(i, a, b, ulps, tol)
            })
        }
        _ if got == want => Ok(()),
        _ => Err(format!("got {got:?}\nwant {want:?}")),
    }
}

/// Compiles `tu` to `name` and returns what it prints.
fn compile_and_run(name: &str, tu: &str) -> String {
    let src = scratch(&format!("{name}.cpp"));
    let exe = scratch(&format!("{name}.exe"));
    std::fs::write(&src, tu).expect("write");
    let (s, e) = (
        src.to_string_lossy().to_string(),
        exe.to_string_lossy().to_string(),
    );
    let args = [
        "-std=c++17",
        "-O0",
        "-fno-strict-aliasing",
        "-pthread",
        "-w",
        &s,
        "-o",
        &e,
    ];
    if let Err(err) = gxx_run(&args) {
        panic!("g++ failed on {s}:\n{err}");
    }
    let out = Command::new(&exe).output().expect("run");
    assert!(
        out.status.success(),
        "{e} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

#[test]
fn generated_kernels_match_the_cpu_on_the_host() {
    check_catalog_on_host(Tuning::default(), "run");
}

#[test]
fn generated_kernels_with_other_knobs_match_the_cpu_on_the_host() {
    check_catalog_on_host(ALTERNATIVE, "alt");
}

/// Renders every catalog kernel with `tuning`, runs it under g++ and
/// compares it with the CPU.
/// The most values a catalog case may have to run on the host.
const HOST_MAX_VALUES: usize = 1 << 20;

fn check_catalog_on_host(tuning: Tuning, prefix: &str) {
    if gxx().is_none() {
        return;
    }
    // The epilogues CUDA writes in one kernel (the others run as two
    // passes of kernels the catalog has).
    let epilogues = epilogue_catalog()
        .into_iter()
        .filter(|c| gearbox_codegen::fuses_epilogue(&CUDA, &c.ir, tuning));
    // The program holds its inputs as literals: cases of more values (the
    // tiles of split lanes' finish) are left to the device suites, which
    // run the same catalog (pocl and lavapipe in CI).
    let cases: Vec<Case> = catalog()
        .into_iter()
        .chain(epilogues)
        .filter(|c| c.ir.shape().numel() <= HOST_MAX_VALUES)
        .collect();
    let data: Vec<Vec<HostBuffer>> = cases.iter().map(inputs).collect();
    // One program per core, compiled and run in parallel.
    let chunks = std::thread::available_parallelism().map_or(2, |p| p.get().clamp(1, 4));
    let per = cases.len().div_ceil(chunks);
    let outputs: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..chunks)
            .map(|ch| {
                let (cases, data) = (&cases, &data);
                scope.spawn(move || {
                    let range = ch * per..((ch + 1) * per).min(cases.len());
                    let mut tu = shim();
                    for i in range.clone() {
                        tu.push_str(&runner(i, &cases[i], &data[i], tuning));
                    }
                    tu.push_str("int main() {\n");
                    for i in range {
                        let _ = writeln!(tu, "  run_c{i}();");
                    }
                    tu.push_str("  return 0;\n}\n");
                    compile_and_run(&format!("{prefix}{ch}"), &tu)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("chunk"))
            .collect()
    });
    let mut results: std::collections::HashMap<(usize, String), Vec<&str>> = Default::default();
    for line in outputs.iter().flat_map(|o| o.lines()) {
        let mut words = line.split_whitespace();
        let (Some(c), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        let idx: usize = c.trim_start_matches('c').parse().expect("case index");
        results.insert((idx, name.to_string()), words.collect());
    }
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let (outs, red) = reference(&c.ir, &data[i]);
        for (m, want) in outs.iter().enumerate() {
            let hex = &results[&(i, format!("out{m}"))];
            let got = parse(want.dtype(), hex);
            // f32 outputs get 1e-6 of max(|want|, 1) beside the 4 ulps: the
            // CPU's f32 functions (ops::vmath::single) and the device's
            // each round within a few ulps, and a chain's cancellation
            // (exp(a)·b + sin(a) - c·b) magnifies their difference.
            let tol = if c.ir.has_epilogue() {
                // Read against a differently ordered reduction.
                Some(if want.dtype() == DType::F32 {
                    1e-5
                } else {
                    1e-10
                })
            } else {
                (c.ir.reduce().is_some() || want.dtype() == DType::F32).then_some(0.0)
            };
            if let Err(e) = matches(&got, want, tol) {
                failures.push(format!("{} out{m}: {e}", c.name));
            }
        }
        for (want, name) in red.into_iter().zip(["red", "red_companion"]) {
            let hex = &results[&(i, name.to_string())];
            let got = parse(want.dtype(), hex);
            let tol = if want.dtype() == DType::F32 {
                1e-5
            } else {
                1e-10
            };
            if let Err(e) = matches(&got, &want, Some(tol)) {
                failures.push(format!("{} {name}: {e}", c.name));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} kernels differ from the CPU:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
