//! Where the host's time per launch goes on the wgpu backend: an evaluation
//! of a small fused expression through the runtime; the backend's
//! `run_kernel` alone; the wgpu steps of a launch (bind group, recording a
//! dispatch, submitting, waiting); and the runtime alone on the CPU
//! backend. Microseconds per step, one line each. `GEARBOX_TRACE=1` with
//! `TRACE_ONE=1` traces one evaluation instead.

use std::time::Instant;

use gearbox_core::runtime::{set_options, Backend, RuntimeOptions};
use gearbox_core::{Array, DType, DeviceErrorKind, HostBuffer, Precision};

/// Microseconds per call of `f` over `n` calls.
fn per_call(n: usize, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / n as f64
}

fn fast(a: Array) -> Array {
    let a = a
        .astype(DType::F32)
        .unwrap()
        .with_precision(Precision::Fast)
        .unwrap();
    a.eval().unwrap();
    a
}

fn main() {
    gearbox_wgpu::device::allow_cpu_adapters(true);
    gearbox_wgpu::register();
    let options = RuntimeOptions::from_env();
    set_options(RuntimeOptions {
        quiet: true,
        force_backend: Some("wgpu".into()),
        ..options.clone()
    });
    let b = gearbox_wgpu::shared().expect("registered");
    let dev = b.device().expect("an adapter").clone();
    let x = fast(Array::randn(vec![4096], 1).unwrap());
    x.to_device("wgpu").unwrap();
    let run = || {
        ((x.exp().unwrap() * 1.5).unwrap() + &x)
            .unwrap()
            .eval()
            .unwrap()
    };
    run();
    b.synchronize().unwrap();
    if std::env::var("TRACE_ONE").is_ok() {
        run();
        b.synchronize().unwrap();
        return;
    }
    let n = 3000;
    let us = per_call(n, run);
    b.synchronize().unwrap();
    println!("evaluation through the runtime: {us:.1} us");

    let ir = gearbox_core::fusion::ir::probe_kernel(4096, DType::F32).unwrap();
    let input = b.upload(&HostBuffer::F32(vec![0.5; 4096])).unwrap();
    let one = b.upload(&HostBuffer::F32(vec![1.0])).unwrap();
    let us = per_call(n, || {
        b.run_kernel(&ir, &[input.as_ref(), one.as_ref()]).unwrap();
    });
    b.synchronize().unwrap();
    println!("the backend's run_kernel: {us:.1} us");

    let source = "@group(0) @binding(0) var<storage, read_write> a: array<f32>;\n\
                  @compute @workgroup_size(64) fn main() { a[0] = 1.0; }";
    let module = dev
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
    let pipeline = dev
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    let buf = dev.alloc(1024, DType::F32).unwrap();
    let layout = pipeline.get_bind_group_layout(0);
    let bind = || {
        dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buf.block().as_entire_binding(),
            }],
        })
    };
    println!("bind group: {:.2} us", per_call(n, || drop(bind())));
    let checked = per_call(n, || {
        dev.checked("bind", DeviceErrorKind::Fault, bind).unwrap();
    });
    println!("bind group in error scopes: {checked:.2} us");
    let group = bind();
    let dispatch = || {
        dev.compute_pass(|pass| {
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        })
        .unwrap()
    };
    let us = per_call(n, dispatch);
    dev.wait().unwrap();
    println!("recorded dispatch (a submission per 16): {us:.2} us");
    let us = per_call(500, || {
        dispatch();
        dev.flush().unwrap();
    });
    dev.wait().unwrap();
    println!("dispatch and submission: {us:.2} us");
    let us = per_call(500, || {
        dispatch();
        dev.wait().unwrap();
    });
    println!("dispatch, submission and wait: {us:.2} us");

    set_options(RuntimeOptions {
        quiet: true,
        force_backend: None,
        optional_backends: false,
        ..options
    });
    let y = fast(Array::randn(vec![16], 1).unwrap());
    let us = per_call(n, || {
        ((y.exp().unwrap() * 1.5).unwrap() + &y)
            .unwrap()
            .eval()
            .unwrap();
    });
    println!("the same evaluation on the CPU backend (16 elements): {us:.1} us");
}
