//! The nmath functions' derivative rules against central finite
//! differences in float64: every function with a rule, at random points
//! inside its domain, with every flag combination, in every argument the
//! rule differentiates (the others held constant); arguments without a
//! rule and functions without one are errors naming them; broadcasting,
//! jvp and a second derivative. The table here must name every function
//! of `elementwise::ALL`.

use gearbox_core::fusion::ir::ScalarFn;
use gearbox_core::{autodiff, Array, Error, Result};
use gearbox_stats::elementwise::{self, ALL};

/// Central-difference step, relative to `max(1, |x|)`.
const H: f64 = 1e-6;
/// The largest error allowed, relative to `max(1, |rule|)`.
const TOL: f64 = 2e-7;
/// Points per function.
const N: usize = 12;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        lo + (hi - lo) * ((z >> 11) as f64 / (1u64 << 53) as f64)
    }

    fn count(&mut self, hi: f64) -> f64 {
        self.uniform(0.0, hi + 1.0).floor().min(hi)
    }
}

/// How one argument is drawn.
#[derive(Clone, Copy)]
enum Arg {
    /// Uniform in `[lo, hi)`, differentiated.
    Real(f64, f64),
    /// A probability in `[lo, hi)` (on the log scale when `log_p` is set:
    /// flag bit 1), differentiated.
    Prob(f64, f64),
    /// A count in `0..=hi`, held constant (no gradient).
    Count(f64),
    /// A count no smaller than argument 0, up to `hi`, held constant.
    Size(f64),
    /// Uniform in `[lo, hi)`, held constant: the rule has none.
    Fixed(f64, f64),
}

/// The domain of each function's arguments; `None`: no rule at all.
fn domain(name: &str) -> Option<Vec<Arg>> {
    use Arg::*;
    let location_scale = vec![Real(-3.0, 3.0), Real(-1.0, 1.0), Real(0.5, 2.0)];
    let quantile = vec![Prob(0.03, 0.97), Real(-1.0, 1.0), Real(0.5, 2.0)];
    Some(match name {
        "dbinom" => vec![Count(12.0), Size(20.0), Real(0.1, 0.9)],
        "dpois" => vec![Count(15.0), Real(0.5, 10.0)],
        "dnbinom" => vec![Count(15.0), Real(0.5, 10.0), Real(0.1, 0.9)],
        "dnorm" | "pnorm" | "dlogis" | "plogis" => location_scale,
        "qnorm" | "qlogis" => quantile,
        "dgamma" => vec![Real(0.2, 5.0), Real(0.5, 5.0), Real(0.5, 3.0)],
        "pgamma" => vec![Real(0.2, 5.0), Fixed(0.5, 5.0), Real(0.5, 3.0)],
        "dbeta" => vec![Real(0.1, 0.9), Real(0.5, 5.0), Real(0.5, 5.0)],
        "pbeta" => vec![Real(0.1, 0.9), Fixed(0.5, 5.0), Fixed(0.5, 5.0)],
        "dt" => vec![Real(-3.0, 3.0), Real(1.0, 20.0)],
        "pt" => vec![Real(-3.0, 3.0), Fixed(1.0, 20.0)],
        "lgamma" => vec![Real(-3.9, 10.0)],
        "lbeta" => vec![Real(0.3, 10.0), Real(0.3, 10.0)],
        "lgamma1p" => vec![Real(-0.4, 2.0)],
        "log1pmx" => vec![Real(-0.5, 3.0)],
        "log1pexp" => vec![Real(-5.0, 5.0)],
        "log1mexp" => vec![Real(0.1, 5.0)],
        "bd0" => vec![Real(0.5, 20.0), Real(0.5, 20.0)],
        "digamma" | "stirlerr" => return None,
        other => panic!("no domain for {other}: add it to the table"),
    })
}

