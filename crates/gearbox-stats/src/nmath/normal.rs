//! The normal distribution function and quantile: R's `pnorm.c` (Cody's
//! rational Chebyshev approximations, `pnorm_both`) and `qnorm.c`
//! (Wichura's AS 241 with R 4.2's extreme-tail branch).

use super::dpq::{d_0, d_1, dt_0, dt_1, dt_civ, dt_qiv, q_p01_boundaries};

/// `sqrt(32)`, R's `M_SQRT_32`.
const M_SQRT_32: f64 = 5.656854249492380195206754896838;
/// `1 / sqrt(2 pi)`, R's `M_1_SQRT_2PI`.
const M_1_SQRT_2PI: f64 = 0.398942280401432677939946059934;

/// The normal distribution function `P[X <= x]` for `X ~ N(mu, sigma^2)`
/// (R's `pnorm`), or the upper tail, on the log scale if asked.
pub fn pnorm(x: f64, mu: f64, sigma: f64, lower_tail: bool, log_p: bool) -> f64 {
    if x.is_nan() || mu.is_nan() || sigma.is_nan() {
        return x + mu + sigma;
    }
    if !x.is_finite() && mu == x {
        return f64::NAN; // x - mu is NaN
    }
    if sigma <= 0.0 {
        if sigma < 0.0 {
            return f64::NAN;
        }
        // sigma == 0: a point mass at mu.
        return if x < mu {
            dt_0(lower_tail, log_p)
        } else {
            dt_1(lower_tail, log_p)
        };
    }
    let p = (x - mu) / sigma;
    if !p.is_finite() {
        return if x < mu {
            dt_0(lower_tail, log_p)
        } else {
            dt_1(lower_tail, log_p)
        };
    }
    let (mut cum, mut ccum) = (0.0, 0.0);
    pnorm_both(
        p,
        &mut cum,
        &mut ccum,
        if lower_tail { 0 } else { 1 },
        log_p,
    );
    if lower_tail {
        cum
    } else {
        ccum
    }
}

/// Numerator coefficients of Cody's rational approximation of the normal
/// tail for `|x| > sqrt(32)` (`pnorm_both`'s third range; also
/// `glm::link`'s probit ratio).
#[allow(clippy::excessive_precision)] // Cody's coefficients as R prints them
pub(crate) const CODY_TAIL_P: [f64; 6] = [
    0.21589853405795699,
    0.1274011611602473639,
    0.022235277870649807,
    0.001421619193227893466,
    2.9112874951168792e-5,
    0.02307344176494017303,
];

/// Denominator coefficients matching [`CODY_TAIL_P`].
#[allow(clippy::excessive_precision)]
pub(crate) const CODY_TAIL_Q: [f64; 5] = [
    1.28426009614491121,
    0.468238212480865118,
    0.0659881378689285515,
    0.00378239633202758244,
    7.29751555083966205e-5,
];

