//! Unit tests of the fit's internals: which path each piece takes and what
//! the array graph of the residuals looks like.

use super::*;

/// The regions that evaluating the eager results of a fit plans.
fn planned_regions(fit: &LazyFit) -> Vec<gearbox_core::fusion::plan::Region> {
    let roots = fit.eager();
    let mut seen = std::collections::HashSet::new();
    let pending: Vec<Array> = roots
        .iter()
        .flat_map(|r| r.pending_in_order())
        .filter(|a| seen.insert(a.node_id()))
        .collect();
    gearbox_core::fusion::plan::plan(&pending, &roots, true)
        .unwrap()
        .regions
}

/// Responses that the design explains almost exactly (R² about
/// 1 - 1e-8), so that `‖y‖² - ‖Qᵀy‖²` cannot be certified.
fn nearly_exact_responses(x: &Array, k: usize, seed: u64) -> Array {
    let (n, q) = (x.dims()[0], x.dims()[1]);
    let b = Array::randn([q, k], seed).unwrap();
    let noise = (Array::randn([n, k], seed + 1).unwrap() * 1e-4).unwrap();
    let y = ((x.matmul(&b).unwrap() + &noise).unwrap() + 1.0).unwrap();
    y.eval().unwrap();
    y
}

#[test]
fn noisy_responses_take_the_certified_difference_and_match_the_residuals() {
    // Results past HOST_TAIL_VALUES: the array path.
    let (n, q) = (60, 3);
    let k = HOST_TAIL_VALUES / (q + 1) + 1;
    let x = Array::randn([n, q], 31).unwrap();
    let y = Array::randn([n, k], 32).unwrap();
    y.eval().unwrap();
    let fit = lazy_fit(&x, &y, &LmOptions::default()).unwrap();
    // Nothing pending reads Y: its one pass already ran.
    assert!(planned_regions(&fit)
        .iter()
        .all(|r| !r.reads().iter().any(|a| a.same_node(&fit.y))));
    // Against the residuals summed one column at a time.
    let got = fit.rss.to_vec::<f64>().unwrap();
    let design: Vec<f64> = std::iter::repeat_n(1.0, n)
        .chain(x.to_vec::<f64>().unwrap())
        .collect();
    let d = MatRef::from_column_major_slice(&design, n, q + 1);
    let (qm, _) = gearbox_core::ops::linalg::factor::thin_qr(d);
    let ys = y.to_vec::<f64>().unwrap();
    for (j, g) in got.iter().enumerate() {
        let col = MatRef::from_column_major_slice(&ys[j * n..(j + 1) * n], n, 1);
        let r = col - &qm * (qm.transpose() * col);
        let want: f64 = (0..n).map(|i| r[(i, 0)].powi(2)).sum();
        assert!(
            (g - want).abs() <= 1e-12 * want,
            "column {j}: {g} vs {want}"
        );
    }
    // One column the design explains almost exactly sends every column
    // through the residuals.
    let mut mixed = ys.clone();
    let exact = nearly_exact_responses(&x, 1, 33).to_vec::<f64>().unwrap();
    mixed[..n].copy_from_slice(&exact);
    let mixed = Array::from_vec([n, k], mixed).unwrap();
    let fit = lazy_fit(&x, &mixed, &LmOptions::default()).unwrap();
    assert!(planned_regions(&fit)
        .iter()
        .any(|r| r.reads().iter().any(|a| a.same_node(&fit.y))));
}

#[test]
fn the_residual_sum_of_squares_is_one_fused_pass_over_y() {
    use gearbox_core::fusion::plan::Region;
    let (n, q) = (60, 3);
    let k = HOST_TAIL_VALUES / (q + 1) + 1;
    let x = Array::randn([n, q], 11).unwrap();
    let y = nearly_exact_responses(&x, k, 12);
    let fit = lazy_fit(&x, &y, &LmOptions::default()).unwrap();
    let regions = planned_regions(&fit);
    // No region stores an n x k array: neither fitted values nor residuals.
    for r in &regions {
        for a in r.produces() {
            assert!(a.numel() < n * k, "{} stores {}", r.describe(), a.shape());
        }
    }
    // Y is read twice: by the effects' GEMM, queued (and here run)
    // before the rest was built, so no longer pending, and by one fused
    // kernel that takes the p = 4 terms off Y, squares and sums the
    // columns.
    let readers: Vec<&Region> = regions
        .iter()
        .filter(|r| r.reads().iter().any(|a| a.same_node(&fit.y)))
        .collect();
    assert_eq!(
        readers.len(),
        1,
        "{:?}",
        readers.iter().map(|r| r.describe()).collect::<Vec<_>>()
    );
    assert!(regions.iter().all(|r| r.describe() != "crossprod"));
    let Region::Fused(pass) = readers[0] else {
        panic!("the residual pass is not fused: {}", readers[0].describe());
    };
    assert_eq!(
        pass.ops.join("+"),
        "mul+sub+mul+sub+mul+sub+mul+sub+mul+sum"
    );
    assert!(
        pass.outputs.is_empty(),
        "the pass stores no full-size output"
    );
    assert_eq!(pass.reduced.len(), 1);
    // Its inputs: Y, the 4 columns of Q (n x 1) and the 4 rows of the
    // effects (1 x k), loaded by broadcasting.
    let mut dims: Vec<Vec<usize>> = pass.inputs.iter().map(|a| a.dims().to_vec()).collect();
    dims.sort();
    let mut want = vec![vec![n, k]];
    want.extend(std::iter::repeat_n(vec![n, 1], 4));
    want.extend(std::iter::repeat_n(vec![1, k], 4));
    want.sort();
    assert_eq!(dims, want);
}

