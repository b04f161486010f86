//! The series, continued fraction and asymptotic expansions `bratio`
//! chooses between (TOMS `fpser`, `apser`, `bpser`, `bup`, `bfrac`, `bgrat`,
//! `grat_r`, `basym`), each for its region of `(a, b, x)`.

use super::*;

/// `I_x(a, b)` for `b < min(eps, eps * a)` and `x <= 0.5` (TOMS `fpser`).
pub(super) fn fpser(a: f64, b: f64, x: f64, eps: f64, log_p: bool) -> f64 {
    // ans := x^a
    let mut ans = if log_p {
        a * x.ln()
    } else if a > eps * 0.001 {
        let t = a * x.ln();
        if t < exparg(1) {
            // exp(t) would underflow
            return 0.0;
        }
        t.exp()
    } else {
        1.0
    };

    // note that 1/B(a, b) = b
    if log_p {
        ans += b.ln() - a.ln();
    } else {
        ans *= b / a;
    }

    let tol = eps / a;
    let mut an = a + 1.0;
    let mut t = x;
    let mut s = t / an;
    loop {
        an += 1.0;
        t *= x;
        let c = t / an;
        s += c;
        if !(c.abs() > tol) {
            break;
        }
    }

    if log_p {
        ans + (a * s).ln_1p()
    } else {
        ans * (a * s + 1.0)
    }
}

/// `I_{1-x}(b, a)` for `a <= min(eps, eps * b)`, `b * x <= 1` and
/// `x <= 0.5`, i.e. very small `a` (TOMS `apser`).
pub(super) fn apser(a: f64, b: f64, x: f64, eps: f64) -> f64 {
    const G: f64 = 0.577215664901533;

    let bx = b * x;
    let mut t = x - bx;
    let c = if b * eps <= 0.02 {
        x.ln() + psi(b) + G + t
    } else {
        // b > 2e13: psi(b) ~= log(b)
        bx.ln() + G + t
    };

    let tol = eps * 5.0 * c.abs();
    let mut j = 1.0;
    let mut s = 0.0;
    loop {
        j += 1.0;
        t *= x - bx / j;
        let aj = t / j;
        s += aj;
        if !(aj.abs() > tol) {
            break;
        }
    }
    -a * (c + s)
}

