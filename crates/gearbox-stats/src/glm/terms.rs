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
//! `gb_glm_ll_*` / `gb_glm_slope_*` in `device/`, which follow them line for
//! line, tails included. [`loglik_fn`] and [`slope_fn`] pick the
//! descriptor and flag bits for a [`GlmSpec`].
//!
//! A grid calls the hoisted descriptors instead where they exist
//! ([`grid_calls`]): `ROW_LL_*` / `ROW_SLOPE_*` take `(eta, dispersion)`
//! and the per-observation columns of [`super::rows`] (computed once per
//! model, up to eight arguments in all), flags `quasi` and, for binomial
//! logit and poisson, `fast` ([`FAST`]). Their accuracy contract
//! ([`super::hoisted`]): without `fast`, bit for bit [`loglik_term`] and
//! [`dloglik_deta`]; with it, either that or a closed form certified within
//! `2^-46` relative of the exact value.
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
use super::hoisted;
use super::rows::{self, BinomialRow, PoissonRow};
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
                partials: None,
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
                partials: None,
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

/// The flag bit of the hoisted log-likelihood descriptors
/// ([`ROW_LL_BINOMIAL_LOGIT`], [`ROW_LL_POISSON_LOG`]) that lets them use
/// the certified closed form of [`super::hoisted`].
pub const FAST: u8 = 2;

/// Whether flag bits `f` allow the certified closed form.
fn fast(f: u8) -> bool {
    f & FAST != 0
}

/// The binomial row `(x, n, h, lf, lchoose, lchoose_err)` from the
/// arguments after `(eta, dispersion)`; `lchoose` absent (probit,
/// cloglog) reads as unknown.
fn binomial_row_args(a: &[f64]) -> BinomialRow {
    BinomialRow {
        x: a[2],
        n: a[3],
        h: a[4],
        lf: a[5],
        lchoose: a.get(6).copied().unwrap_or(f64::NAN),
        lchoose_err: a.get(7).copied().unwrap_or(f64::INFINITY),
    }
}

/// Defines the hoisted binomial descriptors of one link: `LL, SLOPE,
/// "suffix", arity, flags => link`.
macro_rules! glm_row_binomial {
    ($( $ll:ident, $slope:ident, $suffix:literal, $arity:literal, $flags:literal => $link:expr ;)*) => {
        $(
            #[doc = concat!(
                "Kernel descriptor of the hoisted binomial ", $suffix, " log-likelihood ",
                "term, [`hoisted::binomial_loglik`]`(eta, dispersion, x, n, h, lf",
                ", lchoose, lchoose_err)` (the last two for logit only) with the ",
                "columns of [`rows::binomial_row`], flags `quasi` and (logit) `fast` ",
                "(device function `gb_glm_row_ll_binomial_", $suffix, "`)."
            )]
            pub static $ll: ScalarFn = ScalarFn {
                name: concat!("glm_row_ll_binomial_", $suffix),
                device_name: concat!("gb_glm_row_ll_binomial_", $suffix),
                arity: $arity,
                flags: $flags,
                eval: |a, f| {
                    hoisted::binomial_loglik($link, a[0], a[1], &binomial_row_args(a), quasi(f), fast(f))
                },
                library: &NMATH,
                partials: None,
            };

            #[doc = concat!(
                "Kernel descriptor of the hoisted binomial ", $suffix, " eta-slope, ",
                "[`hoisted::binomial_slope`]`(eta, dispersion, x, n)`, flag `quasi` ",
                "(device function `gb_glm_row_slope_binomial_", $suffix, "`)."
            )]
            pub static $slope: ScalarFn = ScalarFn {
                name: concat!("glm_row_slope_binomial_", $suffix),
                device_name: concat!("gb_glm_row_slope_binomial_", $suffix),
                arity: 4,
                flags: 1,
                eval: |a, f| hoisted::binomial_slope($link, a[0], a[1], a[2], a[3], quasi(f)),
                library: &NMATH,
                partials: None,
            };
        )*
    };
}

glm_row_binomial! {
    ROW_LL_BINOMIAL_LOGIT, ROW_SLOPE_BINOMIAL_LOGIT, "logit", 8, 2 => Link::Logit;
    ROW_LL_BINOMIAL_PROBIT, ROW_SLOPE_BINOMIAL_PROBIT, "probit", 6, 1 => Link::Probit;
    ROW_LL_BINOMIAL_CLOGLOG, ROW_SLOPE_BINOMIAL_CLOGLOG, "cloglog", 6, 1 => Link::Cloglog;
}

