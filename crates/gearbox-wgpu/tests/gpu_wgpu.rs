//! The wgpu backend on whatever adapter this machine has (Mesa's lavapipe
//! in CI, NVIDIA's Vulkan driver on the H100): its status row, the probe,
//! and the shared conformance suite forced onto it and compared with the
//! CPU. CPU adapters are allowed here (they are not by default). Without
//! an adapter the tests print `SKIP: <reason>` and pass,
//! unless `GEARBOX_REQUIRE_WGPU=1` (CI sets it: there the adapter must be
//! found).

use gearbox_core::runtime::testing::gpu::{assert_ran_on, fast_f32, on_cpu, work_on};

mod common;

use common::{adapter, WGPU};

#[test]
fn the_status_row_names_the_adapter_or_what_is_missing() {
    let _g = common::lock();
    WGPU.check_status_row("Vulkan");
}

#[test]
fn the_conformance_suite_passes_on_the_adapter() {
    let Some(_g) = adapter() else { return };
    WGPU.check_conformance(|| {
        let dev = gearbox_wgpu::shared().expect("registered");
        let dev = dev.device().expect("an adapter");
        println!(
            "reductions through subgroup shuffles: {}",
            dev.subgroups_of_32
        );
    });
}

/// `f` on `xs` (f32) on the adapter and on the CPU: the largest relative
/// difference (absolute below `floor`).
fn worst_difference(
    xs: &[f64],
    floor: f64,
    f: impl Fn(&gearbox_core::Array) -> gearbox_core::Result<gearbox_core::Array>,
) -> f64 {
    // The f64-to-f32 conversion runs on the CPU (no f64 on the adapter).
    let x = fast_f32([xs.len()], xs.to_vec());
    let ran = work_on("wgpu");
    let on_device: Vec<f32> = f(&x).unwrap().to_vec().unwrap();
    assert_ran_on("wgpu", ran, "the work");
    let cpu: Vec<f32> = on_cpu(|| f(&x).unwrap().to_vec().unwrap());
    on_device
        .iter()
        .zip(&cpu)
        .map(|(&d, &c)| {
            let (d, c) = (d as f64, c as f64);
            if d.is_nan() && c.is_nan() || d == c {
                0.0
            } else {
                (d - c).abs() / c.abs().max(floor)
            }
        })
        .fold(0.0, f64::max)
}

#[test]
fn the_wgsl_polyfills_are_accurate_over_their_range() {
    let Some(_g) = adapter() else { return };
    let grid = |lo: f64, hi: f64, n: usize| -> Vec<f64> {
        (0..n)
            .map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64)
            .collect()
    };
    // Near the poles and zero of tan, and far out.
    let mut tan_x = grid(-100.0, 100.0, 20001);
    for k in -50..50 {
        let pole = (k as f64 + 0.5) * std::f64::consts::PI;
        tan_x.extend([pole - 1e-3, pole + 1e-3, pole - 3e-4, pole + 2e-4]);
    }
    tan_x.extend([1e-6, -1e-6, 3e-5, 5000.25]);
    let tan = worst_difference(&tan_x, 1e-30, |x| x.tan());
    let small = [
        1e-8, -1e-8, 1e-5, -3e-4, 0.01, -0.5, 1.0, 10.0, 80.0, -80.0, 88.0, -100.0,
    ];
    let mut em_x = grid(-20.0, 20.0, 4001);
    em_x.extend(small);
    let expm1 = worst_difference(&em_x, 1e-30, |x| x.expm1());
    let mut lp_x = grid(-0.999, 50.0, 5001);
    lp_x.extend([1e-8, -1e-8, 1e-5, -3e-4, 1e6, 1e30, -0.9999]);
    let log1p = worst_difference(&lp_x, 1e-30, |x| x.log1p());
    let bases: Vec<f64> = grid(-4.0, 4.0, 81);
    let pow = worst_difference(&bases, 1e-30, |x| {
        let cubes = x.pow_scalar(3.0)?;
        let roots = x.abs()?.pow_scalar(0.5)?;
        cubes + &roots
    });
    println!("worst relative differences: tan {tan:.1e}, expm1 {expm1:.1e}, log1p {log1p:.1e}, pow {pow:.1e}");
    for (name, err) in [
        ("tan", tan),
        ("expm1", expm1),
        ("log1p", log1p),
        ("pow", pow),
    ] {
        assert!(err < 4e-6, "{name}: relative difference {err:.2e}");
    }
}

/// Launches are recorded and submitted in batches; an upload into a pool
/// block that a recorded launch still reads must not overwrite it before
/// that launch ran.
#[test]
fn an_upload_into_a_reused_block_does_not_overtake_a_recorded_launch() {
    use gearbox_core::runtime::Backend;
    use gearbox_core::HostBuffer;
    let Some(_g) = adapter() else { return };
    let b = gearbox_wgpu::shared().expect("registered");
    let n = 5000;
    let ir = gearbox_core::fusion::ir::probe_kernel(n, gearbox_core::DType::F32).unwrap();
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 100.0).collect();
    let one = b.upload(&HostBuffer::F32(vec![1.0])).unwrap();
    for round in 0..3 {
        let x = b.upload(&HostBuffer::F32(xs.clone())).unwrap();
        let out = b.run_kernel(&ir, &[x.as_ref(), one.as_ref()]).unwrap();
        drop(x);
        // Same size: the pool hands the block just freed to this upload.
        let other = b.upload(&HostBuffer::F32(vec![7.0; n])).unwrap();
        let got = b
            .download(out.outputs[0].as_ref())
            .unwrap()
            .to_f64_vec()
            .unwrap();
        for (i, (&x, g)) in xs.iter().zip(&got).enumerate() {
            let want = (x as f64) * (x as f64) + 1.0;
            assert!(
                (g - want).abs() <= 1e-6 * want,
                "round {round}, element {i}: {g} (want {want})"
            );
        }
        drop(other);
    }
}