fn draw(rng: &mut Rng, args: &[Arg], flags: u8, log_p: bool) -> Vec<Vec<f64>> {
    let mut cols: Vec<Vec<f64>> = Vec::new();
    for &arg in args {
        let col = (0..N)
            .map(|k| match arg {
                Arg::Real(lo, hi) | Arg::Fixed(lo, hi) => {
                    let mut v = rng.uniform(lo, hi);
                    // lgamma at negative arguments: away from the poles.
                    if lo < 0.0 && v < 0.0 {
                        v = v.floor() + 0.2 + 0.6 * (v - v.floor());
                    }
                    v
                }
                Arg::Prob(lo, hi) => {
                    let p = rng.uniform(lo, hi);
                    if log_p && flags & 2 != 0 {
                        p.ln()
                    } else {
                        p
                    }
                }
                Arg::Count(hi) => rng.count(hi),
                Arg::Size(hi) => (cols[0][k] + rng.count(hi - cols[0][k])).max(1.0),
            })
            .collect();
        cols.push(col);
    }
    cols
}

fn column(v: &[f64]) -> Array {
    Array::from_vec([v.len()], v.to_vec()).unwrap()
}

/// The worst error of `f`'s rule over all flag combinations, checked
/// against central differences in every differentiated argument.
fn check(f: &'static ScalarFn, args: &[Arg], rng: &mut Rng) -> f64 {
    let wrt: Vec<usize> = (0..args.len())
        .filter(|&i| matches!(args[i], Arg::Real(..) | Arg::Prob(..)))
        .collect();
    let log_p = f.flags == 2;
    let mut worst = 0.0f64;
    for flags in 0..(1u8 << f.flags) {
        let cols = draw(rng, args, flags, log_p);
        let arrays: Vec<Array> = cols.iter().map(|c| column(c)).collect();
        let call = |xs: &[Array]| -> Result<Array> {
            let mut all = arrays.clone();
            for (&i, x) in wrt.iter().zip(xs) {
                all[i] = x.clone();
            }
            let refs: Vec<&Array> = all.iter().collect();
            Array::call_fn(f, &refs, flags)
        };
        let primals: Vec<Array> = wrt.iter().map(|&i| arrays[i].clone()).collect();
        let ct: Vec<f64> = (0..N).map(|k| 0.5 + k as f64 / N as f64).collect();
        let (_, grads) = autodiff::vjp(|xs| Ok(vec![call(xs)?]), &primals, &[column(&ct)])
            .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        for (slot, &i) in wrt.iter().enumerate() {
            let got = grads[slot].to_vec::<f64>().unwrap();
            for k in 0..N {
                let x = cols[i][k];
                let h = H * x.abs().max(1.0);
                let at = |d: f64| {
                    let mut moved = primals.clone();
                    let mut v = cols[i].clone();
                    v[k] = x + d;
                    moved[slot] = column(&v);
                    call(&moved).unwrap().to_vec::<f64>().unwrap()[k]
                };
                let fd = ct[k] * (at(h) - at(-h)) / (2.0 * h);
                let err = (fd - got[k]).abs() / got[k].abs().max(1.0);
                let point: Vec<f64> = cols.iter().map(|c| c[k]).collect();
                assert!(
                    err < TOL,
                    "{}({point:?}; flags {flags:#b}) in argument {i}: rule {:e}, finite difference {fd:e} (error {err:.1e})",
                    f.name,
                    got[k]
                );
                worst = worst.max(err);
            }
        }
    }
    worst
}

#[test]
fn every_rule_matches_finite_differences_with_every_flag() {
    let mut rng = Rng(7);
    let mut checked = 0;
    for f in ALL {
        let Some(args) = domain(f.name) else {
            assert!(f.partials.is_none(), "{} has a rule but no domain", f.name);
            continue;
        };
        assert_eq!(args.len(), f.arity, "{}'s table entry", f.name);
        assert!(f.partials.is_some(), "{} has no rule", f.name);
        let worst = check(f, &args, &mut rng);
        println!("{:>9}: worst error {worst:.1e}", f.name);
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} functions checked");
}

