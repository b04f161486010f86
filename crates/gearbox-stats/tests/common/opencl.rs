//! The OpenCL engine of the device harness: the device sources built as
//! OpenCL C 1.2 with `cl_khr_fp64` on the first OpenCL device that has it
//! (GPUs first; pocl on the CPU in CI), as one program of every function
//! (prelude and callees once) plus one kernel `check_NAME` per function
//! that returns a double, which evaluates `NAME` on a whole case list in
//! one launch. The program is built once per process, since pocl compiles
//! slowly.
//!
//! Without such a device the tests print why and pass, unless
//! `GEARBOX_REQUIRE_OPENCL=1` is set (CI sets it), which makes that a
//! failure. A build failure always fails, with the build log.

use std::ffi::c_void;
use std::path::PathBuf;
use std::ptr;
use std::sync::OnceLock;

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::ClError;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_int, CL_BLOCKING};

use gearbox_stats::device;

use super::{call_expr, parameters};

/// The options of every build: OpenCL C 1.2, the oldest version the
/// sources promise to compile as; warnings are errors, as under g++.
pub const BUILD_OPTIONS: &str = "-cl-std=CL1.2 -Werror";

/// A context and queue on the chosen device.
pub struct Device64 {
    /// The device's name and platform, for messages.
    pub name: String,
    /// A context holding the device alone.
    pub context: Context,
    queue: CommandQueue,
}

/// The engine's state: a device and the library's build there (the
/// program, or why it failed), or why there is no device.
enum State {
    Present(Device64, Result<Program, String>),
    Absent(String),
}

/// The first device with `cl_khr_fp64`, GPUs before other kinds, or why
/// there is none.
fn find_device() -> Result<Device64, String> {
    let platforms = get_platforms().map_err(|e| format!("no OpenCL platform ({e})"))?;
    let mut candidates = Vec::new();
    for p in &platforms {
        let ids = p.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        let platform = p.name().unwrap_or_default();
        for id in ids {
            let d = Device::new(id);
            let fp64 = d.extensions().is_ok_and(|e| e.contains("cl_khr_fp64"));
            if fp64 {
                let gpu = d.dev_type().is_ok_and(|t| t & CL_DEVICE_TYPE_GPU != 0);
                candidates.push((!gpu, d, platform.clone()));
            }
        }
    }
    candidates.sort_by_key(|c| c.0);
    let Some((_, d, platform)) = candidates.into_iter().next() else {
        return Err(format!(
            "no OpenCL device with cl_khr_fp64 on {} platform(s)",
            platforms.len()
        ));
    };
    let name = format!("{} ({platform})", d.name().unwrap_or_default().trim());
    let context = Context::from_device(&d).map_err(|e| format!("{name}: context: {e}"))?;
    // clCreateCommandQueue, the OpenCL 1.2 call (deprecated where opencl3's
    // CL_VERSION_2_0 feature is on).
    #[allow(deprecated)]
    let queue = CommandQueue::create_default(&context, 0)
        .map_err(|e| format!("{name}: command queue: {e}"))?;
    Ok(Device64 {
        name,
        context,
        queue,
    })
}

/// Builds `source` on `dev`; the error holds the build log.
fn build(dev: &Device64, source: &str) -> Result<Program, String> {
    Program::create_and_build_from_source(&dev.context, source, BUILD_OPTIONS)
}

/// Compiles `source` on `dev` without linking it (the front end's checks:
/// syntax, types, address spaces, undeclared names); the error holds the
/// build log.
pub fn compile(dev: &Device64, source: &str) -> Result<(), String> {
    let mut program =
        Program::create_from_source(&dev.context, source).map_err(|e| e.to_string())?;
    program
        .compile(dev.context.devices(), BUILD_OPTIONS, &[], &[])
        .map_err(|e| {
            let log = program
                .get_build_log(dev.context.default_device())
                .unwrap_or_else(|e| format!("(no build log: {e})"));
            format!("{e}, build log: {log}")
        })
}

/// The device functions the harness can call: those returning a double.
fn callable() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = device::functions()
        .iter()
        .filter(|(name, f)| f.source.contains(&format!("double {name}(")))
        .map(|(name, _)| *name)
        .collect();
    names.sort_unstable();
    names
}

/// The kernel evaluating `name` on rows of `in` (`arity` doubles each),
/// writing the value and the second result to `out` (two per row).
fn kernel_source(name: &str) -> String {
    format!(
        "__kernel void check_{name}(__global const double *in, __global double *out, int n)\n\
         {{\n    int t = get_global_id(0);\n    if (t >= n) return;\n    \
         __global const double *a = in + t * {arity};\n    double w = 0;\n    \
         double v = {call};\n    out[2 * t] = v;\n    out[2 * t + 1] = w;\n}}\n",
        arity = parameters(name).len(),
        call = call_expr(name),
    )
}

