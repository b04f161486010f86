//! The normal and logistic device functions against the Rust functions, to
//! 1e-13 relative.

use crate::common::have_engine;
use crate::devcheck::{check, flag, spread, unit, FLAGS};
use gearbox_stats::nmath;

fn xs() -> Vec<f64> {
    let mut xs = spread(150, 11, -4.0, 1.8, true);
    xs.extend([
        0.0,
        -0.0,
        0.67448975,
        -0.6744898,
        5.65685424949238,
        -5.656854249492381,
        -37.5193,
        -37.6,
        8.2924,
        -8.3,
        40.0,
        -1e5,
        1e5,
        -1e169,
        -1e171,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ]);
    xs
}

#[test]
fn pnorm_both_matches() {
    if !have_engine() {
        return;
    }
    let mut rows = Vec::new();
    for x in xs() {
        for i_tail in [0.0, 1.0, 2.0] {
            for log_p in [0.0, 1.0] {
                rows.push(vec![x, i_tail, log_p]);
            }
        }
    }
    check("gb_pnorm_both", &rows, |a| {
        let (mut cum, mut ccum) = (f64::NAN, f64::NAN);
        nmath::pnorm_both(a[0], &mut cum, &mut ccum, a[1] as i32, flag(a[2]));
        if a[1] == 0.0 {
            cum
        } else {
            ccum
        }
    });
}

#[test]
fn pnorm_matches() {
    if !have_engine() {
        return;
    }
    let mut rows = Vec::new();
    let (mus, sigmas) = (
        spread(40, 12, -2.0, 3.0, true),
        spread(40, 13, -3.0, 3.0, false),
    );
    for (i, x) in xs().into_iter().enumerate() {
        let (l, g) = FLAGS[i % 4];
        rows.push(vec![x, 0.0, 1.0, l, g]);
        rows.push(vec![x, mus[i % 40], sigmas[i % 40], g, l]);
    }
    for e in [
        [1.0, 1.0, 0.0],
        [0.5, 1.0, 0.0],
        [1.0, 0.0, -1.0],
        [f64::INFINITY, f64::INFINITY, 1.0],
        [1.0, f64::NAN, 1.0],
        [1.0, 0.0, f64::INFINITY],
    ] {
        for (l, g) in FLAGS {
            rows.push(vec![e[0], e[1], e[2], l, g]);
        }
    }
    check("gb_pnorm", &rows, |a| {
        nmath::pnorm(a[0], a[1], a[2], flag(a[3]), flag(a[4]))
    });
}

/// Probabilities on both scales: uniform, tiny, near one, the boundaries
/// and invalid values, each with the (lower_tail, log_p) it is meant for.
fn probabilities() -> Vec<(f64, f64)> {
    let mut ps: Vec<(f64, f64)> = unit(80, 21).into_iter().map(|p| (p, 0.0)).collect();
    ps.extend(
        spread(60, 22, -300.0, -1.0, false)
            .into_iter()
            .map(|p| (p, 0.0)),
    );
    ps.extend([0.0, 1.0, 0.5, 0.075, 0.925, 1.3e-11, -0.1, 1.1, f64::NAN].map(|p| (p, 0.0)));
    ps.extend(
        spread(80, 23, -20.0, 10.0, false)
            .into_iter()
            .map(|p| (-p, 1.0)),
    );
    ps.extend([0.0, f64::NEG_INFINITY, 0.5, -25.0, -665856.0, -1e300].map(|p| (p, 1.0)));
    ps
}

#[test]
fn qnorm_matches() {
    if !have_engine() {
        return;
    }
    let mut rows = Vec::new();
    for (i, (p, log_p)) in probabilities().into_iter().enumerate() {
        rows.push(vec![p, 0.0, 1.0, 1.0, log_p]);
        rows.push(vec![p, 0.0, 1.0, 0.0, log_p]);
        rows.push(vec![p, (i as f64) - 50.0, 0.5 + i as f64, 1.0, log_p]);
    }
    rows.push(vec![0.3, 1.0, 0.0, 1.0, 0.0]);
    rows.push(vec![0.3, 1.0, -1.0, 1.0, 0.0]);
    check("gb_qnorm", &rows, |a| {
        nmath::qnorm(a[0], a[1], a[2], flag(a[3]), flag(a[4]))
    });
}

#[test]
fn plogis_matches() {
    if !have_engine() {
        return;
    }
    let mut xs = spread(150, 24, -4.0, 3.0, true);
    xs.extend([
        0.0,
        18.0,
        18.5,
        33.3,
        33.4,
        -745.0,
        800.0,
        1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ]);
    let mut rows = Vec::new();
    for (i, x) in xs.into_iter().enumerate() {
        for (l, g) in FLAGS {
            rows.push(vec![x, 0.0, 1.0, l, g]);
        }
        rows.push(vec![x, (i as f64) - 70.0, 0.01 * (i + 1) as f64, 1.0, 0.0]);
    }
    for e in [
        [1.0, 0.0, 0.0],
        [1.0, 0.0, -1.0],
        [f64::INFINITY, f64::INFINITY, 1.0],
        [1.0, f64::NAN, 1.0],
    ] {
        rows.push(vec![e[0], e[1], e[2], 1.0, 0.0]);
    }
    check("gb_plogis", &rows, |a| {
        nmath::plogis(a[0], a[1], a[2], flag(a[3]), flag(a[4]))
    });
}

#[test]
fn qlogis_matches() {
    if !have_engine() {
        return;
    }
    let mut rows = Vec::new();
    for (i, (p, log_p)) in probabilities().into_iter().enumerate() {
        rows.push(vec![p, 0.0, 1.0, 1.0, log_p]);
        rows.push(vec![p, 0.0, 1.0, 0.0, log_p]);
        rows.push(vec![p, (i as f64) - 50.0, 0.5 + i as f64, 1.0, log_p]);
    }
    rows.push(vec![0.3, 1.0, 0.0, 1.0, 0.0]);
    rows.push(vec![0.3, 1.0, -1.0, 1.0, 0.0]);
    check("gb_qlogis", &rows, |a| {
        nmath::qlogis(a[0], a[1], a[2], flag(a[3]), flag(a[4]))
    });
}
