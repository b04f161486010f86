//! The prefactor `x^a y^b / Beta(a, b)` of the expansions, computed to
//! avoid overflow and cancellation (TOMS `brcomp`, and `brcmp1` with an
//! extra factor `exp(mu)`).

use super::*;

/// `x^a * y^b / Beta(a, b)` (TOMS `brcomp`), as a log with `log_p`.
pub(super) fn brcomp(a: f64, b: f64, x: f64, y: f64, log_p: bool) -> f64 {
    const CONST: f64 = 0.398942280401433; // 1/sqrt(2*pi)

    if x == 0.0 || y == 0.0 {
        return d_0(log_p);
    }
    let a0 = min(a, b);
    if a0 < 8.0 {
        let (lnx, lny) = if x <= 0.375 {
            (x.ln(), alnrel(-x))
        } else if y > 0.375 {
            (x.ln(), y.ln())
        } else {
            (alnrel(-y), y.ln())
        };

        let mut z = a * lnx + b * lny;
        if a0 >= 1.0 {
            z -= betaln(a, b);
            return d_exp(z, log_p);
        }

        // a < 1 or b < 1
        let mut b0 = max(a, b);
        if b0 >= 8.0 {
            // L80
            let u = gamln1(a0) + algdiv(a0, b0);
            return if log_p {
                a0.ln() + (z - u)
            } else {
                a0 * (z - u).exp()
            };
        }

        if b0 <= 1.0 {
            // max(a, b) <= 1
            let e_z = d_exp(z, log_p);
            if !log_p && e_z == 0.0 {
                // exp() underflow
                return 0.0;
            }
            let apb = a + b;
            let z = if apb > 1.0 {
                let u = a + b - 1.0;
                (gam1(u) + 1.0) / apb
            } else {
                gam1(apb) + 1.0
            };
            let c = (gam1(a) + 1.0) * (gam1(b) + 1.0) / z;
            return if log_p {
                e_z + (a0 * c).ln() - (a0 / b0).ln_1p()
            } else {
                e_z * (a0 * c) / (a0 / b0 + 1.0)
            };
        }

        // 1 < b0 < 8
        let mut u = gamln1(a0);
        let n = (b0 - 1.0) as i32;
        if n >= 1 {
            let mut c = 1.0;
            for _ in 1..=n {
                b0 += -1.0;
                c *= b0 / (a0 + b0);
            }
            u += c.ln();
        }
        z -= u;
        b0 += -1.0;
        let apb = a0 + b0;
        let t = if apb > 1.0 {
            let u = a0 + b0 - 1.0;
            (gam1(u) + 1.0) / apb
        } else {
            gam1(apb) + 1.0
        };
        if log_p {
            a0.ln() + z + gam1(b0).ln_1p() - t.ln()
        } else {
            a0 * z.exp() * (gam1(b0) + 1.0) / t
        }
    } else {
        // a >= 8 and b >= 8
        let (h, x0, y0, lambda);
        if a <= b {
            h = a / b;
            x0 = h / (h + 1.0);
            y0 = 1.0 / (h + 1.0);
            lambda = a - (a + b) * x;
        } else {
            h = b / a;
            x0 = 1.0 / (h + 1.0);
            y0 = h / (h + 1.0);
            lambda = (a + b) * y - b;
        }

        let mut e = -lambda / a;
        let u = if e.abs() > 0.6 {
            e - (x / x0).ln()
        } else {
            rlog1(e)
        };
        e = lambda / b;
        let v = if e.abs() <= 0.6 {
            rlog1(e)
        } else {
            e - (y / y0).ln()
        };

        let z = if log_p {
            -(a * u + b * v)
        } else {
            (-(a * u + b * v)).exp()
        };
        if log_p {
            -M_LN_SQRT_2PI + 0.5 * (b * x0).ln() + z - bcorr(a, b)
        } else {
            CONST * (b * x0).sqrt() * z * (-bcorr(a, b)).exp()
        }
    }
}