/// The power series for `I_x(a, b)` when `b <= 1` or `b * x <= 0.7`
/// (TOMS `bpser`); with `log_p` also used for `b < 40`, `lambda > 650`.
pub(super) fn bpser(a: f64, b: f64, x: f64, eps: f64, log_p: bool) -> f64 {
    if x == 0.0 {
        return d_0(log_p);
    }
    // the factor x^a / (a * Beta(a, b))
    let mut ans;
    let a0 = min(a, b);
    if a0 >= 1.0 {
        // 1 <= a0 <= b0
        let z = a * x.ln() - betaln(a, b);
        ans = if log_p { z - a.ln() } else { z.exp() / a };
    } else {
        let mut b0 = max(a, b);
        if b0 < 8.0 {
            if b0 <= 1.0 {
                // a0 < 1 and b0 <= 1
                if log_p {
                    ans = a * x.ln();
                } else {
                    ans = x.powf(a);
                    if ans == 0.0 {
                        // once underflow, always underflow
                        return ans;
                    }
                }
                let apb = a + b;
                let z = if apb > 1.0 {
                    let u = a + b - 1.0;
                    (gam1(u) + 1.0) / apb
                } else {
                    gam1(apb) + 1.0
                };
                let c = (gam1(a) + 1.0) * (gam1(b) + 1.0) / z;
                if log_p {
                    ans += (c * (b / apb)).ln();
                } else {
                    ans *= c * (b / apb);
                }
            } else {
                // a0 < 1 < b0 < 8
                let mut u = gamln1(a0);
                let m = (b0 - 1.0) as i32;
                if m >= 1 {
                    let mut c = 1.0;
                    for _ in 1..=m {
                        b0 += -1.0;
                        c *= b0 / (a0 + b0);
                    }
                    u += c.ln();
                }
                let z = a * x.ln() - u;
                b0 += -1.0; // b0 in (0, 7)
                let apb = a0 + b0;
                let t = if apb > 1.0 {
                    let u = a0 + b0 - 1.0;
                    (gam1(u) + 1.0) / apb
                } else {
                    gam1(apb) + 1.0
                };
                ans = if log_p {
                    z + (a0 / a).ln() + gam1(b0).ln_1p() - t.ln()
                } else {
                    z.exp() * (a0 / a) * (gam1(b0) + 1.0) / t
                };
            }
        } else {
            // a0 < 1 < 8 <= b0
            let u = gamln1(a0) + algdiv(a0, b0);
            let z = a * x.ln() - u;
            ans = if log_p {
                z + (a0 / a).ln()
            } else {
                a0 / a * z.exp()
            };
        }
    }
    if ans == d_0(log_p) || (!log_p && a <= eps * 0.1) {
        return ans;
    }

    // the series
    let tol = eps / a;
    let mut n = 0.0;
    let mut sum = 0.0;
    let mut c = 1.0;
    let mut w;
    loop {
        // sum is alternating as long as n < b (<=> 1 - b/n < 0)
        n += 1.0;
        c *= (0.5 - b / n + 0.5) * x;
        w = c / (a + n);
        sum += w;
        if !(n < 1e7 && w.abs() > tol) {
            break;
        }
    }
    // (R warns here when the series did not converge in 1e7 terms.)
    if log_p {
        if a * sum > -1.0 {
            ans += (a * sum).ln_1p();
        } else {
            ans = f64::NEG_INFINITY;
        }
    } else if a * sum > -1.0 {
        ans *= a * sum + 1.0;
    } else {
        // underflow
        ans = 0.0;
    }
    ans
}

/// `I_x(a, b) - I_x(a + n, b)` for a positive integer `n` (TOMS `bup`),
/// as a log with `give_log`.
pub(super) fn bup(a: f64, b: f64, x: f64, y: f64, n: i32, eps: f64, give_log: bool) -> f64 {
    // the scaling factor exp(-mu) and exp(mu) * (x^a * y^b / beta(a, b)) / a
    let apb = a + b;
    let ap1 = a + 1.0;
    let (mu, mut d) = if n > 1 && a >= 1.0 && apb >= ap1 * 1.1 {
        let mut mu = exparg(1).abs() as i32;
        let k = exparg(0) as i32;
        if mu > k {
            mu = k;
        }
        (mu, (-(mu as f64)).exp())
    } else {
        (0, 1.0)
    };

    // L10
    let mut ret_val = if give_log {
        brcmp1(mu, a, b, x, y, true) - a.ln()
    } else {
        brcmp1(mu, a, b, x, y, false) / a
    };
    if n == 1 || (give_log && ret_val == f64::NEG_INFINITY) || (!give_log && ret_val == 0.0) {
        return ret_val;
    }

    let nm1 = n - 1;
    let mut w = d;

    // k: the index of the largest term
    let mut k = 0;
    if b > 1.0 {
        if y > 1e-4 {
            let r = (b - 1.0) * x / y - a;
            if r >= 1.0 {
                k = if r < nm1 as f64 { r as i32 } else { nm1 };
            }
        } else {
            k = nm1;
        }
        // the increasing terms of the series, if k > 0 (L30)
        for i in 0..k {
            let l = i as f64;
            d *= (apb + l) / (ap1 + l) * x;
            w += d;
        }
    }

    // L40: the remaining terms
    for i in k..nm1 {
        let l = i as f64;
        d *= (apb + l) / (ap1 + l) * x;
        w += d;
        if d <= eps * w {
            // relative convergence
            break;
        }
    }

    // L50
    if give_log {
        ret_val += w.ln();
    } else {
        ret_val *= w;
    }
    ret_val
}

