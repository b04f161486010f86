//! The partial derivatives of the nmath functions ([`Partials`] rules of
//! their [`ScalarFn`](gearbox_core::fusion::ir::ScalarFn) descriptors),
//! written with array operations and other nmath functions, so gradients
//! are lazy graphs that fuse and can be differentiated again.
//!
//! Conventions: `args` are the call's float64 arguments (unbroadcast), `y`
//! its result. A density's rule is the derivative of its log (`give_log`)
//! times `y` when the density itself was asked for. A distribution
//! function's rule in `q` is `±` the density (`-` for the upper tail),
//! divided by `exp(y)` on the log scale (`exp(log density - y)`, which
//! stays finite far in the tails). A quantile function's rule is the
//! reciprocal of its distribution function's.
//!
//! [`Partials`]: gearbox_core::fusion::ir::Partials

use gearbox_core::fusion::ir::Partial;
use gearbox_core::{Array, Result};

use super::flag;

/// `log(sqrt(2 pi))`.
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// The partials of a density from those of its log: unchanged on the log
/// scale, times the density `y` otherwise.
fn density(give_log: bool, y: &Array, dlog: Vec<Result<Array>>) -> Result<Vec<Partial>> {
    dlog.into_iter()
        .map(|d| {
            let d = d?;
            Ok(Partial::Of(if give_log { d } else { (&d * y)? }))
        })
        .collect()
}

/// The derivative of a distribution function's result `y` in its standard
/// variable, from the log density there (`log_density`) and the flags
/// `lower_tail` (bit 0) and `log_p` (bit 1): `±density`, over `exp(y)` on
/// the log scale.
fn cdf_slope(flags: u8, y: &Array, log_density: Array) -> Result<Array> {
    let slope = if flag(flags, 1) {
        (&log_density - y)?.exp()?
    } else {
        log_density.exp()?
    };
    if flag(flags, 0) {
        Ok(slope)
    } else {
        slope.neg()
    }
}

/// `(x - location) / scale`.
fn standard(x: &Array, location: &Array, scale: &Array) -> Result<Array> {
    (x - location)? / scale
}

/// The partials of `F((q - location) / scale)` from `dF/dz`.
fn location_scale(dz: &Array, z: &Array, scale: &Array) -> Result<Vec<Partial>> {
    let dq = (dz / scale)?;
    Ok(vec![
        Partial::Of(dq.clone()),
        Partial::Of(dq.neg()?),
        Partial::Of((&dq * z)?.neg()?),
    ])
}

/// The partials of a quantile function `q = location + scale z(p)` from
/// `dz/dp`, where `z = (q - location) / scale`.
fn quantile(dz_dp: &Array, z: Array, scale: &Array) -> Result<Vec<Partial>> {
    Ok(vec![
        Partial::Of((dz_dp * scale)?),
        Partial::Of(z.scalar_like(1.0)),
        Partial::Of(z),
    ])
}

/// The log of the standard normal density at `z`.
fn log_phi(z: &Array) -> Result<Array> {
    ((z * z)? * -0.5)? - LN_SQRT_2PI
}

fn digamma(x: &Array) -> Result<Array> {
    super::digamma(x)
}

/// `dbinom(x, n, p)`: `x / p - (n - x) / (1 - p)` in `p` (log scale).
pub(super) fn dbinom(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (x, n, p) = (&a[0], &a[1], &a[2]);
    let dp = (x / p)? - ((n - x)? / (1.0 - p)?)?;
    let mut out = vec![Partial::Discrete, Partial::Discrete];
    out.extend(density(flag(f, 0), y, vec![dp])?);
    Ok(out)
}

/// `dpois(x, lambda)`: `x / lambda - 1` in `lambda` (log scale).
pub(super) fn dpois(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (x, lambda) = (&a[0], &a[1]);
    let mut out = vec![Partial::Discrete];
    out.extend(density(flag(f, 0), y, vec![(x / lambda)? - 1.0])?);
    Ok(out)
}

/// `dnbinom(x, size, prob)`: `digamma(x + size) - digamma(size) +
/// log(prob)` in `size`, `size / prob - x / (1 - prob)` in `prob` (log
/// scale).
pub(super) fn dnbinom(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (x, size, prob) = (&a[0], &a[1], &a[2]);
    let dsize = (digamma(&(x + size)?)? - digamma(size)?)? + prob.log()?;
    let dprob = (size / prob)? - (x / &(1.0 - prob)?)?;
    let mut out = vec![Partial::Discrete];
    out.extend(density(flag(f, 0), y, vec![dsize, dprob])?);
    Ok(out)
}

