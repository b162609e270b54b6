//! The JSON report: the complete model, pretty-printed.

use cudawatch_model::{ChecklistItem, Judgement, Report, VerdictLine};
use serde::Serialize;

use super::Exporter;

/// `--report json`.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, report: &Report, judgement: &Judgement) -> Vec<u8> {
        // The model is plain data (strings, numbers, options): serialising it
        // cannot fail.
        let judged = Judged {
            report,
            checklist: &judgement.checklist,
            verdict: &judgement.verdict,
            exit_code: judgement.exit_code,
        };
        let mut bytes = serde_json::to_vec_pretty(&judged).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

/// The report with its judgement beside it: what was found, and what it
/// adds up to under the policy of this rendering.
#[derive(Serialize)]
struct Judged<'a> {
    #[serde(flatten)]
    report: &'a Report,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    checklist: &'a [ChecklistItem],
    verdict: &'a [VerdictLine],
    exit_code: i32,
}
