//! GLM families and links: their names, the valid combinations, and the
//! per-observation log-likelihood term and its derivative in the linear
//! predictor `eta`, the two scalar functions every GLM grid evaluation is
//! built from.
//!
//! # The terms, as in glmbayes
//!
//! glmbayes (Kjell Nygren; its C++ `f2_*` / `f3_*` functions) evaluates each
//! observation's log-likelihood with R's densities, with the prior weights
//! divided by the dispersion before they reach the family functions. For an
//! observation `(y, wt)` with linear predictor `eta` and dispersion `phi`
//! the term here is:
//!
//! | family | term |
//! |---|---|
//! | binomial | `dbinom(y*wt, wt, p(eta), log = TRUE)`, `y` the proportion of successes, `wt` the trials |
//! | quasibinomial | the binomial term divided by `phi` |
//! | poisson | `wt * dpois(y, exp(eta), log = TRUE)` |
//! | quasipoisson | the poisson term divided by `phi` |
//! | gaussian | `dnorm(y, eta, sqrt(phi / wt), log = TRUE)` |
//! | Gamma | `dgamma(y, shape = wt / phi, scale = exp(eta) * phi / wt, log = TRUE)` |
//!
//! Binomial and poisson have `phi = 1`. Differences from glmbayes, all where
//! glmbayes would return `-Inf`, `NaN` or a rounded count:
//!
//! - an observation of weight 0 contributes 0 (to the term and its
//!   derivative) in every family, as it drops out of R's `glm`; the literal
//!   densities give `-Inf` for gaussian and Gamma (standard deviation
//!   `Inf`, shape 0), and `0 * -Inf = NaN` for poisson where `dpois` is `-Inf`;
//! - where the mean under- or overflows (`p` or `1 - p` below the smallest
//!   normal double, `exp(eta)` outside the normal doubles) the term is
//!   computed from its log-space formula (`lchoose(n, x) + x log p +
//!   (n - x) log(1 - p)`, `x eta - exp(eta) - lgamma(x + 1)`, the gamma
//!   log density with `log(scale) = eta + log(phi / wt)`), which stays
//!   finite where the densities, given an underflowed mean, return `-Inf`
//!   or `NaN`;
//! - binomial calls R's `dbinom_raw(x, n, p, q)` with `q = 1 - p` computed
//!   from `eta` directly (`plogis(-eta)`, `pnorm(eta, lower = FALSE)`,
//!   `exp(-exp(eta))`) rather than as `1 - p`, so `p` near 1 keeps its
//!   precision; for `x = 0` and `x = n` the term is exactly `n log q` and
//!   `n log p` with the logarithms from the link;
//! - quasibinomial divides the binomial term by `phi`; glmbayes instead
//!   passes `wt / phi` as the number of trials and rounds `y * wt / phi`
//!   and `wt / phi` to integers.
//!
//! The binomial counts `y * wt` and `wt` must be whole numbers within R's
//! tolerance (`|v - round(v)| <= 1e-7 max(1, |v|)`); they are rounded as
//! R's `dbinom` and glmbayes's `dbinom_glmb` round them. Off that tolerance
//! the term is `-Inf` (non-integer successes) or `NaN` (non-integer trials),
//! as R's `dbinom` returns; [`glm_grid`](super::glm_grid) rejects such input
//! before evaluating anything.
//!
//! # Accuracy contract of the grid terms
//!
//! [`loglik_term`] and [`dloglik_deta`] are R's evaluation (with the
//! differences above). A GLM grid ([`GlmModel`](super::GlmModel)) evaluates
//! the binomial and poisson terms with their per-observation constants
//! hoisted ([`super::rows`], [`super::hoisted`]): each term there is either
//! these functions' value bit for bit, or, for binomial logit with `0 <= x
//! <= n` and poisson log with `y >= 0`, a closed form certified by a running
//! error bound to lie within `2^-46` (`1.4e-14`) relative of the exact
//! value ([`GlmModel::with_fast_terms`](super::GlmModel::with_fast_terms)
//! turns the closed forms off).

use std::fmt;
use std::str::FromStr;

use gearbox_core::{Error, Result};

use super::link::{cloglog_ratio, lchoose_whole, probit_ratio, LinkAt};
use crate::nmath::{dbinom_raw, dgamma, dnorm, dpois, lgamma, qnorm};