/// `exp(mu) * x^a * y^b / beta(a, b)` (TOMS `brcmp1`), as a log with
/// `give_log`.
pub(super) fn brcmp1(mu: i32, a: f64, b: f64, x: f64, y: f64, give_log: bool) -> f64 {
    const CONST: f64 = 0.398942280401433; // 1/sqrt(2*pi)

    let a0 = min(a, b);
    if a0 < 8.0 {
        let (lnx, lny) = if x <= 0.375 {
            (x.ln(), alnrel(-x))
        } else if y > 0.375 {
            (x.ln(), y.ln())
        } else {
            (alnrel(-y), y.ln())
        };

        // L20
        let mut z = a * lnx + b * lny;
        if a0 >= 1.0 {
            z -= betaln(a, b);
            return esum(mu, z, give_log);
        }
        // a < 1 or b < 1 (L30)
        let mut b0 = max(a, b);
        if b0 >= 8.0 {
            // L80
            let u = gamln1(a0) + algdiv(a0, b0);
            return if give_log {
                a0.ln() + esum(mu, z - u, true)
            } else {
                a0 * esum(mu, z - u, false)
            };
        } else if b0 <= 1.0 {
            // a0 < 1, b0 <= 1
            let ans = esum(mu, z, give_log);
            if ans == (if give_log { f64::NEG_INFINITY } else { 0.0 }) {
                return ans;
            }
            let apb = a + b;
            let z = if apb > 1.0 {
                // L40
                let u = a + b - 1.0;
                (gam1(u) + 1.0) / apb
            } else {
                gam1(apb) + 1.0
            };
            // L50
            let c = if give_log {
                gam1(a).ln_1p() + gam1(b).ln_1p() - z.ln()
            } else {
                (gam1(a) + 1.0) * (gam1(b) + 1.0) / z
            };
            return if give_log {
                ans + a0.ln() + c - (a0 / b0).ln_1p()
            } else {
                ans * (a0 * c) / (a0 / b0 + 1.0)
            };
        }
        // a0 < 1 < b0 < 8 (L60)
        let mut u = gamln1(a0);
        let n = (b0 - 1.0) as i32;
        if n >= 1 {
            let mut c = 1.0;
            for _ in 1..=n {
                b0 += -1.0;
                c *= b0 / (a0 + b0);
            }
            u += c.ln();
        }
        // L70
        z -= u;
        b0 += -1.0;
        let apb = a0 + b0;
        let t = if apb > 1.0 {
            (gam1(apb - 1.0) + 1.0) / apb
        } else {
            gam1(apb) + 1.0
        };
        // L72
        if give_log {
            a0.ln() + esum(mu, z, true) + gam1(b0).ln_1p() - t.ln()
        } else {
            a0 * esum(mu, z, false) * (gam1(b0) + 1.0) / t
        }
    } else {
        // a >= 8 and b >= 8 (L100)
        let (h, x0, y0, lambda);
        if a > b {
            h = b / a;
            x0 = 1.0 / (h + 1.0);
            y0 = h / (h + 1.0);
            lambda = (a + b) * y - b;
        } else {
            h = a / b;
            x0 = h / (h + 1.0);
            y0 = 1.0 / (h + 1.0);
            lambda = a - (a + b) * x;
        }
        let lx0 = -(b / a).ln_1p(); // in both cases

        // L110
        let mut e = -lambda / a;
        let u = if e.abs() > 0.6 {
            e - (x / x0).ln()
        } else {
            rlog1(e)
        };
        // L120
        e = lambda / b;
        let v = if e.abs() > 0.6 {
            e - (y / y0).ln()
        } else {
            rlog1(e)
        };
        // L130
        let z = esum(mu, -(a * u + b * v), give_log);
        if give_log {
            CONST.ln() + (b.ln() + lx0) / 2.0 + z - bcorr(a, b)
        } else {
            CONST * (b * x0).sqrt() * z * (-bcorr(a, b)).exp()
        }
    }
}
