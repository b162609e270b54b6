//! The sweep as SARIF: the single-run format's results (one per site, the
//! site id as fingerprint, so an alert follows a bug from night to night),
//! with the targets each site was seen in as a property.

use cudawatch_model::{Judgement, Report, SweepReport};
use serde_json::{Value, json};

use crate::render::sarif::SarifExporter;
use crate::render::{Exporter, Judged};

/// `--report sarif`.
pub struct SweepSarif;

impl crate::render::Exporter<SweepReport> for SweepSarif {
    fn render(&self, report: &SweepReport) -> Vec<u8> {
        render(report)
    }
}

fn render(report: &SweepReport) -> Vec<u8> {
    let mut merged = Report::new(&report.cudawatch_version);
    merged.findings = report.sites.iter().map(|s| s.site.clone()).collect();
    let judgement = Judgement {
        checklist: Vec::new(),
        verdict: report.verdict.clone(),
        exit_code: report.exit_code,
        out_of_scope: report.out_of_scope_ids(),
        gating: report
            .sites
            .iter()
            .filter(|s| !s.gating_in.is_empty())
            .map(|s| s.site.id.clone())
            .collect(),
    };
    let bytes = SarifExporter.render(&Judged {
        report: &merged,
        judgement: &judgement,
    });
    let Ok(mut log) = serde_json::from_slice::<Value>(&bytes) else {
        return bytes;
    };
    if let Some(runs) = log["runs"].as_array_mut() {
        for result in runs
            .iter_mut()
            .filter_map(|r| r["results"].as_array_mut())
            .flatten()
        {
            let id = result["partialFingerprints"]["cudawatchSite/v1"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if let Some(site) = report.sites.iter().find(|s| s.site.id == id) {
                result["properties"]["targets"] = json!(site.targets);
                result["properties"]["gatingIn"] = json!(site.gating_in);
            }
        }
    }
    log["properties"] = json!({ "sweepId": report.sweep_id, "targets": report.targets.len() });
    crate::render::sarif::drop_nulls(&mut log);
    let mut out = serde_json::to_vec_pretty(&log).unwrap_or(bytes);
    out.push(b'\n');
    out
}
