//! Reference values printed by R (`tests/data/gen_*.R` write the CSV files)
//! and the distance between a Rust value and R's in units in the last place.
#![allow(dead_code)]

/// One reference row: the R function's name, its arguments (flags as 0/1)
/// and R's value.
#[derive(Debug, Clone)]
pub struct Row {
    /// The R function.
    pub name: String,
    /// Its arguments, in R's order.
    pub args: Vec<f64>,
    /// What R returned.
    pub want: f64,
}

/// Parses a number as R's `sprintf("%.17g")` prints it.
pub fn parse_r(s: &str) -> f64 {
    match s.trim() {
        "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" | "NA" | "-NaN" => f64::NAN,
        t => t.parse().unwrap_or_else(|_| panic!("bad number {t:?}")),
    }
}

/// The rows of a CSV written by one of the `gen_*.R` scripts (`#` lines
/// are comments).
pub fn rows(csv: &str) -> Vec<Row> {
    csv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split(',');
            let name = f.next().unwrap().to_string();
            let mut nums: Vec<f64> = f.map(parse_r).collect();
            let want = nums.pop().expect("a value");
            Row {
                name,
                args: nums,
                want,
            }
        })
        .collect()
}

/// `|got - want|` in units of the spacing of doubles at `want` (0 when
/// both are the same NaN/infinity/zero; infinite when one is NaN or
/// infinite and the other is not). Subnormal `want` use the smallest
/// spacing.
pub fn ulps(got: f64, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if want.is_infinite() || got.is_infinite() {
        return if want == got { 0.0 } else { f64::INFINITY };
    }
    if got == want {
        return 0.0;
    }
    let spacing = if want == 0.0 {
        f64::from_bits(1)
    } else {
        let e = want.abs().log2().floor();
        (2f64.powf(e) * f64::EPSILON).max(f64::from_bits(1))
    };
    (got - want).abs() / spacing
}

/// Checks `f` against every row named `name`; returns the rows further
/// than `max_ulps` from R as messages, and the largest distance seen.
pub fn compare(
    rows: &[Row],
    name: &str,
    f: impl Fn(&[f64]) -> f64,
    max_ulps: f64,
) -> (Vec<String>, f64, usize) {
    let mut bad = Vec::new();
    let mut worst: f64 = 0.0;
    let mut n = 0;
    for r in rows.iter().filter(|r| r.name == name) {
        n += 1;
        let got = f(&r.args);
        let u = ulps(got, r.want);
        worst = worst.max(u);
        if u > max_ulps {
            bad.push(format!(
                "{name}({:?}) = {got:e}, R {:e} ({u:.1} ulps)",
                r.args, r.want
            ));
        }
    }
    (bad, worst, n)
}

/// A 0/1 flag column as a bool.
pub fn flag(v: f64) -> bool {
    v != 0.0
}
