//! Stages blocked by a finding. A sanitizer stage whose program failed under
//! it at a failure already found (the device assert the plain run hit, an
//! invalid access the tool itself reported first) checked everything up to
//! that failure: it is blocked by that finding, not inconclusive, and says
//! which. A stage cut off by a deadline, a signal or its own damage stays
//! inconclusive.

use cudawatch_model::{Outcome, ProcessEnd, Report, Severity, Site, StageReport, Tool};

use super::consequences::root_cause;
use super::owner::is_failure;
use super::policy::Policy;

/// Sets `blocked_by` on every stage the gating failure stopped, and clears
/// it on the others (a report judged again under other settings).
pub fn mark(report: &mut Report, policy: &Policy) {
    // The root cause when it gates, else the first gating failure.
    let gating_failure =
        |s: &&Site| policy.gates(s) && is_failure(&s.kind) && s.severity == Severity::Error;
    let failure = root_cause(&report.findings)
        .filter(gating_failure)
        .or_else(|| report.findings.iter().find(gating_failure))
        .map(name)
        .or_else(|| {
            // No gating finding, but the plain run failed: that failure,
            // already reported, is what stopped the program under the tools.
            report
                .stages
                .iter()
                .find(|s| {
                    s.tool == Tool::Plain
                        && matches!(s.outcome, Outcome::TargetFailed | Outcome::Findings)
                        && s.end.is_some_and(|e| e != ProcessEnd::Exited(0))
                })
                .map(|s| {
                    format!(
                        "the plain run's failure ({})",
                        s.end.map(|e| e.to_string()).unwrap_or_default()
                    )
                })
        });
    for stage in &mut report.stages {
        stage.blocked_by = failure.clone().filter(|_| {
            stage.tool != Tool::Plain
                && matches!(stage.outcome, Outcome::Inconclusive | Outcome::ToolFailed)
                && stopped_by_the_program(stage)
        });
    }
}

/// `the device_assert at device_assert.cu:7`.
fn name(site: &Site) -> String {
    let at = site
        .location
        .as_ref()
        .map(|l| format!(" at {}", l.short()))
        .unwrap_or_default();
    format!("the {} {}{at}", site.tool.name(), site.kind.id())
}

/// Whether the stage's tool said that the program failed under it (ncu:
/// "The application returned an error code", a launch it could not profile;
/// a sanitizer: the program did not terminate successfully).
fn stopped_by_the_program(stage: &StageReport) -> bool {
    stage.summary.target_failed
        || stage
            .summary
            .failures
            .iter()
            .any(|l| l.contains("LaunchFailed") || l.contains("didn't terminate successfully"))
}
