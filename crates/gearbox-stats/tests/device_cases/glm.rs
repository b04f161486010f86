//! The GLM term device functions (`gb_glm_ll_*`, `gb_glm_slope_*`) and
//! their helpers against the Rust functions of `glm::family`: random and
//! extreme `(y, wt, eta, dispersion)` for every base (family, link), both
//! values of the quasi flag: to 1e-13 relative when compiled without
//! contraction, as Rust computes, and (g++ only) to 1e-13 of the quantities
//! summed when compiled with fused multiply-adds, as NVRTC does by default.
//! The same for the hoisted terms (`gb_glm_row_*`, with the columns of
//! `glm::rows`), every combination of their quasi and fast flags; and the
//! pairs (`gb_glm_row_pair_*`) against their term and slope, bit for bit.

use crate::common::{
    self, close, has_output, have_engine, parameters, run_batch, run_batch_with_outputs,
};
use crate::glm_rows::{
    agrees, grid_call_rows, hoisted_edge_rows, parts, rows, with_both_flags, COMBINATIONS,
};
use gearbox_core::fusion::ir::ScalarFn;
use gearbox_stats::glm::terms::{
    pair_of, ALL, LL_BINOMIAL_CLOGLOG, ROW_ALL, SLOPE_BINOMIAL_CLOGLOG, SLOPE_BINOMIAL_PROBIT,
};

/// The twelve descriptors with their argument rows (quasi flag last).
fn term_cases() -> Vec<(&'static ScalarFn, Vec<Vec<f64>>)> {
    ALL.iter()
        .map(|f| {
            let combo = f
                .name
                .strip_prefix("glm_ll_")
                .or_else(|| f.name.strip_prefix("glm_slope_"))
                .expect("glm descriptor names");
            assert!(COMBINATIONS.contains(&combo), "{}", f.name);
            assert_eq!(parameters(f.device_name), [true, true, true, true, false]);
            let seed = 0x5eed ^ combo.len() as u64;
            (*f, with_both_flags(&rows(combo, 3000, seed)))
        })
        .collect()
}

/// Runs the descriptors' device functions on the host with `fp_flags` and
/// lists the rows where `ok(got, want, parts)` fails.
fn term_mismatches(
    tag: &str,
    fp_flags: &[&str],
    ok: impl Fn(f64, f64, f64) -> bool,
) -> (Vec<String>, usize) {
    let cases = term_cases();
    let names: Vec<&str> = cases.iter().map(|(f, _)| f.device_name).collect();
    let rows: Vec<Vec<Vec<f64>>> = cases.iter().map(|(_, r)| r.clone()).collect();
    let got = run_batch(&format!("glm_{tag}"), &names, &rows, fp_flags);
    let mut bad = Vec::new();
    let mut total = 0;
    for ((f, rows), got) in cases.iter().zip(&got) {
        for (row, &g) in rows.iter().zip(got) {
            let want = (f.eval)(&row[..4], row[4] as u8);
            total += 1;
            if !ok(g, want, parts(f.name, row, want, f.eval)) {
                bad.push(format!("{}{row:?}: device {g:e}, rust {want:e}", f.name));
            }
        }
    }
    (bad, total)
}

/// g++ options that contract `a * b + c` to fused multiply-adds, where the
/// processor has them; else `None`, after printing why the fused round is
/// skipped (also under OpenCL, whose programs the prelude builds without
/// contraction whatever the options).
fn fma_flags() -> Option<&'static [&'static str]> {
    if !common::takes_compiler_flags() {
        eprintln!("skipped the fused round: this engine takes no compiler options");
        return None;
    }
    let flags = host_fma_flags();
    if flags.is_none() {
        eprintln!("skipped the fused round: this processor has no fused multiply-add");
    }
    flags
}

#[cfg(target_arch = "x86_64")]
fn host_fma_flags() -> Option<&'static [&'static str]> {
    std::arch::is_x86_feature_detected!("fma").then_some(&["-ffp-contract=fast", "-mfma"])
}

#[cfg(not(target_arch = "x86_64"))]
fn host_fma_flags() -> Option<&'static [&'static str]> {
    Some(&["-ffp-contract=fast"])
}