/// The library and its kernels as one OpenCL C program.
fn library_source() -> String {
    let names = callable();
    let mut all: Vec<&str> = device::functions().keys().copied().collect();
    all.sort_unstable();
    let mut src = device::assemble(&all).unwrap_or_else(|e| panic!("{e}"));
    for name in names {
        src.push('\n');
        src.push_str(&kernel_source(name));
    }
    src
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| match find_device() {
        Err(why) => State::Absent(why),
        Ok(dev) => {
            let source = library_source();
            let built = build(&dev, &source).map_err(|log| {
                let kept = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nmath_library.cl");
                let kept = match std::fs::write(&kept, &source) {
                    Ok(()) => format!("the source is in {}", kept.display()),
                    Err(e) => format!("could not keep the source: {e}"),
                };
                format!(
                    "the nmath library does not build as OpenCL C on {} ({kept}): {log}",
                    dev.name
                )
            });
            State::Present(dev, built)
        }
    })
}

/// Whether `GEARBOX_REQUIRE_OPENCL=1` makes a missing device a failure.
fn required() -> bool {
    std::env::var("GEARBOX_REQUIRE_OPENCL").is_ok_and(|v| v == "1")
}

/// The device, when there is one; else why not (after failing the test if
/// `GEARBOX_REQUIRE_OPENCL=1`).
pub fn device() -> Result<&'static Device64, &'static str> {
    match state() {
        State::Present(dev, _) => Ok(dev),
        State::Absent(why) => {
            assert!(!required(), "GEARBOX_REQUIRE_OPENCL=1, but {why}");
            Err(why)
        }
    }
}

/// The device and the library built on it; panics with the build log if
/// the library does not build there, and without a device (callers check
/// [`ready`] first).
fn library() -> (&'static Device64, &'static Program) {
    match state() {
        State::Present(dev, Ok(program)) => (dev, program),
        State::Present(_, Err(log)) => panic!("{log}"),
        State::Absent(why) => panic!("{why}"),
    }
}

/// Whether the device is here (else the caller skips, printing why; see
/// [`device`]). Panics with the build log if the library does not build
/// there.
pub fn ready() -> bool {
    match device() {
        Ok(_) => {
            library();
            true
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            false
        }
    }
}

/// What a failed OpenCL call of [`run`] does: panic, naming the function,
/// the device and the step.
fn failed<'a, T>(
    name: &'a str,
    dev: &'a Device64,
    what: &'a str,
) -> impl FnOnce(ClError) -> T + 'a {
    move |e| panic!("{name} on {}: {what}: {e}", dev.name)
}

/// Runs device function `name` on `rows` (ints as whole f64) in one launch
/// of its kernel: each row's value and second result.
pub fn run(name: &str, rows: &[Vec<f64>]) -> Vec<(f64, f64)> {
    let (dev, program) = library();
    if rows.is_empty() {
        return Vec::new();
    }
    let arity = parameters(name).len();
    let mut input: Vec<f64> = Vec::with_capacity(rows.len() * arity);
    for r in rows {
        assert_eq!(r.len(), arity, "{name} takes {arity} arguments");
        input.extend(r);
    }
    let n = rows.len();
    let count = cl_int::try_from(n).expect("fewer than 2^31 rows");
    let kernel = Kernel::create(program, &format!("check_{name}"))
        .unwrap_or_else(failed(name, dev, "kernel"));
    let mut output = vec![0.0f64; 2 * n];
    // SAFETY: each buffer holds the doubles it is created for, creation
    // copies `input` (alive throughout), the arguments match the kernel's
    // parameters, and the read blocks until `output` is written.
    unsafe {
        let input_buffer = Buffer::<f64>::create(
            &dev.context,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            input.len(),
            input.as_mut_ptr().cast::<c_void>(),
        )
        .unwrap_or_else(failed(name, dev, "input buffer"));
        let output_buffer = Buffer::<f64>::create(
            &dev.context,
            CL_MEM_WRITE_ONLY,
            output.len(),
            ptr::null_mut(),
        )
        .unwrap_or_else(failed(name, dev, "output buffer"));
        ExecuteKernel::new(&kernel)
            .set_arg(&input_buffer)
            .set_arg(&output_buffer)
            .set_arg(&count)
            .set_global_work_size(n)
            .enqueue_nd_range(&dev.queue)
            .unwrap_or_else(failed(name, dev, "launch"));
        dev.queue
            .enqueue_read_buffer(&output_buffer, CL_BLOCKING, 0, &mut output, &[])
            .unwrap_or_else(failed(name, dev, "read back"));
    }
    output.chunks(2).map(|p| (p[0], p[1])).collect()
}
