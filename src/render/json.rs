//! The JSON report: the complete model, pretty-printed.

use cudawatch_model::{ChecklistItem, Report, VerdictLine};
use serde::Serialize;

use super::{Exporter, Judged};

/// `--report json`.
pub struct JsonExporter;

impl Exporter<Judged<'_>> for JsonExporter {
    fn render(&self, doc: &Judged<'_>) -> Vec<u8> {
        let (report, judgement) = (doc.report, doc.judgement);
        // The model is plain data (strings, numbers, options): serialising it
        // cannot fail.
        let judged = JudgedJson {
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
struct JudgedJson<'a> {
    #[serde(flatten)]
    report: &'a Report,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    checklist: &'a [ChecklistItem],
    verdict: &'a [VerdictLine],
    exit_code: i32,
}