/// The check of a build without contraction (`device`, `rust`, `parts`):
/// 1e-13 relative where the engine's `exp` and `log` are Rust's (g++ links
/// the same libm); else 1e-12 (the GLM grid's contract) relative to the
/// quantities summed, which those functions' last bits move where they
/// cancel: OpenCL allows `exp` 3 ulps, and at the table's linear
/// predictors near 700 that moves `mu` by 2-3e-13 relative (NVIDIA's
/// OpenCL driver does; its CUDA `exp` is within 1e-13 there).
fn strict(got: f64, want: f64, parts: f64) -> bool {
    if common::shares_rusts_libm() {
        close(got, want, 1e-13)
    } else {
        agrees(got, want, parts, 1e-12)
    }
}

fn assert_none(what: &str, (bad, total): (Vec<String>, usize)) {
    assert!(
        bad.is_empty(),
        "{what}: {} of {total} rows differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_term_and_slope_matches_the_rust_functions() {
    if !have_engine() {
        return;
    }
    // Compiled as Rust compiles: no contraction to fused multiply-adds.
    let found = term_mismatches("strict", &["-ffp-contract=off"], strict);
    assert_none("without contraction", found);
}

#[test]
fn terms_agree_when_the_compiler_fuses_multiply_adds() {
    if !have_engine() {
        return;
    }
    // NVRTC contracts a * b + c to one fused multiply-add by default
    // (--fmad=true); g++ does the same with -ffp-contract=fast where the
    // processor has FMA. Results then move by an ulp of the quantities
    // summed, so they agree to 1e-13 relative to those (glm_rows::parts).
    let Some(flags) = fma_flags() else {
        return;
    };
    let found = term_mismatches("fused", flags, |g, w, p| agrees(g, w, p, 1e-13));
    assert_none("with fused multiply-adds", found);
}

#[test]
fn cloglog_and_probit_helpers_match_across_their_branches() {
    if !have_engine() {
        return;
    }
    // Around the cut-offs (cloglog t = 1e-5, 1e-8, 40; probit eta =
    // -sqrt(32)) and out to the ends of exp's range.
    let mut etas: Vec<f64> = (0..4000).map(|i| -750.0 + 0.19 * i as f64).collect();
    for at in [1e-5f64.ln(), 1e-8f64.ln(), 40f64.ln(), -32f64.sqrt()] {
        etas.extend((-50..=50).map(|k| at + k as f64 * 1e-3));
    }
    etas.extend([f64::INFINITY, f64::NEG_INFINITY, f64::NAN]);
    let pairs: Vec<Vec<f64>> = etas.iter().map(|&e| vec![e, e.exp()]).collect();
    let singles: Vec<Vec<f64>> = etas.iter().map(|&e| vec![e]).collect();
    // The helpers through the terms that reduce to them: one success in
    // one trial, where the term is log p and the slope d log p / d eta.
    let one_success = |f: &ScalarFn, eta: f64| (f.eval)(&[1.0, 1.0, eta, 1.0], 0);
    let names = [
        "gb_glm_cloglog_log_p",
        "gb_glm_cloglog_ratio",
        "gb_glm_probit_ratio",
    ];
    let got = run_batch(
        "glm_helpers",
        &names,
        &[pairs.clone(), pairs, singles],
        &["-ffp-contract=off"],
    );
    let mut bad = Vec::new();
    for (i, &eta) in etas.iter().enumerate() {
        let want = [
            one_success(&LL_BINOMIAL_CLOGLOG, eta),
            one_success(&SLOPE_BINOMIAL_CLOGLOG, eta),
            one_success(&SLOPE_BINOMIAL_PROBIT, eta),
        ];
        for (k, name) in names.iter().enumerate() {
            if !close(got[k][i], want[k], 1e-13) {
                bad.push(format!(
                    "{name}({eta:e}): device {:e}, rust {:e}",
                    got[k][i], want[k]
                ));
            }
        }
    }
    assert_none("helpers", (bad, etas.len() * names.len()));
}

#[test]
fn log1p_on_the_unit_interval_stays_within_an_ulp_across_its_cut() {
    if !have_engine() {
        return;
    }
    // Random points of [0, 1], the cut at 0.65 and its neighbours, the ends.
    let mut xs: Vec<f64> = (0..20_000)
        .map(|i| ((i as f64 + 0.5) / 20_000.0).powi(1 + i % 3))
        .collect();
    let cut = 0.65f64;
    xs.extend((-40..=40).map(|k| f64::from_bits((cut.to_bits() as i64 + k) as u64)));
    xs.extend([0.0, f64::MIN_POSITIVE, 1e-300, 1e-17, 0.5, 2.0 / 3.0, 1.0]);
    let rows: Vec<Vec<f64>> = xs.iter().map(|&x| vec![x]).collect();
    let got = common::run_one("gb_log1p_unit", &rows);
    let bad: Vec<String> = xs
        .iter()
        .zip(&got)
        .filter(|(x, g)| {
            let want = x.ln_1p();
            (g.to_bits() as i64 - want.to_bits() as i64).abs() > 1
        })
        .map(|(x, g)| format!("log1p({x:e}): {g:e}, want {:e}", x.ln_1p()))
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {}:\n{}",
        bad.len(),
        xs.len(),
        bad.join("\n")
    );
}

