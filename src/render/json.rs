//! The JSON report: the complete model, pretty-printed.

use cudawatch_parsers::model::Report;

use super::Exporter;

/// `--report json`.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, report: &Report) -> Vec<u8> {
        // The model is plain data (strings, numbers, options): serialising it
        // cannot fail.
        let mut bytes = serde_json::to_vec_pretty(report).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}
