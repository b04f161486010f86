//! The device functions of the gamma family, the deviance pieces and the
//! densities (`device/gb_*.c`) against the Rust nmath functions: the same
//! algorithm in both, so they agree to 1e-13 relative on random inputs over
//! wide ranges and on edge cases.
//!
//! Under g++ each test compiles one program for all the functions it checks
//! (the assembled source of all of them, callees once), which keeps the
//! compile time small; that each function's own `@depends` closure is
//! complete is checked without a compiler by
//! `every_called_device_function_is_a_dependency`.
//!
//! The same cases run on a GPU through NVRTC:
//!
//! ```text
//! GEARBOX_STATS_BUNDLE=/tmp/gbs cargo test -p gearbox-stats --test device_host -- device_cases::gamma
//! python3 crates/gearbox-stats/scripts/nvrtc_check.py /tmp/gbs   # where a GPU and CuPy are
//! ```

use std::collections::HashSet;
use std::path::PathBuf;

use crate::common::{call_expr, close, have_engine, parameters, run_batch};
use gearbox_stats::{device, nmath};

/// A small reproducible generator (64-bit LCG), uniform in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    fn between(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Log-uniform in [10^lo, 10^hi).
    fn magnitude(&mut self, lo: f64, hi: f64) -> f64 {
        10f64.powf(self.between(lo, hi))
    }

    /// `n` log-uniform values in [10^lo, 10^hi).
    fn magnitudes(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.magnitude(lo, hi)).collect()
    }

    /// `n` log-uniform values in [10^lo, 10^hi) with random signs.
    fn signed(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let m = self.magnitude(lo, hi);
                if self.uniform() < 0.5 {
                    -m
                } else {
                    m
                }
            })
            .collect()
    }
}

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;
/// Values every argument is also tried with.
const SPECIAL: [f64; 5] = [0.0, -0.0, INF, -INF, NAN];

/// The Rust function a device function is compared with.
type Reference = Box<dyn Fn(&[f64]) -> f64>;

/// Device functions, their argument rows and their Rust references, run
/// together in one host program.
#[derive(Default)]
struct Batch {
    cases: Vec<(&'static str, Vec<Vec<f64>>, Reference)>,
}

impl Batch {
    /// Adds device function `name` on `rows`, to be compared with `f`.
    fn add(
        &mut self,
        name: &'static str,
        rows: Vec<Vec<f64>>,
        f: impl Fn(&[f64]) -> f64 + 'static,
    ) {
        self.cases.push((name, rows, Box::new(f)));
    }