/// The distribution of the response, by R's family names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `binomial`: `y` the proportion of successes out of `wt` trials.
    Binomial,
    /// `quasibinomial`: the binomial term scaled by `1 / dispersion`.
    QuasiBinomial,
    /// `poisson`: counts, each term weighted by `wt`.
    Poisson,
    /// `quasipoisson`: the poisson term scaled by `1 / dispersion`.
    QuasiPoisson,
    /// `gaussian`: variance `dispersion / wt`.
    Gaussian,
    /// `Gamma`: shape `wt / dispersion`, mean `exp(eta)`.
    Gamma,
}

/// The link from the mean to the linear predictor `eta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Link {
    /// `logit`: `p = 1 / (1 + exp(-eta))`.
    Logit,
    /// `probit`: `p = pnorm(eta)`.
    Probit,
    /// `cloglog`: `p = 1 - exp(-exp(eta))`.
    Cloglog,
    /// `log`: mean `exp(eta)`.
    Log,
    /// `identity`: mean `eta`.
    Identity,
}

impl Family {
    /// Every family, in R's order of mention.
    pub const ALL: [Family; 6] = [
        Family::Binomial,
        Family::QuasiBinomial,
        Family::Poisson,
        Family::QuasiPoisson,
        Family::Gaussian,
        Family::Gamma,
    ];

    /// R's name of the family (`"Gamma"` capitalised, as in R).
    pub fn name(self) -> &'static str {
        match self {
            Family::Binomial => "binomial",
            Family::QuasiBinomial => "quasibinomial",
            Family::Poisson => "poisson",
            Family::QuasiPoisson => "quasipoisson",
            Family::Gaussian => "gaussian",
            Family::Gamma => "Gamma",
        }
    }

    /// The links this family accepts (those glmbayes implements).
    pub fn links(self) -> &'static [Link] {
        match self {
            Family::Binomial | Family::QuasiBinomial => &[Link::Logit, Link::Probit, Link::Cloglog],
            Family::Poisson | Family::QuasiPoisson | Family::Gamma => &[Link::Log],
            Family::Gaussian => &[Link::Identity],
        }
    }

    /// The link used when none is named: the first of [`Family::links`]
    /// (`logit`, `log`, `identity`; `log` for Gamma, whose canonical inverse
    /// link glmbayes does not implement).
    pub fn default_link(self) -> Link {
        self.links()[0]
    }

    /// Whether the likelihood is binomial (`binomial`, `quasibinomial`).
    pub fn is_binomial(self) -> bool {
        matches!(self, Family::Binomial | Family::QuasiBinomial)
    }

    /// Whether the likelihood is poisson (`poisson`, `quasipoisson`).
    pub fn is_poisson(self) -> bool {
        matches!(self, Family::Poisson | Family::QuasiPoisson)
    }

    /// Whether the dispersion is fixed at 1 (`binomial`, `poisson`).
    pub fn has_unit_dispersion(self) -> bool {
        matches!(self, Family::Binomial | Family::Poisson)
    }

    /// Whether the term needs a dispersion given (`gaussian`, `Gamma`);
    /// the quasi families default to 1.
    pub fn needs_dispersion(self) -> bool {
        matches!(self, Family::Gaussian | Family::Gamma)
    }
}

impl Link {
    /// R's name of the link.
    pub fn name(self) -> &'static str {
        match self {
            Link::Logit => "logit",
            Link::Probit => "probit",
            Link::Cloglog => "cloglog",
            Link::Log => "log",
            Link::Identity => "identity",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Family {
    type Err = Error;

    /// R's family names; case does not matter (`"Gamma"` and `"gamma"`).
    fn from_str(s: &str) -> Result<Family> {
        Family::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| Error::InvalidArgument {
                op: "glm",
                name: "family",
                value: format!("{s:?}"),
                why: "expected one of binomial, quasibinomial, poisson, quasipoisson, gaussian, Gamma"
                    .to_string(),
            })
    }
}

impl FromStr for Link {
    type Err = Error;

    /// R's link names: `logit`, `probit`, `cloglog`, `log`, `identity`.
    fn from_str(s: &str) -> Result<Link> {
        [
            Link::Logit,
            Link::Probit,
            Link::Cloglog,
            Link::Log,
            Link::Identity,
        ]
        .into_iter()
        .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
        .ok_or_else(|| Error::InvalidArgument {
            op: "glm",
            name: "link",
            value: format!("{s:?}"),
            why: "expected one of logit, probit, cloglog, log, identity".to_string(),
        })
    }
}

/// A family, its link and the dispersion: everything that fixes the
/// per-observation likelihood term.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GlmSpec {
    /// The response distribution.
    pub family: Family,
    /// The link function.
    pub link: Link,
    /// The dispersion `phi`: required (finite, positive) by gaussian and
    /// Gamma for grid evaluation; optional for the quasi families (default
    /// 1); absent or exactly 1 for binomial and poisson.
    pub dispersion: Option<f64>,
}