/// `dnorm(x, mu, sigma)`, with `z = (x - mu) / sigma`: `-z / sigma`,
/// `z / sigma`, `(z^2 - 1) / sigma` (log scale).
pub(super) fn dnorm(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (x, mu, sigma) = (&a[0], &a[1], &a[2]);
    let z = standard(x, mu, sigma)?;
    let dmu = (&z / sigma)?;
    density(
        flag(f, 0),
        y,
        vec![dmu.neg(), Ok(dmu), (((&z * &z)? - 1.0)? / sigma)],
    )
}

/// `pnorm(q, mu, sigma)`: the normal density in `z = (q - mu) / sigma`.
pub(super) fn pnorm(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (q, mu, sigma) = (&a[0], &a[1], &a[2]);
    let z = standard(q, mu, sigma)?;
    let dz = cdf_slope(f, y, log_phi(&z)?)?;
    location_scale(&dz, &z, sigma)
}

/// `qnorm(p, mu, sigma)`: `dz/dp = ±1 / phi(z)` (times `exp(p)` on the log
/// scale), `1` in `mu`, `z` in `sigma`.
pub(super) fn qnorm(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (p, mu, sigma) = (&a[0], &a[1], &a[2]);
    let z = standard(y, mu, sigma)?;
    let log_dz = if flag(f, 1) {
        (p - &log_phi(&z)?)?
    } else {
        log_phi(&z)?.neg()?
    };
    let dz = if flag(f, 0) {
        log_dz.exp()?
    } else {
        log_dz.exp()?.neg()?
    };
    quantile(&dz, z, sigma)
}

/// `dlogis(x, location, scale)`, with `z = (x - location) / scale` and
/// `t = 1 - 2 sigmoid(z)`: `t / scale`, `-t / scale`, `-(t z + 1) / scale`
/// (log scale).
pub(super) fn dlogis(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (x, location, scale) = (&a[0], &a[1], &a[2]);
    let z = standard(x, location, scale)?;
    let t = (1.0 - &(z.sigmoid()? * 2.0)?)?;
    let dx = (&t / scale)?;
    density(
        flag(f, 0),
        y,
        vec![
            Ok(dx.clone()),
            dx.neg(),
            (((&t * &z)? + 1.0)? / scale)?.neg(),
        ],
    )
}

/// `plogis(q, location, scale)`: in `z`, `sigmoid(z) sigmoid(-z)` (lower
/// tail), `sigmoid(-z)` on the log scale; negated for the upper tail, where
/// the log scale's is `-sigmoid(z)`.
pub(super) fn plogis(a: &[Array], f: u8, _: &Array) -> Result<Vec<Partial>> {
    let (q, location, scale) = (&a[0], &a[1], &a[2]);
    let z = standard(q, location, scale)?;
    let (s, s_minus) = (z.sigmoid()?, z.neg()?.sigmoid()?);
    let dz = match (flag(f, 0), flag(f, 1)) {
        (true, false) => (&s * &s_minus)?,
        (true, true) => s_minus,
        (false, false) => (&s * &s_minus)?.neg()?,
        (false, true) => s.neg()?,
    };
    location_scale(&dz, &z, scale)
}

/// `qlogis(p, location, scale)`: the reciprocals of `plogis`'s slopes at
/// `z = (q - location) / scale`; `1` in `location`, `z` in `scale`.
pub(super) fn qlogis(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (location, scale) = (&a[1], &a[2]);
    let z = standard(y, location, scale)?;
    let (s, s_minus) = (z.sigmoid()?, z.neg()?.sigmoid()?);
    let dz = match (flag(f, 0), flag(f, 1)) {
        (true, false) => (1.0 / &(&s * &s_minus)?)?,
        (true, true) => (1.0 / &s_minus)?,
        (false, false) => (-1.0 / &(&s * &s_minus)?)?,
        (false, true) => (-1.0 / &s)?,
    };
    quantile(&dz, z, scale)
}

/// `dgamma(x, shape, scale)`: `(shape - 1) / x - 1 / scale`,
/// `log(x) - digamma(shape) - log(scale)`, `(x / scale - shape) / scale`
/// (log scale).
pub(super) fn dgamma(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (x, shape, scale) = (&a[0], &a[1], &a[2]);
    density(
        flag(f, 0),
        y,
        vec![
            ((shape - 1.0)? / x)? - (1.0 / scale)?,
            (x.log()? - digamma(shape)?)? - scale.log()?,
            ((x / scale)? - shape)? / scale,
        ],
    )
}

/// `pgamma(q, shape, scale)`: the density in `q`, `-q / scale` times it in
/// `scale`; no rule in `shape`.
pub(super) fn pgamma(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (q, shape, scale) = (&a[0], &a[1], &a[2]);
    let dq = cdf_slope(f, y, super::dgamma(q, shape, scale, true)?)?;
    let dscale = ((&dq * q)? / scale)?.neg()?;
    Ok(vec![
        Partial::Of(dq),
        Partial::Missing("shape"),
        Partial::Of(dscale),
    ])
}

