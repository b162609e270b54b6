//! The merged report of a sweep, in every format the gate writes: a row
//! per target, the findings of all targets folded by site, the comparison
//! with the baseline and the trend. Each format keeps the single-run
//! report's rule for text from the runs: the terminal table gets a cleaned
//! copy, Markdown cleans each cell, JUnit and HTML escape, JSON and SARIF
//! stay lossless (so `--report json=F` is the sweep's own `report.json`).

mod html;
mod junit;
mod markdown;
mod sarif;
mod terminal;

use cudawatch_model::{Change, SweepReport, TargetResult, TargetState};

use super::{Exporter, OutputSettings, ReportFormat, style::Styles};
use crate::errors::ExpectedError;

/// Renders `report`: the human table, then every export asked for.
pub fn render(
    report: &SweepReport,
    output: &OutputSettings,
    styles: Styles,
) -> Result<(), ExpectedError> {
    super::write_human(output, styles, |style, width| {
        terminal::render(&super::untrusted::walk(report), style, width)
    })?;
    super::write_exports(output, |format| exporter(format).render(report))
}

/// "since BASELINE: 1 new, 2 fixed, 1 flaky; 3 new sites, 1 fixed", when
/// the report was compared.
pub fn comparison(report: &SweepReport) -> Option<String> {
    let baseline = report.baseline.as_ref()?;
    let count = |c: Change| {
        report
            .targets
            .iter()
            .filter(|t| t.change == Some(c))
            .count()
    };
    let new_sites = report
        .sites
        .iter()
        .filter(|s| s.change == Some(Change::New))
        .count();
    Some(format!(
        "since {baseline}: {} new, {} fixed, {} flaky, {} still failing; {new_sites} new site{}, {} fixed",
        count(Change::New),
        count(Change::Fixed),
        count(Change::Flaky),
        count(Change::StillFailing),
        if new_sites == 1 { "" } else { "s" },
        report.fixed_sites.len()
    ))
}

/// The exporter of one format for merged sweeps.
pub fn exporter(format: ReportFormat) -> Box<dyn Exporter<SweepReport>> {
    match format {
        ReportFormat::Json => Box::new(JsonExporter),
        ReportFormat::Sarif => Box::new(sarif::SweepSarif),
        ReportFormat::Junit => Box::new(junit::SweepJunit),
        ReportFormat::Markdown => Box::new(markdown::SweepMarkdown),
        ReportFormat::Html => Box::new(html::SweepHtml),
    }
}

/// The merged report as JSON, the model itself (also the sweep
/// directory's `report.json`).
pub struct JsonExporter;

impl Exporter<SweepReport> for JsonExporter {
    fn render(&self, report: &SweepReport) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(report).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

/// "finished", "incomplete", ... with the verdict when there is one.
fn outcome(t: &TargetResult) -> String {
    match (t.state, t.verdict) {
        (TargetState::Finished, Some(v)) => v.heading().trim_end_matches(':').to_lowercase(),
        (state, _) => state.name().to_string(),
    }
}

/// The sites the human formats list: root causes, not what follows from
/// them (an API error after a fault), which the JSON keeps.
fn listed(report: &SweepReport) -> (Vec<&cudawatch_model::SweepSite>, usize) {
    let (roots, followers): (Vec<_>, Vec<_>) = report
        .sites
        .iter()
        .partition(|s| s.site.consequence_of.is_none());
    (roots, followers.len())
}

/// Where a site is: `file:line`, else its kernel.
fn place(site: &cudawatch_model::Site) -> String {
    site.location
        .as_ref()
        .map(|l| format!("{}:{}", l.file, l.line))
        .or_else(|| site.kernel.clone())
        .unwrap_or_default()
}

/// "as expected", or what it expected.
fn expectation(t: &TargetResult) -> String {
    if t.as_expected {
        "as expected".into()
    } else {
        format!("expected {}", t.expect.name())
    }
}

fn change(c: Option<Change>) -> &'static str {
    c.map_or("", Change::name)
}

/// Failing targets of each sweep in the history, oldest first: the trend.
fn trend(report: &SweepReport) -> Vec<(String, usize, usize, f64)> {
    report
        .history
        .iter()
        .map(|e| {
            let failing = e.targets.iter().filter(|t| !t.as_expected).count();
            (
                e.at.chars().take(16).collect(),
                e.targets.len(),
                failing,
                e.seconds,
            )
        })
        .collect()
}
