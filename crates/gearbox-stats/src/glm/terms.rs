//! The per-observation GLM terms as kernel-callable scalar functions: for
//! each base (family, link) combination a [`ScalarFn`] for the
//! log-likelihood term ([`loglik_term`]) and one for its derivative in
//! `eta` ([`dloglik_deta`]), so that a GLM grid evaluates as a GEMM for
//! `eta = X B + alpha` followed by one fused elementwise kernel.
//!
//! Every descriptor takes the four float64 arguments `(y, wt, eta,
//! dispersion)` and one flag, `quasi` (bit 0): set, the binomial and
//! poisson terms are divided by the dispersion (quasibinomial,
//! quasipoisson); gaussian and Gamma ignore it, as their densities use the
//! dispersion themselves. The CPU evaluates the Rust functions of
//! [`super::family`]; a GPU compiles the device functions
//! `gb_glm_ll_*` / `gb_glm_slope_*` in `cuda/`, which follow them line for
//! line, tails included. [`loglik_fn`] and [`slope_fn`] pick the
//! descriptor and flag bits for a [`GlmSpec`].
//!
//! ```
//! use gearbox_core::Array;
//! use gearbox_stats::glm::terms::loglik_fn;
//! use gearbox_stats::glm::{loglik_term, GlmSpec};
//! let spec = GlmSpec::parse("quasipoisson", None, Some(2.0))?;
//! let y = Array::from_vec([3], vec![0.0, 2.0, 5.0])?;
//! let wt = Array::from_vec([3], vec![1.0, 0.5, 2.0])?;
//! let eta = Array::from_vec([3], vec![-1.0, 0.3, 1.5])?;
//! let phi = Array::from_vec([1], vec![spec.dispersion_or_one()])?;
//! let (f, flags) = loglik_fn(&spec);
//! let terms = Array::call_fn(f, &[&y, &wt, &eta, &phi], flags)?.to_vec::<f64>()?;
//! let want = loglik_term(spec.family, spec.link, 5.0, 2.0, 1.5, 2.0);
//! assert_eq!(terms[2], want);
//! # Ok::<(), gearbox_core::Error>(())
//! ```

use gearbox_core::fusion::ir::ScalarFn;

use super::family::{dloglik_deta, loglik_term, Family, GlmSpec, Link};
use crate::elementwise::NMATH;

/// The bit of the `quasi` flag: divide the binomial or poisson term by the
/// dispersion.
pub const QUASI: u8 = 1;

/// Whether flag bits `f` ask for the quasi family.
fn quasi(f: u8) -> bool {
    f & QUASI != 0
}

/// `Binomial`, or `QuasiBinomial` when the quasi flag is set.
fn binomial(f: u8) -> Family {
    if quasi(f) {
        Family::QuasiBinomial
    } else {
        Family::Binomial
    }
}

/// `Poisson`, or `QuasiPoisson` when the quasi flag is set.
fn poisson(f: u8) -> Family {
    if quasi(f) {
        Family::QuasiPoisson
    } else {
        Family::Poisson
    }
}

/// Defines the log-likelihood and slope descriptors of one (family, link)
/// combination: `LL, SLOPE, "suffix" => |flags| family, link`.
macro_rules! glm_terms {
    ($( $ll:ident, $slope:ident, $suffix:literal => |$f:ident| $family:expr, $link:expr ;)*) => {
        $(
            #[doc = concat!(
                "Kernel descriptor of the ", $suffix, " log-likelihood term ",
                "[`loglik_term`]`(y, wt, eta, dispersion)`, flag `quasi` ",
                "(device function `gb_glm_ll_", $suffix, "`)."
            )]
            pub static $ll: ScalarFn = ScalarFn {
                name: concat!("glm_ll_", $suffix),
                device_name: concat!("gb_glm_ll_", $suffix),
                arity: 4,
                flags: 1,
                eval: |a, $f| loglik_term($family, $link, a[0], a[1], a[2], a[3]),
                library: &NMATH,
            };

            #[doc = concat!(
                "Kernel descriptor of the ", $suffix, " log-likelihood's ",
                "derivative in `eta`, [`dloglik_deta`]`(y, wt, eta, dispersion)`, ",
                "flag `quasi` (device function `gb_glm_slope_", $suffix, "`)."
            )]
            pub static $slope: ScalarFn = ScalarFn {
                name: concat!("glm_slope_", $suffix),
                device_name: concat!("gb_glm_slope_", $suffix),
                arity: 4,
                flags: 1,
                eval: |a, $f| dloglik_deta($family, $link, a[0], a[1], a[2], a[3]),
                library: &NMATH,
            };
        )*
    };
}

glm_terms! {
    LL_BINOMIAL_LOGIT, SLOPE_BINOMIAL_LOGIT, "binomial_logit" => |f| binomial(f), Link::Logit;
    LL_BINOMIAL_PROBIT, SLOPE_BINOMIAL_PROBIT, "binomial_probit" => |f| binomial(f), Link::Probit;
    LL_BINOMIAL_CLOGLOG, SLOPE_BINOMIAL_CLOGLOG, "binomial_cloglog" => |f| binomial(f), Link::Cloglog;
    LL_POISSON_LOG, SLOPE_POISSON_LOG, "poisson_log" => |f| poisson(f), Link::Log;
    LL_GAUSSIAN_IDENTITY, SLOPE_GAUSSIAN_IDENTITY, "gaussian_identity" => |_f| Family::Gaussian, Link::Identity;
    LL_GAMMA_LOG, SLOPE_GAMMA_LOG, "gamma_log" => |_f| Family::Gamma, Link::Log;
}

