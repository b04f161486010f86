//! Both GLM grid strategies (GEMM and per point) against the one-point
//! reference on the CPU, for every family and link, at observation counts
//! around the per-point kernel's tile of 32 and coefficient counts from 1
//! to the sweep's 64; product grids against the same grid materialized;
//! the cost model's choice and its explanation.

mod common;
mod strategies;

use gearbox_core::Array;
use gearbox_stats::glm::{ProductGrid, Strategy};
use strategies::{Problem, SPECS};

#[test]
fn both_strategies_match_the_reference_for_every_family_and_link() {
    for (s, spec) in SPECS.iter().enumerate() {
        for &l1 in &[1usize, 2, 31, 32, 33, 129] {
            for &l2 in &[1usize, 3, 14, 17, 32, 64] {
                let seed = 1000 * s as u64 + 10 * l1 as u64 + l2 as u64;
                let pr = Problem::new(*spec, l1, l2, 37, seed);
                let model = pr.model();
                for strategy in [Strategy::Gemm, Strategy::PerPoint] {
                    let got = model.grid_with(&pr.grid(), Some(strategy)).unwrap();
                    let what = format!("{}({}) l1={l1} l2={l2} {strategy}", spec.0, spec.1);
                    pr.check(&what, &got, &pr.b);
                }
            }
        }
    }
}

#[test]
fn exact_terms_agree_between_strategies_bit_for_bit_in_each_term() {
    // With the fast terms off both strategies evaluate R's exact terms; the
    // per-point sums run in observation order like the reference, so they
    // match it to rounding of the products alone.
    let pr = Problem::new(SPECS[0], 57, 4, 23, 7);
    let model = pr.model().with_fast_terms(false);
    for strategy in [Strategy::Gemm, Strategy::PerPoint] {
        let got = model.grid_with(&pr.grid(), Some(strategy)).unwrap();
        pr.check(&format!("exact terms, {strategy}"), &got, &pr.b);
    }
}

#[test]
fn a_product_grid_equals_the_materialized_grid() {
    for (s, spec) in SPECS.iter().enumerate().step_by(3) {
        let l2 = 4;
        let pr = Problem::new(*spec, 45, l2, 1, 99 + s as u64);
        let sets = vec![
            vec![-0.4, 0.1, 0.5],
            vec![0.2, -0.3],
            vec![0.0, 0.25, -0.25, 0.6],
            vec![0.3],
        ];
        let grid = ProductGrid::new(sets).unwrap();
        assert_eq!(grid.len(), 24);
        let dense: Vec<f64> = (0..grid.len()).flat_map(|j| grid.point(j)).collect();
        let model = pr.model();
        let whole = model.product_grid(&grid).unwrap();
        pr.check(&format!("{} product grid", spec.0), &whole, &dense);
        for strategy in [Strategy::Gemm, Strategy::PerPoint] {
            let mut qf = vec![f64::NAN; 24];
            let mut grad = vec![f64::NAN; 24 * l2];
            let mut seen = 0;
            model
                .product_grid_chunks(&grid, Some(5), Some(strategy), |first, chunk| {
                    let q = chunk.qf.to_vec::<f64>()?;
                    assert_eq!(chunk.gradient.dims(), &[l2, q.len()]);
                    qf[first as usize..first as usize + q.len()].copy_from_slice(&q);
                    let g = chunk.gradient.to_vec::<f64>()?;
                    grad[first as usize * l2..][..g.len()].copy_from_slice(&g);
                    seen += q.len();
                    Ok(())
                })
                .unwrap();
            assert_eq!(seen, 24);
            let mut want = whole.qf.to_vec::<f64>().unwrap();
            want.extend(whole.gradient.to_vec::<f64>().unwrap());
            qf.extend(grad);
            for (g, w) in qf.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                    "{strategy}: {g} vs {w}"
                );
            }
        }
    }
}

