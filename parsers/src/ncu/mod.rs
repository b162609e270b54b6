//! Nsight Compute output: the CSV pages of `ncu --import REPORT --csv
//! --print-units base` and ncu's own console lines.
//!
//! cudawatch itself profiles to a report file and imports it, but users
//! bring every shape: live `ncu --csv` output with the program's own lines
//! and `==PROF==` lines before the CSV, pages with or without
//! `--print-units base`. Every field is quoted and numbers may keep
//! thousands separators (`"4,194,304"`), so columns are found by header
//! name, numbers are normalised here, and the units row is read.

pub mod details;
pub mod log;
pub mod raw;
pub mod source;
pub mod stacks;

use crate::error::{ParseError, ParseErrorKind};

/// Reads `"4,194,304"`, `"12.50"`; `-`, `n/a` and empty cells are `None`,
/// and so is anything [`figure`] refuses.
pub fn parse_number(cell: &str) -> Option<f64> {
    figure(cell).ok().flatten()
}

/// The largest figure ncu could print for one launch: more sectors or
/// nanoseconds than this is no measurement.
const MAX_FIGURE: f64 = 1e15;

/// A measured figure: `Ok(None)` for a cell ncu leaves empty (`-`, `n/a`,
/// `no data`, nothing), an error for one it could not have printed: not a
/// number (`4.194.304`, a locale's separator), not finite (`inf`, `nan`),
/// negative, or absurdly large (`1e300`). Such a page is refused, never
/// read as a smaller waste (a launch that was not measured at all, every
/// metric `nan`, is the raw page's own case: [`raw::parse`]).
pub fn figure(cell: &str) -> Result<Option<f64>, String> {
    let t = cell.trim();
    if t.is_empty()
        || t == "-"
        || t.eq_ignore_ascii_case("n/a")
        || t.eq_ignore_ascii_case("no data")
    {
        return Ok(None);
    }
    let plain: String = t.chars().filter(|c| *c != ',').collect();
    match plain.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=MAX_FIGURE).contains(&v) => Ok(Some(v)),
        _ => Err(format!("{t:?} is not a figure ncu prints")),
    }
}

/// The CSV of ncu output without what is not CSV: live `ncu --csv` prints
/// its `==PROF==`/`==WARNING==` lines and the program's own output first
/// (a stray quote there would derail the CSV reader), so everything before
/// the first line that starts with a quoted cell goes, and so do ncu's own
/// `==...==` lines anywhere.
pub(crate) fn csv_part(input: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let is_tool_line = |l: &[u8]| l.starts_with(b"==") && l.windows(2).skip(2).any(|w| w == b"==");
    let start = input
        .split_inclusive(|b| *b == b'\n')
        .scan(0usize, |offset, line| {
            let at = *offset;
            *offset += line.len();
            Some((at, line))
        })
        .find(|(_, line)| line.first() == Some(&b'"'))
        .map_or(input.len(), |(at, _)| at);
    let csv = &input[start..];
    if !csv.split(|b| *b == b'\n').any(is_tool_line) {
        return std::borrow::Cow::Borrowed(csv);
    }
    let kept: Vec<u8> = csv
        .split_inclusive(|b| *b == b'\n')
        .filter(|l| !is_tool_line(l))
        .flatten()
        .copied()
        .collect();
    std::borrow::Cow::Owned(kept)
}

/// What one unit of a column is worth in cudawatch's units (nanoseconds,
/// bytes, sectors, percent), from the units row of a page printed without
/// `--print-units base`: `us` is 1000 ns, `Mbyte` a million bytes.
pub fn unit_scale(unit: &str) -> f64 {
    let unit = unit.trim();
    match unit {
        "ns" | "nsecond" => 1.0,
        "us" | "usecond" => 1e3,
        "ms" | "msecond" => 1e6,
        "s" | "second" => 1e9,
        _ => {
            let mut chars = unit.chars();
            let prefix = match chars.next() {
                Some('K') => 1e3,
                Some('M') => 1e6,
                Some('G') => 1e9,
                Some('T') => 1e12,
                _ => return 1.0,
            };
            // Only a prefix on a unit: `Mbyte`, `Ksector`; not a unit
            // that merely starts with a capital.
            let rest: String = chars.collect();
            if rest.starts_with(|c: char| c.is_ascii_lowercase()) {
                prefix
            } else {
                1.0
            }
        }
    }
}

/// All rows of a CSV document, each a vector of cells. Rows may differ in
/// length (ncu's source page starts with two-cell preamble rows).
pub(crate) fn rows(input: &[u8]) -> Result<Vec<Vec<String>>, ParseError> {
    let input = csv_part(input);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(input.as_ref());
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