impl GlmSpec {
    /// A checked spec: the link must be one of `family`'s
    /// ([`Family::links`]) and the dispersion as [`GlmSpec::dispersion`]
    /// says (a missing gaussian or Gamma dispersion is accepted here, as
    /// maximum likelihood estimates it; grid evaluation requires it).
    ///
    /// ```
    /// use gearbox_stats::glm::{Family, GlmSpec, Link};
    /// let spec = GlmSpec::new(Family::Binomial, Link::Probit, None)?;
    /// assert_eq!(spec.dispersion_or_one(), 1.0);
    /// assert!(GlmSpec::new(Family::Poisson, Link::Logit, None).is_err());
    /// assert!(GlmSpec::new(Family::Poisson, Link::Log, Some(2.0)).is_err());
    /// # Ok::<(), gearbox_core::Error>(())
    /// ```
    pub fn new(family: Family, link: Link, dispersion: Option<f64>) -> Result<GlmSpec> {
        let spec = GlmSpec {
            family,
            link,
            dispersion,
        };
        spec.check()?;
        Ok(spec)
    }

    /// [`GlmSpec::new`] from R's names, with the family's default link when
    /// `link` is `None`.
    pub fn parse(family: &str, link: Option<&str>, dispersion: Option<f64>) -> Result<GlmSpec> {
        let family: Family = family.parse()?;
        let link = match link {
            Some(l) => l.parse()?,
            None => family.default_link(),
        };
        GlmSpec::new(family, link, dispersion)
    }

    /// Checks the link and dispersion rules of [`GlmSpec::new`].
    pub fn check(&self) -> Result<()> {
        if !self.family.links().contains(&self.link) {
            let names: Vec<_> = self.family.links().iter().map(|l| l.name()).collect();
            return Err(Error::InvalidArgument {
                op: "glm",
                name: "link",
                value: self.link.name().to_string(),
                why: format!(
                    "family {} accepts the link(s) {}",
                    self.family,
                    names.join(", ")
                ),
            });
        }
        if let Some(d) = self.dispersion {
            if self.family.has_unit_dispersion() && d != 1.0 {
                return Err(Error::InvalidArgument {
                    op: "glm",
                    name: "dispersion",
                    value: d.to_string(),
                    why: format!(
                        "the {0} dispersion is fixed at 1; use quasi{0} for another",
                        self.family
                    ),
                });
            }
            if !(d.is_finite() && d > 0.0) {
                return Err(Error::InvalidArgument {
                    op: "glm",
                    name: "dispersion",
                    value: d.to_string(),
                    why: "must be finite and positive".to_string(),
                });
            }
        }
        Ok(())
    }

    /// The dispersion, 1 when absent.
    pub fn dispersion_or_one(&self) -> f64 {
        self.dispersion.unwrap_or(1.0)
    }
}

/// R's `R_nonint`: whether `v` is off a whole number by more than
/// `1e-7 max(1, |v|)`.
pub(crate) fn r_nonint(v: f64) -> bool {
    (v - v.round_ties_even()).abs() > 1e-7 * v.abs().max(1.0)
}

/// The binomial log density of `x` successes in `n` trials, both rounded
/// already, under the link at `at`, evaluating only the probabilities
/// (and logarithms) the case needs.
fn binomial_log_density(x: f64, n: f64, at: LinkAt) -> f64 {
    // All failures or all successes: exactly n log q or n log p, with the
    // logarithms from the link (dbinom_raw's bd0(n, n p) would use the
    // rounded p, whose 1 - p is inexact when q is tiny).
    if x == 0.0 {
        return if n == 0.0 { 0.0 } else { n * at.log_q() };
    }
    if x == n {
        return n * at.log_p();
    }
    let (p, q) = (at.p(), at.q());
    if p >= f64::MIN_POSITIVE && q >= f64::MIN_POSITIVE {
        return dbinom_raw(x, n, p, q, true);
    }
    // p or q underflowed: no cancellation between the terms is possible
    // here, so the plain log-space formula is accurate.
    lchoose_whole(n, x) + x * at.log_p() + (n - x) * at.log_q()
}