/// `dbeta(x, a, b)`: `(a - 1) / x - (b - 1) / (1 - x)`,
/// `log(x) - digamma(a) + digamma(a + b)`,
/// `log(1 - x) - digamma(b) + digamma(a + b)` (log scale).
pub(super) fn dbeta(args: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (x, a, b) = (&args[0], &args[1], &args[2]);
    let both = digamma(&(a + b)?)?;
    let log_1mx = x.neg()?.log1p()?;
    density(
        flag(f, 0),
        y,
        vec![
            ((a - 1.0)? / x)? - ((b - 1.0)? / (1.0 - x)?)?,
            (x.log()? - digamma(a)?)? + &both,
            (log_1mx - digamma(b)?)? + &both,
        ],
    )
}

/// `pbeta(q, a, b)`: the density in `q`; no rule in `a` or `b`.
pub(super) fn pbeta(args: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (q, a, b) = (&args[0], &args[1], &args[2]);
    let dq = cdf_slope(f, y, super::dbeta(q, a, b, true)?)?;
    Ok(vec![
        Partial::Of(dq),
        Partial::Missing("a"),
        Partial::Missing("b"),
    ])
}

/// `dt(x, n)`: `-(n + 1) x / (n + x^2)` in `x`, and in `n`
/// `(digamma((n + 1) / 2) - digamma(n / 2) - 1 / n - log1p(x^2 / n)) / 2
/// + (n + 1) x^2 / (2 n (n + x^2))` (log scale).
pub(super) fn dt(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (x, n) = (&a[0], &a[1]);
    let x2 = (x * x)?;
    let n_x2 = (n + &x2)?;
    let np1 = (n + 1.0)?;
    let dx = ((&np1 * x)? / &n_x2)?.neg();
    let halves = (digamma(&(&np1 * 0.5)?)? - digamma(&(n * 0.5)?)?)?;
    let dn = (((halves - (1.0 / n)?)? - (&x2 / n)?.log1p()?)? * 0.5)?
        + ((&np1 * &x2)? / ((n * 2.0)? * &n_x2)?)?;
    density(flag(f, 0), y, vec![dx, dn])
}

/// `pt(q, n)`: the density in `q`; no rule in `n`.
pub(super) fn pt(a: &[Array], f: u8, y: &Array) -> Result<Vec<Partial>> {
    let (q, n) = (&a[0], &a[1]);
    let dq = cdf_slope(f, y, super::dt(q, n, true)?)?;
    Ok(vec![Partial::Of(dq), Partial::Missing("n")])
}

/// `lgamma(x)`: `digamma(x)`.
pub(super) fn lgamma(a: &[Array], _: u8, _: &Array) -> Result<Vec<Partial>> {
    Ok(vec![Partial::Of(digamma(&a[0])?)])
}

/// `lbeta(a, b)`: `digamma(a) - digamma(a + b)`, `digamma(b) - digamma(a + b)`.
pub(super) fn lbeta(args: &[Array], _: u8, _: &Array) -> Result<Vec<Partial>> {
    let (a, b) = (&args[0], &args[1]);
    let both = digamma(&(a + b)?)?;
    Ok(vec![
        Partial::Of((digamma(a)? - &both)?),
        Partial::Of((digamma(b)? - &both)?),
    ])
}

/// `lgamma1p(a) = lgamma(1 + a)`: `digamma(1 + a)`.
pub(super) fn lgamma1p(a: &[Array], _: u8, _: &Array) -> Result<Vec<Partial>> {
    Ok(vec![Partial::Of(digamma(&(&a[0] + 1.0)?)?)])
}

/// `log1pmx(x) = log(1 + x) - x`: `-x / (1 + x)`.
pub(super) fn log1pmx(a: &[Array], _: u8, _: &Array) -> Result<Vec<Partial>> {
    let x = &a[0];
    Ok(vec![Partial::Of((x / &(x + 1.0)?)?.neg()?)])
}

/// `log1pexp(x) = log(1 + exp(x))`: `sigmoid(x)`.
pub(super) fn log1pexp(a: &[Array], _: u8, _: &Array) -> Result<Vec<Partial>> {
    Ok(vec![Partial::Of(a[0].sigmoid()?)])
}

/// `log1mexp(x) = log(1 - exp(-x))`: `1 / expm1(x)`.
pub(super) fn log1mexp(a: &[Array], _: u8, _: &Array) -> Result<Vec<Partial>> {
    Ok(vec![Partial::Of((1.0 / &a[0].expm1()?)?)])
}

/// `bd0(x, np) = x log(x / np) + np - x`: `log(x / np)`, `1 - x / np`.
pub(super) fn bd0(a: &[Array], _: u8, _: &Array) -> Result<Vec<Partial>> {
    let ratio = (&a[0] / &a[1])?;
    Ok(vec![
        Partial::Of(ratio.log()?),
        Partial::Of((1.0 - &ratio)?),
    ])
}