/// Both tails of the standard normal at `x` (R's `pnorm_both`): `i_tail`
/// 0, 1 or 2 asks for the lower tail `*cum = P[X <= x]`, the upper tail
/// `*ccum = P[X > x]`, or both; a tail not asked for may be left as it was.
pub fn pnorm_both(x: f64, cum: &mut f64, ccum: &mut f64, i_tail: i32, log_p: bool) {
    const A: [f64; 5] = [
        2.2352520354606839287,
        161.02823106855587881,
        1067.6894854603709582,
        18154.981253343561249,
        0.065682337918207449113,
    ];
    const B: [f64; 4] = [
        47.20258190468824187,
        976.09855173777669322,
        10260.932208618978205,
        45507.789335026729956,
    ];
    const C: [f64; 9] = [
        0.39894151208813466764,
        8.8831497943883759412,
        93.506656132177855979,
        597.27027639480026226,
        2494.5375852903726711,
        6848.1904505362823326,
        11602.651437647350124,
        9842.7148383839780218,
        1.0765576773720192317e-8,
    ];
    const D: [f64; 8] = [
        22.266688044328115691,
        235.38790178262499861,
        1519.377599407554805,
        6485.558298266760755,
        18615.571640885098091,
        34900.952721145977266,
        38912.003286093271411,
        19685.429676859990727,
    ];
    const P: [f64; 6] = CODY_TAIL_P;
    const Q: [f64; 5] = CODY_TAIL_Q;

    if x.is_nan() {
        *cum = x;
        *ccum = x;
        return;
    }
    let eps = f64::EPSILON * 0.5;
    let lower = i_tail != 1;
    let upper = i_tail != 0;

    // R's do_del(X): multiplies the tail factor `temp` by exp(-X^2/2),
    // splitting X^2 into an exactly representable part and a remainder.
    // (ldexp(v, 4) and ldexp(v, -1) are exact, as are v * 16 and v * 0.5.)
    let do_del = |big_x: f64, temp: f64, cum: &mut f64, ccum: &mut f64| {
        let xsq = (big_x * 16.0).trunc() / 16.0;
        let del = (big_x - xsq) * (big_x + xsq);
        if log_p {
            *cum = (-xsq * (xsq * 0.5)) - del * 0.5 + temp.ln();
            if (lower && x > 0.0) || (upper && x <= 0.0) {
                *ccum = (-(-xsq * (xsq * 0.5)).exp() * (-(del * 0.5)).exp() * temp).ln_1p();
            }
        } else {
            *cum = (-xsq * (xsq * 0.5)).exp() * (-(del * 0.5)).exp() * temp;
            *ccum = 1.0 - *cum;
        }
    };
    // R's swap_tail: the computation above is for x <= 0.
    let swap_tail = |cum: &mut f64, ccum: &mut f64| {
        if x > 0.0 {
            let temp = *cum;
            if lower {
                *cum = *ccum;
            }
            *ccum = temp;
        }
    };

    let y = x.abs();
    if y <= 0.67448975 {
        // |x| <= qnorm(3/4)
        let (xnum, xden) = if y > eps {
            let xsq = x * x;
            let mut xnum = A[4] * xsq;
            let mut xden = xsq;
            for i in 0..3 {
                xnum = (xnum + A[i]) * xsq;
                xden = (xden + B[i]) * xsq;
            }
            (xnum, xden)
        } else {
            (0.0, 0.0)
        };
        let temp = x * (xnum + A[3]) / (xden + B[3]);
        if lower {
            *cum = 0.5 + temp;
        }
        if upper {
            *ccum = 0.5 - temp;
        }
        if log_p {
            if lower {
                *cum = cum.ln();
            }
            if upper {
                *ccum = ccum.ln();
            }
        }
    } else if y <= M_SQRT_32 {
        // qnorm(3/4) < |x| <= sqrt(32) ~= 5.657
        let mut xnum = C[8] * y;
        let mut xden = y;
        for i in 0..7 {
            xnum = (xnum + C[i]) * y;
            xden = (xden + D[i]) * y;
        }
        let temp = (xnum + C[7]) / (xden + D[7]);
        do_del(y, temp, cum, ccum);
        swap_tail(cum, ccum);
    } else if (log_p && y < 1e170)
        || (lower && -37.5193 < x && x < 8.2924)
        || (upper && -8.2924 < x && x < 37.5193)
    {
        // sqrt(32) < |x|, where the result does not underflow
        let xsq = 1.0 / (x * x);
        let mut xnum = P[5] * xsq;
        let mut xden = xsq;
        for i in 0..4 {
            xnum = (xnum + P[i]) * xsq;
            xden = (xden + Q[i]) * xsq;
        }
        let mut temp = xsq * (xnum + P[4]) / (xden + Q[4]);
        temp = (M_1_SQRT_2PI - temp) / y;
        do_del(x, temp, cum, ccum);
        swap_tail(cum, ccum);
    } else if x > 0.0 {
        // large |x|: probabilities are 0 or 1
        *cum = d_1(log_p);
        *ccum = d_0(log_p);
    } else {
        *cum = d_0(log_p);
        *ccum = d_1(log_p);
    }
}

