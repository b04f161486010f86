//! The WGSL f64 math prelude ([`gearbox_wgpu::wgsl_f64::PRELUDE_F64`]) against Rust's std
//! (the platform's libm): parsed and validated by naga always, then run on
//! an adapter with SHADER_F64 and SHADER_INT64 (a GPU if there is one, else
//! a CPU adapter such as lavapipe) over random inputs across the whole finite
//! range, the hard regions of each function and the special values, compared
//! in ulps. NaN must meet NaN, infinities and signed zeros must match
//! exactly.
//!
//! On Linux the reference is glibc, within 1 ulp of the true results except
//! in two places: its tanh is off by up to 2 ulp (so tanh's bound is 2), and
//! its sin, cos and tan lose thousands of ulps at arguments within 2^-53 of
//! a multiple of pi/2 (those inputs have correctly rounded results of their
//! own, [`f64_math::cases::TRIG_HARD`]).
//!
//! Without such an adapter the GPU test prints `SKIP` and passes, unless
//! `GEARBOX_REQUIRE_WGPU=1`.

mod f64_math;

use f64_math::cases::{cases, draw, Case, Rng};
use f64_math::gpu::{kernel, open_gpu, quiet_wayland, Gpu};
use gearbox_wgpu::wgsl_f64::PRELUDE_F64;

// ---- naga ----------------------------------------------------------------

/// naga's verdict on `source` with f64 and i64 enabled: `Err` with its
/// diagnostics.
fn validate(source: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::FLOAT64 | naga::valid::Capabilities::SHADER_INT64,
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    Ok(())
}

#[test]
fn prelude_is_valid_wgsl() {
    validate(PRELUDE_F64).unwrap_or_else(|e| panic!("{e}"));
    for case in cases(&mut Rng(1), 1) {
        validate(&kernel(&case)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    }
}

#[test]
fn prelude_applies_no_glsl_transcendental() {
    // WGSL builtins naga lowers to GLSL.std.450 instructions, which Vulkan
    // does not define (or drivers do not compute precisely) for f64.
    let banned = [
        "exp(",
        "exp2(",
        "log(",
        "log2(",
        "pow(",
        "sin(",
        "cos(",
        "tan(",
        "asin(",
        "acos(",
        "atan(",
        "atan2(",
        "sinh(",
        "cosh(",
        "tanh(",
        "asinh(",
        "acosh(",
        "atanh(",
        "fma(",
        "ldexp(",
        "frexp(",
        "inverseSqrt(",
    ];
    for line in PRELUDE_F64.lines() {
        let code = line.split("//").next().unwrap_or("");
        for name in banned {
            let found = code.match_indices(name).any(|(i, _)| {
                let before = code[..i].chars().next_back();
                !matches!(before, Some(c) if c.is_alphanumeric() || c == '_')
            });
            assert!(!found, "the prelude calls {name}: {line}");
        }
    }
}
// ---- Comparison ----------------------------------------------------------

/// The distance from `got` to `want` in ulps; `None` where it is not a
/// finite distance: NaN against a number, an infinity against anything
/// else, or zeros of different signs.
fn ulps(got: f64, want: f64) -> Option<u64> {
    if got.is_nan() || want.is_nan() {
        return (got.is_nan() && want.is_nan()).then_some(0);
    }
    if got.is_infinite() || want.is_infinite() || (got == 0.0 && want == 0.0) {
        return (got.to_bits() == want.to_bits()).then_some(0);
    }
    // Ordered bit patterns: negative numbers count down from 0.
    let key = |x: f64| {
        let magnitude = (x.to_bits() & !(1 << 63)) as i64;
        if x.is_sign_negative() {
            -magnitude
        } else {
            magnitude
        }
    };
    Some(key(got).abs_diff(key(want)))
}

/// `x`, or zero of its sign where the device flushes subnormals.
fn flushed(x: f64, flush: bool) -> f64 {
    if flush && x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        0.0f64.copysign(x)
    } else {
        x
    }
}

/// The error of one function over its inputs.
struct Report {
    count: usize,
    worst: u64,
    worst_at: usize,
    sum: f64,
    failures: Vec<String>,
}

/// Compares `got` with the reference. On a device that flushes subnormals
/// the reference takes flushed inputs, and a zero of the right sign stands
/// for a subnormal result.
fn compare(case: &Case, got: &[f64], flush: bool) -> Report {
    let mut report = Report {
        count: got.len(),
        worst: 0,
        worst_at: 0,
        sum: 0.0,
        failures: Vec::new(),
    };
    for (i, &g) in got.iter().enumerate() {
        let a = case.a[i];
        let b = case.b.get(i).copied().unwrap_or(0.0);
        let want = case.want(i, flushed(a, flush), flushed(b, flush));
        let error = if g.to_bits() == flushed(want, flush).to_bits() {
            Some(0)
        } else {
            ulps(g, want)
        };
        match error {
            Some(e) => {
                report.sum += e as f64;
                if e > report.worst {
                    report.worst = e;
                    report.worst_at = i;
                }
                if e > case.bound && report.failures.len() < 8 {
                    report
                        .failures
                        .push(format!("{}: got {g:e}, want {want:e}", input(case, i)));
                }
            }
            None => {
                report.worst = u64::MAX;
                report.worst_at = i;
                if report.failures.len() < 8 {
                    report
                        .failures
                        .push(format!("{}: got {g:e}, want {want:e}", input(case, i)));
                }
            }
        }
    }
    report
}