#[test]
fn functions_without_a_rule_are_errors_naming_them() {
    let x = column(&[2.5, 3.5]);
    for (f, name) in [
        (&elementwise::DIGAMMA, "digamma"),
        (&elementwise::STIRLERR, "stirlerr"),
    ] {
        let err = autodiff::grad(
            |a| Array::call_fn(f, &[&a[0]], 0)?.sum(),
            std::slice::from_ref(&x),
        )
        .expect_err("no rule");
        assert!(
            matches!(&err, Error::Autodiff { op, .. } if *op == name),
            "{err}"
        );
        assert!(err.to_string().contains("no derivative rule"), "{err}");
    }
    // The second derivative of lgamma needs digamma's.
    let err = autodiff::grad(
        |a| {
            let g = autodiff::grad(|b| elementwise::lgamma(&b[0])?.sum(), &[a[0].clone()])?;
            g[0].sum()
        },
        &[x],
    )
    .expect_err("no trigamma");
    assert!(err.to_string().starts_with("digamma:"), "{err}");
}

#[test]
fn an_argument_without_a_rule_errors_only_when_its_gradient_is_needed() {
    let q = column(&[0.5, 1.5, 3.0]);
    let shape = column(&[2.0, 2.0, 2.0]);
    let scale = Array::scalar(1.5);
    // In q and scale (shape held constant): fine.
    let g = autodiff::grad_wrt(
        |a| elementwise::pgamma(&a[0], &a[1], &a[2], true, false)?.sum(),
        &[q.clone(), shape.clone(), scale.clone()],
        &[0, 2],
    )
    .unwrap();
    let dens = elementwise::dgamma(&q, &shape, &scale, false)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    for (got, want) in g[0].to_vec::<f64>().unwrap().iter().zip(&dens) {
        assert!((got - want).abs() <= 1e-15 * want, "{got} {want}");
    }
    assert_eq!(g[1].dims(), &[] as &[usize]);
    // In shape: the gradient is an error naming pgamma and the argument.
    let g = autodiff::grad_wrt(
        |a| elementwise::pgamma(&a[0], &a[1], &a[2], true, false)?.sum(),
        &[q, shape, scale],
        &[1],
    )
    .unwrap();
    let err = g[0].eval().expect_err("no rule in shape");
    assert!(
        matches!(&err, Error::Autodiff { op: "pgamma", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("`shape`"), "{err}");
    // Counts carry no gradient: d/dx dbinom is zero, not an error.
    let x = column(&[1.0, 2.0]);
    let g = autodiff::grad(
        |a| elementwise::dbinom(&a[0], &column(&[4.0, 4.0]), &Array::scalar(0.3), true)?.sum(),
        &[x],
    )
    .unwrap();
    assert_eq!(g[0].to_vec::<f64>().unwrap(), vec![0.0, 0.0]);
}

#[test]
fn gradients_sum_over_broadcast_arguments() {
    // dnorm(x [5, 1], mu [1, 3], sigma 0-d): d/dmu sums over x's axis.
    let xs: Vec<f64> = (0..5).map(|i| -1.0 + 0.45 * i as f64).collect();
    let x = Array::from_vec([5, 1], xs.clone()).unwrap();
    let mu = Array::from_vec([1, 3], vec![-0.5, 0.1, 0.7]).unwrap();
    let sigma = Array::scalar(1.3);
    let g = autodiff::grad(
        |a| elementwise::dnorm(&a[0], &a[1], &a[2], true)?.sum(),
        &[x, mu, sigma],
    )
    .unwrap();
    assert_eq!(g[1].dims(), &[1, 3]);
    assert_eq!(g[2].dims(), &[] as &[usize]);
    let mus = [-0.5, 0.1, 0.7];
    for (j, got) in g[1].to_vec::<f64>().unwrap().iter().enumerate() {
        let want: f64 = xs.iter().map(|x| (x - mus[j]) / (1.3 * 1.3)).sum();
        assert!((got - want).abs() < 1e-12, "{got} {want}");
    }
    let want: f64 = xs
        .iter()
        .flat_map(|x| {
            mus.iter()
                .map(move |m| ((x - m) / 1.3).powi(2) / 1.3 - 1.0 / 1.3)
        })
        .sum();
    assert!((g[2].item().unwrap() - want).abs() < 1e-12);
}

#[test]
fn jvp_and_second_derivatives() {
    // jvp of pnorm in q: the density times the tangent.
    let q = column(&[-1.0, 0.3, 2.0]);
    let t = column(&[1.0, -2.0, 0.5]);
    let zero = Array::scalar(0.0);
    let one = Array::scalar(1.0);
    let (_, jv) = autodiff::jvp(
        |a| Ok(vec![elementwise::pnorm(&a[0], &zero, &one, true, false)?]),
        std::slice::from_ref(&q),
        std::slice::from_ref(&t),
    )
    .unwrap();
    let d = elementwise::dnorm(&q, &zero, &one, false).unwrap();
    let want = (&d * &t).unwrap().to_vec::<f64>().unwrap();
    for (g, w) in jv[0].to_vec::<f64>().unwrap().iter().zip(&want) {
        assert!((g - w).abs() < 1e-14, "{g} {w}");
    }
    // d^2/dmu^2 of the normal log density is -1/sigma^2 at every point.
    let mu = column(&[0.2, -0.4]);
    let h = autodiff::grad(
        |a| {
            let g = autodiff::grad(
                |b| elementwise::dnorm(&q.slice(0, 0..2)?, &b[0], &one, true)?.sum(),
                &[a[0].clone()],
            )?;
            g[0].sum()
        },
        &[mu],
    )
    .unwrap();
    assert_eq!(h[0].to_vec::<f64>().unwrap(), vec![-1.0, -1.0]);
    // The second derivative of lbeta in a: trigamma is not there, but the
    // first derivative of a rule made of array ops is: d/dx log1pexp'(x) =
    // sigmoid'(x).
    let x = column(&[-1.0, 0.5]);
    let h = autodiff::grad(
        |a| {
            let g = autodiff::grad(|b| elementwise::log1pexp(&b[0])?.sum(), &[a[0].clone()])?;
            g[0].sum()
        },
        &[x],
    )
    .unwrap();
    for (got, x) in h[0].to_vec::<f64>().unwrap().iter().zip([-1.0f64, 0.5]) {
        let s = 1.0 / (1.0 + (-x).exp());
        assert!((got - s * (1.0 - s)).abs() < 1e-15);
    }
}

#[test]
fn log_scale_rules_stay_finite_far_in_the_tails() {
    // d/dq log pnorm(q) = phi(q) / Phi(q), about |q| + 1/|q| at q = -30
    // (Phi(-30) underflows to 5e-198, its log does not).
    let q = column(&[-30.0, -10.0, 38.0]);
    let (zero, one) = (Array::scalar(0.0), Array::scalar(1.0));
    for (lower, want) in [
        (true, [30.0332, 10.0981, 0.0]),
        (false, [0.0, 0.0, -38.0263]),
    ] {
        let g = autodiff::grad(
            |a| elementwise::pnorm(&a[0], &zero, &one, lower, true)?.sum(),
            std::slice::from_ref(&q),
        )
        .unwrap();
        for (got, want) in g[0].to_vec::<f64>().unwrap().iter().zip(want) {
            assert!(got.is_finite(), "{got}");
            assert!(
                (got - want).abs() < 1e-3 * want.abs().max(1e-12),
                "{got} {want}"
            );
        }
    }
}

#[test]
fn digamma_values() {
    use gearbox_stats::nmath::digamma;
    // Reference values (mpmath).
    for (x, want) in [
        (1.0, -0.5772156649015329),
        (0.5, -1.9635100260214235),
        (10.0, 2.251752589066721),
        (-0.5, 0.03648997397857652),
        (100.5, 4.605174352581845),
    ] {
        let got = digamma(x);
        assert!(
            (got - want).abs() <= 1e-14 * want.abs().max(1.0),
            "digamma({x}) = {got}, R {want}"
        );
    }
    assert!(digamma(0.0).is_nan() && digamma(-3.0).is_nan() && digamma(f64::NEG_INFINITY).is_nan());
    assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
}
