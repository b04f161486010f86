//! The nmath functions on [`Array`]s: `gearbox::stats::dbinom(&x, &n, &p,
//! false)` and so on, elementwise with broadcasting, float64 results, and
//! R's flags as `bool`s. Each is a fusable kernel expression: the planner
//! joins it to the elementwise work and reduction around it, the CPU runs
//! the Rust function, and a GPU compiles the function's device source (with
//! exactly its callees, see [`crate::device`]) into the same kernel.
//!
//! Each function also has a [`ScalarFn`] descriptor (`DBINOM`, ...), for
//! code that builds kernel IR directly.
//!
//! Derivatives ([`gearbox_core::autodiff`]): each function carries its
//! partial derivatives as array expressions (module `derivatives`), so
//! `grad` flows through it and the gradient fuses like the function:
//!
//! | function | differentiable in | no gradient (discrete) | no rule (an error if needed) |
//! |---|---|---|---|
//! | `dnorm`, `pnorm`, `qnorm` | every argument | | |
//! | `dlogis`, `plogis`, `qlogis` | every argument | | |
//! | `dbinom` | `p` | `x`, `n` | |
//! | `dpois` | `lambda` | `x` | |
//! | `dnbinom` | `size`, `prob` | `x` | |
//! | `dgamma`, `dbeta`, `dt` | every argument | | |
//! | `pgamma` | `q`, `scale` | | `shape` |
//! | `pbeta` | `q` | | `a`, `b` |
//! | `pt` | `q` | | `n` |
//! | `lgamma` (`digamma`), `lbeta`, `lgamma1p` | every argument | | |
//! | `log1pmx`, `log1pexp`, `log1mexp`, `bd0` | every argument | | |
//! | `digamma` (needs trigamma), `stirlerr` | | | every argument |
//!
//! Every flag combination is covered (`give_log`, `lower_tail`, `log_p`).
//! The rules hold inside the function's domain (`0 < p < 1` for `dbinom`,
//! `lambda > 0`, positive scales); a gradient through a function or
//! argument without a rule is [`gearbox_core::Error::Autodiff`] naming it,
//! never a silent zero; through a discrete argument it is absent, as for
//! an integer array.

use gearbox_core::fusion::ir::{DeviceLibrary, ScalarFn};
use gearbox_core::{Array, Result};

use crate::nmath;

mod derivatives;
use derivatives as d;

/// The nmath device library: its assembler pulls exactly the functions a
/// kernel calls and their callees, in dependency order.
pub static NMATH: DeviceLibrary = DeviceLibrary {
    name: "nmath",
    assemble: crate::device::assemble,
};

/// Flag bits from flags in order (flag `i` in bit `i`).
fn bits(flags: &[bool]) -> u8 {
    flags
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &f)| acc | (u8::from(f) << i))
}

/// Defines the [`ScalarFn`] descriptor and the Array function of one nmath
/// function: `STATIC, name(args; flags) => |a, f| scalar call`.
macro_rules! elementwise {
    ($( $stat:ident, $name:ident ( $($arg:ident),+ ; $($flag:ident),* ) => $eval:expr $(, d: $partials:expr)? ;)*) => {
        $(
            #[doc = concat!("Kernel descriptor of R's `", stringify!($name), "` (device function `gb_", stringify!($name), "`).")]
            pub static $stat: ScalarFn = ScalarFn {
                name: stringify!($name),
                device_name: concat!("gb_", stringify!($name)),
                arity: <[&str]>::len(&[$(stringify!($arg)),+]),
                flags: <[&str]>::len(&[$(stringify!($flag)),*]),
                eval: $eval,
                library: &NMATH,
                partials: partials!($($partials)?),
            };

            #[doc = concat!(
                "R's `", stringify!($name), "(", $(stringify!($arg), ", ",)+ $(stringify!($flag), ", ",)* ")` elementwise: ",
                "array arguments broadcast together (any numeric dtype, converted to float64), float64 result; ",
                "see [`crate::nmath::", stringify!($name), "`] for the scalar version."
            )]
            pub fn $name($($arg: &Array,)+ $($flag: bool),*) -> Result<Array> {
                Array::call_fn(&$stat, &[$($arg),+], bits(&[$($flag),*]))
            }
        )*

        /// Every descriptor, for tests and tools that walk them all.
        pub static ALL: &[&ScalarFn] = &[$(&$stat),*];
    };
}