    /// Compiles the functions into one program (`tag` names its files),
    /// runs every row and compares with the Rust values to 1e-13 relative.
    /// With `GEARBOX_STATS_BUNDLE=dir` set, also writes the cases for a GPU
    /// check (see [`Batch::write_bundle`]).
    fn check(self, tag: &str) {
        let names: Vec<&str> = self.cases.iter().map(|c| c.0).collect();
        if let Some(dir) = std::env::var_os("GEARBOX_STATS_BUNDLE") {
            self.write_bundle(&PathBuf::from(dir), tag, &names);
        }
        let rows: Vec<Vec<Vec<f64>>> = self.cases.iter().map(|c| c.1.clone()).collect();
        let got = run_batch(tag, &names, &rows, &["-ffp-contract=off"]);
        let mut bad = Vec::new();
        let mut total = 0;
        for ((name, rows, f), got) in self.cases.iter().zip(got) {
            for (row, got) in rows.iter().zip(got) {
                let want = f(row);
                total += 1;
                if !close(got, want, 1e-13) {
                    bad.push(format!("{name}{row:?}: device {got:e}, rust {want:e}"));
                }
            }
        }
        assert!(
            bad.is_empty(),
            "{} of {total} rows differ:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }
}

impl Batch {
    /// Writes the cases for `scripts/nvrtc_check.py`, which compiles them
    /// with NVRTC and runs them on a GPU: `tag.cu` (the assembled source and
    /// one kernel `gb_check_K` per function), `tag.manifest` (lines
    /// `K name arity rows`), `tag.in` (the rows) and `tag.want` (the Rust
    /// values), numbers as little-endian f64.
    fn write_bundle(&self, dir: &std::path::Path, tag: &str, names: &[&str]) {
        std::fs::create_dir_all(dir).expect("bundle dir");
        let source = device::assemble(names).unwrap_or_else(|e| panic!("{e}"));
        let mut cu = format!("{source}\n");
        let mut manifest = String::new();
        let (mut input, mut want) = (Vec::new(), Vec::new());
        for (k, (name, rows, f)) in self.cases.iter().enumerate() {
            let params = parameters(name);
            cu.push_str(&format!(
                "extern \"C\" __global__ void gb_check_{k}(const double *in, double *out, long long n)\n\
                 {{\n    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n    \
                 if (t >= n) return;\n    const double *a = in + t * {arity};\n    \
                 out[t] = {call};\n}}\n",
                call = call_expr(name),
                arity = params.len()
            ));
            manifest.push_str(&format!("{k} {name} {} {}\n", params.len(), rows.len()));
            for r in rows {
                input.extend(r.iter().flat_map(|v| v.to_le_bytes()));
                want.extend(f(r).to_le_bytes());
            }
        }
        std::fs::write(dir.join(format!("{tag}.cu")), cu).expect("write bundle");
        std::fs::write(dir.join(format!("{tag}.manifest")), manifest).expect("write bundle");
        std::fs::write(dir.join(format!("{tag}.in")), input).expect("write bundle");
        std::fs::write(dir.join(format!("{tag}.want")), want).expect("write bundle");
    }
}

#[test]
fn every_called_device_function_is_a_dependency() {
    // Each gb_NAME( that a file calls must be in its own @depends closure,
    // so that the function compiles when assembled alone.
    for (name, f) in device::functions() {
        let closure: HashSet<&str> = device::closure(&[name]).unwrap().into_iter().collect();
        let src = f.source;
        let mut rest = src;
        while let Some(at) = rest.find("gb_") {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            let ident = &tail[..end];
            let preceded = at > 0 && {
                let c = rest.as_bytes()[at - 1] as char;
                c.is_ascii_alphanumeric() || c == '_'
            };
            if !preceded
                && tail[end..].trim_start().starts_with('(')
                && device::functions().contains_key(ident)
            {
                assert!(
                    closure.contains(ident),
                    "{name} calls {ident}, which its @depends closure lacks"
                );
            }
            rest = &tail[end..];
        }
    }
}

fn ones(xs: &[f64]) -> Vec<Vec<f64>> {
    xs.iter().map(|&x| vec![x]).collect()
}

/// Every row of `rows` twice: with give_log = 0 and 1 appended.
fn both_scales(rows: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    rows.into_iter()
        .flat_map(|r| {
            let mut l = r.clone();
            l.push(1.0);
            let mut d = r;
            d.push(0.0);
            [d, l]
        })
        .collect()
}

fn flag(x: f64) -> bool {
    x != 0.0
}

#[test]
fn log1mexp_logcf_log1pmx_sinpi_match() {
    if !have_engine() {
        return;
    }
    let mut batch = Batch::default();
    let mut r = Lcg(1);
    let ln2 = std::f64::consts::LN_2;
    let mut xs = r.magnitudes(300, -300.0, 3.0);
    xs.extend([
        ln2,
        ln2 * (1.0 - 2e-16),
        ln2 * (1.0 + 2e-16),
        1.0,
        40.0,
        -1.0,
    ]);
    xs.extend(SPECIAL);
    batch.add("gb_log1mexp", ones(&xs), |a| nmath::log1mexp(a[0]));

    let mut rows: Vec<Vec<f64>> = (0..300)
        .map(|_| {
            vec![
                r.between(-0.9, 0.9),
                r.between(1.0, 50.0).floor(),
                r.between(0.5, 3.0),
                if r.uniform() < 0.5 { 1e-14 } else { 1e-10 },
            ]
        })
        .collect();
    rows.extend([
        vec![0.0, 3.0, 2.0, 1e-14],
        vec![0.1, 42.0, 1.0, 1e-14],
        vec![-0.25, 42.0, 1.0, 1e-14],
        vec![NAN, 3.0, 2.0, 1e-14],
    ]);
    batch.add("gb_logcf", rows, |a| nmath::logcf(a[0], a[1], a[2], a[3]));

    let mut xs: Vec<f64> = (0..200).map(|_| r.between(-0.999, 3.0)).collect();
    xs.extend(r.signed(150, -300.0, -0.3));
    xs.extend(r.magnitudes(50, 0.3, 300.0));
    xs.extend([
        -0.79149064,
        -0.7914906,
        0.01,
        -0.01,
        0.00999,
        1.0,
        1.0001,
        -1.0,
    ]);
    xs.extend(SPECIAL);
    batch.add("gb_log1pmx", ones(&xs), |a| nmath::log1pmx(a[0]));

    let mut xs = r.signed(200, -3.0, 17.0);
    xs.extend((-8..=8).map(|k| f64::from(k) * 0.5));
    xs.extend([1e300, -1e300, 2.0_f64.powi(53) + 1.0]);
    xs.extend(SPECIAL);
    batch.add("gb_sinpi", ones(&xs), |a| nmath::sinpi(a[0]));
    batch.check("log1p");
}

#[test]
fn gamma_functions_match() {
    if !have_engine() {
        return;
    }
    let mut batch = Batch::default();
    let mut r = Lcg(2);

    let mut xs = r.magnitudes(300, 1.0, 308.0);
    xs.extend([10.0, 9.99, 94906265.62425156, 3.745194030963158e306, 1e308]);
    xs.extend(SPECIAL);
    batch.add("gb_lgammacor", ones(&xs), |a| nmath::lgammacor(a[0]));

    // The Chebyshev branch of gammafn, 0 < |x| <= 10, not at the poles.
    let mut xs: Vec<f64> = (0..300).map(|_| r.between(-10.0, 10.0)).collect();
    xs.extend(r.signed(60, -310.0, 0.0));
    xs.extend([
        10.0,
        -10.0 + 1e-9,
        1.0,
        2.0,
        0.5,
        -0.5,
        -9.5,
        2.2474362225598545e-308,
    ]);
    xs.retain(|&x| x != 0.0 && !(x < 0.0 && x == x.round()));
    batch.add("gb_gammafn_small", ones(&xs), |a| nmath::gammafn(a[0]));

    let mut xs: Vec<f64> = (0..300).map(|_| r.between(0.0, 40.0)).collect();
    xs.extend(r.magnitudes(100, -300.0, 300.0));
    xs.extend((0..=40).map(|k| f64::from(k) * 0.5));
    xs.extend([
        14.9, 15.1, 35.0, 35.5, 80.0, 80.5, 500.0, 500.5, -0.3, -2.5, -20.3,
    ]);
    xs.extend(SPECIAL);
    batch.add("gb_stirlerr", ones(&xs), |a| nmath::stirlerr(a[0]));

    let mut xs: Vec<f64> = (0..300).map(|_| r.between(-175.0, 175.0)).collect();
    xs.extend(r.signed(100, -310.0, 1.0));
    xs.extend((1..=60).map(f64::from));
    xs.extend((1..=60).map(|k| f64::from(k) + 0.5));
    xs.extend((1..=30).map(|k| -f64::from(k) - 0.5));
    xs.extend([
        -3.0,
        -1e-308,
        171.61447887182298,
        171.62,
        -170.5674972726612,
        -170.6,
    ]);
    xs.extend(SPECIAL);
    batch.add("gb_gammafn", ones(&xs), |a| nmath::gammafn(a[0]));

    let mut xs: Vec<f64> = (0..300).map(|_| r.between(-30.0, 30.0)).collect();
    xs.extend(r.signed(200, -310.0, 310.0));
    xs.extend((0..40).map(|_| 1.0 + r.between(-1e-3, 1e-3)));
    xs.extend((0..40).map(|_| 2.0 + r.between(-1e-3, 1e-3)));
    xs.extend([
        4934720.0,
        4934721.0,
        1e17,
        1.1e17,
        2.5327372760800758e+305,
        3e305,
    ]);
    xs.extend([1e-306, 5e-324, -5e-324, 1.0, 2.0, -1.0, -2.0]);
    xs.extend(SPECIAL);
    batch.add("gb_lgamma", ones(&xs), |a| nmath::lgamma(a[0]));

    let mut xs: Vec<f64> = (0..300).map(|_| r.between(-0.5, 0.5)).collect();
    xs.extend(r.signed(100, -300.0, -0.31));
    xs.extend((0..60).map(|_| r.between(-0.999, 10.0)));
    xs.extend(r.magnitudes(40, 1.0, 300.0));
    xs.extend([0.5, -0.5, 0.4999999999, -1.0, 1.0, 2.0]);
    xs.extend(SPECIAL);
    batch.add("gb_lgamma1p", ones(&xs), |a| nmath::lgamma1p(a[0]));

    let mut xs: Vec<f64> = (0..300).map(|_| r.between(-30.0, 30.0)).collect();
    xs.extend(r.signed(200, -9.0, 15.0));
    xs.extend((0..40).map(|_| 1.4616321449683622 + r.between(-1e-3, 1e-3)));
    xs.extend([
        0.5,
        3.0,
        1e-9,
        -1e-9,
        -0.5,
        -1.0,
        -2.0,
        1e16,
        -3e9,
        -2147483647.5,
        -2147483648.5,
        // R's regions: log(x) past x log(x) = 2^51, the series below,
        // -1/x under 2^-53, NaN under exp(-700.6).
        5e9,
        1e10,
        1e12,
        6.7e13,
        6.8e13,
        1e15,
        1e300,
        f64::MAX,
        8.999999999999998,
        9.0,
        1.1102230246251565e-16,
        1.1102230246251568e-16,
        1e-300,
        3.8e-305,
        1e-305,
        5e-324,
    ]);
    xs.extend(r.magnitudes(60, 1.0, 300.0));
    xs.extend(SPECIAL);
    batch.add("gb_digamma", ones(&xs), |a| nmath::digamma(a[0]));

    let mut rows: Vec<Vec<f64>> = (0..400)
        .map(|_| vec![r.magnitude(-6.0, 12.0), r.magnitude(-6.0, 12.0)])
        .collect();
    rows.extend((0..100).map(|_| vec![r.between(0.0, 12.0), r.between(0.0, 12.0)]));
    rows.extend((0..40).map(|_| vec![r.magnitude(-310.0, -300.0), r.between(0.1, 20.0)]));
    for &a in &[0.0, -1.0, 1.0, 10.0, 1e-306, INF, NAN] {
        for &b in &[0.0, 2.0, 9.99, 10.0, 1e5, INF, NAN] {
            rows.push(vec![a, b]);
        }
    }
    batch.add("gb_lbeta", rows, |a| nmath::lbeta(a[0], a[1]));
    batch.check("gamma");
}

#[test]
fn deviance_and_discrete_densities_match() {
    if !have_engine() {
        return;
    }
    let mut batch = Batch::default();
    let mut r = Lcg(3);

    let mut rows: Vec<Vec<f64>> = (0..400)
        .map(|_| {
            let np = r.magnitude(-10.0, 15.0);
            let x = if r.uniform() < 0.5 {
                np * (1.0 + r.between(-0.2, 0.2))
            } else {
                np * r.magnitude(-5.0, 5.0)
            };
            vec![x, np]
        })
        .collect();
    rows.extend([
        vec![5.0, 5.0],
        vec![0.0, 3.0],
        vec![3.0, 0.0],
        vec![INF, 3.0],
        vec![3.0, NAN],
        vec![1e-320, 1.1e-320],
        vec![1e300, 1.01e300],
    ]);
    batch.add("gb_bd0", rows, |a| nmath::bd0(a[0], a[1]));

    let mut rows: Vec<Vec<f64>> = (0..300)
        .map(|_| {
            let n = if r.uniform() < 0.5 {
                r.magnitude(0.0, 15.0).floor()
            } else {
                r.magnitude(0.0, 15.0)
            };
            let x = n * r.uniform().powi(3);
            let p = r.magnitude(-20.0, 0.0).min(0.999);
            if r.uniform() < 0.3 {
                vec![x, n, 1.0 - p, p]
            } else {
                vec![x, n, p, 1.0 - p]
            }
        })
        .collect();
    rows.extend([
        vec![0.0, 0.0, 0.3, 0.7],
        vec![0.0, 10.0, 0.05, 0.95],
        vec![0.0, 10.0, 0.5, 0.5],
        vec![10.0, 10.0, 0.95, 0.05],
        vec![10.0, 10.0, 0.5, 0.5],
        vec![3.0, 5.0, 0.0, 1.0],
        vec![5.0, 5.0, 1.0, 0.0],
        vec![6.0, 5.0, 0.5, 0.5],
        vec![-1.0, 5.0, 0.5, 0.5],
        vec![3.0, INF, 0.5, 0.5],
        vec![NAN, 5.0, 0.5, 0.5],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dbinom_raw", rows, |a| {
        nmath::dbinom_raw(a[0], a[1], a[2], a[3], flag(a[4]))
    });

    let mut rows: Vec<Vec<f64>> = (0..300)
        .map(|_| {
            let n = r.magnitude(0.0, 15.5).floor();
            vec![(n * r.uniform()).round(), n, r.uniform()]
        })
        .collect();
    rows.extend([
        vec![3.5, 10.0, 0.3],
        vec![3.0 + 1e-8, 10.0, 0.3],
        vec![1e7 + 0.5, 2e7, 0.5],
        vec![INF, 10.0, 0.3],
        vec![3.0, 5.5, 0.3],
        vec![3.0, -2.0, 0.3],
        vec![3.0, 10.0, 1.5],
        vec![3.0, NAN, 0.3],
        vec![0.0, INF, 0.5],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dbinom", rows, |a| {
        nmath::dbinom(a[0], a[1], a[2], flag(a[3]))
    });

    let mut rows: Vec<Vec<f64>> = (0..400)
        .map(|_| {
            let lambda = r.magnitude(-10.0, 16.0);
            let x = match (r.uniform() * 3.0) as u32 {
                0 => lambda * (1.0 + r.between(-0.0035, 0.0035)),
                1 => lambda * r.magnitude(-3.0, 3.0),
                _ => (lambda * r.between(0.0, 3.0)).floor(),
            };
            vec![x, lambda]
        })
        .collect();
    rows.extend([
        vec![0.0, 0.0],
        vec![5.0, 0.0],
        vec![5.0, INF],
        vec![-1.0, 2.0],
        vec![1e-320, 1.0],
        vec![1e300, 1e-10],
        vec![INF, 5.0],
        vec![3e307, 3e307],
        vec![3e307, 1e307],
        vec![1e15, 1e15 + 1.0],
        vec![7.0, 1e-310],
        vec![NAN, 3.0],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dpois_raw", rows, |a| {
        nmath::dpois_raw(a[0], a[1], flag(a[2]))
    });

    let mut rows: Vec<Vec<f64>> = (0..300)
        .map(|_| {
            let lambda = r.magnitude(-8.0, 15.0);
            vec![(lambda * r.magnitude(-1.5, 1.5)).round(), lambda]
        })
        .collect();
    rows.extend([
        vec![3.5, 2.0],
        vec![1e7 + 0.5, 1e7],
        vec![-2.0, 2.0],
        vec![INF, 2.0],
        vec![4.0, -1.0],
        vec![NAN, 2.0],
        vec![0.0, 0.0],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dpois", rows, |a| nmath::dpois(a[0], a[1], flag(a[2])));

    let mut rows: Vec<Vec<f64>> = (0..300)
        .map(|_| {
            vec![
                r.magnitude(-0.5, 8.0).round(),
                r.magnitude(-5.0, 17.0),
                if r.uniform() < 0.5 {
                    r.magnitude(-12.0, 0.0)
                } else {
                    r.uniform().max(1e-300)
                },
            ]
        })
        .collect();
    rows.extend([
        vec![0.0, 0.0, 0.5],
        vec![0.0, 3.0, 0.5],
        vec![5.0, 0.0, 0.5],
        vec![5.0, INF, 0.5],
        vec![5.0, 3.0, 0.0],
        vec![5.0, 3.0, 1.2],
        vec![3.5, 3.0, 0.5],
        vec![2.0, 1e12, 1e-12],
        vec![20.0, 1e300, 1.0],
        vec![3.0, 1e-300, 0.5],
        vec![NAN, 3.0, 0.5],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dnbinom", rows, |a| {
        nmath::dnbinom(a[0], a[1], a[2], flag(a[3]))
    });
    batch.check("discrete");
}

#[test]
fn continuous_densities_match() {
    if !have_engine() {
        return;
    }
    let mut batch = Batch::default();
    let mut r = Lcg(4);

    let mut rows: Vec<Vec<f64>> = (0..300)
        .map(|_| {
            let shape = r.magnitude(-4.0, 6.0);
            let scale = r.magnitude(-5.0, 5.0);
            vec![shape * scale * r.magnitude(-2.0, 2.0), shape, scale]
        })
        .collect();
    rows.extend([
        vec![0.0, 0.5, 1.0],
        vec![0.0, 1.0, 2.0],
        vec![0.0, 2.0, 1.0],
        vec![0.0, 0.0, 1.0],
        vec![1.0, 0.0, 1.0],
        vec![-1.0, 2.0, 1.0],
        vec![1.0, -1.0, 1.0],
        vec![1.0, 2.0, 0.0],
        vec![INF, 2.0, 1.0],
        vec![1e-300, 0.3, 1.0],
        vec![2.0, 1e-300, 1.0],
        vec![NAN, 2.0, 1.0],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dgamma", rows, |a| {
        nmath::dgamma(a[0], a[1], a[2], flag(a[3]))
    });

    let mut rows: Vec<Vec<f64>> = (0..300)
        .map(|_| {
            let x = r.uniform().powi(1 + (r.uniform() * 20.0) as i32);
            let x = if r.uniform() < 0.3 { 1.0 - x } else { x };
            vec![x, r.magnitude(-3.0, 5.0), r.magnitude(-3.0, 5.0)]
        })
        .collect();
    for &x in &[0.0, 0.5, 1.0, -0.1, 1.1] {
        for &(a, b) in &[
            (0.5, 2.0),
            (1.0, 4.0),
            (3.0, 1.0),
            (2.0, 0.5),
            (0.0, 0.0),
            (0.0, 2.0),
            (3.0, 0.0),
            (INF, 2.0),
            (2.0, INF),
            (INF, INF),
            (-1.0, 2.0),
        ] {
            rows.push(vec![x, a, b]);
        }
    }
    rows.push(vec![NAN, 2.0, 2.0]);
    let rows = both_scales(rows);
    batch.add("gb_dbeta", rows, |a| {
        nmath::dbeta(a[0], a[1], a[2], flag(a[3]))
    });

    let mut rows: Vec<Vec<f64>> = (0..400)
        .map(|_| {
            let mu = r.between(-30.0, 30.0);
            let sigma = r.magnitude(-3.0, 3.0);
            let z = if r.uniform() < 0.5 {
                r.between(-40.0, 40.0)
            } else {
                r.signed(1, 0.0, 200.0)[0]
            };
            vec![mu + sigma * z, mu, sigma]
        })
        .collect();
    rows.extend([
        vec![5.0, 0.0, 1.0],
        vec![38.5, 0.0, 1.0],
        vec![38.6, 0.0, 1.0],
        vec![INF, INF, 1.0],
        vec![INF, 0.0, 1.0],
        vec![1.0, 0.0, INF],
        vec![0.0, 0.0, 0.0],
        vec![1.0, 0.0, 0.0],
        vec![1.0, 0.0, -1.0],
        vec![1e154, -1e154, 1e-154],
        vec![NAN, 0.0, 1.0],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dnorm", rows, |a| {
        nmath::dnorm(a[0], a[1], a[2], flag(a[3]))
    });

    let mut rows: Vec<Vec<f64>> = (0..300)
        .map(|_| {
            let loc = r.between(-30.0, 30.0);
            let scale = r.magnitude(-3.0, 3.0);
            vec![loc + scale * r.signed(1, -3.0, 3.0)[0], loc, scale]
        })
        .collect();
    rows.extend([
        vec![800.0, 0.0, 1.0],
        vec![INF, 0.0, 1.0],
        vec![INF, INF, 1.0],
        vec![1.0, 0.0, 0.0],
        vec![1.0, 0.0, INF],
        vec![NAN, 0.0, 1.0],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dlogis", rows, |a| {
        nmath::dlogis(a[0], a[1], a[2], flag(a[3]))
    });

    let mut rows: Vec<Vec<f64>> = (0..400)
        .map(|_| vec![r.signed(1, -4.0, 200.0)[0], r.magnitude(-3.0, 12.0)])
        .collect();
    rows.extend([
        vec![0.0, 1.0],
        vec![1.0, INF],
        vec![INF, 3.0],
        vec![1.0, 0.0],
        vec![1.0, -1.0],
        vec![3.0, 1e300],
        vec![1e10, 1e-300],
        vec![NAN, 3.0],
    ]);
    let rows = both_scales(rows);
    batch.add("gb_dt", rows, |a| nmath::dt(a[0], a[1], flag(a[2])));
    batch.check("continuous");
}
