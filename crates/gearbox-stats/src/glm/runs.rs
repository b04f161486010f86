//! The fast binomial logit and poisson log terms and their slopes over a
//! run of observations on the CPU ([`gearbox_core::ops::linear_grid::RunEval`]):
//! the closed forms and their error bounds of [`super::hoisted`], with
//! `exp` and `log1p` from [`super::vector_math`], written so the loop
//! compiles to vector instructions (AVX-512, else AVX2 and FMA, where the
//! CPU has them, chosen at run time; the same arithmetic in every lane
//! width, so the results do not depend on it). Observations whose closed form is not
//! certified are evaluated by the exact terms afterwards. With the fast
//! terms off the run evaluators decline, and the terms are R's, one at a
//! time.
//!
//! Both functions are within 2 ulp (`vector_math`'s tests), where the
//! C library's are within 1: the bounds below give their error terms one
//! `u` more than [`super::hoisted`]'s (`8 n L` for `7 n L`, `5 lambda` for
//! `4 lambda`), so a value certified here is within 2^-46 like one
//! certified there.

use gearbox_core::fusion::ir::ScalarFn;
use gearbox_core::ops::linear_grid::RunEval;

use super::hoisted::CERTIFIED;
use super::rows::UNIT_ROUNDOFF;
use super::terms::{ROW_LL_BINOMIAL_LOGIT, ROW_LL_POISSON_LOG};
use super::vector_math::{exp, log1p_unit, EXP_MAX, EXP_MIN};

/// Flag bits of the pair terms: the value's `quasi` and `fast`, the
/// slope's `quasi`.
const QUASI: u8 = 1;
const FAST: u8 = 2;
const SLOPE_QUASI: u8 = 4;

/// [`super::terms::ROW_PAIR_BINOMIAL_LOGIT`] over a run.
pub static BINOMIAL_LOGIT: RunEval = RunEval {
    name: "glm_runs_binomial_logit",
    eval: |args, flags, slopes| dispatch(&BINOMIAL_LOGIT_FNS, args, flags, slopes),
};

/// [`super::terms::ROW_PAIR_POISSON_LOG`] over a run.
pub static POISSON_LOG: RunEval = RunEval {
    name: "glm_runs_poisson_log",
    eval: |args, flags, slopes| dispatch(&POISSON_LOG_FNS, args, flags, slopes),
};

type RunFn = fn(&[&[f64]], u8, &mut [f64]) -> f64;
type FeatureRunFn = unsafe fn(&[&[f64]], u8, &mut [f64]) -> f64;

/// One evaluator compiled for each instruction set: without FMA, with AVX2
/// and FMA, and with AVX-512 as well. The evaluators' `WIDE` parameter
/// makes the AVX-512 form its own instantiation: its loop (a closure) then
/// has one caller, is inlined into it and compiled for its instructions;
/// shared by two callers it stays a plain function, compiled for none of
/// them (every `mul_add` a library call).
struct Forms {
    plain: RunFn,
    fma: FeatureRunFn,
    wide: FeatureRunFn,
}

/// The [`Forms`] of the generic evaluator `$body`, under the names given.
macro_rules! forms {
    ($name:ident, $body:ident, $fma:ident, $wide:ident) => {
        #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
        unsafe fn $fma(args: &[&[f64]], flags: u8, slopes: &mut [f64]) -> f64 {
            $body::<true, false>(args, flags, slopes)
        }

        #[cfg_attr(
            target_arch = "x86_64",
            target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq")
        )]
        unsafe fn $wide(args: &[&[f64]], flags: u8, slopes: &mut [f64]) -> f64 {
            $body::<true, true>(args, flags, slopes)
        }

        static $name: Forms = Forms {
            plain: $body::<false, false>,
            fma: $fma,
            wide: $wide,
        };
    };
}

forms!(
    BINOMIAL_LOGIT_FNS,
    binomial_logit,
    binomial_logit_fma,
    binomial_logit_avx512
);
forms!(
    POISSON_LOG_FNS,
    poisson_log,
    poisson_log_fma,
    poisson_log_avx512
);