/// The continued fraction for `I_x(a, b)` when `a, b > 1`, with
/// `lambda = (a + b) y - b` (TOMS `bfrac`).
pub(super) fn bfrac(a: f64, b: f64, x: f64, y: f64, lambda: f64, eps: f64, log_p: bool) -> f64 {
    if !lambda.is_finite() {
        return f64::NAN;
    }
    let brc = brcomp(a, b, x, y, log_p);
    if brc.is_nan() {
        return f64::NAN;
    }
    if !log_p && brc == 0.0 {
        return 0.0;
    }

    let c = lambda + 1.0;
    let c0 = b / a;
    let c1 = 1.0 / a + 1.0;
    let yp1 = y + 1.0;

    let mut n = 0.0;
    let mut p = 1.0;
    let mut s = a + 1.0;
    let mut an = 0.0;
    let mut bn = 1.0;
    let mut anp1 = 1.0;
    let mut bnp1 = c / c1;
    let mut r = c1 / c;
    let mut r0;

    // the continued fraction
    loop {
        n += 1.0;
        let mut t = n / a;
        let w = n * (b - n) * x;
        let mut e = a / s;
        let alpha = p * (p + c0) * e * e * (w * x);
        e = (t + 1.0) / (c1 + t + t);
        let beta = n + w / s + e * (c + n * yp1);
        p = t + 1.0;
        s += 2.0;

        // update an, bn, anp1 and bnp1
        t = alpha * an + beta * anp1;
        an = anp1;
        anp1 = t;
        t = alpha * bn + beta * bnp1;
        bn = bnp1;
        bnp1 = t;

        r0 = r;
        r = anp1 / bnp1;
        if (r - r0).abs() <= eps * r {
            break;
        }
        // rescale an, bn, anp1 and bnp1
        an /= bnp1;
        bn /= bnp1;
        anp1 = r;
        bnp1 = 1.0;
        if n >= 10000.0 {
            // (R warns of non-convergence here.)
            break;
        }
    }
    if log_p {
        brc + r.ln()
    } else {
        brc * r
    }
}

/// The asymptotic expansion for `I_x(a, b)` when `a` is larger than `b`
/// (TOMS `bgrat`): `*w += I_x(a, b)`, for `a >= 15` and `b <= 1`. With
/// `log_w`, `*w` is a log on entry and exit. `*ierr` is set to 0, or to
/// 1..4 when the expansion cannot be computed (and `*w` is left).
#[allow(clippy::too_many_arguments)]
pub(super) fn bgrat(
    a: f64,
    b: f64,
    x: f64,
    y: f64,
    w: &mut f64,
    eps: f64,
    ierr: &mut i32,
    log_w: bool,
) {
    const N_TERMS_BGRAT: usize = 30;
    let mut c = [0.0; N_TERMS_BGRAT];
    let mut d = [0.0; N_TERMS_BGRAT];
    let bm1 = b - 0.5 - 0.5;
    let nu = a + bm1 * 0.5; // nu = a + (b-1)/2 =: T in (9.1) of D & M
    let lnx = if y > 0.375 { x.ln() } else { alnrel(-y) };
    let z = -nu * lnx; // z =: u in (9.1) of D & M

    if b * z == 0.0 {
        // e.g. for subnormal x: the expansion cannot be computed
        *ierr = 1;
        return;
    }

    // the expansion
    // log(r) = log(b) + log1p(gam1(b)) + b log(z) + nu lnx, with
    // r := exp(-z) z^b / gamma(b)
    let log_r = b.ln() + gam1(b).ln_1p() + b * z.ln() + nu * lnx;
    // u is factored out of the expansion and multiplied back at the end
    let log_u = log_r - (algdiv(b, a) + b * nu.ln());
    let u = log_u.exp();

    if log_u == f64::NEG_INFINITY {
        *ierr = 2;
        return;
    }

    let u_0 = u == 0.0; // underflow: work with log_u
                        // l := w/u, such that it also works when u underflows to 0
    let l = if log_w {
        if *w == f64::NEG_INFINITY {
            0.0
        } else {
            (*w - log_u).exp()
        }
    } else if *w == 0.0 {
        0.0
    } else {
        (w.ln() - log_u).exp()
    };

    let q_r = grat_r(b, z, log_r, eps); // = q/r of former grat1(b, z, r, &p, &q)
    let v = 0.25 / (nu * nu);
    let t2 = lnx * 0.25 * lnx;
    let mut j = q_r;
    let mut sum = j;
    let mut t = 1.0;
    let mut cn = 1.0;
    let mut n2 = 0.0;
    for n in 1..=N_TERMS_BGRAT {
        let bp2n = b + n2;
        j = (bp2n * (bp2n + 1.0) * j + (z + bp2n + 1.0) * t) * v;
        n2 += 2.0;
        t *= t2;
        cn /= n2 * (n2 + 1.0);
        let nm1 = n - 1;
        c[nm1] = cn;
        let mut s = 0.0;
        if n > 1 {
            let mut coef = b - n as f64;
            for i in 1..=nm1 {
                s += coef * c[i - 1] * d[nm1 - i];
                coef += b;
            }
        }
        d[nm1] = bm1 * cn + s / n as f64;
        let dj = d[nm1] * j;
        sum += dj;
        if sum <= 0.0 {
            *ierr = 3;
            return;
        }
        if dj.abs() <= eps * (sum + l) {
            *ierr = 0;
            break;
        } else if n == N_TERMS_BGRAT {
            // never seen (R warns here)
            *ierr = 4;
        }
    }

    // add the results to w
    if log_w {
        *w = logspace_add(*w, log_u + sum.ln());
    } else {
        *w += if u_0 {
            (log_u + sum.ln()).exp()
        } else {
            u * sum
        };
    }
}

