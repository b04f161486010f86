//! Printing arrays in the spirit of the Rmlx printout: a header with shape,
//! dtype, device and precision, then the values (truncated when large).
//! Printing is a sink: it evaluates the array.

use std::fmt;

use crate::buffer::HostBuffer;
use crate::graph::Array;

/// Rows and columns shown before the printout is truncated.
const MAX_SHOWN: usize = 10;

impl fmt::Display for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "gearbox array {}", self.shape())?;
        writeln!(f, "dtype: {}", self.dtype())?;
        writeln!(f, "device: {}", self.device())?;
        writeln!(f, "precision: {}", self.precision())?;
        let buf = match self.buffer() {
            Ok(b) => b,
            Err(e) => return writeln!(f, "values: <not computable: {e}>"),
        };
        writeln!(f, "values:")?;
        let dims = self.dims();
        match dims.len() {
            0 => writeln!(f, "[1] {}", format_value(&buf, 0)),
            1 => write_vector(f, &buf, dims[0]),
            2 => write_matrix(f, &buf, dims[0], dims[1], 0),
            _ => {
                let (m, n) = (dims[0], dims[1]);
                let slabs = self.numel() / (m * n).max(1);
                for s in 0..slabs.min(MAX_SHOWN) {
                    writeln!(f, ", , {}", slab_label(&dims[2..], s))?;
                    write_matrix(f, &buf, m, n, s * m * n)?;
                }
                if slabs > MAX_SHOWN {
                    writeln!(f, "... {} more slices", slabs - MAX_SHOWN)?;
                }
                Ok(())
            }
        }
    }
}

fn slab_label(rest: &[usize], mut s: usize) -> String {
    let mut parts = Vec::new();
    for &d in rest {
        parts.push((s % d + 1).to_string());
        s /= d;
    }
    parts.join(", ")
}

fn format_value(buf: &HostBuffer, i: usize) -> String {
    match buf {
        HostBuffer::Bool(v) => if v[i] { "TRUE" } else { "FALSE" }.to_string(),
        HostBuffer::I64(v) => v[i].to_string(),
        HostBuffer::F32(v) => format_float(v[i] as f64, 7),
        HostBuffer::F64(v) => format_float(v[i], 7),
    }
}

/// Up to `digits` significant digits, like R's default printout.
fn format_float(x: f64, digits: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Inf" } else { "-Inf" }.into();
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-5..15).contains(&mag) {
        return format!("{x:.prec$e}", prec = digits.saturating_sub(1));
    }
    let decimals = (digits as i32 - 1 - mag).max(0) as usize;
    let s = format!("{x:.decimals$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn write_vector(f: &mut fmt::Formatter<'_>, buf: &HostBuffer, n: usize) -> fmt::Result {
    let shown = n.min(MAX_SHOWN * 2);
    let vals: Vec<String> = (0..shown).map(|i| format_value(buf, i)).collect();
    write!(f, "[1] {}", vals.join(" "))?;
    if n > shown {
        write!(f, " ... ({} more)", n - shown)?;
    }
    writeln!(f)
}

fn write_matrix(
    f: &mut fmt::Formatter<'_>,
    buf: &HostBuffer,
    m: usize,
    n: usize,
    base: usize,
) -> fmt::Result {
    let (rm, cn) = (m.min(MAX_SHOWN), n.min(MAX_SHOWN));
    let cells: Vec<Vec<String>> = (0..rm)
        .map(|i| {
            (0..cn)
                .map(|j| format_value(buf, base + i + j * m))
                .collect()
        })
        .collect();
    let row_label_w = format!("[{rm},]").len();
    let widths: Vec<usize> = (0..cn)
        .map(|j| {
            cells
                .iter()
                .map(|r| r[j].len())
                .max()
                .unwrap_or(0)
                .max(format!("[,{}]", j + 1).len())
        })
        .collect();
    write!(f, "{:w$}", "", w = row_label_w)?;
    for (j, w) in widths.iter().enumerate() {
        write!(f, " {:>w$}", format!("[,{}]", j + 1))?;
    }
    if n > cn {
        write!(f, " ... ({} more columns)", n - cn)?;
    }
    writeln!(f)?;
    for (i, row) in cells.iter().enumerate() {
        write!(f, "{:>w$}", format!("[{},]", i + 1), w = row_label_w)?;
        for (cell, w) in row.iter().zip(&widths) {
            write!(f, " {cell:>w$}")?;
        }
        writeln!(f)?;
    }
    if m > rm {
        writeln!(f, "... ({} more rows)", m - rm)?;
    }
    Ok(())
}