/// Kernel descriptor of the hoisted poisson log-likelihood term,
/// [`hoisted::poisson_loglik`]`(eta, dispersion, wt, k, stirlerr,
/// log_term, lgamma, lgamma_err)` with the columns of
/// [`rows::poisson_row`], flags `quasi` and `fast` (device function
/// `gb_glm_row_ll_poisson_log`).
pub static ROW_LL_POISSON_LOG: ScalarFn = ScalarFn {
    name: "glm_row_ll_poisson_log",
    device_name: "gb_glm_row_ll_poisson_log",
    arity: 8,
    flags: 2,
    eval: |a, f| {
        let row = PoissonRow {
            wt: a[2],
            k: a[3],
            stirlerr: a[4],
            log_term: a[5],
            lgamma: a[6],
            lgamma_err: a[7],
        };
        hoisted::poisson_loglik(a[0], a[1], &row, quasi(f), fast(f))
    },
    library: &NMATH,
    partials: None,
};

/// Every hoisted descriptor: the binomial terms and slopes (logit, probit,
/// cloglog), then the poisson term.
pub static ROW_ALL: [&ScalarFn; 7] = [
    &ROW_LL_BINOMIAL_LOGIT,
    &ROW_LL_BINOMIAL_PROBIT,
    &ROW_LL_BINOMIAL_CLOGLOG,
    &ROW_SLOPE_BINOMIAL_LOGIT,
    &ROW_SLOPE_BINOMIAL_PROBIT,
    &ROW_SLOPE_BINOMIAL_CLOGLOG,
    &ROW_LL_POISSON_LOG,
];

/// Defines a pair descriptor: a device function that evaluates a
/// log-likelihood term and its slope at one `eta` sharing their common
/// work, for the per-point grid kernel (`LinearGridSpec::pair`). Its
/// arguments are the term's then the slope's, its flags the term's then
/// the slope's; the device function returns the term and writes the slope
/// through one more parameter, both bit for bit what the two give. The CPU
/// evaluates the two descriptors themselves; `eval` gives the term.
macro_rules! glm_pair {
    ($( $pair:ident, $suffix:literal, $ll:ident, $slope:ident, $what:literal ;)*) => {
        $(
            #[doc = concat!(
                "Kernel descriptor of [`", stringify!($ll), "`] and [`", stringify!($slope),
                "`] at once, ", $what, " (device function `gb_glm_row_pair_", $suffix, "`)."
            )]
            pub static $pair: ScalarFn = ScalarFn {
                name: concat!("glm_row_pair_", $suffix),
                device_name: concat!("gb_glm_row_pair_", $suffix),
                arity: 12,
                flags: 3,
                eval: |a, f| ($ll.eval)(&a[..$ll.arity], f & 3),
                library: &NMATH,
                partials: None,
            };
        )*
    };
}

glm_pair! {
    ROW_PAIR_BINOMIAL_LOGIT, "binomial_logit", ROW_LL_BINOMIAL_LOGIT, ROW_SLOPE_BINOMIAL_LOGIT, "from one exp(-|eta|)";
    ROW_PAIR_POISSON_LOG, "poisson_log", ROW_LL_POISSON_LOG, SLOPE_POISSON_LOG, "from one exp(eta)";
}

/// The pair descriptor that evaluates the term `value` and the slope
/// `slope` at once, where there is one.
pub fn pair_of(value: &ScalarFn, slope: &ScalarFn) -> Option<&'static ScalarFn> {
    [
        (
            &ROW_LL_BINOMIAL_LOGIT,
            &ROW_SLOPE_BINOMIAL_LOGIT,
            &ROW_PAIR_BINOMIAL_LOGIT,
        ),
        (
            &ROW_LL_POISSON_LOG,
            &SLOPE_POISSON_LOG,
            &ROW_PAIR_POISSON_LOG,
        ),
    ]
    .into_iter()
    .find(|(v, s, _)| v.name == value.name && s.name == slope.name)
    .map(|(_, _, pair)| pair)
}

/// One argument of a grid term call ([`TermCall`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TermArg {
    /// The linear predictor, `l1 x c` (one column per grid point).
    Eta,
    /// The dispersion, one value ([`GlmSpec::dispersion_or_one`]).
    Dispersion,
    /// A per-observation column (length `l1`).
    Column(Vec<f64>),
}

