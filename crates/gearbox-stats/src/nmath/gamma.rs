//! The gamma and beta functions: `gammafn`, `lgamma` (R's `lgammafn`),
//! `lgamma1p`, `lbeta`, with their helpers `lgammacor`, `chebyshev_eval`
//! and `sinpi` (R's `gamma.c`, `lgamma.c`, `lgammacor.c`, `chebyshev.c`,
//! `lbeta.c`, `cospi.c` and `lgamma1p` from `pgamma.c`).

use std::f64::consts::PI;

use super::deviance::stirlerr;
use super::log1p::{log1pmx, logcf};

/// `log(sqrt(2 pi))`.
pub(crate) const M_LN_SQRT_2PI: f64 = 0.918_938_533_204_672_741_780_329_736_406;
/// `log(sqrt(pi / 2))`.
const M_LN_SQRT_PID2: f64 = 0.225_791_352_644_727_432_363_097_614_947;

/// Fullerton's Chebyshev coefficients of `gamma(1 + y)`, `y` in [0, 1).
const GAMCS: [f64; 42] = [
    0.8571195590989331421920062399942e-2,
    0.4415381324841006757191315771652e-2,
    0.5685043681599363378632664588789e-1,
    -0.4219835396418560501012500186624e-2,
    0.1326808181212460220584006796352e-2,
    -0.1893024529798880432523947023886e-3,
    0.3606925327441245256578082217225e-4,
    -0.6056761904460864218485548290365e-5,
    0.1055829546302283344731823509093e-5,
    -0.1811967365542384048291855891166e-6,
    0.3117724964715322277790254593169e-7,
    -0.5354219639019687140874081024347e-8,
    0.9193275519859588946887786825940e-9,
    -0.1577941280288339761767423273953e-9,
    0.2707980622934954543266540433089e-10,
    -0.4646818653825730144081661058933e-11,
    0.7973350192007419656460767175359e-12,
    -0.1368078209830916025799499172309e-12,
    0.2347319486563800657233471771688e-13,
    -0.4027432614949066932766570534699e-14,
    0.6910051747372100912138336975257e-15,
    -0.1185584500221992907052387126192e-15,
    0.2034148542496373955201026051932e-16,
    -0.3490054341717405849274012949108e-17,
    0.5987993856485305567135051066026e-18,
    -0.1027378057872228074490069778431e-18,
    0.1762702816060529824942759660748e-19,
    -0.3024320653735306260958772112042e-20,
    0.5188914660218397839717833550506e-21,
    -0.8902770842456576692449251601066e-22,
    0.1527474068493342602274596891306e-22,
    -0.2620731256187362900257328332799e-23,
    0.4496464047830538670331046570666e-24,
    -0.7714712731336877911703901525333e-25,
    0.1323635453126044036486572714666e-25,
    -0.2270999412942928816702313813333e-26,
    0.3896418998003991449320816639999e-27,
    -0.6685198115125953327792127999999e-28,
    0.1146998663140024384347613866666e-28,
    -0.1967938586345134677295103999999e-29,
    0.3376448816585338090334890666666e-30,
    -0.5793070335782135784625493333333e-31,
];

/// Fullerton's Chebyshev coefficients of [`lgammacor`].
const ALGMCS: [f64; 15] = [
    0.1666389480451863247205729650822e+0,
    -0.1384948176067563840732986059135e-4,
    0.9810825646924729426157171547487e-8,
    -0.1809129475572494194263306266719e-10,
    0.6221098041892605227126015543416e-13,
    -0.3399615005417721944303330599666e-15,
    0.2683181998482698748957538846666e-17,
    -0.2868042435334643284144622399999e-19,
    0.3962837061046434803679306666666e-21,
    -0.6831888753985766870111999999999e-23,
    0.1429227355942498147573333333333e-24,
    -0.3547598158101070547199999999999e-26,
    0.1025680058010470912000000000000e-27,
    -0.3401102254316748799999999999999e-29,
    0.1276642195630062933333333333333e-30,
];

/// The first `n` terms of the Chebyshev series `a` at `x` in [-1.1, 1.1]
/// (R's `chebyshev_eval`, Fullerton's `dcsevl`). NaN for `x` outside that
/// range or `n` outside `1..=min(1000, a.len())`.
pub fn chebyshev_eval(x: f64, a: &[f64], n: usize) -> f64 {
    if !(1..=1000).contains(&n) || n > a.len() {
        return f64::NAN;
    }
    if !(-1.1..=1.1).contains(&x) {
        return f64::NAN;
    }
    let twox = x * 2.0;
    let (mut b0, mut b1, mut b2) = (0.0, 0.0, 0.0);
    for i in 1..=n {
        b2 = b1;
        b1 = b0;
        b0 = twox * b1 - b2 + a[n - i];
    }
    (b0 - b2) * 0.5
}