/// `Some(rule)` for a function with partial derivatives, `None` without.
macro_rules! partials {
    () => {
        None
    };
    ($p:expr) => {
        Some($p)
    };
}

/// Flag `i` of `f`.
fn flag(f: u8, i: u8) -> bool {
    (f >> i) & 1 == 1
}

elementwise! {
    DBINOM, dbinom(x, n, p; give_log) => |a, f| nmath::dbinom(a[0], a[1], a[2], flag(f, 0)), d: d::dbinom;
    DPOIS, dpois(x, lambda; give_log) => |a, f| nmath::dpois(a[0], a[1], flag(f, 0)), d: d::dpois;
    DNBINOM, dnbinom(x, size, prob; give_log) => |a, f| nmath::dnbinom(a[0], a[1], a[2], flag(f, 0)), d: d::dnbinom;
    DNORM, dnorm(x, mu, sigma; give_log) => |a, f| nmath::dnorm(a[0], a[1], a[2], flag(f, 0)), d: d::dnorm;
    PNORM, pnorm(q, mu, sigma; lower_tail, log_p) => |a, f| nmath::pnorm(a[0], a[1], a[2], flag(f, 0), flag(f, 1)), d: d::pnorm;
    QNORM, qnorm(p, mu, sigma; lower_tail, log_p) => |a, f| nmath::qnorm(a[0], a[1], a[2], flag(f, 0), flag(f, 1)), d: d::qnorm;
    DGAMMA, dgamma(x, shape, scale; give_log) => |a, f| nmath::dgamma(a[0], a[1], a[2], flag(f, 0)), d: d::dgamma;
    PGAMMA, pgamma(q, shape, scale; lower_tail, log_p) => |a, f| nmath::pgamma(a[0], a[1], a[2], flag(f, 0), flag(f, 1)), d: d::pgamma;
    DBETA, dbeta(x, a, b; give_log) => |a, f| nmath::dbeta(a[0], a[1], a[2], flag(f, 0)), d: d::dbeta;
    PBETA, pbeta(q, a, b; lower_tail, log_p) => |a, f| nmath::pbeta(a[0], a[1], a[2], flag(f, 0), flag(f, 1)), d: d::pbeta;
    DLOGIS, dlogis(x, location, scale; give_log) => |a, f| nmath::dlogis(a[0], a[1], a[2], flag(f, 0)), d: d::dlogis;
    PLOGIS, plogis(q, location, scale; lower_tail, log_p) => |a, f| nmath::plogis(a[0], a[1], a[2], flag(f, 0), flag(f, 1)), d: d::plogis;
    QLOGIS, qlogis(p, location, scale; lower_tail, log_p) => |a, f| nmath::qlogis(a[0], a[1], a[2], flag(f, 0), flag(f, 1)), d: d::qlogis;
    DT, dt(x, n; give_log) => |a, f| nmath::dt(a[0], a[1], flag(f, 0)), d: d::dt;
    PT, pt(q, n; lower_tail, log_p) => |a, f| nmath::pt(a[0], a[1], flag(f, 0), flag(f, 1)), d: d::pt;
    LGAMMA, lgamma(x;) => |a, _| nmath::lgamma(a[0]), d: d::lgamma;
    DIGAMMA, digamma(x;) => |a, _| nmath::digamma(a[0]);
    LBETA, lbeta(a, b;) => |a, _| nmath::lbeta(a[0], a[1]), d: d::lbeta;
    LGAMMA1P, lgamma1p(a;) => |a, _| nmath::lgamma1p(a[0]), d: d::lgamma1p;
    LOG1PMX, log1pmx(x;) => |a, _| nmath::log1pmx(a[0]), d: d::log1pmx;
    LOG1PEXP, log1pexp(x;) => |a, _| nmath::log1pexp(a[0]), d: d::log1pexp;
    LOG1MEXP, log1mexp(x;) => |a, _| nmath::log1mexp(a[0]), d: d::log1mexp;
    STIRLERR, stirlerr(n;) => |a, _| nmath::stirlerr(a[0]);
    BD0, bd0(x, np;) => |a, _| nmath::bd0(a[0], a[1]), d: d::bd0;
}
