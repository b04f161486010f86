//! Reading the reference values R printed (`tests/data/*.csv`, rows
//! `fn,arg1,...,argk,value` written by the `gen_*.R` scripts) and measuring
//! how far a Rust result is from R's, in units in the last place.
#![allow(dead_code)]

use std::collections::BTreeMap;

/// One reference row: the R function, its arguments, R's value.
pub struct Row {
    /// The function's name as the CSV gives it.
    pub function: String,
    /// The arguments (flags as 0/1).
    pub args: Vec<f64>,
    /// The value R computed.
    pub want: f64,
}

/// Parses a number as R's `sprintf("%.17g")` prints it.
pub fn parse_r_number(s: &str) -> f64 {
    match s.trim() {
        "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" | "NA" | "-NaN" => f64::NAN,
        t => t
            .parse()
            .unwrap_or_else(|_| panic!("not a number in the reference file: {t:?}")),
    }
}

/// Every row of a reference file.
pub fn rows(csv: &str) -> Vec<Row> {
    csv.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let fields: Vec<&str> = l.split(',').collect();
            assert!(fields.len() >= 3, "short row: {l}");
            Row {
                function: fields[0].to_string(),
                args: fields[1..fields.len() - 1]
                    .iter()
                    .map(|s| parse_r_number(s))
                    .collect(),
                want: parse_r_number(fields[fields.len() - 1]),
            }
        })
        .collect()
}

/// Distance in units in the last place between two doubles: 0 when equal
/// (NaN equals NaN, +0 equals -0), `u64::MAX` when one is NaN or infinite
/// and the other is not the same, else the number of representable doubles
/// between them.
pub fn ulps(got: f64, want: f64) -> u64 {
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() && want.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    if got == want {
        return 0;
    }
    if got.is_infinite() || want.is_infinite() {
        return u64::MAX;
    }
    // Map the doubles onto a monotone integer line.
    let key = |v: f64| -> i128 {
        let b = v.to_bits() as i64;
        if b < 0 {
            -(i128::from(b & i64::MAX))
        } else {
            i128::from(b)
        }
    };
    (key(got) - key(want))
        .unsigned_abs()
        .min(u128::from(u64::MAX)) as u64
}

/// The largest distance seen per function, with the worst case.
#[derive(Default)]
pub struct Tally {
    worst: BTreeMap<String, (u64, String)>,
    failures: Vec<String>,
}

impl Tally {
    /// Records one comparison; a distance above `max_ulps` is a failure.
    pub fn record(&mut self, row: &Row, got: f64, max_ulps: u64) {
        let d = ulps(got, row.want);
        let case = format!(
            "{}({}) = {got:e}, R: {:e} ({d} ulps)",
            row.function,
            row.args
                .iter()
                .map(|a| format!("{a:e}"))
                .collect::<Vec<_>>()
                .join(", "),
            row.want
        );
        let entry = self
            .worst
            .entry(row.function.clone())
            .or_insert((0, String::new()));
        if d >= entry.0 {
            *entry = (d, case.clone());
        }
        if d > max_ulps {
            self.failures.push(case);
        }
    }

    /// Prints the worst case per function and panics if any failed.
    pub fn finish(self) {
        for (f, (d, case)) in &self.worst {
            eprintln!("{f:>12}: worst {d} ulps: {case}");
        }
        assert!(
            self.failures.is_empty(),
            "{} rows differ from R beyond tolerance:\n{}",
            self.failures.len(),
            self.failures
                .iter()
                .take(40)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