/// Every descriptor: the log-likelihood terms, then their slopes, in the
/// order binomial logit, probit, cloglog, poisson, gaussian, Gamma.
pub static ALL: [&ScalarFn; 12] = [
    &LL_BINOMIAL_LOGIT,
    &LL_BINOMIAL_PROBIT,
    &LL_BINOMIAL_CLOGLOG,
    &LL_POISSON_LOG,
    &LL_GAUSSIAN_IDENTITY,
    &LL_GAMMA_LOG,
    &SLOPE_BINOMIAL_LOGIT,
    &SLOPE_BINOMIAL_PROBIT,
    &SLOPE_BINOMIAL_CLOGLOG,
    &SLOPE_POISSON_LOG,
    &SLOPE_GAUSSIAN_IDENTITY,
    &SLOPE_GAMMA_LOG,
];

/// The base combination's index in [`ALL`] and the flag bits for `spec`.
///
/// # Panics
///
/// If `spec.link` is not one of `spec.family`'s links (a spec that
/// [`GlmSpec::check`] rejects).
fn combination(spec: &GlmSpec) -> (usize, u8) {
    let flags = if matches!(spec.family, Family::QuasiBinomial | Family::QuasiPoisson) {
        QUASI
    } else {
        0
    };
    let index = match (spec.family, spec.link) {
        (Family::Binomial | Family::QuasiBinomial, Link::Logit) => 0,
        (Family::Binomial | Family::QuasiBinomial, Link::Probit) => 1,
        (Family::Binomial | Family::QuasiBinomial, Link::Cloglog) => 2,
        (Family::Poisson | Family::QuasiPoisson, Link::Log) => 3,
        (Family::Gaussian, Link::Identity) => 4,
        (Family::Gamma, Link::Log) => 5,
        (family, link) => panic!(
            "glm terms: family {family} has no link {link} (check the GlmSpec with GlmSpec::check)"
        ),
    };
    (index, flags)
}

/// The log-likelihood term's descriptor for `spec` and its flag bits: call
/// it as `Array::call_fn(f, &[&y, &wt, &eta, &dispersion], flags)` with
/// `dispersion` holding [`GlmSpec::dispersion_or_one`]. Elementwise it
/// equals [`loglik_term`]`(spec.family, spec.link, y, wt, eta, dispersion)`.
///
/// # Panics
///
/// If `spec.link` is not one of `spec.family`'s links; specs made by
/// [`GlmSpec::new`] or [`GlmSpec::parse`] always pass.
pub fn loglik_fn(spec: &GlmSpec) -> (&'static ScalarFn, u8) {
    let (index, flags) = combination(spec);
    (ALL[index], flags)
}

/// The descriptor of the log-likelihood term's derivative in `eta` for
/// `spec`, and its flag bits; called as for [`loglik_fn`], it equals
/// [`dloglik_deta`] elementwise.
///
/// # Panics
///
/// As [`loglik_fn`].
pub fn slope_fn(spec: &GlmSpec) -> (&'static ScalarFn, u8) {
    let (index, flags) = combination(spec);
    (ALL[index + 6], flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_maps_to_its_combination() {
        for family in Family::ALL {
            for &link in family.links() {
                let spec = GlmSpec::new(family, link, Some(1.0)).unwrap();
                let (ll, flags) = loglik_fn(&spec);
                let (slope, slope_flags) = slope_fn(&spec);
                assert_eq!(flags, slope_flags);
                let quasi = matches!(family, Family::QuasiBinomial | Family::QuasiPoisson);
                assert_eq!(flags, u8::from(quasi));
                let base = match family {
                    Family::Binomial | Family::QuasiBinomial => "binomial",
                    Family::Poisson | Family::QuasiPoisson => "poisson",
                    Family::Gaussian => "gaussian",
                    Family::Gamma => "gamma",
                };
                let suffix = format!("{base}_{link}");
                assert_eq!(ll.name, format!("glm_ll_{suffix}"));
                assert_eq!(ll.device_name, format!("gb_glm_ll_{suffix}"));
                assert_eq!(slope.name, format!("glm_slope_{suffix}"));
                assert_eq!(slope.device_name, format!("gb_glm_slope_{suffix}"));
                assert_eq!((ll.arity, ll.flags, slope.arity, slope.flags), (4, 1, 4, 1));
            }
        }
    }

    #[test]
    fn the_quasi_flag_selects_the_quasi_family() {
        let args = [3.0, 4.0, 0.7, 2.5];
        let binomial = GlmSpec::new(Family::QuasiBinomial, Link::Probit, Some(2.5)).unwrap();
        let (f, flags) = loglik_fn(&binomial);
        assert_eq!(
            (f.eval)(&[0.75, 4.0, 0.7, 2.5], flags),
            loglik_term(Family::QuasiBinomial, Link::Probit, 0.75, 4.0, 0.7, 2.5)
        );
        assert_eq!(
            (f.eval)(&[0.75, 4.0, 0.7, 2.5], 0),
            loglik_term(Family::Binomial, Link::Probit, 0.75, 4.0, 0.7, 2.5)
        );
        let poisson = GlmSpec::new(Family::QuasiPoisson, Link::Log, Some(2.5)).unwrap();
        let (f, flags) = slope_fn(&poisson);
        let want = dloglik_deta(Family::QuasiPoisson, Link::Log, 3.0, 4.0, 0.7, 2.5);
        assert_eq!((f.eval)(&args, flags), want);
        assert_eq!((f.eval)(&args, 0) / 2.5, want);
    }

    #[test]
    #[should_panic(expected = "has no link")]
    fn an_unchecked_bad_spec_panics() {
        let spec = GlmSpec {
            family: Family::Gaussian,
            link: Link::Logit,
            dispersion: None,
        };
        let _ = loglik_fn(&spec);
    }
}