/// Input `i` of `case`, as the function takes it.
fn input(case: &Case, i: usize) -> String {
    match case.b.get(i) {
        Some(b) => format!("{}({:e}, {b:e})", case.name, case.a[i]),
        None => format!("{}({:e})", case.name, case.a[i]),
    }
}

// ---- The GPU test --------------------------------------------------------

/// Random inputs per function: enough to see the rare 1-ulp cases, few
/// enough for a debug build on a CPU adapter.
const INPUTS: usize = 200_000;

#[test]
fn f64_math_matches_std() {
    quiet_wayland();
    let Some(gpu) = open_gpu() else {
        assert!(
            std::env::var("GEARBOX_REQUIRE_WGPU").as_deref() != Ok("1"),
            "GEARBOX_REQUIRE_WGPU=1 but no adapter has SHADER_F64 and SHADER_INT64"
        );
        println!("SKIP: no adapter with SHADER_F64");
        return;
    };
    println!("adapter: {}", gpu.name);
    let flush = check_primitives(&gpu);
    let mut failed = Vec::new();
    for case in cases(&mut Rng(0x5eed), INPUTS) {
        let got = gpu.run(&kernel(&case), &case.a, &case.b);
        let report = compare(&case, &got, flush);
        println!(
            "f64 {}: {} inputs, max ulp {} at input {}, mean ulp {:.4}",
            case.name,
            report.count,
            report.worst,
            input(&case, report.worst_at),
            report.sum / report.count as f64,
        );
        if report.worst > case.bound {
            failed.push(format!(
                "{} exceeds {} ulp:\n  {}",
                case.name,
                case.bound,
                report.failures.join("\n  ")
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Checks that the device's f64 division and square root are correctly
/// rounded (the prelude's accuracy rests on them), bitwise against Rust
/// over random operands, and whether it flushes subnormals.
fn check_primitives(gpu: &Gpu) -> bool {
    let mut r = Rng(0xd1_71de);
    let n = 100_000;
    let mut a = draw(n, || r.any_finite());
    let mut b: Vec<f64> = (0..n)
        .map(|i| match i % 3 {
            0 => r.any_finite(),
            1 => a[i] * r.uniform(0.5, 2.0), // quotients near 1
            _ => r.near(1.0, 1 << 20),       // divisors near 1
        })
        .collect();
    // Quotients and roots in the subnormal range.
    a.extend(draw(n / 10, || f64::from_bits(r.next() >> 12)));
    b.extend(draw(n / 10, || r.uniform(0.5, 4.0)));
    let source = |body: &str| {
        format!(
            "@group(0) @binding(0) var<storage, read> gb_in_a: array<f64>;
@group(0) @binding(1) var<storage, read> gb_in_b: array<f64>;
@group(0) @binding(2) var<storage, read_write> gb_out: array<f64>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
  let i = id.x;
  if (i >= arrayLength(&gb_out)) {{
    return;
  }}
  let a = gb_in_a[i];
  let b = gb_in_b[i];
  gb_out[i] = {body};
}}"
        )
    };
    let flushes = gpu.run(&source("a * b"), &[f64::from_bits(1)], &[1.0])[0] == 0.0;
    println!(
        "f64 subnormals: {}",
        if flushes { "flushed to zero" } else { "kept" }
    );
    let quotients = gpu.run(&source("a / b"), &a, &b);
    let roots = gpu.run(&source("sqrt(abs(a))"), &a, &b);
    let mut wrong_div = 0;
    let mut wrong_sqrt = 0;
    for i in 0..a.len() {
        let same = |g: f64, w: f64| g.to_bits() == flushed(w, flushes).to_bits();
        wrong_div += !same(
            quotients[i],
            flushed(a[i], flushes) / flushed(b[i], flushes),
        ) as usize;
        wrong_sqrt += !same(roots[i], flushed(a[i], flushes).abs().sqrt()) as usize;
    }
    println!(
        "f64 division: {wrong_div} of {} not correctly rounded; sqrt: {wrong_sqrt} of {}",
        a.len(),
        a.len()
    );
    assert_eq!(
        wrong_div, 0,
        "the device's f64 division is not correctly rounded"
    );
    assert_eq!(
        wrong_sqrt, 0,
        "the device's f64 sqrt is not correctly rounded"
    );
    flushes
}
