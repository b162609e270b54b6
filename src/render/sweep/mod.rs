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
/// the report was compared. Sites outside the gate's scope are counted
/// apart: library internals come and go between runs of the same program,
/// and counting them with the rest would make every night look changed.
pub fn comparison(report: &SweepReport) -> Option<String> {
    let baseline = report.baseline.as_ref()?;
    let count = |c: Change| {
        report
            .targets
            .iter()
            .filter(|t| t.change == Some(c))
            .count()
    };
    let new = |outside: bool| {
        report
            .sites
            .iter()
            .filter(|s| s.change == Some(Change::New) && s.out_of_scope == outside)
            .count()
    };
    let (listed, gone_outside) = fixed_sites(report);
    let mut line = format!(
        "since {baseline}: {} new, {} fixed, {} flaky, {} still failing; {}, {} fixed",
        count(Change::New),
        count(Change::Fixed),
        count(Change::Flaky),
        count(Change::StillFailing),
        crate::words::plural(new(false) as u64, "new site"),
        listed.len()
    );
    let new_outside = new(true);
    if new_outside + gone_outside > 0 {
        line += &format!(
            "; outside the gate's scope {new_outside} new and {gone_outside} gone (library internals vary from run to run)"
        );
    }
    Some(line)
}

/// The fixed sites the reports list (those the gate could count), and how
/// many more, outside its scope, are no longer seen.
fn fixed_sites(report: &SweepReport) -> (Vec<&cudawatch_model::FixedSite>, usize) {
    let (outside, listed): (Vec<_>, Vec<_>) =
        report.fixed_sites.iter().partition(|f| f.out_of_scope);
    (listed, outside.len())
}

/// The line after the fixed list for sites outside the gate's scope that
/// are gone, or none.
fn gone_outside_scope(count: usize) -> Option<String> {
    (count > 0).then(|| {
        format!(
            "{} outside the gate's scope (library or framework internals) no longer seen; \
             such sites come and go between runs of the same program",
            crate::words::plural(count as u64, "site")
        )
    })
}

/// The Warnings section of the human formats: the sweep's own, then each
/// target's run's, named by target (its summary may say "see Warnings").
fn warning_lines(report: &SweepReport) -> Vec<String> {
    let mut lines = report.warnings.clone();
    for t in &report.targets {
        lines.extend(t.warnings.iter().map(|w| format!("{}: {w}", t.name)));
    }
    lines
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

/// How many targets' gates a site fails, or "-" for none (a library site
/// listed, not gating).
fn gates_in(site: &cudawatch_model::SweepSite) -> String {
    if site.gating_in.is_empty() {
        "-".into()
    } else {
        site.gating_in.len().to_string()
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