/// The whole numbers `(x, n) = (round(y * wt), round(wt))` of a binomial
/// observation, or the term R's `dbinom` returns when they are not whole
/// (`NaN` for trials, `-Inf` for successes) or out of range.
pub(crate) fn binomial_counts(y: f64, wt: f64) -> std::result::Result<(f64, f64), f64> {
    let x = y * wt;
    if wt.is_nan() || x.is_nan() || wt < 0.0 || r_nonint(wt) {
        return Err(f64::NAN);
    }
    if r_nonint(x) || x < 0.0 || !x.is_finite() {
        return Err(f64::NEG_INFINITY);
    }
    let (x, n) = (x.round_ties_even(), wt.round_ties_even());
    if x > n {
        return Err(f64::NEG_INFINITY);
    }
    Ok((x, n))
}

fn poisson_log_density(y: f64, eta: f64) -> f64 {
    let lambda = eta.exp();
    if lambda >= f64::MIN_POSITIVE && lambda.is_finite() {
        return dpois(y, lambda, true);
    }
    if r_nonint(y) || y < 0.0 {
        return f64::NEG_INFINITY;
    }
    let y = y.round_ties_even();
    // y * eta is 0 for y = 0 even where eta is -Inf.
    let y_eta = if y == 0.0 { 0.0 } else { y * eta };
    y_eta - lambda - lgamma(y + 1.0)
}

fn gamma_log_density(y: f64, shape: f64, eta: f64) -> f64 {
    let scale = eta.exp() / shape;
    if scale >= f64::MIN_POSITIVE && scale.is_finite() {
        return dgamma(y, shape, scale, true);
    }
    // log(scale) = eta - log(shape) stays finite where scale does not.
    let log_scale = eta - shape.ln();
    -lgamma(shape) - shape * log_scale + (shape - 1.0) * y.ln() - y * (shape * (-eta).exp())
}

/// One observation's log-likelihood term (table in the module docs) for
/// response `y`, prior weight `wt`, linear predictor `eta` (offset
/// included) and dispersion `dispersion` (pass 1 for binomial and poisson).
///
/// An observation with `wt == 0` contributes 0. For valid input this is
/// the value of R's density as in the table; invalid `y` gives what R's
/// density gives (`-Inf` off the support, `NaN` for a bad parameter).
///
/// ```
/// use gearbox_stats::glm::{loglik_term, Family, Link};
/// // 3 successes out of 4 at p = plogis(0.5): dbinom(3, 4, plogis(0.5), log = TRUE)
/// let v = loglik_term(Family::Binomial, Link::Logit, 0.75, 4.0, 0.5, 1.0);
/// assert!((v - (-1.0100135756005362)).abs() < 1e-14);
/// ```
pub fn loglik_term(family: Family, link: Link, y: f64, wt: f64, eta: f64, dispersion: f64) -> f64 {
    if wt == 0.0 {
        return 0.0;
    }
    match family {
        Family::Binomial | Family::QuasiBinomial => {
            let value = match binomial_counts(y, wt) {
                Ok((x, n)) => binomial_log_density(x, n, LinkAt::new(link, eta)),
                Err(v) => v,
            };
            if family == Family::QuasiBinomial {
                value / dispersion
            } else {
                value
            }
        }
        Family::Poisson | Family::QuasiPoisson => {
            let value = wt * poisson_log_density(y, eta);
            if family == Family::QuasiPoisson {
                value / dispersion
            } else {
                value
            }
        }
        Family::Gaussian => dnorm(y, eta, (dispersion / wt).sqrt(), true),
        Family::Gamma => gamma_log_density(y, wt / dispersion, eta),
    }
}

/// The derivative in `eta` of [`loglik_term`] (same arguments).
///
/// | family, link | derivative |
/// |---|---|
/// | binomial, any | `x dlog p/deta + (n - x) dlog q/deta`, `x = y wt`, `n = wt` rounded |
/// | binomial, logit | `x q - (n - x) p` |
/// | binomial, probit | `x dnorm/pnorm(eta) - (n - x) dnorm/pnorm(-eta)` (each ratio without cancellation) |
/// | binomial, cloglog | `x t / expm1(t) - (n - x) t`, `t = exp(eta)` |
/// | poisson | `wt (y - exp(eta))` |
/// | gaussian | `wt (y - eta) / phi` |
/// | Gamma | `(wt / phi) (y exp(-eta) - 1)` |
///
/// and the quasi families divide by `phi`. Weight 0 gives 0.
///
/// ```
/// use gearbox_stats::glm::{dloglik_deta, Family, Link};
/// // logit: x - n p = 3 - 4 plogis(0.5)
/// let d = dloglik_deta(Family::Binomial, Link::Logit, 0.75, 4.0, 0.5, 1.0);
/// assert!((d - (3.0 - 4.0 / (1.0 + (-0.5f64).exp()))).abs() < 1e-15);
/// ```
pub fn dloglik_deta(family: Family, link: Link, y: f64, wt: f64, eta: f64, dispersion: f64) -> f64 {
    if wt == 0.0 {
        return 0.0;
    }
    match family {
        Family::Binomial | Family::QuasiBinomial => {
            let value = match binomial_counts(y, wt) {
                Ok((x, n)) => {
                    // Each slope only where its count is positive.
                    let at = LinkAt::new(link, eta);
                    let mut d = 0.0;
                    if x > 0.0 {
                        d += x * at.log_p_slope();
                    }
                    if n - x > 0.0 {
                        d += (n - x) * at.log_q_slope();
                    }
                    d
                }
                Err(_) => f64::NAN,
            };
            if family == Family::QuasiBinomial {
                value / dispersion
            } else {
                value
            }
        }
        Family::Poisson | Family::QuasiPoisson => {
            let value = wt * (y - eta.exp());
            if family == Family::QuasiPoisson {
                value / dispersion
            } else {
                value
            }
        }
        Family::Gaussian => wt * (y - eta) / dispersion,
        Family::Gamma => (wt / dispersion) * (y * (-eta).exp() - 1.0),
    }
}