/// The scaled complement of the incomplete gamma ratio, `Q(a, x) / r` with
/// `r = exp(-x) x^a / Gamma(a) = exp(log_r)`, for `a <= 1` (TOMS `grat1`
/// as R's `grat_r`, called only from `bgrat`).
pub(super) fn grat_r(a: f64, x: f64, log_r: f64, eps: f64) -> f64 {
    if a * x == 0.0 {
        // L130
        if x <= a {
            (-log_r).exp() // L100
        } else {
            0.0 // L110
        }
    } else if a == 0.5 {
        // L120, e.g. from pt()
        if x < 0.25 {
            let p = erf__(x.sqrt());
            (0.5 - p + 0.5) * (-log_r).exp()
        } else {
            let sx = x.sqrt();
            erfc1(1, sx) / sx * M_SQRT_PI
        }
    } else if x < 1.1 {
        // L10: Taylor series for P(a, x) / x^a
        let mut an = 3.0;
        let mut c = x;
        let mut sum = x / (a + 3.0);
        let tol = eps * 0.1 / (a + 1.0);
        loop {
            an += 1.0;
            c *= -(x / an);
            let t = c / (a + an);
            sum += t;
            if !(t.abs() > tol) {
                break;
            }
        }
        let j = a * x * ((sum / 6.0 - 0.5 / (a + 2.0)) * x + 1.0 / (a + 1.0));
        let z = a * x.ln();
        let h = gam1(a);
        let g = h + 1.0;

        if (x >= 0.25 && (a < x / 2.59)) || (z > -0.13394) {
            // L40
            let l = rexpm1(z);
            let q = ((l + 0.5 + 0.5) * j - l) * g - h;
            if q <= 0.0 {
                0.0 // L110
            } else {
                q * (-log_r).exp()
            }
        } else {
            let p = z.exp() * g * (0.5 - j + 0.5);
            (0.5 - p + 0.5) * (-log_r).exp()
        }
    } else {
        // L50: x >= 1.1, continued fraction
        let mut a2n_1 = 1.0;
        let mut a2n = 1.0;
        let mut b2n_1 = x;
        let mut b2n = x + (1.0 - a);
        let mut c = 1.0;
        loop {
            a2n_1 = x * a2n + c * a2n_1;
            b2n_1 = x * b2n + c * b2n_1;
            let am0 = a2n_1 / b2n_1;
            c += 1.0;
            let c_a = c - a;
            a2n = a2n_1 + c_a * a2n;
            b2n = b2n_1 + c_a * b2n;
            let an0 = a2n / b2n;
            if !((an0 - am0).abs() >= eps * an0) {
                return an0;
            }
        }
    }
}