/// The correction `lgammacor(x) = log(gamma(x)) - [log(sqrt(2 pi)) +
/// (x - 1/2) log(x) - x]` for `x >= 10` (R's `lgammacor`). NaN for
/// `x < 10`; 0 once it underflows.
pub fn lgammacor(x: f64) -> f64 {
    const NALGM: usize = 5;
    const XBIG: f64 = 94906265.62425156;
    const XMAX: f64 = 3.745194030963158e306;
    if x < 10.0 {
        f64::NAN
    } else if x >= XMAX {
        // Underflow.
        0.0
    } else if x < XBIG {
        let tmp = 10.0 / x;
        chebyshev_eval(tmp * tmp * 2.0 - 1.0, &ALGMCS, NALGM) / x
    } else {
        1.0 / (x * 12.0)
    }
}

/// `sin(pi x)`, exact at multiples of 1/2 (R's `sinpi`). NaN for
/// infinite `x`.
pub fn sinpi(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if !x.is_finite() {
        return f64::NAN;
    }
    // sin(pi (x + 2k)) = sin(pi x): reduce to (-2, 2), then to (-1, 1].
    let mut x = x % 2.0;
    if x <= -1.0 {
        x += 2.0;
    } else if x > 1.0 {
        x -= 2.0;
    }
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    if x == 0.5 {
        return 1.0;
    }
    if x == -0.5 {
        return -1.0;
    }
    (PI * x).sin()
}

/// The gamma function (R's `gammafn`). NaN at 0 and the negative
/// integers; `+Inf` above 171.61; 0 below -170.57.
pub fn gammafn(x: f64) -> f64 {
    const NGAM: usize = 22;
    const XMIN: f64 = -170.5674972726612;
    const XMAX: f64 = 171.61447887182298;
    const XSML: f64 = 2.2474362225598545e-308;

    if x.is_nan() {
        return x;
    }
    // Exactly zero or a negative integer.
    if x == 0.0 || (x < 0.0 && x == x.round()) {
        return f64::NAN;
    }

    let mut y = x.abs();
    if y <= 10.0 {
        // gamma(x) for -10 <= x <= 10: reduce to gamma(1 + y), 0 <= y < 1.
        let mut n = x as i32;
        if x < 0.0 {
            n -= 1;
        }
        y = x - f64::from(n); // n = floor(x), so y in [0, 1)
        n -= 1;
        let mut value = chebyshev_eval(y * 2.0 - 1.0, &GAMCS, NGAM) + 0.9375;
        if n == 0 {
            return value; // x = 1.dddd = 1 + y
        }
        if n < 0 {
            // -10 <= x < 1. So close to 0 that the result would overflow:
            if y < XSML {
                return if x > 0.0 {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                };
            }
            for i in 0..-n {
                value /= x + f64::from(i);
            }
            value
        } else {
            // 2 <= x <= 10.
            for i in 1..=n {
                value *= y + f64::from(i);
            }
            value
        }
    } else {
        // |x| > 10.
        if x > XMAX {
            return f64::INFINITY;
        }
        if x < XMIN {
            return 0.0;
        }
        let value = if y <= 50.0 && y == y.trunc() {
            // (y - 1)!
            let mut v = 1.0;
            let mut i = 2.0;
            while i < y {
                v *= i;
                i += 1.0;
            }
            v
        } else {
            // R's test here, `2*y == (int)2*y`, always holds, so R takes
            // stirlerr(y) rather than lgammacor(y); so do we.
            ((y - 0.5) * y.ln() - y + M_LN_SQRT_2PI + stirlerr(y)).exp()
        };
        if x > 0.0 {
            return value;
        }
        let sinpiy = sinpi(y);
        if sinpiy == 0.0 {
            // Negative integer: overflow.
            return f64::INFINITY;
        }
        -PI / (y * sinpiy * value)
    }
}

/// `log|gamma(x)|` (R's `lgammafn`). `+Inf` at 0, the negative integers
/// and beyond 2.53e305.
pub fn lgamma(x: f64) -> f64 {
    const XMAX: f64 = 2.5327372760800758e+305;

    if x.is_nan() {
        return x;
    }
    if x <= 0.0 && x == x.trunc() {
        // Zero or a negative integer.
        return f64::INFINITY;
    }
    let y = x.abs();
    if y < 1e-306 {
        return -y.ln(); // denormalized range
    }
    if y <= 10.0 {
        return gammafn(x).abs().ln();
    }
    if y > XMAX {
        return f64::INFINITY;
    }
    if x > 0.0 {
        if x > 1e17 {
            return x * (x.ln() - 1.0);
        } else if x > 4934720.0 {
            return M_LN_SQRT_2PI + (x - 0.5) * x.ln() - x;
        }
        return M_LN_SQRT_2PI + (x - 0.5) * x.ln() - x + lgammacor(x);
    }
    // x < -10; y = -x.
    let sinpiy = sinpi(y).abs();
    if sinpiy == 0.0 {
        // Negative integer: caught above; kept as R has it.
        return f64::NAN;
    }
    M_LN_SQRT_PID2 + (x - 0.5) * y.ln() - x - sinpiy.ln() - lgammacor(y)
}