#[test]
fn product_grids_are_checked() {
    assert!(ProductGrid::new(vec![]).is_err());
    let e = ProductGrid::new(vec![vec![1.0], vec![]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("coefficient 1"), "{e}");
    let e = ProductGrid::new(vec![vec![f64::NAN]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("finite"), "{e}");
    let e = ProductGrid::uniform(&[0.0, 1.0, 2.0], 41)
        .unwrap_err()
        .to_string();
    assert!(e.contains("2^64"), "{e}");
    let pr = Problem::new(SPECS[4], 10, 3, 1, 5);
    let e = pr
        .model()
        .product_grid(&ProductGrid::uniform(&[0.0, 1.0], 2).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("3 coefficients"), "{e}");
    // 3^30 points: the results could never be held; the chunked visit is named.
    let huge = ProductGrid::uniform(&[-1.0, 0.0, 1.0], 30).unwrap();
    let pr = Problem::new(SPECS[0], 5, 30, 1, 6);
    let e = pr.model().product_grid(&huge).unwrap_err().to_string();
    assert!(e.contains("product_grid_chunks"), "{e}");
}

#[test]
fn the_cost_model_explains_its_choice() {
    let pr = Problem::new(SPECS[0], 300, 14, 10, 3);
    let choice = pr.model().choose(1_000_000, None).unwrap();
    let text = choice.to_string();
    assert!(text.contains("GLM grid strategy"), "{text}");
    assert!(text.contains("per-point on cpu"), "{text}");
    assert!(text.contains("gemm      on cpu"), "{text}");
    assert!(choice.gemm_seconds > 0.0 && choice.per_point_seconds > 0.0);
    let forced = pr.model().choose(10, Some(Strategy::Gemm)).unwrap();
    assert_eq!(forced.strategy, Strategy::Gemm);
    assert!(forced.to_string().contains("chosen by the caller"));
}

#[test]
fn a_grid_too_long_for_one_chunk_is_taken_in_chunks() {
    // 2^27 / 17 results per per-point chunk; a one-coefficient model with
    // a short grid still runs in one chunk, and the values agree.
    let pr = Problem::new(SPECS[4], 3, 1, 5, 11);
    let b = Array::from_vec([1, 5], pr.b.clone()).unwrap();
    let got = pr.model().grid_with(&b, Some(Strategy::PerPoint)).unwrap();
    pr.check("short", &got, &pr.b);
}

#[test]
fn the_model_prices_the_cuda_kernels_by_the_widths_they_take() {
    use gearbox_stats::glm::strategy::{StrategyChoice, TENSOR_CORE_WIDTHS};
    assert_eq!(
        TENSOR_CORE_WIDTHS,
        gearbox_cuda::linear_grid::MMA_MIN_L2..=gearbox_cuda::linear_grid::MMA_MAX_L2
    );
    let explain = |l2: usize| {
        StrategyChoice::decide(
            (300, l2, 1_000_000),
            "cuda",
            "cuda",
            Some(Strategy::PerPoint),
        )
        .unwrap()
        .to_string()
    };
    assert!(explain(4).contains("a point per thread"), "{}", explain(4));
    assert!(
        explain(32).contains("on the tensor cores"),
        "{}",
        explain(32)
    );
    assert!(
        explain(200).contains("a point per thread"),
        "{}",
        explain(200)
    );
    // Into the tensor cores' widths the per-point estimate steps down to
    // their rate, and past them up again.
    let per_point = |l2: usize| {
        StrategyChoice::decide((300, l2, 1_000_000), "cuda", "cuda", None)
            .unwrap()
            .per_point_seconds
    };
    assert!(
        per_point(8) < per_point(7),
        "{} {}",
        per_point(7),
        per_point(8)
    );
    assert!(
        per_point(129) > per_point(128),
        "{} {}",
        per_point(128),
        per_point(129)
    );
}

#[test]
fn designs_longer_than_a_run_match_the_reference() {
    // The CPU per-point loop takes observations in runs of 256 (and the
    // fast binomial logit and poisson log terms in chunks of 256): 600
    // observations cross both boundaries, for every family and link.
    for (s, spec) in SPECS.iter().enumerate() {
        let pr = Problem::new(*spec, 600, 5, 9, 90 + s as u64);
        let got = pr
            .model()
            .grid_with(&pr.grid(), Some(Strategy::PerPoint))
            .unwrap();
        pr.check(&format!("{}({}) l1=600", spec.0, spec.1), &got, &pr.b);
    }
}