/// The asymptotic expansion for `I_x(a, b)` for large `a` and `b`, with
/// `lambda = (a + b) y - b >= 0` and `a, b >= 15` (TOMS `basym`).
pub(super) fn basym(a: f64, b: f64, lambda: f64, eps: f64, log_p: bool) -> f64 {
    // NUM: the largest n of the loop below; it must be even.
    const NUM_IT: usize = 20;
    const E0: f64 = 1.12837916709551; // 2/sqrt(pi)
    const E1: f64 = 0.353553390593274; // 2^(-3/2)
    const LN_E0: f64 = 0.120782237635245; // ln(e0)

    let mut a0 = [0.0; NUM_IT + 1];
    let mut b0 = [0.0; NUM_IT + 1];
    let mut c = [0.0; NUM_IT + 1];
    let mut d = [0.0; NUM_IT + 1];

    let f = a * rlog1(-lambda / a) + b * rlog1(lambda / b);
    let t = if log_p {
        -f
    } else {
        let t = (-f).exp();
        if t == 0.0 {
            return 0.0; // once underflow, always underflow
        }
        t
    };
    let z0 = f.sqrt();
    let z = z0 / E1 * 0.5;
    let z2 = f + f;
    let (h, r0, r1, w0);
    if a < b {
        h = a / b;
        r0 = 1.0 / (h + 1.0);
        r1 = (b - a) / b;
        w0 = 1.0 / (a * (h + 1.0)).sqrt();
    } else {
        h = b / a;
        r0 = 1.0 / (h + 1.0);
        r1 = (b - a) / a;
        w0 = 1.0 / (b * (h + 1.0)).sqrt();
    }

    a0[0] = r1 * 0.66666666666666663;
    c[0] = a0[0] * -0.5;
    d[0] = -c[0];
    let mut j0 = 0.5 / E0 * erfc1(1, z0);
    let mut j1 = E1;
    let mut sum = j0 + d[0] * w0 * j1;

    let mut s = 1.0;
    let h2 = h * h;
    let mut hn = 1.0;
    let mut w = w0;
    let mut znm1 = z;
    let mut zn = z2;
    let mut n = 2;
    while n <= NUM_IT {
        hn *= h2;
        a0[n - 1] = r0 * 2.0 * (h * hn + 1.0) / (n as f64 + 2.0);
        let np1 = n + 1;
        s += hn;
        a0[np1 - 1] = r1 * 2.0 * s / (n as f64 + 3.0);

        for i in n..=np1 {
            let r = (i as f64 + 1.0) * -0.5;
            b0[0] = r * a0[0];
            for m in 2..=i {
                let mut bsum = 0.0;
                for j in 1..=(m - 1) {
                    let mmj = m - j;
                    bsum += (j as f64 * r - mmj as f64) * a0[j - 1] * b0[mmj - 1];
                }
                b0[m - 1] = r * a0[m - 1] + bsum / m as f64;
            }
            c[i - 1] = b0[i - 1] / (i as f64 + 1.0);

            let mut dsum = 0.0;
            for j in 1..i {
                dsum += d[i - j - 1] * c[j - 1];
            }
            d[i - 1] = -(dsum + c[i - 1]);
        }

        j0 = E1 * znm1 + (n as f64 - 1.0) * j0;
        j1 = E1 * zn + n as f64 * j1;
        znm1 *= z2;
        zn *= z2;
        w *= w0;
        let t0 = d[n - 1] * w * j0;
        w *= w0;
        let t1 = d[np1 - 1] * w * j1;
        sum += t0 + t1;
        if t0.abs() + t1.abs() <= eps * sum {
            break;
        }
        n += 2;
    }

    if log_p {
        LN_E0 + t - bcorr(a, b) + sum.ln()
    } else {
        let u = (-bcorr(a, b)).exp();
        E0 * t * u * sum
    }
}