/// The hoisted descriptors (`terms::ROW_ALL`) with their argument rows,
/// built by `terms::grid_calls` from the combinations' observation rows
/// plus the hoisted edge rows, every flag combination (quasi, fast)
/// appended last.
fn hoisted_cases() -> Vec<(&'static ScalarFn, Vec<Vec<f64>>)> {
    let mut cases: Vec<(&'static ScalarFn, Vec<Vec<f64>>)> = Vec::new();
    for combo in [
        "binomial_logit",
        "binomial_probit",
        "binomial_cloglog",
        "poisson_log",
    ] {
        let mut observations = rows(combo, 3000, 0x4015 ^ combo.len() as u64);
        observations.extend(hoisted_edge_rows(combo));
        for (f, _, args) in grid_call_rows(combo, &observations, false) {
            if !ROW_ALL.iter().any(|g| g.name == f.name) {
                continue; // the plain poisson slope, tested above
            }
            let with_flags: Vec<Vec<f64>> = args
                .iter()
                .flat_map(|a| {
                    (0..1u8 << f.flags).map(move |bits| {
                        let mut row = a.clone();
                        row.extend((0..f.flags).map(|i| f64::from((bits >> i) & 1)));
                        row
                    })
                })
                .collect();
            cases.push((f, with_flags));
        }
    }
    assert_eq!(cases.len(), ROW_ALL.len());
    cases
}

/// The size of the quantities a hoisted descriptor adds up at `row`: for
/// the binomial slopes `x |d log p| + (n - x) |d log q|` (which cancel near
/// the mode, as in `glm_rows::parts`); for the terms `|want|`.
fn hoisted_parts(f: &ScalarFn, row: &[f64], want: f64) -> f64 {
    if !f.name.starts_with("glm_row_slope_") {
        return want.abs();
    }
    let (eta, phi, x, n) = (row[0], row[1], row[2], row[3]);
    let up = (f.eval)(&[eta, phi, 1.0, 1.0], 0).abs();
    let down = (f.eval)(&[eta, phi, 0.0, 1.0], 0).abs();
    let size = x * up + (n - x) * down;
    if size.is_finite() {
        size.max(want.abs())
    } else {
        want.abs()
    }
}

/// Runs the hoisted device functions on the host with `fp_flags`; lists
/// the rows where `ok(device, rust, parts)` fails.
fn hoisted_mismatches(
    tag: &str,
    fp_flags: &[&str],
    ok: impl Fn(f64, f64, f64) -> bool,
) -> (Vec<String>, usize) {
    let cases = hoisted_cases();
    let names: Vec<&str> = cases.iter().map(|(f, _)| f.device_name).collect();
    let rows: Vec<Vec<Vec<f64>>> = cases.iter().map(|(_, r)| r.clone()).collect();
    let got = run_batch(&format!("glm_rows_{tag}"), &names, &rows, fp_flags);
    let mut bad = Vec::new();
    let mut total = 0;
    for ((f, rows), got) in cases.iter().zip(&got) {
        let expected: Vec<bool> = (0..f.arity + f.flags).map(|i| i < f.arity).collect();
        assert_eq!(parameters(f.device_name), expected, "{}", f.device_name);
        for (row, &g) in rows.iter().zip(got) {
            let bits = row[f.arity..]
                .iter()
                .enumerate()
                .fold(0u8, |b, (i, &v)| b | ((v as u8) << i));
            let want = (f.eval)(&row[..f.arity], bits);
            total += 1;
            if !ok(g, want, hoisted_parts(f, row, want)) {
                bad.push(format!("{}{row:?}: device {g:e}, rust {want:e}", f.name));
            }
        }
    }
    (bad, total)
}

#[test]
fn every_hoisted_term_matches_the_rust_functions() {
    if !have_engine() {
        return;
    }
    let found = hoisted_mismatches("strict", &["-ffp-contract=off"], strict);
    assert_none("hoisted, without contraction", found);
}

#[test]
fn hoisted_terms_agree_when_the_compiler_fuses_multiply_adds() {
    if !have_engine() {
        return;
    }
    // The terms agree to 1e-13 of themselves (the closed forms certify
    // only where their parts do not cancel), the binomial slopes to 1e-13
    // of the quantities they add (hoisted_parts).
    let Some(flags) = fma_flags() else {
        return;
    };
    let found = hoisted_mismatches("fused", flags, |g, w, p| agrees(g, w, p, 1e-13));
    assert_none("hoisted, with fused multiply-adds", found);
}

#[test]
fn cloglog_terms_take_exp_only_after_the_count_check() {
    // exp(eta) is the cloglog term's costliest step before the density:
    // rows with rejected counts (or weight 0) must not pay for it.
    for (name, check) in [
        (
            "gb_glm_ll_binomial_cloglog",
            "gb_glm_binomial_counts(y, wt)",
        ),
        ("gb_glm_row_ll_binomial_cloglog", "else if (n == 0)"),
    ] {
        let src = gearbox_stats::device::functions()[name].source;
        let body = &src[src.find('{').expect("a body")..];
        let check_at = body
            .find(check)
            .unwrap_or_else(|| panic!("{name}: {check}"));
        let exp_at = body.find("exp(eta)").expect("exp(eta)");
        assert!(exp_at > check_at, "{name} calls exp(eta) before {check}");
    }
}

/// Whether `a` and `b` are the same double (any NaN matching any NaN).
fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn each_pair_gives_its_term_and_slope_bit_for_bit() {
    // A pair (terms::pair_of) shares exp(eta) between the term and the
    // slope; it must change neither: on its combination's grid rows (edge
    // rows included), every flag combination, compiled both ways.
    if !have_engine() {
        return;
    }
    let mut flag_sets: Vec<&[&str]> = vec![&["-ffp-contract=off"]];
    flag_sets.extend(fma_flags());
    for (round, fp_flags) in flag_sets.into_iter().enumerate() {
        for combo in ["binomial_logit", "poisson_log"] {
            let mut observations = rows(combo, 2000, 0x9a1 ^ combo.len() as u64);
            observations.extend(hoisted_edge_rows(combo));
            let calls = grid_call_rows(combo, &observations, true);
            let ((ll, _, ll_args), (slope, _, slope_args)) = (&calls[0], &calls[1]);
            let pair = pair_of(ll, slope).expect("the combination has a pair");
            assert!(has_output(pair.device_name), "{}", pair.device_name);
            let (mut pair_rows, mut ll_rows, mut slope_rows) = (vec![], vec![], vec![]);
            for (a, b) in ll_args.iter().zip(slope_args) {
                for bits in 0..1u8 << pair.flags {
                    let flag = |i: usize| f64::from((bits >> i) & 1);
                    ll_rows.push(a.iter().copied().chain((0..ll.flags).map(flag)).collect());
                    slope_rows.push(
                        b.iter()
                            .copied()
                            .chain((0..slope.flags).map(|i| flag(ll.flags + i)))
                            .collect(),
                    );
                    pair_rows.push(
                        a.iter()
                            .chain(b)
                            .copied()
                            .chain((0..pair.flags).map(flag))
                            .collect(),
                    );
                }
            }
            let got = run_batch_with_outputs(
                &format!("glm_pair_{combo}_{round}"),
                &[pair.device_name, ll.device_name, slope.device_name],
                &[pair_rows.clone(), ll_rows, slope_rows],
                fp_flags,
            );
            let mut bad = Vec::new();
            for (i, row) in pair_rows.iter().enumerate() {
                let ((value, s), term, want_slope) = (got[0][i], got[1][i].0, got[2][i].0);
                if !same_bits(value, term) || !same_bits(s, want_slope) {
                    bad.push(format!(
                        "{}{row:?}: pair ({value:e}, {s:e}), apart ({term:e}, {want_slope:e})",
                        pair.name
                    ));
                }
            }
            assert_none(
                &format!("{combo} pair, {fp_flags:?}"),
                (bad, pair_rows.len()),
            );
        }
    }
}
