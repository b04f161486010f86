//! Both GLM grid strategies on a real GPU against the one-point reference,
//! for every family and link: observation counts around the per-point
//! kernels' tiles (32) and long enough to be cut into slices, coefficient
//! counts that take each CUDA kernel by default (the CUDA cores below 8
//! and above 128, the tensor cores between) and that are not multiples of
//! the tensor cores' 4 and 8, dense and product grids, a design resident
//! on the device. `scripts/gpu.sh run grid-kernels` also runs it with
//! each kernel forced (`GEARBOX_CUDA_GRID_MMA`). Prints `SKIP: <reason>`
//! and passes where no usable CUDA device is present.

mod common;
mod strategies;

use gearbox_core::runtime::{fallback_log, fallback_log_reset};
use gearbox_stats::glm::{ProductGrid, Strategy};
use strategies::{Problem, SPECS};

#[test]
fn both_strategies_on_the_device_match_the_reference() {
    if !common::gpu() {
        return;
    }
    fallback_log_reset();
    let mut runs = 0;
    // Every family and link by the per-point kernel (a compile per spec
    // and width), at a tile boundary and long enough for slices; the GEMM
    // strategy (shape-specific kernels) at fewer shapes.
    for (s, spec) in SPECS.iter().enumerate() {
        for &l1 in &[1usize, 33, 3000] {
            for &l2 in &[3usize, 17] {
                let seed = 7000 * s as u64 + 10 * l1 as u64 + l2 as u64;
                let pr = Problem::new(*spec, l1, l2, 300, seed);
                let model = pr.model();
                let strategies: &[Strategy] = if l2 == 3 && l1 == 33 {
                    &[Strategy::Gemm, Strategy::PerPoint]
                } else {
                    &[Strategy::PerPoint]
                };
                for &strategy in strategies {
                    let got = model.grid_with(&pr.grid(), Some(strategy)).unwrap();
                    assert_eq!(
                        got.gradient.device(),
                        "cuda",
                        "{strategy} ran off the device"
                    );
                    let what = format!("{}({}) l1={l1} l2={l2} {strategy}", spec.0, spec.1);
                    pr.check(&what, &got, &pr.b);
                    runs += 1;
                }
            }
        }
    }
    // Widths past the registers a CUDA-core thread holds without spilling
    // (l2 = 40, the tensor cores by default) and past the full tile and
    // the tensor cores' widest (l2 = 200: tiles of 20 observations).
    for &(l1, l2, m1) in &[
        (31usize, 16usize, 37usize),
        (32, 1, 37),
        (257, 40, 301),
        (129, 200, 5),
    ] {
        let pr = Problem::new(SPECS[0], l1, l2, m1, 3 + l1 as u64);
        let got = pr
            .model()
            .grid_with(&pr.grid(), Some(Strategy::PerPoint))
            .unwrap();
        pr.check(&format!("binomial l1={l1} l2={l2} m1={m1}"), &got, &pr.b);
        runs += 1;
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
    println!("device: {runs} grids by both strategies within 1e-12 of the reference");
}

#[test]
fn product_grids_on_the_device_match_the_materialized_grid() {
    if !common::gpu() {
        return;
    }
    fallback_log_reset();
    // 7 coefficients take the CUDA cores, 9 the tensor cores.
    let cases = SPECS
        .iter()
        .enumerate()
        .step_by(4)
        .flat_map(|c| [(c, 7), (c, 9)]);
    for ((s, spec), l2) in cases {
        let pr = Problem::new(*spec, 200, l2, 1, 31 + s as u64);
        let grid = ProductGrid::uniform(&[-0.3, 0.05, 0.4], l2).unwrap();
        let dense: Vec<f64> = (0..grid.len()).flat_map(|j| grid.point(j)).collect();
        let model = pr.model();
        for strategy in [Strategy::Gemm, Strategy::PerPoint] {
            let mut qf = Vec::new();
            let mut gradient = Vec::new();
            model
                .product_grid_chunks(&grid, Some(1000), Some(strategy), |first, chunk| {
                    assert_eq!(first as usize, qf.len());
                    qf.extend(chunk.qf.to_vec::<f64>()?);
                    gradient.extend(chunk.gradient.to_vec::<f64>()?);
                    Ok(())
                })
                .unwrap();
            let got = gearbox_stats::glm::GlmGrid {
                qf: gearbox_core::Array::from_vec([qf.len()], qf).unwrap(),
                gradient: gearbox_core::Array::from_vec([l2, gradient.len() / l2], gradient)
                    .unwrap(),
            };
            pr.check(
                &format!("{} product grid, {strategy}", spec.0),
                &got,
                &dense,
            );
        }
    }
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}

#[test]
fn a_resident_design_stays_on_the_device_for_the_per_point_kernel() {
    if !common::gpu() {
        return;
    }
    fallback_log_reset();
    let pr = Problem::new(SPECS[0], 500, 14, 2000, 17);
    pr.arrays[0].to_device("cuda").unwrap();
    let model = pr.model();
    let choice = model.choose(2000, None).unwrap();
    println!("{choice}");
    assert_eq!(choice.per_point_backend, "cuda");
    let got = model.grid(&pr.grid()).unwrap();
    pr.check("resident design", &got, &pr.b);
    assert!(fallback_log().is_empty(), "{:?}", fallback_log());
}
