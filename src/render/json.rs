//! The JSON report: the complete model, pretty-printed.

use std::io::{self, Write};

use cudawatch_parsers::model::Report;

/// Writes `report` as JSON followed by a newline.
pub fn write(report: &Report, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
    out.write_all(b"\n")?;
    out.flush()
}
