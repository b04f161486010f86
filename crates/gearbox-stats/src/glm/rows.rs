//! The per-observation constants of the binomial and poisson terms: what
//! depends only on `(y, wt)`, computed once per model on the host with
//! this crate's nmath and passed to the grid kernel as `[l1, 1]` columns
//! (uploaded once, resident after), so the kernel's per-element work is
//! what depends on `eta`. The terms that read them are in
//! [`super::hoisted`]; each constant is computed by the very expression
//! R's density evaluates, so the hoisted terms give the same bits as
//! [`loglik_term`](super::loglik_term).
//!
//! The checks of the response are hoisted too: a row whose counts R's
//! density rejects carries the term it gives (`NaN` or `-Inf`) in place of
//! its count, and a row of weight 0 has zero counts.
//!
//! For the certified closed forms of [`super::hoisted`] two constants come
//! with an absolute error bound: `lchoose(n, x)` ([`lchoose_with_error`])
//! and R's `lgammafn(k + 1)` ([`lgamma_error`]). The bounds assume the
//! host's `ln` and `ln_1p` within one ulp (glibc's are).

use super::family::{binomial_counts, r_nonint};
use crate::nmath::{lbeta, lgamma, stirlerr};

/// The unit roundoff of float64, `2^-53`.
pub const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// `log(2 pi)`.
#[allow(clippy::excessive_precision)]
const M_LN_2PI: f64 = 1.837877066409345483560659472811;
/// `sqrt(2 pi)`.
#[allow(clippy::excessive_precision)]
const M_SQRT_2PI: f64 = 2.50662827463100050241576528481104525301;
/// `log(sqrt(2 pi))`.
#[allow(clippy::excessive_precision)]
const M_LN_SQRT_2PI: f64 = 0.918938533204672741780329736406;
/// `2^1023 / pi`: from here on `2 pi x` overflows (R's `x_LRG`).
#[allow(clippy::excessive_precision)]
const X_LRG: f64 = 2.86111748575702815380240589208115399625e+307;
/// `2^53`: whole numbers below it are exact doubles.
const TWO_53: f64 = 9_007_199_254_740_992.0;

/// A binomial observation's constants (`x = y wt` successes of `n = wt`
/// trials, rounded as R's `dbinom` rounds them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinomialRow {
    /// The successes; for counts R's `dbinom` rejects, the term it gives
    /// instead (`NaN` for bad trials, `-Inf` for bad successes); 0 for
    /// weight 0.
    pub x: f64,
    /// The trials (`NaN` for rejected counts, 0 for weight 0).
    pub n: f64,
    /// `stirlerr(n) - stirlerr(x) - stirlerr(n - x)`, the first three
    /// terms of `dbinom_raw`'s `lc` in its order of evaluation (0 unless
    /// `0 < x < n`).
    pub h: f64,
    /// `dbinom_raw`'s `lf = log(2 pi) + log(x) + log1p(-x / n)` (0 unless
    /// `0 < x < n`).
    pub lf: f64,
    /// `lchoose(n, x)` for the closed form ([`lchoose_with_error`] for
    /// `0 < x < n`; exactly 0, with error 0, for `x = 0` and `x = n`).
    pub lchoose: f64,
    /// A bound on the absolute error of `lchoose` (`Inf` where none is
    /// known: the closed form is then never used).
    pub lchoose_err: f64,
}

/// The constants of binomial observation `(y, wt)`.
pub fn binomial_row(y: f64, wt: f64) -> BinomialRow {
    let zero = BinomialRow {
        x: 0.0,
        n: 0.0,
        h: 0.0,
        lf: 0.0,
        lchoose: 0.0,
        lchoose_err: 0.0,
    };
    if wt == 0.0 {
        return zero;
    }
    match binomial_counts(y, wt) {
        Err(term) => BinomialRow {
            x: term,
            n: f64::NAN,
            h: f64::NAN,
            lf: f64::NAN,
            lchoose: f64::NAN,
            lchoose_err: f64::INFINITY,
        },
        Ok((x, n)) if x > 0.0 && x < n => {
            let (lchoose, lchoose_err) = lchoose_with_error(n, x);
            BinomialRow {
                x,
                n,
                h: stirlerr(n) - stirlerr(x) - stirlerr(n - x),
                lf: M_LN_2PI + x.ln() + (-x / n).ln_1p(),
                lchoose,
                lchoose_err,
            }
        }
        Ok((x, n)) => BinomialRow { x, n, ..zero },
    }
}

