//! Numeric tables in CSV files: reading a header row and columns of numbers
//! into a [`Table`], and writing columns of numbers back at full precision.
//!
//! Reading rules:
//! - the first row is the header and names every column (names must be
//!   non-empty and distinct);
//! - every later row has as many fields as the header;
//! - a cell is a number as Rust parses it (`1`, `-2.5e-3`, `Inf`, `-inf`), or
//!   `NA` / `NaN` (R's missing value and not-a-number), both read as NaN;
//!   surrounding spaces are ignored; an empty cell is an error;
//! - every error is an [`Error::Io`] naming the file, the line and the column.
//!
//! Cost: reading and looking columns up are linear in the number of columns
//! (names are checked and found through hash tables), so a header of
//! 100,000 names is read in milliseconds; error messages list at most
//! [`LISTED_NAMES`] names.
//!
//! Writing uses the shortest decimal form that reads back to the same f64
//! (`Inf`, `-Inf` and `NaN` for the special values), so a written table
//! reads back bit for bit, here and in R's `read.csv`.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use gearbox_core::{Array, Error, Result};

/// Most column names an error message lists; the rest are counted.
pub const LISTED_NAMES: usize = 20;

/// A table of named float64 columns of one length.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names, from the header row.
    pub names: Vec<String>,
    /// The columns, in header order; all have [`Table::nrows`] values.
    pub columns: Vec<Vec<f64>>,
    /// The line of the source each data row was read from (1 is the
    /// header's), for errors that name where a value came from.
    pub lines: Vec<u64>,
}

impl Table {
    /// Reads a table from CSV text; `source` names it in errors (a path, or
    /// something like `"<stdin>"`).
    pub fn from_reader(reader: impl Read, source: &str) -> Result<Table> {
        let io_error = |line: Option<u64>, column: Option<usize>, why: String| Error::Io {
            path: source.to_string(),
            line,
            column,
            why,
        };
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .from_reader(reader);
        let csv_error = |e: csv::Error| {
            let line = e.position().map(|p| p.line());
            io_error(line, None, format!("not readable as CSV: {e}"))
        };
        let mut records = csv.records();
        let header = match records.next() {
            None => {
                return Err(io_error(
                    None,
                    None,
                    "the file is empty; a header row naming the columns is needed".into(),
                ))
            }
            Some(record) => record.map_err(csv_error)?,
        };
        let header_line = header.position().map(|p| p.line());
        let names: Vec<String> = header.iter().map(str::to_string).collect();
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(names.len());
        for (j, name) in names.iter().enumerate() {
            if name.is_empty() {
                return Err(io_error(
                    header_line,
                    Some(j + 1),
                    "the header row has an empty column name (R's write.csv writes one \
                     for row names; use row.names = FALSE)"
                        .into(),
                ));
            }
            if let Some(first) = seen.insert(name, j) {
                return Err(io_error(
                    header_line,
                    Some(j + 1),
                    format!(
                        "column name {name:?} is used twice (columns {} and {})",
                        first + 1,
                        j + 1
                    ),
                ));
            }
        }
        let mut columns = vec![Vec::new(); names.len()];
        let mut lines = Vec::new();
        for record in records {
            let record = record.map_err(csv_error)?;
            let line = record.position().map(|p| p.line());
            lines.push(line.unwrap_or(lines.len() as u64 + 2));
            if record.len() != names.len() {
                return Err(io_error(
                    line,
                    None,
                    format!(
                        "the row has {} field(s) but the header has {} column(s)",
                        record.len(),
                        names.len()
                    ),
                ));
            }
            for (j, cell) in record.iter().enumerate() {
                let value = parse_cell(cell).ok_or_else(|| {
                    io_error(
                        line,
                        Some(j + 1),
                        format!(
                            "cell {cell:?} of column {:?} is not a number (NA and NaN are \
                             accepted for missing values)",
                            names[j]
                        ),
                    )
                })?;
                columns[j].push(value);
            }
        }
        Ok(Table {
            names,
            columns,
            lines,
        })
    }

    /// The first value that is not finite (NA, NaN, Inf) in the columns
    /// named `names`, as an I/O error of `source` naming its line and
    /// column and what it is used for (`what`); `Ok` when all are finite.
    pub fn check_finite(&self, source: &str, names: &[&str], what: &str) -> Result<()> {
        for name in names {
            let j = self.names.iter().position(|n| n == name);
            let Some(j) = j else { continue };
            if let Some(i) = self.columns[j].iter().position(|v| !v.is_finite()) {
                return Err(Error::Io {
                    path: source.to_string(),
                    line: self.lines.get(i).copied(),
                    column: Some(j + 1),
                    why: format!(
                        "{} in column {name:?} (data row {}): {what} must be finite",
                        format_f64(self.columns[j][i]),
                        i + 1
                    ),
                });
            }
        }
        Ok(())
    }

