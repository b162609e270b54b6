//! Parse errors that say where in the document they happened.

use std::fmt;

/// A parser could not read its input. Carries the byte offset and, for XML,
/// the element path, so a user can open the file at the spot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What went wrong.
    pub kind: ParseErrorKind,
    /// Byte offset in the input where it was noticed.
    pub offset: u64,
    /// Element path (XML) or row number (CSV) at that point, e.g.
    /// `ComputeSanitizerOutput/record[3]/what`.
    pub path: String,
}

/// The kinds of [`ParseError`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The XML is not well formed.
    Xml(String),
    /// The input ended inside an element: the writer was killed or the disk filled.
    Truncated,
    /// The CSV could not be read.
    Csv(String),
    /// The input is not the format it was taken for.
    NotThisFormat(String),
    /// Reading failed.
    Io(String),
}

impl ParseError {
    pub(crate) fn new(kind: ParseErrorKind, offset: u64, path: impl Into<String>) -> ParseError {
        ParseError {
            kind,
            offset,
            path: path.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ParseErrorKind::Xml(msg) => write!(f, "malformed XML at byte {} ({msg})", self.offset)?,
            ParseErrorKind::Truncated => {
                write!(f, "input ends inside an element at byte {}", self.offset)?
            }
            // Errors found in a row's cells carry the row, not a byte.
            ParseErrorKind::Csv(msg) if self.offset == 0 && !self.path.is_empty() => {
                write!(f, "malformed CSV: {msg}")?
            }
            ParseErrorKind::Csv(msg) => write!(f, "malformed CSV at byte {}: {msg}", self.offset)?,
            ParseErrorKind::NotThisFormat(msg) => write!(f, "{msg} (at byte {})", self.offset)?,
            ParseErrorKind::Io(msg) => write!(f, "read failed at byte {}: {msg}", self.offset)?,
        }
        if !self.path.is_empty() {
            write!(f, ", in {}", self.path)?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}