/// `lchoose(n, x)` for whole `0 < x < n`, with a bound on its absolute
/// error. With `m = min(x, n - x)`: for `m <= 60` the product
/// `prod_j (n - m + j) / j` (relative error below `2.01 m u`), rounded to
/// the whole number it is when that error is below a quarter, then its
/// logarithm; above (or where the product overflows), R's `lfastchoose` `-log(n + 1) - lbeta(m + 1, n - m
/// + 1)`, bounded by `8u` times the sum of the magnitudes in `lbeta`'s
/// large-argument formula (each of its roundings and logarithms, with the
/// conditioning of `log(p / (p + q))` and `log1p(-p / (p + q))` for
/// `p <= q`, is within that). `(NaN, Inf)` for `n >= 2^53`.
pub fn lchoose_with_error(n: f64, x: f64) -> (f64, f64) {
    let u = UNIT_ROUNDOFF;
    if n.is_nan() || n >= TWO_53 {
        return (f64::NAN, f64::INFINITY);
    }
    let m = x.min(n - x);
    if m <= 60.0 {
        let mut r = 1.0;
        for j in 1..=(m as u32) {
            let j = f64::from(j);
            r = r * (n - m + j) / j;
        }
        let relative = 2.01 * m * u;
        if r < TWO_53 && relative * r < 0.25 {
            let c = r.round().ln();
            return (c, 2.0 * u * c.abs());
        }
        if r.is_finite() {
            let c = r.ln();
            return (c, 1.01 * relative + 2.0 * u * c.abs());
        }
        // The product overflows only for m >= 20: lbeta's formula below.
    }
    let (p, q) = (m + 1.0, n - m + 1.0);
    let c = -(n + 1.0).ln() - lbeta(p, q);
    let w = p / (p + q);
    let magnitudes = 0.5 * q.ln().abs()
        + M_LN_SQRT_2PI
        + 0.01
        + ((p - 0.5) * w.ln()).abs()
        + (q * (-w).ln_1p()).abs()
        + (n + 1.0).ln();
    (c, 8.0 * u * magnitudes + 2.0 * u * c.abs())
}

/// A poisson observation's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoissonRow {
    /// The prior weight.
    pub wt: f64,
    /// The count `y` rounded; for `y` R's `dpois` rejects, the density it
    /// gives (`NaN` for `NaN`, `-Inf` off the support); `+Inf` kept.
    pub k: f64,
    /// `stirlerr(k)`, which `dpois_raw` adds to `ebd0`'s low part.
    pub stirlerr: f64,
    /// `dpois_raw`'s `0.5 log(2 pi k)` (`log(sqrt(2 pi k))` from `2^1023 /
    /// pi` on, as R computes it).
    pub log_term: f64,
    /// R's `lgammafn(k + 1)`.
    pub lgamma: f64,
    /// A bound on the absolute error of `lgamma` ([`lgamma_error`]).
    pub lgamma_err: f64,
}

/// The constants of poisson observation `(y, wt)`.
pub fn poisson_row(y: f64, wt: f64) -> PoissonRow {
    let k = if y.is_nan() {
        f64::NAN
    } else if y == f64::INFINITY {
        f64::INFINITY
    } else if r_nonint(y) || y < 0.0 {
        f64::NEG_INFINITY
    } else {
        y.round_ties_even()
    };
    if k.is_nan() || k < 0.0 {
        return PoissonRow {
            wt,
            k,
            stirlerr: f64::NAN,
            log_term: f64::NAN,
            lgamma: f64::NAN,
            lgamma_err: f64::INFINITY,
        };
    }
    let lgamma_k1 = lgamma(k + 1.0);
    let log_term = if k >= X_LRG {
        (M_SQRT_2PI * k.sqrt()).ln()
    } else {
        0.5 * (std::f64::consts::TAU * k).ln()
    };
    PoissonRow {
        wt,
        k,
        stirlerr: stirlerr(k),
        log_term,
        lgamma: lgamma_k1,
        lgamma_err: lgamma_error(k, lgamma_k1),
    }
}

/// A bound on the absolute error of `g`, R's `lgammafn(k + 1)` for whole
/// `k >= 0`: up to `k = 22`, where `k!` is an exact double, its distance
/// from `log(k!)` plus that logarithm's own ulp; above, the bound
/// `u (6 P + 3 (k + 1) + 2 |g| + 4)` with `P = (k + 1/2) log(k + 1)`,
/// which covers the roundings of `lgammafn`'s Stirling formula
/// `log(sqrt(2 pi)) + (x - 1/2) log x - x + lgammacor(x)` and the
/// `lgammacor` it leaves out beyond `x = 4934720`; `Inf` from `k = 2^40`
/// on.
pub fn lgamma_error(k: f64, g: f64) -> f64 {
    let u = UNIT_ROUNDOFF;
    if k <= 22.0 {
        let mut factorial = 1.0;
        for j in 2..=(k as u32) {
            factorial *= f64::from(j);
        }
        let exact = factorial.ln();
        return (g - exact).abs() + 2.0 * u * exact.abs();
    }
    if k < 1_099_511_627_776.0 {
        let x = k + 1.0;
        let p = (x - 0.5) * x.ln();
        return u * (6.0 * p + 3.0 * x + 2.0 * g.abs() + 4.0);
    }
    f64::INFINITY
}
