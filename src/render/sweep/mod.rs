//! The merged report of a sweep, in every format the gate writes: a row
//! per target, the findings of all targets folded by site, the comparison
//! with the baseline and the trend. Strings from runs are cleaned once,
//! here, before any format sees them.

mod html;
mod junit;
mod markdown;
mod sarif;
mod terminal;

use cudawatch_model::{Change, SweepReport, TargetResult, TargetState};

use super::{OutputSettings, ReportFormat, style::Styles};
use crate::errors::ExpectedError;

/// Renders `report`: the human table, then every export asked for.
pub fn render(
    report: &SweepReport,
    output: &OutputSettings,
    styles: Styles,
) -> Result<(), ExpectedError> {
    let report = &super::untrusted::walk(report);
    super::write_human(output, styles, |style, width| {
        terminal::render(report, style, width)
    })?;
    super::write_exports(output, |format| export(report, format))
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

/// One format's bytes.
pub fn export(report: &SweepReport, format: ReportFormat) -> Vec<u8> {
    match format {
        ReportFormat::Json => json(report),
        ReportFormat::Sarif => sarif::render(report),
        ReportFormat::Junit => junit::render(report).into_bytes(),
        ReportFormat::Markdown => markdown::render(report).into_bytes(),
        ReportFormat::Html => html::render(report).into_bytes(),
    }
}

/// The merged report as JSON (also the sweep directory's `report.json`).
pub fn json(report: &SweepReport) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(report).unwrap_or_default();
    bytes.push(b'\n');
    bytes
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