/// Runs the widest form of `fns` the CPU has; declines without the fast
/// terms.
fn dispatch(fns: &Forms, args: &[&[f64]], flags: u8, slopes: &mut [f64]) -> Option<f64> {
    if flags & FAST == 0 {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the CPU has the features each form was compiled for.
        if gearbox_core::cpu::has_avx512() {
            return Some(unsafe { (fns.wide)(args, flags, slopes) });
        }
        if gearbox_core::cpu::has_avx2_fma() {
            return Some(unsafe { (fns.fma)(args, flags, slopes) });
        }
    }
    Some((fns.plain)(args, flags, slopes))
}

/// The values of `args` at observation `i`.
fn observation(args: &[&[f64]], i: usize) -> [f64; 8] {
    let mut row = [0.0; 8];
    for (r, a) in row.iter_mut().zip(args) {
        *r = a[i];
    }
    row
}

/// Observations a run evaluator takes at once (its stack buffer).
const CHUNK: usize = 256;

/// A pair's 12 arguments over a chunk of observations.
type Chunk<'a> = [&'a [f64]; 12];

/// Drives a run evaluator: for each chunk of observations, `body(chunk,
/// values, slopes)` with every argument sliced to the chunk (so its loop
/// has no bounds checks and vectorizes) writes each observation's slope
/// and its certified value (`NaN` where not certified); the certified
/// values are then added in vector lanes ([`certified_sum`]), the
/// uncertified ones by `exact` (the pair's term, one observation at a
/// time).
#[inline(always)]
fn over_chunks(
    args: &[&[f64]],
    flags: u8,
    slopes: &mut [f64],
    exact: &ScalarFn,
    mut body: impl FnMut(&Chunk<'_>, &mut [f64], &mut [f64]),
) -> f64 {
    let len = args[0].len();
    let mut sum = 0.0;
    for start in (0..len).step_by(CHUNK) {
        let m = CHUNK.min(len - start);
        let chunk: Chunk<'_> = std::array::from_fn(|a| &args[a][start..start + m]);
        let mut values = [0.0; CHUNK];
        body(&chunk, &mut values[..m], &mut slopes[start..start + m]);
        let (certified, uncertified) = certified_sum(&values[..m]);
        sum += certified;
        if uncertified {
            for (j, _) in values[..m].iter().enumerate().filter(|(_, v)| v.is_nan()) {
                sum += (exact.eval)(&observation(&args[..8], start + j), flags & (QUASI | FAST));
            }
        }
    }
    sum
}

/// The sum of the values that are not NaN, in eight partial sums (so the
/// loop runs in vector lanes rather than as one chain of dependent adds),
/// and whether any value is NaN.
#[inline(always)]
fn certified_sum(values: &[f64]) -> (f64, bool) {
    let mut lanes = [0.0; 8];
    let mut any_nan = false;
    let chunks = values.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (lane, &v) in lanes.iter_mut().zip(c) {
            any_nan |= v.is_nan();
            *lane += if v.is_nan() { 0.0 } else { v };
        }
    }
    for (lane, &v) in lanes.iter_mut().zip(rest) {
        any_nan |= v.is_nan();
        *lane += if v.is_nan() { 0.0 } else { v };
    }
    (lanes.iter().sum(), any_nan)
}