/// A term's descriptor, flag bits and arguments, as a GLM grid calls it:
/// `Array::call_fn(f, args, flags)` with each [`TermArg`] in place.
#[derive(Debug, Clone)]
pub struct TermCall {
    /// The descriptor.
    pub f: &'static ScalarFn,
    /// Its flag bits.
    pub flags: u8,
    /// Its arguments, in order.
    pub args: Vec<TermArg>,
}

/// The log-likelihood and slope calls of a grid for `spec` and the
/// observations `(y, wt)`: binomial and poisson through the hoisted
/// descriptors (their row constants computed here, once), with the
/// certified closed forms when `fast`; gaussian, Gamma and the poisson
/// slope through [`loglik_fn`] / [`slope_fn`] with `(y, wt, eta,
/// dispersion)`. Elementwise the calls equal [`loglik_term`] and
/// [`dloglik_deta`], bit for bit without `fast`, within `2^-46` relative
/// with it ([`super::hoisted`]).
///
/// # Panics
///
/// As [`loglik_fn`]; and if `y` and `wt` differ in length.
pub fn grid_calls(spec: &GlmSpec, y: &[f64], wt: &[f64], fast_terms: bool) -> (TermCall, TermCall) {
    assert_eq!(y.len(), wt.len(), "glm grid_calls: y and wt lengths differ");
    let (_, quasi_flag) = combination(spec);
    let plain = |f: &'static ScalarFn| TermCall {
        f,
        flags: quasi_flag,
        args: vec![
            TermArg::Column(y.to_vec()),
            TermArg::Column(wt.to_vec()),
            TermArg::Eta,
            TermArg::Dispersion,
        ],
    };
    let fast_flag = if fast_terms { FAST } else { 0 };
    match spec.family {
        Family::Binomial | Family::QuasiBinomial => {
            let rows: Vec<BinomialRow> = y
                .iter()
                .zip(wt)
                .map(|(&y, &wt)| rows::binomial_row(y, wt))
                .collect();
            let column =
                |get: fn(&BinomialRow) -> f64| TermArg::Column(rows.iter().map(get).collect());
            let head = || {
                vec![
                    TermArg::Eta,
                    TermArg::Dispersion,
                    column(|r| r.x),
                    column(|r| r.n),
                ]
            };
            let (ll, slope, flags) = match spec.link {
                Link::Logit => (&ROW_LL_BINOMIAL_LOGIT, &ROW_SLOPE_BINOMIAL_LOGIT, fast_flag),
                Link::Probit => (&ROW_LL_BINOMIAL_PROBIT, &ROW_SLOPE_BINOMIAL_PROBIT, 0),
                Link::Cloglog => (&ROW_LL_BINOMIAL_CLOGLOG, &ROW_SLOPE_BINOMIAL_CLOGLOG, 0),
                Link::Log | Link::Identity => unreachable!("combination checked the link"),
            };
            let mut ll_args = head();
            ll_args.extend([column(|r| r.h), column(|r| r.lf)]);
            if ll.arity == 8 {
                ll_args.extend([column(|r| r.lchoose), column(|r| r.lchoose_err)]);
            }
            (
                TermCall {
                    f: ll,
                    flags: quasi_flag | flags,
                    args: ll_args,
                },
                TermCall {
                    f: slope,
                    flags: quasi_flag,
                    args: head(),
                },
            )
        }
        Family::Poisson | Family::QuasiPoisson => {
            let rows: Vec<PoissonRow> = y
                .iter()
                .zip(wt)
                .map(|(&y, &wt)| rows::poisson_row(y, wt))
                .collect();
            let column =
                |get: fn(&PoissonRow) -> f64| TermArg::Column(rows.iter().map(get).collect());
            let ll = TermCall {
                f: &ROW_LL_POISSON_LOG,
                flags: quasi_flag | fast_flag,
                args: vec![
                    TermArg::Eta,
                    TermArg::Dispersion,
                    column(|r| r.wt),
                    column(|r| r.k),
                    column(|r| r.stirlerr),
                    column(|r| r.log_term),
                    column(|r| r.lgamma),
                    column(|r| r.lgamma_err),
                ],
            };
            (ll, plain(slope_fn(spec).0))
        }
        Family::Gaussian | Family::Gamma => (plain(loglik_fn(spec).0), plain(slope_fn(spec).0)),
    }
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
