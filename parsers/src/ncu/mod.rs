//! Nsight Compute output: the CSV pages of `ncu --import REPORT --csv
//! --print-units base` and ncu's own console lines.
//!
//! cudawatch never parses CSV from a live `ncu` run: the program's stdout and
//! `==PROF==` lines are mixed into it. It profiles to a report file and
//! imports that. Every field is quoted and numbers keep thousands separators
//! (`"4,194,304"`), so columns are found by header name and numbers are
//! normalised here.

pub mod details;
pub mod log;
pub mod raw;
pub mod source;

use crate::error::{ParseError, ParseErrorKind};

/// Reads `"4,194,304"`, `"12.50"`; `-`, `n/a` and empty cells are `None`.
pub fn parse_number(cell: &str) -> Option<f64> {
    let t = cell.trim();
    if t.is_empty() || t == "-" || t.eq_ignore_ascii_case("n/a") {
        return None;
    }
    let plain: String = t.chars().filter(|c| *c != ',').collect();
    plain.parse().ok()
}

/// All rows of a CSV document, each a vector of cells. Rows may differ in
/// length (ncu's source page starts with two-cell preamble rows).
pub(crate) fn rows(input: &[u8]) -> Result<Vec<Vec<String>>, ParseError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input);
    let mut out = Vec::new();
    for (index, row) in reader.byte_records().enumerate() {
        let row = row.map_err(|e| {
            let offset = e.position().map_or(0, |p| p.byte());
            ParseError::new(
                ParseErrorKind::Csv(e.to_string()),
                offset,
                format!("row {}", index + 1),
            )
        })?;
        out.push(
            row.iter()
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect(),
        );
    }
    Ok(out)
}

/// The index of each named column in a header row.
pub(crate) struct Columns<'a> {
    header: &'a [String],
}

impl<'a> Columns<'a> {
    pub(crate) fn new(header: &'a [String]) -> Columns<'a> {
        Columns { header }
    }

    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    pub(crate) fn require(&self, name: &str) -> Result<usize, ParseError> {
        self.find(name).ok_or_else(|| {
            ParseError::new(
                ParseErrorKind::NotThisFormat(format!("no \"{name}\" column")),
                0,
                "row 1",
            )
        })
    }
}

pub(crate) fn cell(row: &[String], index: Option<usize>) -> &str {
    index.and_then(|i| row.get(i)).map_or("", String::as_str)
}
