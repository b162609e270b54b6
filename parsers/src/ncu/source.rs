//! `--page source --print-source cuda,sass` of one launch: preamble rows
//! naming the file and function, then one row per CUDA source line (with
//! its SASS rows under it, `Line No` empty); a kernel whose code comes from
//! several files (libcu++'s atomics inlined from CUDA's headers) has such a
//! block per file. The line rows carry the SourceCounters sector counts
//! that say which lines waste sectors.
//!
//! ncu quotes every cell but does not double the quotes inside one: a
//! source line `asm volatile("atom.add.relaxed.gpu.u32 %0,[%1],%2;" ...)`
//! comes out as `"2367","{ asm volatile("atom.add...` (libcu++'s atomics,
//! sample-reports/outside/libcu_atomics/), which a CSV reader splits in the
//! wrong places. So each line is cut at its `","` separators, and a row
//! with more cells than the header has its source text (or SASS) put back
//! together.

use super::{Columns, cell, parse_number, rows};
use crate::error::{ParseError, ParseErrorKind};
use crate::model::{LineSectors, SourceLocation};

/// One source page read: the lines that waste sectors, worst first, and
/// the rows that could not be read (each `line N: why`), skipped while the
/// rest of the page counts.
#[derive(Debug, Default)]
pub struct SourcePage {
    /// Lines that moved more sectors than a coalesced access would have.
    pub lines: Vec<LineSectors>,
    /// Rows skipped, each with why.
    pub skipped: Vec<String>,
}

/// The lines of one kernel that moved more sectors than a coalesced access
/// would have, worst first, and the rows that could not be read.
pub fn parse(input: &[u8]) -> Result<SourcePage, ParseError> {
    let rows = match quoted_rows(input) {
        Some(rows) => rows,
        None => rows(input)?,
    };
    let mut file = String::new();
    let mut kernel = String::new();
    let mut out = Vec::new();
    let mut header: Option<usize> = None;
    for (index, row) in rows.iter().enumerate() {
        match row.first().map(String::as_str) {
            Some("File Path") => file = cell(row, Some(1)).to_string(),
            Some("Function Name") | Some("Kernel Name") => kernel = cell(row, Some(1)).to_string(),
            Some("Line No") | Some("Address") => {
                header = Some(index);
            }
            _ => {}
        }
        if header.is_some() {
            break;
        }
    }
    let Some(header_index) = header else {
        // Kernels built without -lineinfo (most library kernels) get a
        // one-line warning instead of a page: nothing to attribute, not an error.
        if String::from_utf8_lossy(input).contains("No lineinfo available") {
            return Ok(SourcePage::default());
        }
        return Err(ParseError::new(
            ParseErrorKind::NotThisFormat("no \"Line No\" header: not an ncu source page".into()),
            0,
            "",
        ));
    };
    let head = &rows[header_index];
    let cols = Columns::new(head);
    let line_col = cols.find("Line No");
    let excessive = cols.find("L2 Theoretical Sectors Global Excessive");
    let theoretical = cols.find("L2 Theoretical Sectors Global");
    let ideal = cols.find("L2 Theoretical Sectors Global Ideal");
    let access = cols.find("Access Operation");
    let (Some(line_col), Some(excessive)) = (line_col, excessive) else {
        // A SASS-only page (no -lineinfo) has no per-line attribution.
        return Ok(SourcePage::default());
    };
    let mut skipped = Vec::new();
    for row in &rows[header_index + 1..] {
        // A later file's block: its path, then rows under the same header.
        if cell(row, Some(0)) == "File Path" {
            file = cell(row, Some(1)).to_string();
            continue;
        }
        let Some(line) = parse_number(cell(row, Some(line_col))) else {
            continue;
        };
        let waste = match super::figure(cell(row, Some(excessive))) {
            Ok(waste) => waste.unwrap_or(0.0),
            Err(why) => {
                skipped.push(format!("{file}:{line}: excessive sectors {why}"));
                continue;
            }
        };
        if waste <= 0.0 {
            continue;
        }
        out.push(LineSectors {
            kernel: kernel.clone(),
            location: SourceLocation {
                file: file.clone(),
                line: line as u32,
            },
            source: cell(row, Some(1)).trim().to_string(),
            access: cell(row, access).to_string(),
            excessive_sectors: waste,
            theoretical_sectors: parse_number(cell(row, theoretical)).unwrap_or(0.0),
            ideal_sectors: parse_number(cell(row, ideal)).unwrap_or(0.0),
        });
    }
    out.sort_by(|a, b| b.excessive_sectors.total_cmp(&a.excessive_sectors));
    Ok(SourcePage {
        lines: out,
        skipped,
    })
}

/// The page's rows cut at ncu's `","` separators, one row a line, when
/// every line is one run of quoted cells; `None` otherwise (the CSV reader
/// then reads it). A row with more cells than its block's header holds a
/// quote-comma-quote of its own: the surplus goes back into its text, the
/// source (`Source`, the second cell) of a line row or the SASS (the
/// fourth) of an instruction row.
fn quoted_rows(input: &[u8]) -> Option<Vec<Vec<String>>> {
    let text = String::from_utf8_lossy(&super::csv_part(input)).into_owned();
    let mut rows = Vec::new();
    let mut width = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let inner = line
            .trim_end_matches('\r')
            .strip_prefix('"')?
            .strip_suffix('"')?;
        let mut cells: Vec<String> = inner
            .split("\",\"")
            .map(|c| c.replace("\"\"", "\""))
            .collect();
        if matches!(
            cells.first().map(String::as_str),
            Some("Line No" | "Address")
        ) {
            width = cells.len();
        } else if width > 0 && cells.len() > width {
            let text = if cells[0].is_empty() { 3 } else { 1 };
            let surplus = cells.len() - width;
            if text + surplus >= cells.len() {
                return None;
            }
            let joined = cells[text..=text + surplus].join("\",\"");
            cells.splice(text..=text + surplus, [joined]);
        }
        rows.push(cells);
    }
    Some(rows)
}