    /// The number of data rows.
    pub fn nrows(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }

    /// The values of the column called `name` (one pass over the names;
    /// [`Table::columns_named`] finds many at once).
    pub fn column(&self, name: &str) -> Result<&[f64]> {
        match self.names.iter().position(|n| n == name) {
            Some(j) => Ok(&self.columns[j]),
            None => Err(self.no_such_column(name)),
        }
    }

    /// The values of each named column, in the order given: one hash table
    /// of the names, so the cost is linear in the table's and the list's
    /// lengths.
    pub fn columns_named(&self, names: &[&str]) -> Result<Vec<&[f64]>> {
        let index: HashMap<&str, usize> = self
            .names
            .iter()
            .enumerate()
            .map(|(j, n)| (n.as_str(), j))
            .collect();
        names
            .iter()
            .map(|name| match index.get(name) {
                Some(&j) => Ok(self.columns[j].as_slice()),
                None => Err(self.no_such_column(name)),
            })
            .collect()
    }

    /// The named columns, in the order given, as an `n x names.len()`
    /// float64 matrix (column-major, so each column is one table column).
    pub fn matrix(&self, names: &[&str]) -> Result<Array> {
        let mut data = Vec::with_capacity(self.nrows() * names.len());
        for column in self.columns_named(names)? {
            data.extend_from_slice(column);
        }
        Array::from_vec([self.nrows(), names.len()], data)
    }

    /// Every column as an `n x ncol` float64 matrix, in header order.
    pub fn to_matrix(&self) -> Result<Array> {
        Array::from_vec([self.nrows(), self.names.len()], self.columns.concat())
    }

    /// The error for a column name the table does not have.
    fn no_such_column(&self, name: &str) -> Error {
        Error::InvalidArgument {
            op: "Table::column",
            name: "name",
            value: format!("{name:?}"),
            why: format!("no such column; the table has {}", self.listing()),
        }
    }

    /// The column names, quoted and comma-separated, for error messages: at
    /// most [`LISTED_NAMES`] of them, then how many more there are
    /// (`columns "a", "b"`, or `no columns`).
    pub fn listing(&self) -> String {
        if self.names.is_empty() {
            return "no columns".into();
        }
        let quoted: Vec<String> = self
            .names
            .iter()
            .take(LISTED_NAMES)
            .map(|n| format!("{n:?}"))
            .collect();
        let more = self.names.len().saturating_sub(LISTED_NAMES);
        if more == 0 {
            format!("columns {}", quoted.join(", "))
        } else {
            format!("columns {}, ... and {more} more", quoted.join(", "))
        }
    }
}

/// One cell as a number: Rust's float syntax, or `NA`/`NaN` as NaN.
fn parse_cell(cell: &str) -> Option<f64> {
    if cell == "NA" {
        return Some(f64::NAN);
    }
    cell.parse::<f64>().ok()
}

/// Reads a CSV file with a header row into a [`Table`] (see the module's rules).
pub fn read_csv(path: impl AsRef<Path>) -> Result<Table> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        line: None,
        column: None,
        why: format!("cannot open the file: {e}"),
    })?;
    Table::from_reader(file, &path.display().to_string())
}

/// The shortest decimal text that reads back to exactly `x`; `Inf`, `-Inf`
/// and `NaN` for the special values (as R writes them).
pub fn format_f64(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Inf" } else { "-Inf" }.into()
    } else {
        // Debug is the shortest round-trip form, with an exponent for very
        // large or small magnitudes (Display never uses one).
        format!("{x:?}")
    }
}

/// Writes named columns of one length as CSV text: a header row, then one
/// row per index, values by [`format_f64`]. `destination` names the target in
/// errors.
pub fn write_csv_to(
    writer: impl Write,
    destination: &str,
    names: &[&str],
    columns: &[&[f64]],
) -> Result<()> {
    if names.len() != columns.len() {
        return Err(Error::InvalidArgument {
            op: "write_csv",
            name: "names",
            value: format!("{} name(s)", names.len()),
            why: format!(
                "there must be one name per column ({} columns)",
                columns.len()
            ),
        });
    }
    let nrows = columns.first().map_or(0, |c| c.len());
    if let Some(j) = columns.iter().position(|c| c.len() != nrows) {
        return Err(Error::InvalidArgument {
            op: "write_csv",
            name: "columns",
            value: format!("column {:?} of length {}", names[j], columns[j].len()),
            why: format!(
                "every column must have the length of column {:?} ({nrows})",
                names[0]
            ),
        });
    }
    let write_error = |e: csv::Error| Error::Io {
        path: destination.to_string(),
        line: None,
        column: None,
        why: format!("cannot write: {e}"),
    };
    let mut csv = csv::Writer::from_writer(writer);
    csv.write_record(names).map_err(write_error)?;
    let mut row = Vec::with_capacity(columns.len());
    for i in 0..nrows {
        row.clear();
        row.extend(columns.iter().map(|c| format_f64(c[i])));
        csv.write_record(&row).map_err(write_error)?;
    }
    csv.flush().map_err(|e| write_error(e.into()))
}