/// The normal quantile function (R 4.2's `qnorm`, Wichura's AS 241): the
/// `x` with `pnorm(x, mu, sigma, lower_tail, log_p) == p`.
pub fn qnorm(p: f64, mu: f64, sigma: f64, lower_tail: bool, log_p: bool) -> f64 {
    if p.is_nan() || mu.is_nan() || sigma.is_nan() {
        return p + mu + sigma;
    }
    if let Some(v) = q_p01_boundaries(p, f64::NEG_INFINITY, f64::INFINITY, lower_tail, log_p) {
        return v;
    }
    if sigma < 0.0 {
        return f64::NAN;
    }
    if sigma == 0.0 {
        return mu;
    }

    let p_ = dt_qiv(p, lower_tail, log_p); // the lower-tail probability
    let q = p_ - 0.5;
    let mut val;
    if q.abs() <= 0.425 {
        // 0.075 <= p <= 0.925
        let r = 0.180625 - q * q;
        val = q
            * (((((((r * 2509.0809287301226727 + 33430.575583588128105) * r
                + 67265.770927008700853)
                * r
                + 45921.953931549871457)
                * r
                + 13731.693765509461125)
                * r
                + 1971.5909503065514427)
                * r
                + 133.14166789178437745)
                * r
                + 3.387132872796366608)
            / (((((((r * 5226.495278852854561 + 28729.085735721942674) * r
                + 39307.89580009271061)
                * r
                + 21213.794301586595867)
                * r
                + 5394.1960214247511077)
                * r
                + 687.1870074920579083)
                * r
                + 42.313330701600911252)
                * r
                + 1.0);
    } else {
        // closer than 0.075 to 0 or 1: r = log(min(p, 1 - p))
        let mut r = if log_p && ((lower_tail && q <= 0.0) || (!lower_tail && q > 0.0)) {
            p
        } else if q > 0.0 {
            dt_civ(p, lower_tail, log_p).ln()
        } else {
            p_.ln()
        };
        r = (-r).sqrt();
        if r <= 5.0 {
            // min(p, 1 - p) >= exp(-25) ~= 1.3888e-11
            r += -1.6;
            val = (((((((r * 7.7454501427834140764e-4 + 0.0227238449892691845833) * r
                + 0.24178072517745061177)
                * r
                + 1.27045825245236838258)
                * r
                + 3.64784832476320460504)
                * r
                + 5.7694972214606914055)
                * r
                + 4.6303378461565452959)
                * r
                + 1.42343711074968357734)
                / (((((((r * 1.05075007164441684324e-9 + 5.475938084995344946e-4) * r
                    + 0.0151986665636164571966)
                    * r
                    + 0.14810397642748007459)
                    * r
                    + 0.68976733498510000455)
                    * r
                    + 1.6763848301838038494)
                    * r
                    + 2.05319162663775882187)
                    * r
                    + 1.0);
        } else if r >= 816.0 {
            // p is extremely close to 0 or 1 (only possible with log_p):
            // the first term of the asymptotic expansion
            val = r * std::f64::consts::SQRT_2;
        } else {
            // exp(-25) > min(p, 1 - p)
            r += -5.0;
            val = (((((((r * 2.01033439929228813265e-7 + 2.71155556874348757815e-5) * r
                + 0.0012426609473880784386)
                * r
                + 0.026532189526576123093)
                * r
                + 0.29656057182850489123)
                * r
                + 1.7848265399172913358)
                * r
                + 5.4637849111641143699)
                * r
                + 6.6579046435011037772)
                / (((((((r * 2.04426310338993978564e-15 + 1.4215117583164458887e-7) * r
                    + 1.8463183175100546818e-5)
                    * r
                    + 7.868691311456132591e-4)
                    * r
                    + 0.0148753612908506148525)
                    * r
                    + 0.13692988092273580531)
                    * r
                    + 0.59983220655588793769)
                    * r
                    + 1.0);
        }
        if q < 0.0 {
            val = -val;
        }
    }
    mu + sigma * val
}
