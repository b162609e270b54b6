//! `--page source --print-source cuda,sass` of one launch: preamble rows
//! naming the file and function, then one row per CUDA source line (with
//! its SASS rows under it, `Line No` empty). The line rows carry the
//! SourceCounters sector counts that say which lines waste sectors.

use super::{Columns, cell, parse_number, rows};
use crate::error::{ParseError, ParseErrorKind};
use crate::model::{LineSectors, SourceLocation};

/// The lines of one kernel that moved more sectors than a coalesced access
/// would have, worst first.
pub fn parse(input: &[u8]) -> Result<Vec<LineSectors>, ParseError> {
    let rows = rows(input)?;
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
            return Ok(Vec::new());
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
        return Ok(Vec::new());
    };
    for row in &rows[header_index + 1..] {
        let Some(line) = parse_number(cell(row, Some(line_col))) else {
            continue;
        };
        let waste = super::figure(cell(row, Some(excessive)))
            .map_err(|why| {
                ParseError::new(
                    ParseErrorKind::Csv(format!("excessive sectors: {why}")),
                    0,
                    format!("line {line}"),
                )
            })?
            .unwrap_or(0.0);
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
    Ok(out)
}