#[test]
fn many_terms_take_the_gemm_route() {
    let (n, q) = (80, FUSED_RESIDUAL_MAX_TERMS);
    let k = HOST_TAIL_VALUES / (q + 1) + 1;
    let x = Array::randn([n, q], 13).unwrap();
    let y = nearly_exact_responses(&x, k, 14);
    let fit = lazy_fit(&x, &y, &LmOptions::default()).unwrap();
    let names: Vec<String> = planned_regions(&fit)
        .iter()
        .filter(|r| r.reads().iter().any(|a| a.same_node(&fit.y)))
        .map(|r| r.describe())
        .collect();
    // The effects' GEMM already ran; the residuals go through a second
    // GEMM (Q times the effects), then one pass.
    assert_eq!(names, ["sub+mul+sum"]);
}

/// Every result of `fit` for response columns `0..k`, by result.
fn first_columns(fit: &ManyLm, k: usize) -> Vec<Vec<f64>> {
    let p = fit.term_names.len();
    [
        (&fit.coefficients, p),
        (&fit.std_errors, p),
        (&fit.t_values, p),
        (&fit.p_values, p),
        (&fit.sigma, 1),
        (&fit.r_squared, 1),
    ]
    .iter()
    .map(|(a, rows)| a.to_vec::<f64>().unwrap()[..rows * k].to_vec())
    .collect()
}

#[test]
fn a_small_fit_finishes_on_the_host_with_the_array_path_results() {
    // The same responses as the first columns of a fit past
    // HOST_TAIL_VALUES (the array path): the same results, for noisy
    // responses (the certified difference) and with one the design
    // explains almost exactly (the residuals), with and without an
    // intercept. The second shape has work enough for the host pass over
    // Y to share its columns among the cores.
    for (n, q, k) in [(90, 4, 6), (2000, 4, 200)] {
        host_tail_matches_array_path(n, q, k);
    }
}

fn host_tail_matches_array_path(n: usize, q: usize, k: usize) {
    let x = Array::randn([n, q], 41).unwrap();
    let wide = HOST_TAIL_VALUES / (q + 1) + 1;
    let noisy = Array::randn([n, wide], 42)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let mut mixed = noisy.clone();
    let exact = nearly_exact_responses(&x, 1, 43).to_vec::<f64>().unwrap();
    mixed[..n].copy_from_slice(&exact);
    for (values, intercept) in [(noisy, true), (mixed.clone(), true), (mixed, false)] {
        let opts = LmOptions {
            intercept,
            ..LmOptions::default()
        };
        let all = Array::from_vec([n, wide], values.clone()).unwrap();
        let few = Array::from_vec([n, k], values[..n * k].to_vec()).unwrap();
        let lazy = lazy_fit(&x, &few, &opts).unwrap();
        assert!(
            planned_regions(&lazy).is_empty(),
            "the host tail leaves nothing but the p-values pending"
        );
        let (got, want) = (
            many_lm(&x, &few, &opts).unwrap(),
            many_lm(&x, &all, &opts).unwrap(),
        );
        for (r, (g, w)) in first_columns(&got, k)
            .iter()
            .zip(first_columns(&want, k))
            .enumerate()
        {
            // Relative, but not below 1e-2: a value near 0 (a t value of
            // 1e-3) carries the absolute error of its scale.
            for (a, b) in g.iter().zip(&w) {
                assert!(
                    (a - b).abs() <= 1e-12 * b.abs().max(1e-2),
                    "result {r} (intercept {intercept}): {a} vs {b}"
                );
            }
        }
    }
}

#[test]
fn p_values_are_twice_the_upper_tail() {
    let t = Array::from_vec([2, 2], vec![0.0, -2.0, f64::INFINITY, f64::NAN]).unwrap();
    let p = two_sided_p(&t, 7.0).unwrap();
    assert_eq!(p.dims(), &[2, 2]);
    let p = p.to_vec::<f64>().unwrap();
    assert_eq!(p[0], 1.0);
    assert_eq!(p[1], 2.0 * crate::nmath::pt(2.0, 7.0, false, false));
    assert_eq!(p[2], 0.0);
    assert!(p[3].is_nan());
}