/// The binomial logit pair over a run: arguments `eta, dispersion, x, n,
/// h, lf, lchoose, lchoose_err` (the term's) then `eta, dispersion, x, n`
/// (the slope's), as [`super::terms::ROW_PAIR_BINOMIAL_LOGIT`]. `FMA`:
/// fused multiply-adds; `WIDE`: the AVX-512 instantiation ([`Forms`]).
#[inline(always)]
fn binomial_logit<const FMA: bool, const WIDE: bool>(
    args: &[&[f64]],
    flags: u8,
    slopes: &mut [f64],
) -> f64 {
    let quasi = flags & QUASI != 0;
    let s_quasi = flags & SLOPE_QUASI != 0;
    over_chunks(
        args,
        flags,
        slopes,
        &ROW_LL_BINOMIAL_LOGIT,
        |chunk, values, slopes| {
            let [eta, disp, x, n, _h, _lf, lchoose, lchoose_err, _, s_disp, s_x, s_n] = *chunk;
            for i in 0..values.len() {
                let (eta, x, n) = (eta[i], x[i], n[i]);
                let e = exp::<FMA>(-eta.abs());
                // The slope x q - (n - x) p, p = plogis(eta), q = plogis(-eta)
                // (hoisted::binomial_slope).
                let (sx, sn) = (s_x[i], s_n[i]);
                let d = 1.0 / (1.0 + e);
                let (p, q) = if eta >= 0.0 { (d, e * d) } else { (e * d, d) };
                let up = if sx > 0.0 { sx * q } else { 0.0 };
                let down = if sn - sx > 0.0 { (sn - sx) * -p } else { 0.0 };
                let slope = if sx >= 0.0 { up + down } else { f64::NAN };
                slopes[i] = if s_quasi { slope / s_disp[i] } else { slope };
                // The closed form lchoose - n log1p(e) + t (logit_closed_form).
                let l = log1p_unit::<FMA>(e);
                let t = if eta <= 0.0 { x * eta } else { (x - n) * eta };
                let nl = n * l;
                let v = lchoose[i] - nl + t;
                let bound = lchoose_err[i]
                    + UNIT_ROUNDOFF
                        * (2.0 * lchoose[i].abs() + 8.0 * nl + 2.0 * t.abs() + 3.0 * v.abs());
                let applies = x >= 0.0 && x <= n && n > 0.0 && -eta.abs() >= EXP_MIN;
                let certified = applies && v.is_finite() && bound <= CERTIFIED * v.abs();
                let v = if quasi { v / disp[i] } else { v };
                values[i] = if certified { v } else { f64::NAN };
            }
        },
    )
}

/// The poisson log pair over a run: arguments `eta, dispersion, wt, k,
/// stirlerr, log_term, lgamma, lgamma_err` (the term's) then `y, wt, eta,
/// dispersion` (the slope's), as [`super::terms::ROW_PAIR_POISSON_LOG`].
/// `FMA` and `WIDE` as for [`binomial_logit`].
#[inline(always)]
fn poisson_log<const FMA: bool, const WIDE: bool>(
    args: &[&[f64]],
    flags: u8,
    slopes: &mut [f64],
) -> f64 {
    let quasi = flags & QUASI != 0;
    let s_quasi = flags & SLOPE_QUASI != 0;
    over_chunks(
        args,
        flags,
        slopes,
        &ROW_LL_POISSON_LOG,
        |chunk, values, slopes| {
            let [eta, disp, wt, k, _stirl, _log_term, lgamma, lgamma_err, s_y, s_wt, _, s_disp] =
                *chunk;
            for i in 0..values.len() {
                let (eta, k) = (eta[i], k[i]);
                let lambda = exp::<FMA>(eta);
                // The slope wt (y - lambda) (glm::link's poisson slope).
                let slope = if s_wt[i] == 0.0 {
                    0.0
                } else {
                    s_wt[i] * (s_y[i] - lambda)
                };
                slopes[i] = if s_quasi { slope / s_disp[i] } else { slope };
                // The closed form k eta - lambda - lgamma (poisson_closed_form).
                let k_eta = k * eta;
                let v = k_eta - lambda - lgamma[i];
                let bound = lgamma_err[i]
                    + UNIT_ROUNDOFF * (3.0 * k_eta.abs() + 5.0 * lambda + 4.0 * v.abs());
                let in_range = (EXP_MIN..=EXP_MAX).contains(&eta);
                let certified =
                    in_range && k >= 0.0 && v.is_finite() && bound <= CERTIFIED * v.abs();
                let v = wt[i] * v;
                let v = if quasi { v / disp[i] } else { v };
                values[i] = if wt[i] == 0.0 {
                    0.0
                } else if certified {
                    v
                } else {
                    f64::NAN
                };
            }
        },
    )
}

