//! JUnit XML: a test suite per stage (or per tool, for parsed files), one
//! test case per stage and one per site, so a CI test view lists each bug.
//! An inconclusive stage is an `<error>`, never a pass.

use std::fmt::Write as _;

use cudawatch_model::{CheckStatus, Outcome, Site, Tool};

use super::{Exporter, Judged, escape_markup};

/// `--report junit`.
pub struct JunitExporter;

impl Exporter<Judged<'_>> for JunitExporter {
    // Over 100 lines on purpose: one quick-xml writer in document order.
    fn render(&self, doc: &Judged<'_>) -> Vec<u8> {
        let (report, judgement) = (doc.report, doc.judgement);
        let mut tools: Vec<Tool> = report.stages.iter().map(|s| s.tool).collect();
        for site in &report.findings {
            if !tools.contains(&site.tool) {
                tools.push(site.tool);
            }
        }
        let mut suites = String::new();
        let (mut total_tests, mut total_failures, mut total_errors) = (0, 0, 0);
        for tool in tools {
            let stage = report.stages.iter().find(|s| s.tool == tool);
            let sites: Vec<&Site> = report.findings.iter().filter(|s| s.tool == tool).collect();
            let mut cases = String::new();
            let (mut tests, mut failures, mut errors, mut skipped) = (0, 0, 0, 0);
            if let Some(stage) = stage {
                tests += 1;
                let name = format!("{} stage", tool.name());
                let time = stage.seconds.unwrap_or(0.0);
                let body = match stage.outcome {
                    Outcome::Clean => String::new(),
                    Outcome::Skipped => {
                        skipped += 1;
                        format!("<skipped message=\"{}\"/>", escape_markup(&stage.reason))
                    }
                    Outcome::Findings | Outcome::TargetFailed => {
                        failures += 1;
                        format!("<failure message=\"{}\"/>", escape_markup(&stage.reason))
                    }
                    Outcome::Inconclusive | Outcome::ToolFailed => {
                        errors += 1;
                        format!("<error message=\"{}\"/>", escape_markup(&stage.reason))
                    }
                };
                let _ = write!(
                    cases,
                    "\n    <testcase classname=\"cudawatch.{0}\" name=\"{1}\" time=\"{time:.3}\">{body}</testcase>",
                    tool.name(),
                    escape_markup(&name)
                );
            }
            for site in &sites {
                tests += 1;
                let name = format!(
                    "{} {}{}",
                    site.kind.id(),
                    site.kernel.as_deref().unwrap_or(""),
                    site.location
                        .as_ref()
                        .map(|l| format!(" at {}", l.shown()))
                        .unwrap_or_default()
                );
                let outside = judgement.out_of_scope.contains(&site.id);
                let body = if site.suppressed.is_some()
                    || site.in_baseline
                    || outside
                    || site.consequence_of.is_some()
                {
                    // Not a failure of the user's: say why it does not count.
                    skipped += 1;
                    let why = if site.in_baseline {
                        "in the baseline".to_string()
                    } else if site.suppressed.is_some() {
                        "suppressed".to_string()
                    } else if let Some(root) = &site.consequence_of {
                        format!("follows the root cause {root}")
                    } else {
                        let component = site
                            .owner
                            .as_ref()
                            .map_or("library", |o| o.component.as_str());
                        format!("inside {component}: not gating (--gate-scope all)")
                    };
                    format!("<skipped message=\"{}\"/>", escape_markup(&why))
                } else if judgement.gating.contains(&site.id) {
                    failures += 1;
                    format!(
                        "<failure message=\"{}\" type=\"{}\">{}</failure>",
                        escape_markup(&site.message),
                        site.kind.id(),
                        escape_markup(&details(site))
                    )
                } else {
                    // What does not fail the gate under --fail-on passes,
                    // with the finding in the output.
                    format!("<system-out>{}</system-out>", escape_markup(&details(site)))
                };
                let _ = write!(
                    cases,
                    "\n    <testcase classname=\"cudawatch.{}\" name=\"{}\">{body}</testcase>",
                    tool.name(),
                    escape_markup(name.trim())
                );
            }
            total_tests += tests;
            total_failures += failures;
            total_errors += errors;
            let _ = write!(
                suites,
                "\n  <testsuite name=\"cudawatch.{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">{cases}\n  </testsuite>",
                tool.name()
            );
        }
        if !judgement.checklist.is_empty() {
            let mut cases = String::new();
            let (mut failures, mut errors, mut skipped) = (0, 0, 0);
            for item in &judgement.checklist {
                let body = match item.status {
                    CheckStatus::Pass => String::new(),
                    CheckStatus::Fail => {
                        failures += 1;
                        format!("<failure message=\"{}\"/>", escape_markup(&item.evidence))
                    }
                    CheckStatus::Inconclusive => {
                        errors += 1;
                        format!("<error message=\"{}\"/>", escape_markup(&item.evidence))
                    }
                    CheckStatus::Skipped => {
                        skipped += 1;
                        format!("<skipped message=\"{}\"/>", escape_markup(&item.evidence))
                    }
                };
                let _ = write!(
                    cases,
                    "\n    <testcase classname=\"cudawatch.checklist\" name=\"{}\">{body}</testcase>",
                    escape_markup(&item.title)
                );
            }
            let tests = judgement.checklist.len();
            total_tests += tests;
            total_failures += failures;
            total_errors += errors;
            let _ = write!(
                suites,
                "\n  <testsuite name=\"cudawatch.checklist\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">{cases}\n  </testsuite>"
            );
        }
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = write!(
            out,
            "<testsuites name=\"cudawatch\" tests=\"{total_tests}\" failures=\"{total_failures}\" errors=\"{total_errors}\">{suites}\n</testsuites>\n"
        );
        out.into_bytes()
    }
}

fn details(site: &Site) -> String {
    let mut text = format!("{} ({} occurrences)", site.message, site.count_text());
    if let Some(sample) = site.samples.first()
        && let (Some(t), Some(b)) = (sample.thread, sample.block)
    {
        let _ = write!(text, "\nfirst: thread {t} block {b}");
    }
    if let Some(frame) = site.python_frame.as_ref().or(site.launch_frame.as_ref()) {
        let _ = write!(
            text,
            "\nlaunched from {frame}{}",
            super::describe::seen_by_note(site)
        );
    }
    if let Some(processes) = super::describe::processes_line(site) {
        let _ = write!(text, "\nin: {processes}");
    }
    if let Some(tools) = super::describe::seen_by_line(site) {
        let _ = write!(text, "\nalso seen by: {tools}");
    }
    if let Some(only) = &site.only_in_try {
        let _ = write!(text, "\nonly in: {only}");
    }
    if let Some(doubt) = &site.doubt {
        let _ = write!(text, "\ndoubt: {doubt}");
    }
    let (topic, link) = super::describe::explanation(site);
    let _ = write!(text, "\nexplain: cudawatch explain {topic}");
    if let Some(link) = link {
        let _ = write!(text, " ({link})");
    }
    text
}
