//! The GLM term descriptors on Arrays (CPU): `Array::call_fn` of
//! [`loglik_fn`] and [`slope_fn`] equals `loglik_term` / `dloglik_deta`
//! elementwise (bit for bit: the same Rust code) for every family and link,
//! and a grid's log-likelihood plans as a GEMM and one fused kernel.

mod common;
mod glm_rows;

use gearbox_core::fusion::plan::{plan, Region};
use gearbox_core::Array;
use gearbox_stats::glm::terms::{loglik_fn, slope_fn};
use gearbox_stats::glm::{dloglik_deta, loglik_term, Family, GlmSpec, Link};
use glm_rows::rows;

fn column(rows: &[Vec<f64>], i: usize) -> Array {
    Array::from_vec(
        [rows.len()],
        rows.iter().map(|r| r[i]).collect::<Vec<f64>>(),
    )
    .unwrap()
}

/// The rows' combination suffix for a family and link.
fn combination(family: Family, link: Link) -> String {
    let base = match family {
        Family::Binomial | Family::QuasiBinomial => "binomial",
        Family::Poisson | Family::QuasiPoisson => "poisson",
        Family::Gaussian => "gaussian",
        Family::Gamma => "gamma",
    };
    format!("{base}_{link}")
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn call_fn_equals_the_scalar_terms_for_every_family_and_link() {
    for family in Family::ALL {
        for &link in family.links() {
            let dispersion = if family.has_unit_dispersion() {
                None
            } else {
                Some(2.75)
            };
            let spec = GlmSpec::new(family, link, dispersion).unwrap();
            let phi = spec.dispersion_or_one();
            let rows = rows(&combination(family, link), 500, 7);
            let (y, wt, eta) = (column(&rows, 0), column(&rows, 1), column(&rows, 2));
            // The dispersion broadcasts as a one-element array.
            let dispersion = Array::from_vec([1], vec![phi]).unwrap();
            let args = [&y, &wt, &eta, &dispersion];
            let (ll, ll_flags) = loglik_fn(&spec);
            let (slope, slope_flags) = slope_fn(&spec);
            let terms = Array::call_fn(ll, &args, ll_flags).unwrap();
            let slopes = Array::call_fn(slope, &args, slope_flags).unwrap();
            let terms = terms.to_vec::<f64>().unwrap();
            let slopes = slopes.to_vec::<f64>().unwrap();
            for ((r, t), s) in rows.iter().zip(&terms).zip(&slopes) {
                let want = loglik_term(family, link, r[0], r[1], r[2], phi);
                assert!(
                    same(*t, want),
                    "{family}/{link} term at {r:?}: array {t:e}, scalar {want:e}"
                );
                let want = dloglik_deta(family, link, r[0], r[1], r[2], phi);
                assert!(
                    same(*s, want),
                    "{family}/{link} slope at {r:?}: array {s:e}, scalar {want:e}"
                );
            }
        }
    }
}

#[test]
fn a_grid_log_likelihood_is_a_gemm_and_one_fused_kernel() {
    // Binomial probit: eta = X B + alpha for a 60 x 3 design and 8 grid
    // points; the column sums of the terms.
    let (l1, l2, m1) = (60usize, 3usize, 8usize);
    let value = |k: usize, scale: f64| ((k * 7919 + 13) % 997) as f64 / 997.0 * scale - scale / 2.0;
    // Arrays are column-major: element (i, j) at i + rows * j.
    let x_data: Vec<f64> = (0..l1 * l2)
        .map(|k| if k < l1 { 1.0 } else { value(k, 4.0) })
        .collect();
    let b_data: Vec<f64> = (0..l2 * m1).map(|k| value(k + 5000, 3.0)).collect();
    let alpha_data: Vec<f64> = (0..l1).map(|i| value(i + 9000, 0.5)).collect();
    let wt_data: Vec<f64> = (0..l1).map(|i| (i % 5) as f64).collect();
    let y_data: Vec<f64> = (0..l1)
        .map(|i| {
            let n = (i % 5) as f64;
            if n == 0.0 {
                0.0
            } else {
                ((i * 31) % (i % 5 + 1)) as f64 / n
            }
        })
        .collect();
    let x = Array::from_vec([l1, l2], x_data.clone()).unwrap();
    let b = Array::from_vec([l2, m1], b_data.clone()).unwrap();
    let alpha = Array::from_vec([l1, 1], alpha_data.clone()).unwrap();
    let y = Array::from_vec([l1, 1], y_data.clone()).unwrap();
    let wt = Array::from_vec([l1, 1], wt_data.clone()).unwrap();
    let spec = GlmSpec::parse("binomial", Some("probit"), None).unwrap();
    let phi = Array::scalar(spec.dispersion_or_one());
    let eta = x.matmul(&b).unwrap().add(&alpha).unwrap();
    let (ll, flags) = loglik_fn(&spec);
    let total = Array::call_fn(ll, &[&y, &wt, &eta, &phi], flags)
        .unwrap()
        .sum_axis(0)
        .unwrap();
    let p = plan(&total.pending_in_order(), &[&total], true).unwrap();
    let fused: Vec<&Region> = p
        .regions
        .iter()
        .filter(|r| matches!(r, Region::Fused(_)))
        .collect();
    assert_eq!(fused.len(), 1, "{:?}", p.regions);
    assert_eq!(
        p.regions.len(),
        2,
        "the GEMM and one kernel: {:?}",
        p.regions.iter().map(Region::describe).collect::<Vec<_>>()
    );
    let got = total.to_vec::<f64>().unwrap();
    for j in 0..m1 {
        let want: f64 = (0..l1)
            .map(|i| {
                let eta: f64 = (0..l2)
                    .map(|k| x_data[i + l1 * k] * b_data[k + l2 * j])
                    .sum::<f64>()
                    + alpha_data[i];
                loglik_term(
                    Family::Binomial,
                    Link::Probit,
                    y_data[i],
                    wt_data[i],
                    eta,
                    1.0,
                )
            })
            .sum();
        assert!(
            (got[j] - want).abs() <= 1e-12 * want.abs(),
            "grid point {j}: {} vs {want}",
            got[j]
        );
    }
}