/// The run evaluator of a pair descriptor, where there is one.
pub fn runs_of(pair: &ScalarFn) -> Option<&'static RunEval> {
    match pair.name {
        "glm_row_pair_binomial_logit" => Some(&BINOMIAL_LOGIT),
        "glm_row_pair_poisson_log" => Some(&POISSON_LOG),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glm::rows::{binomial_row, poisson_row};
    use crate::glm::terms::{ROW_SLOPE_BINOMIAL_LOGIT, SLOPE_POISSON_LOG};

    /// A run of `eta` over the whole range (extremes, the edges of `exp`'s
    /// normal range, both signs of 0) and random values.
    fn etas(n: usize) -> Vec<f64> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut v = vec![
            0.0, -0.0, 1e-300, -1e-300, 708.5, -708.5, 745.0, -745.0, 800.0, -800.0, 40.0, -40.0,
        ];
        while v.len() < n {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            v.push((u - 0.5) * if v.len() % 3 == 0 { 60.0 } else { 6.0 });
        }
        v
    }

    /// `run`'s sum and slopes against the one-at-a-time terms of
    /// `value` and `slope`: each slope within 4 ulp of the magnitude of
    /// its parts (`parts(i)`: the slope is a difference, and `exp`'s last
    /// bits differ from the C library's), or both `NaN`; the sum within
    /// 1e-14 of the sum of magnitudes, or both the same infinity.
    fn check(
        run: &RunEval,
        args: &[Vec<f64>],
        flags: u8,
        (value, slope): (&ScalarFnRef, &ScalarFnRef),
        parts: impl Fn(usize) -> f64,
    ) {
        let n = args[0].len();
        let views: Vec<&[f64]> = args.iter().map(|a| a.as_slice()).collect();
        let mut slopes = vec![0.0; n];
        let sum = (run.eval)(&views, flags, &mut slopes).expect("fast terms take the run");
        let (mut want, mut scale) = (0.0, 0.0);
        for i in 0..n {
            let at = |range: std::ops::Range<usize>| -> Vec<f64> {
                args[range].iter().map(|a| a[i]).collect()
            };
            let v = (value.eval)(&at(0..8), flags & 3);
            want += v;
            scale += v.abs();
            let s = (slope.eval)(&at(8..12), flags >> 2);
            let got = slopes[i];
            assert!(
                (got.is_nan() && s.is_nan())
                    || got == s
                    || (got - s).abs() <= 4.0 * f64::EPSILON * (s.abs() + parts(i)),
                "{}: slope at row {i} (eta {}): {got:e}, want {s:e}",
                run.name,
                args[0][i]
            );
        }
        assert!(
            (sum - want).abs() <= 1e-14 * scale || sum == want || (sum.is_nan() && want.is_nan()),
            "{}: sum {sum:e}, want {want:e}",
            run.name
        );
    }

    type ScalarFnRef = gearbox_core::fusion::ir::ScalarFn;

    /// The run evaluators without fused multiply-adds, whatever the CPU.
    static BINOMIAL_PLAIN: RunEval = RunEval {
        name: "binomial without fma",
        eval: |a, f, s| Some(binomial_logit::<false, false>(a, f, s)),
    };
    static POISSON_PLAIN: RunEval = RunEval {
        name: "poisson without fma",
        eval: |a, f, s| Some(poisson_log::<false, false>(a, f, s)),
    };

    /// The AVX2 and AVX-512 forms of an evaluator give the same bits, sum
    /// and slopes, where the CPU has them (the lane width must not change
    /// a result).
    fn same_in_every_width(fns: &Forms, args: &[Vec<f64>], flags: u8) {
        if !gearbox_core::cpu::has_avx512() {
            return;
        }
        let views: Vec<&[f64]> = args.iter().map(|a| a.as_slice()).collect();
        let n = args[0].len();
        let (mut narrow, mut wide) = (vec![0.0; n], vec![0.0; n]);
        // SAFETY: the CPU has AVX-512 (checked above), hence AVX2 and FMA.
        let (a, b) = unsafe {
            (
                (fns.fma)(&views, flags, &mut narrow),
                (fns.wide)(&views, flags, &mut wide),
            )
        };
        assert_eq!(a.to_bits(), b.to_bits(), "sums differ by lane width");
        for (i, (x, y)) in narrow.iter().zip(&wide).enumerate() {
            assert_eq!(x.to_bits(), y.to_bits(), "slope {i} differs by lane width");
        }
    }

    #[test]
    fn the_binomial_run_matches_the_terms_one_at_a_time() {
        let n = 700;
        let eta = etas(n);
        // Counts with x = 0, x = n, 0 < x < n, weight 0 and rejected rows.
        let rows: Vec<_> = (0..n)
            .map(|i| match i % 7 {
                0 => binomial_row(0.0, 1.0),
                1 => binomial_row(1.0, 1.0),
                2 => binomial_row(0.25, 12.0),
                3 => binomial_row(0.5, 0.0),
                4 => binomial_row(1.5, 2.0),
                _ => binomial_row((i % 5) as f64 / 5.0, 5.0),
            })
            .collect();
        let col = |f: &dyn Fn(&crate::glm::rows::BinomialRow) -> f64| {
            rows.iter().map(f).collect::<Vec<f64>>()
        };
        let (x, nn) = (col(&|r| r.x), col(&|r| r.n));
        for (flags, disp) in [(FAST, 1.0), (FAST | QUASI | SLOPE_QUASI, 1.7)] {
            let args = vec![
                eta.clone(),
                vec![disp; n],
                x.clone(),
                nn.clone(),
                col(&|r| r.h),
                col(&|r| r.lf),
                col(&|r| r.lchoose),
                col(&|r| r.lchoose_err),
                eta.clone(),
                vec![disp; n],
                x.clone(),
                nn.clone(),
            ];
            let parts = |i: usize| nn[i] / disp;
            let fns = (&ROW_LL_BINOMIAL_LOGIT, &ROW_SLOPE_BINOMIAL_LOGIT);
            for run in [&BINOMIAL_LOGIT, &BINOMIAL_PLAIN] {
                check(run, &args, flags, fns, parts);
            }
            same_in_every_width(&BINOMIAL_LOGIT_FNS, &args, flags);
        }
        let mut slopes = vec![0.0; 1];
        let one: Vec<&[f64]> = vec![&[0.5][..]; 12];
        assert_eq!(
            (BINOMIAL_LOGIT.eval)(&one, 0, &mut slopes),
            None,
            "exact terms decline"
        );
    }

    #[test]
    fn the_poisson_run_matches_the_terms_one_at_a_time() {
        let n = 700;
        // Near the mode too (eta = log y), where the closed form cancels.
        let mut eta = etas(n);
        let ys: Vec<f64> = (0..n)
            .map(|i| [0.0, 1.0, 3.0, 17.0, 250.0, f64::NAN, -1.0][i % 7])
            .collect();
        for i in (0..n).step_by(5) {
            if ys[i] > 0.0 {
                eta[i] = ys[i].ln() + 1e-3;
            }
        }
        let wts: Vec<f64> = (0..n)
            .map(|i| {
                if i % 11 == 0 {
                    0.0
                } else {
                    0.5 + (i % 3) as f64
                }
            })
            .collect();
        let rows: Vec<_> = ys
            .iter()
            .zip(&wts)
            .map(|(&y, &w)| poisson_row(y, w))
            .collect();
        let col = |f: &dyn Fn(&crate::glm::rows::PoissonRow) -> f64| {
            rows.iter().map(f).collect::<Vec<f64>>()
        };
        for (flags, disp) in [(FAST, 1.0), (FAST | QUASI | SLOPE_QUASI, 0.6)] {
            let args = vec![
                eta.clone(),
                vec![disp; n],
                col(&|r| r.wt),
                col(&|r| r.k),
                col(&|r| r.stirlerr),
                col(&|r| r.log_term),
                col(&|r| r.lgamma),
                col(&|r| r.lgamma_err),
                ys.clone(),
                wts.clone(),
                eta.clone(),
                vec![disp; n],
            ];
            let parts = |i: usize| wts[i] * (ys[i].abs() + eta[i].min(709.0).exp()) / disp;
            let fns = (&ROW_LL_POISSON_LOG, &SLOPE_POISSON_LOG);
            for run in [&POISSON_LOG, &POISSON_PLAIN] {
                check(run, &args, flags, fns, parts);
            }
            same_in_every_width(&POISSON_LOG_FNS, &args, flags);
        }
    }
}
