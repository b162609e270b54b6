//! Every output format, rendered from the same [`Report`]. Human output goes
//! to stderr, machine output to stdout.

pub mod json;
pub mod style;
pub mod terminal;

use std::io::Write;

use cudawatch_parsers::model::Report;

use crate::cli::Format;
use crate::errors::ExpectedError;

/// Renders the report: tables on stderr always, the JSON on stdout when asked.
pub fn render(report: &Report, format: Format, style: style::Style) -> Result<(), ExpectedError> {
    let mut stderr = std::io::stderr().lock();
    let table = terminal::render(report, style);
    // A closed stderr is not worth failing the run for; the JSON and the
    // run directory still carry everything.
    let _ = stderr.write_all(table.as_bytes());
    if format == Format::Json {
        let mut stdout = std::io::stdout().lock();
        match json::write(report, &mut stdout) {
            Ok(()) => {}
            // A closed pipe (`| head`) is the reader's choice, not an error (ripgrep).
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => {
                return Err(ExpectedError::Write {
                    target: "stdout".into(),
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(())
}