/// Writes named columns of one length to a CSV file (see [`write_csv_to`]).
pub fn write_csv(path: impl AsRef<Path>, names: &[&str], columns: &[&[f64]]) -> Result<()> {
    let path = path.as_ref();
    let shown = path.display().to_string();
    let file = File::create(path).map_err(|e| Error::Io {
        path: shown.clone(),
        line: None,
        column: None,
        why: format!("cannot create the file: {e}"),
    })?;
    write_csv_to(std::io::BufWriter::new(file), &shown, names, columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Table> {
        Table::from_reader(text.as_bytes(), "t.csv")
    }

    fn io_location(e: Error) -> (Option<u64>, Option<usize>, String) {
        match e {
            Error::Io {
                path,
                line,
                column,
                why,
            } => {
                assert_eq!(path, "t.csv");
                (line, column, why)
            }
            other => panic!("expected an Io error, got {other:?}"),
        }
    }

    #[test]
    fn reads_numbers_missing_values_and_infinities() {
        let t = read("a, b ,c\n1,2.5e-3,NA\n-4, Inf ,NaN\n\"7\",-inf,0\n").unwrap();
        assert_eq!(t.names, ["a", "b", "c"]);
        assert_eq!(t.nrows(), 3);
        assert_eq!(t.column("a").unwrap(), [1.0, -4.0, 7.0]);
        assert_eq!(
            t.column("b").unwrap(),
            [2.5e-3, f64::INFINITY, f64::NEG_INFINITY]
        );
        let c = t.column("c").unwrap();
        assert!(c[0].is_nan() && c[1].is_nan() && c[2] == 0.0);
    }

    #[test]
    fn matrix_is_column_major_in_the_order_asked() {
        let t = read("a,b,c\n1,2,3\n4,5,6\n").unwrap();
        let m = t.matrix(&["c", "a"]).unwrap();
        assert_eq!(m.dims(), &[2, 2]);
        assert_eq!(m.to_vec::<f64>().unwrap(), [3.0, 6.0, 1.0, 4.0]);
        assert_eq!(t.to_matrix().unwrap().dims(), &[2, 3]);
        assert!(t.matrix(&["a", "zz"]).is_err());
    }

    #[test]
    fn missing_column_lists_the_available_ones() {
        let t = read("alpha,beta\n1,2\n").unwrap();
        let msg = t.column("gamma").unwrap_err().to_string();
        assert!(msg.contains("\"gamma\""), "{msg}");
        assert!(msg.contains("\"alpha\", \"beta\""), "{msg}");
    }

    #[test]
    fn non_numeric_cell_names_line_and_column() {
        let e = read("a,b\n1,2\n3,x7\n").unwrap_err();
        let msg = e.to_string();
        let (line, column, why) = io_location(e);
        assert_eq!((line, column), (Some(3), Some(2)));
        assert!(why.contains("\"x7\"") && why.contains("\"b\""), "{why}");
        assert!(msg.starts_with("t.csv, line 3, column 2: "), "{msg}");
    }

    #[test]
    fn empty_cell_is_an_error() {
        let (line, column, _) = io_location(read("a,b\n1,\n").unwrap_err());
        assert_eq!((line, column), (Some(2), Some(2)));
    }

    #[test]
    fn ragged_rows_name_the_line() {
        let (line, column, why) = io_location(read("a,b\n1,2\n3,4,5\n").unwrap_err());
        assert_eq!((line, column), (Some(3), None));
        assert!(
            why.contains("3 field(s)") && why.contains("2 column(s)"),
            "{why}"
        );
        let (line, _, _) = io_location(read("a,b\n1\n").unwrap_err());
        assert_eq!(line, Some(2));
    }

    #[test]
    fn empty_file_and_bad_headers() {
        let (line, _, why) = io_location(read("").unwrap_err());
        assert_eq!(line, None);
        assert!(why.contains("empty"), "{why}");
        let (_, column, why) = io_location(read("\"\",x\n1,2\n").unwrap_err());
        assert_eq!(column, Some(1));
        assert!(why.contains("empty column name"), "{why}");
        let (_, column, why) = io_location(read("x,y,x\n1,2,3\n").unwrap_err());
        assert_eq!(column, Some(3));
        assert!(why.contains("used twice"), "{why}");
    }

    /// A header of `n` names `c0, c1, ...` (the last replaced by `last`)
    /// and two rows of numbers.
    fn wide(n: usize, last: &str) -> String {
        let mut names: Vec<String> = (0..n).map(|j| format!("c{j}")).collect();
        names[n - 1] = last.to_string();
        let row: Vec<String> = (0..n).map(|j| (j % 7).to_string()).collect();
        format!(
            "{}\n{}\n{}\n",
            names.join(","),
            row.join(","),
            row.join(",")
        )
    }

    #[test]
    fn a_header_of_100000_names_is_read_in_linear_time() {
        // Comparing each name with every earlier one took 27 s (release)
        // for 100,000 names; in a debug build, many minutes.
        let n = 100_000;
        let t = read(&wide(n, "last")).unwrap();
        assert_eq!((t.names.len(), t.nrows()), (n, 2));
        let m = t.to_matrix().unwrap();
        assert_eq!(m.dims(), &[2, n]);
        assert_eq!(m.get(&[1, 99_998]).unwrap(), (99_998 % 7) as f64);
        let all: Vec<&str> = t.names.iter().rev().map(String::as_str).collect();
        let reversed = t.columns_named(&all).unwrap();
        assert_eq!(reversed[0], [((n - 1) % 7) as f64; 2]);
        // A duplicate at the very end is found and named.
        let (_, column, why) = io_location(read(&wide(n, "c5")).unwrap_err());
        assert_eq!(column, Some(n));
        assert!(why.contains("columns 6 and 100000"), "{why}");
        // A missing name lists a few names and counts the rest.
        let msg = t.column("nope").unwrap_err().to_string();
        assert!(msg.contains("\"c19\", ... and 99980 more"), "{msg}");
        assert!(!msg.contains("\"c20\""), "{msg}");
        assert!(t.columns_named(&["c1", "nope"]).is_err());
    }

    #[test]
    fn header_only_is_an_empty_table() {
        let t = read("a,b\n").unwrap();
        assert_eq!(t.nrows(), 0);
        assert_eq!(t.to_matrix().unwrap().dims(), &[0, 2]);
    }

    #[test]
    fn missing_file_names_the_path() {
        let msg = read_csv("/nonexistent/dir/x.csv").unwrap_err().to_string();
        assert!(
            msg.starts_with("/nonexistent/dir/x.csv: cannot open"),
            "{msg}"
        );
    }

    #[test]
    fn writing_round_trips_bit_for_bit() {
        let a = [
            0.1,
            1.0 / 3.0,
            -2.5e-300,
            1e300,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            123456789.0,
        ];
        let b: Vec<f64> = a.iter().map(|x| x * 7.0 - 1.0).collect();
        let c = [f64::NAN; 12];
        let mut text = Vec::new();
        write_csv_to(&mut text, "mem", &["a", "b", "c"], &[&a, &b, &c]).unwrap();
        let t = Table::from_reader(&text[..], "mem").unwrap();
        assert_eq!(t.names, ["a", "b", "c"]);
        for (got, want) in t.columns[0].iter().zip(&a) {
            assert_eq!(got.to_bits(), want.to_bits());
        }
        for (got, want) in t.columns[1].iter().zip(&b) {
            assert_eq!(got.to_bits(), want.to_bits());
        }
        assert!(t.columns[2].iter().all(|x| x.is_nan()));
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("Inf") && text.contains("-Inf") && text.contains("1e300"));
    }

    #[test]
    fn write_checks_names_and_lengths() {
        let mut sink = Vec::new();
        assert!(write_csv_to(&mut sink, "mem", &["a"], &[&[1.0], &[2.0]]).is_err());
        assert!(write_csv_to(&mut sink, "mem", &["a", "b"], &[&[1.0], &[2.0, 3.0]]).is_err());
    }

    #[test]
    fn write_csv_creates_a_file_that_reads_back() {
        let dir = std::env::temp_dir().join(format!("gearbox-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.csv");
        write_csv(&path, &["x"], &[&[1.5, -2.0]]).unwrap();
        let t = read_csv(&path).unwrap();
        assert_eq!(t.column("x").unwrap(), [1.5, -2.0]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