/// The expected (Fisher) information of [`loglik_term`] about `eta`,
/// `E[-d^2 term / d eta^2]`: the IRLS working weight, divided by the
/// dispersion where the term is.
///
/// | family, link | information |
/// |---|---|
/// | binomial, logit | `wt p q` |
/// | binomial, probit | `wt dnorm(eta)^2 / (pnorm(eta) pnorm(-eta))`, as the product of the ratios `dnorm(eta) / pnorm(+-eta)` (no cancellation in the tails) |
/// | binomial, cloglog | `wt t^2 / expm1(t)`, `t = exp(eta)` |
/// | poisson | `wt exp(eta)` |
/// | gaussian, Gamma | `wt / phi` |
///
/// and the quasi families divide by `phi`.
pub fn expected_information(family: Family, link: Link, wt: f64, eta: f64, dispersion: f64) -> f64 {
    if wt == 0.0 {
        return 0.0;
    }
    match family {
        Family::Binomial | Family::QuasiBinomial => {
            let per_trial = match link {
                Link::Logit => 1.0 / ((1.0 + eta.exp()) * (1.0 + (-eta).exp())),
                // dnorm^2 / (pnorm(eta) pnorm(-eta)) as the product of the
                // two tail-safe ratios: the difference of logarithms, each
                // near -eta^2 / 2, would cancel in the tails.
                Link::Probit => probit_ratio(eta) * probit_ratio(-eta),
                Link::Cloglog => {
                    let t = eta.exp();
                    if t > 40.0 {
                        (2.0 * eta - t).exp()
                    } else {
                        t * cloglog_ratio(eta, t)
                    }
                }
                Link::Log | Link::Identity => f64::NAN,
            };
            let value = wt * per_trial;
            if family == Family::QuasiBinomial {
                value / dispersion
            } else {
                value
            }
        }
        Family::Poisson => wt * eta.exp(),
        Family::QuasiPoisson => wt * eta.exp() / dispersion,
        Family::Gaussian | Family::Gamma => wt / dispersion,
    }
}

/// The mean of the response at `eta`: `p` for the binomial links,
/// `exp(eta)` for log, `eta` for identity.
pub fn mean(link: Link, eta: f64) -> f64 {
    match link {
        Link::Logit | Link::Probit | Link::Cloglog => LinkAt::new(link, eta).p(),
        Link::Log => eta.exp(),
        Link::Identity => eta,
    }
}

/// The link function: `eta` at mean `m` (`qlogis`, `qnorm`,
/// `log(-log(1 - m))`, `log`, identity).
pub fn link_function(link: Link, m: f64) -> f64 {
    match link {
        Link::Logit => (m / (1.0 - m)).ln(),
        Link::Probit => qnorm(m, 0.0, 1.0, true, false),
        Link::Cloglog => (-(-m).ln_1p()).ln(),
        Link::Log => m.ln(),
        Link::Identity => m,
    }
}

/// The family's variance function at mean `m` (per unit weight and
/// dispersion): `m (1 - m)`, `m`, `1`, `m^2`.
pub fn variance(family: Family, m: f64) -> f64 {
    match family {
        Family::Binomial | Family::QuasiBinomial => m * (1.0 - m),
        Family::Poisson | Family::QuasiPoisson => m,
        Family::Gaussian => 1.0,
        Family::Gamma => m * m,
    }
}

#[cfg(test)]
mod tests;