/// `(zeta(i + 2) - 1) / (i + 2)`, `i = 0..40`: the series of [`lgamma1p`].
const LGAMMA1P_COEFFS: [f64; 40] = [
    0.3224670334241132182362075833230126e-0,
    0.6735230105319809513324605383715000e-1,
    0.2058080842778454787900092413529198e-1,
    0.7385551028673985266273097291406834e-2,
    0.2890510330741523285752988298486755e-2,
    0.1192753911703260977113935692828109e-2,
    0.5096695247430424223356548135815582e-3,
    0.2231547584535793797614188036013401e-3,
    0.9945751278180853371459589003190170e-4,
    0.4492623673813314170020750240635786e-4,
    0.2050721277567069155316650397830591e-4,
    0.9439488275268395903987425104415055e-5,
    0.4374866789907487804181793223952411e-5,
    0.2039215753801366236781900709670839e-5,
    0.9551412130407419832857179772951265e-6,
    0.4492469198764566043294290331193655e-6,
    0.2120718480555466586923135901077628e-6,
    0.1004322482396809960872083050053344e-6,
    0.4769810169363980565760193417246730e-7,
    0.2271109460894316491031998116062124e-7,
    0.1083865921489695409107491757968159e-7,
    0.5183475041970046655121248647057669e-8,
    0.2483674543802478317185008663991718e-8,
    0.1192140140586091207442548202774640e-8,
    0.5731367241678862013330194857961011e-9,
    0.2759522885124233145178149692816341e-9,
    0.1330476437424448948149715720858008e-9,
    0.6422964563838100022082448087644648e-10,
    0.3104424774732227276239215783404066e-10,
    0.1502138408075414217093301048780668e-10,
    0.7275974480239079662504549924814047e-11,
    0.3527742476575915083615072228655483e-11,
    0.1711991790559617908601084114443031e-11,
    0.8315385841420284819798357793954418e-12,
    0.4042200525289440065536008957032895e-12,
    0.1966475631096616490411045679010286e-12,
    0.9573630387838555763782200936508615e-13,
    0.4664076026428374224576492565974577e-13,
    0.2273736960065972320633279596737272e-13,
    0.1109139947083452201658320007192334e-13,
];

/// `log(gamma(1 + a))`, accurate also for small `a` (R's `lgamma1p`):
/// Abramowitz & Stegun 6.1.33 for `|a| < 0.5`, else [`lgamma`]`(a + 1)`.
pub fn lgamma1p(a: f64) -> f64 {
    if a.abs() >= 0.5 {
        return lgamma(a + 1.0);
    }
    const EULERS_CONST: f64 = 0.5772156649015328606065120900824024;
    const N: usize = 40;
    // zeta(N + 2) - 1
    const C: f64 = 0.2273736845824652515226821577978691e-12;
    const TOL_LOGCF: f64 = 1e-14;

    // log(gamma(1+a)) = -(log(1+a) - a) - gamma a + a^2 sum_n c_n (-a)^n,
    // the tail of the sum accelerated by a continued fraction.
    let mut lgam = C * logcf(-a / 2.0, (N + 2) as f64, 1.0, TOL_LOGCF);
    for i in (0..N).rev() {
        lgam = LGAMMA1P_COEFFS[i] - a * lgam;
    }
    (a * lgam - EULERS_CONST) * a - log1pmx(a)
}

/// `log(beta(a, b))` (R's `lbeta`). NaN for a negative argument, `+Inf`
/// when the smaller is 0, `-Inf` when the larger is `+Inf`.
pub fn lbeta(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return a + b;
    }
    let (mut p, mut q) = (a, a);
    if b < p {
        p = b; // min(a, b)
    }
    if b > q {
        q = b; // max(a, b)
    }
    // Both arguments must be >= 0.
    if p < 0.0 {
        return f64::NAN;
    } else if p == 0.0 {
        return f64::INFINITY;
    } else if !q.is_finite() {
        return f64::NEG_INFINITY;
    }

    if p >= 10.0 {
        // p and q are big.
        let corr = lgammacor(p) + lgammacor(q) - lgammacor(p + q);
        q.ln() * -0.5
            + M_LN_SQRT_2PI
            + corr
            + (p - 0.5) * (p / (p + q)).ln()
            + q * (-p / (p + q)).ln_1p()
    } else if q >= 10.0 {
        // p is small, but q is big.
        let corr = lgammacor(q) - lgammacor(p + q);
        lgamma(p) + corr + p - p * (p + q).ln() + (q - 0.5) * (-p / (p + q)).ln_1p()
    } else if p < 1e-306 {
        // p and q small (p <= q < 10), p tiny.
        lgamma(p) + (lgamma(q) - lgamma(p + q))
    } else {
        (gammafn(p) * (gammafn(q) / gammafn(p + q))).ln()
    }
}
